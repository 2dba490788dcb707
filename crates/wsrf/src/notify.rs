//! Notification delivery: asynchronous, in order per consumer, over pooled HTTP
//! connections, off the request path.
//!
//! Each consumer address has a bounded queue and one task that sends its messages one at
//! a time, so the messages of a subscription arrive in the order they were produced. A
//! failed send is retried with exponential back-off; after the last attempt the
//! configured [`FailurePolicy`] applies. A full queue drops the new message (counted and
//! logged) instead of waiting: a slow or dead consumer never holds up a request or
//! another consumer. Delivery runs on its own thread and runtime.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use osprey_addressing::{new_message_id, request_headers, EndpointReference};
use osprey_soap::{write_envelope, Body, SoapVersion};
use osprey_transport::http::HttpClient;
use osprey_xml::XmlWriter;
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::ns;

/// What happens to a subscription whose consumer failed every attempt of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailurePolicy {
    /// Drop that message; keep the subscription.
    #[default]
    Drop,
    /// Destroy the subscription.
    Unsubscribe,
}

/// Delivery settings (the `[notifications]` table of the config).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeliveryConfig {
    /// Messages waiting per consumer before new ones are dropped.
    pub queue: usize,
    /// Attempts per message (the first send included).
    pub attempts: u32,
    /// Wait before the first retry, in milliseconds; doubled each retry.
    pub backoff_ms: u64,
    /// Longest wait between retries, in milliseconds.
    pub max_backoff_ms: u64,
    /// Timeout of one send, in milliseconds.
    pub timeout_ms: u64,
    /// What to do after the last attempt failed.
    pub on_failure: FailurePolicy,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            queue: 1024,
            attempts: 5,
            backoff_ms: 50,
            max_backoff_ms: 2000,
            timeout_ms: 5000,
            on_failure: FailurePolicy::Drop,
        }
    }
}

/// Work a delivery waits for before it is sent (the commit of the change it reports).
pub type Ready = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// One notification on its way.
pub struct Delivery {
    /// The subscription it is for (its key).
    pub subscription: String,
    /// Where it goes.
    pub consumer: EndpointReference,
    /// The SOAP version to send it in (that of the Subscribe request).
    pub version: SoapVersion,
    /// The encoded `wsnt:Notify` element.
    pub notify: Vec<u8>,
    /// Resolves when the message may leave (the change it reports is durable).
    pub ready: Option<Ready>,
}

/// Delivery counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryStats {
    /// Messages a consumer accepted.
    pub delivered: u64,
    /// Sends retried.
    pub retried: u64,
    /// Messages given up after the last attempt.
    pub failed: u64,
    /// Messages dropped because their consumer's queue was full.
    pub dropped: u64,
}

#[derive(Default)]
struct Counters {
    delivered: AtomicU64,
    retried: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
}

/// Sends notifications; cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: DeliveryConfig,
    queues: Mutex<HashMap<String, mpsc::Sender<Delivery>>>,
    runtime: tokio::runtime::Handle,
    client: HttpClient,
    failures: mpsc::UnboundedSender<String>,
    counters: Counters,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// How long a consumer's task waits for work before it ends.
const IDLE: Duration = Duration::from_secs(30);

impl Notifier {
    /// Starts the delivery thread. The receiver yields the keys of subscriptions whose
    /// delivery failed for good under [`FailurePolicy::Unsubscribe`].
    ///
    /// # Panics
    /// When the delivery thread or its runtime cannot be created (out of resources at
    /// start-up).
    pub fn start(config: DeliveryConfig) -> (Notifier, mpsc::UnboundedReceiver<String>) {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        // Built here and moved to its thread: start-up does not wait for the new thread
        // to be scheduled.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("building the notification runtime");
        let runtime = rt.handle().clone();
        std::thread::Builder::new()
            .name("osprey-notify".into())
            .spawn(move || {
                rt.block_on(async {
                    let _ = stop_rx.await;
                });
            })
            .expect("spawning the notification thread");
        let (failures, failed_rx) = mpsc::unbounded_channel();
        let client = HttpClient::new(Duration::from_millis(config.timeout_ms));
        let notifier = Notifier {
            inner: Arc::new(Inner {
                config,
                queues: Mutex::new(HashMap::new()),
                runtime,
                client,
                failures,
                counters: Counters::default(),
                _stop: stop_tx,
            }),
        };
        (notifier, failed_rx)
    }

    /// Queues `d` behind earlier messages to the same consumer; never waits.
    pub fn send(&self, d: Delivery) {
        let Ok(mut queues) = self.inner.queues.lock() else {
            return;
        };
        let address = d.consumer.address.clone();
        let tx = match queues.get(&address) {
            Some(tx) if !tx.is_closed() => tx.clone(),
            _ => {
                let (tx, rx) = mpsc::channel(self.inner.config.queue.max(1));
                queues.insert(address.clone(), tx.clone());
                let inner = self.inner.clone();
                self.inner
                    .runtime
                    .spawn(consumer_task(inner, address.clone(), rx));
                tx
            }
        };
        if let Err(e) = tx.try_send(d) {
            self.inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(consumer = %address, reason = %e, "notification dropped: consumer queue full");
        }
    }

    /// Counters since start.
    pub fn stats(&self) -> DeliveryStats {
        let c = &self.inner.counters;
        DeliveryStats {
            delivered: c.delivered.load(Ordering::Relaxed),
            retried: c.retried.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("stats", &self.stats())
            .finish()
    }
}

async fn consumer_task(inner: Arc<Inner>, address: String, mut rx: mpsc::Receiver<Delivery>) {
    loop {
        let d = match tokio::time::timeout(IDLE, rx.recv()).await {
            Ok(Some(d)) => d,
            Ok(None) => return,
            Err(_) => {
                // Idle: end, unless a message slipped in while the map was unlocked.
                let Ok(mut queues) = inner.queues.lock() else {
                    return;
                };
                if rx.is_empty() {
                    queues.remove(&address);
                    return;
                }
                continue;
            }
        };
        let Delivery {
            subscription,
            consumer,
            version,
            notify,
            ready,
        } = d;
        if let Some(ready) = ready {
            ready.await;
        }
        let out = Outgoing {
            subscription,
            consumer,
            version,
            notify,
        };
        deliver(&inner, &out).await;
    }
}

/// A delivery whose commit has been waited for.
struct Outgoing {
    subscription: String,
    consumer: EndpointReference,
    version: SoapVersion,
    notify: Vec<u8>,
}

async fn deliver(inner: &Inner, d: &Outgoing) {
    let envelope = match envelope(d) {
        Ok(e) => e,
        Err(e) => {
            tracing::error!(subscription = %d.subscription, error = %e, "notification not encodable");
            return;
        }
    };
    let (content_type, soap_action) = match d.version {
        SoapVersion::V11 => (
            "text/xml; charset=utf-8".to_owned(),
            Some(format!("\"{}\"", ns::action::NOTIFY)),
        ),
        SoapVersion::V12 => (
            format!(
                "application/soap+xml; charset=utf-8; action=\"{}\"",
                ns::action::NOTIFY
            ),
            None,
        ),
    };
    let headers: Vec<(&str, &str)> = soap_action
        .as_deref()
        .map(|a| vec![("SOAPAction", a)])
        .unwrap_or_default();
    let cfg = &inner.config;
    let mut backoff = Duration::from_millis(cfg.backoff_ms);
    for attempt in 1..=cfg.attempts.max(1) {
        let why = match inner
            .client
            .post(
                &d.consumer.address,
                &content_type,
                &headers,
                envelope.clone(),
            )
            .await
        {
            Ok(resp) if (200..300).contains(&resp.status) => {
                inner.counters.delivered.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Ok(resp) => format!("HTTP status {}", resp.status),
            Err(e) => e.to_string(),
        };
        if attempt == cfg.attempts.max(1) {
            inner.counters.failed.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                subscription = %d.subscription, consumer = %d.consumer.address, attempts = attempt,
                error = %why, policy = ?cfg.on_failure, "notification not delivered"
            );
            if cfg.on_failure == FailurePolicy::Unsubscribe {
                let _ = inner.failures.send(d.subscription.clone());
            }
            return;
        }
        inner.counters.retried.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(subscription = %d.subscription, attempt, error = %why, "notification retry");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(cfg.max_backoff_ms));
    }
}

fn envelope(d: &Outgoing) -> Result<Bytes, osprey_xml::XmlError> {
    let headers = request_headers(&d.consumer, ns::action::NOTIFY, &new_message_id())?;
    let mut w = XmlWriter::with_capacity(1024 + d.notify.len());
    write_envelope(
        &mut w,
        d.version,
        &[headers.as_slice()],
        Body::Payload(&d.notify),
    );
    Ok(Bytes::from(w.into_bytes()))
}
