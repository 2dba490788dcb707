//! The bus over a NATS server: requests go to a subject, one member of its queue group
//! answers. The client reconnects by itself when the server restarts; requests in flight
//! meanwhile fail (time out) cleanly.
//!
//! A NATS connection is driven by a task on the runtime that opened it: a request made
//! on another thread is handed to that task, and its reply handed back, two cross-thread
//! wake-ups per round trip. A container serving on several single-threaded runtimes
//! therefore attaches each of them ([`Bus::attach_thread`]): each gets a connection of its
//! own, driven by the thread that also runs the requests.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::{Client, ConnectOptions, RequestErrorKind};
use bytes::Bytes;
use futures_util::StreamExt;

use crate::{Answer, BoxFuture, Bus, BusError, Responder, Serving};

/// A connection to a NATS server (and one per attached thread). Cheap to clone.
#[derive(Clone)]
pub struct NatsBus {
    client: Client,
    url: String,
    /// Tells this bus's per-thread connections from other buses' on the same thread.
    id: u64,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The connections attached on this thread, by bus id.
    static ATTACHED: RefCell<Vec<(u64, Client)>> = const { RefCell::new(Vec::new()) };
}

impl NatsBus {
    /// Connects to `url` (`nats://host:port`), retrying the first connection for up to
    /// `wait`; later disconnections are retried for ever in the background.
    ///
    /// # Errors
    /// [`BusError::Unavailable`] when no connection could be made in time.
    pub async fn connect(url: &str, wait: Duration) -> Result<NatsBus, BusError> {
        Ok(NatsBus {
            client: open(url, wait).await?,
            url: url.to_owned(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The underlying (shared) client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The connection requests on this thread go through: the thread's own when it was
    /// attached, else the shared one.
    fn client_here(&self) -> Client {
        ATTACHED
            .with(|a| {
                a.borrow()
                    .iter()
                    .find(|(id, _)| *id == self.id)
                    .map(|(_, c)| c.clone())
            })
            .unwrap_or_else(|| self.client.clone())
    }
}

/// Opens a client whose connection task runs on the current runtime, retrying the first
/// connection for up to `wait`.
async fn open(url: &str, wait: Duration) -> Result<Client, BusError> {
    let options = ConnectOptions::new()
        .name("osprey")
        .retry_on_initial_connect()
        .connection_timeout(Duration::from_secs(2));
    let connecting = async {
        let client = options
            .connect(url)
            .await
            .map_err(|e| BusError::Unavailable(format!("{url}: {e}")))?;
        // retry_on_initial_connect returns at once: wait until really connected.
        client
            .flush()
            .await
            .map_err(|e| BusError::Unavailable(format!("{url}: {e}")))?;
        Ok(client)
    };
    tokio::time::timeout(wait, connecting)
        .await
        .map_err(|_| BusError::Unavailable(format!("{url}: not reachable within {wait:?}")))?
}

impl Bus for NatsBus {
    fn request(
        &self,
        subject: &str,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, BusError>> {
        let client = self.client_here();
        let subject = subject.to_owned();
        Box::pin(async move {
            let asked = client.request(subject.clone(), payload);
            match tokio::time::timeout(timeout, asked).await {
                Err(_) => Err(BusError::Timeout { subject, timeout }),
                Ok(Ok(m)) => Ok(m.payload),
                Ok(Err(e)) => Err(match e.kind() {
                    RequestErrorKind::NoResponders => BusError::NoResponders(subject),
                    RequestErrorKind::TimedOut => BusError::Timeout { subject, timeout },
                    _ => BusError::Unavailable(e.to_string()),
                }),
            }
        })
    }

    fn serve(
        &self,
        subject: &str,
        queue: &str,
        responder: Responder,
    ) -> BoxFuture<'static, Result<Serving, BusError>> {
        let client = self.client.clone();
        let (subject, queue) = (subject.to_owned(), queue.to_owned());
        Box::pin(async move {
            let mut sub = client
                .queue_subscribe(subject.clone(), queue)
                .await
                .map_err(|e| BusError::Unavailable(e.to_string()))?;
            // Make sure the server knows the subscription before we report readiness.
            client
                .flush()
                .await
                .map_err(|e| BusError::Unavailable(e.to_string()))?;
            let inflight = Arc::new(tokio::sync::RwLock::new(()));
            let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
            let loop_inflight = inflight.clone();
            let loop_client = client.clone();
            let task = tokio::spawn(async move {
                loop {
                    let msg = tokio::select! {
                        m = sub.next() => m,
                        _ = &mut stop_rx => None,
                    };
                    let Some(msg) = msg else { break };
                    let Some(reply) = msg.reply else { continue };
                    let guard = loop_inflight.clone().read_owned().await;
                    let (client, responder) = (loop_client.clone(), responder.clone());
                    tokio::spawn(async move {
                        let sent = match responder(msg.payload).await {
                            Answer::Reply(out) => client.publish(reply, out).await,
                            // The next stage answers the original requester.
                            Answer::Forward { subject, payload } => {
                                client.publish_with_reply(subject, reply, payload).await
                            }
                        };
                        if let Err(e) = sent {
                            tracing::warn!(error = %e, "a handler answer could not be sent");
                        }
                        drop(guard);
                    });
                }
                let _ = sub.unsubscribe().await;
            });
            Ok(Serving::new(move || {
                Box::pin(async move {
                    let _ = stop_tx.send(());
                    let _ = task.await;
                    let _drained = inflight.write().await;
                    let _ = client.flush().await;
                }) as BoxFuture<'static, ()>
            }))
        })
    }

    fn describe(&self) -> String {
        self.url.clone()
    }

    fn attach_thread(&self) -> BoxFuture<'static, Result<(), BusError>> {
        let (url, id) = (self.url.clone(), self.id);
        Box::pin(async move {
            let client = open(&url, Duration::from_secs(10)).await?;
            ATTACHED.with(|a| {
                let mut a = a.borrow_mut();
                a.retain(|(other, _)| *other != id);
                a.push((id, client));
            });
            Ok(())
        })
    }
}
