//! The in-process bus: subjects are a map, a request calls a registered responder.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use crate::{Answer, BoxFuture, Bus, BusError, Responder, Serving};

struct Worker {
    id: u64,
    responder: Responder,
    /// Held (shared) by every request in flight; a drain takes it exclusively.
    inflight: Arc<tokio::sync::RwLock<()>>,
}

#[derive(Default)]
struct Inner {
    subjects: Mutex<HashMap<String, Vec<Worker>>>,
    next_id: AtomicU64,
    turn: AtomicUsize,
}

/// The embedded bus: workers are tasks of this process. Cheap to clone.
#[derive(Clone, Default)]
pub struct LocalBus {
    inner: Arc<Inner>,
}

impl LocalBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }

    /// One worker of `subject` answers `payload` (a reply, or a forward).
    fn ask(
        &self,
        subject: &str,
        payload: Bytes,
        left: Duration,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Answer, BusError>> {
        let picked = {
            let subjects = self
                .inner
                .subjects
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            subjects.get(subject).filter(|w| !w.is_empty()).map(|w| {
                // Round robin over the queue group, as NATS spreads requests.
                let i = self.inner.turn.fetch_add(1, Ordering::Relaxed) % w.len();
                (w[i].responder.clone(), w[i].inflight.clone())
            })
        };
        let subject = subject.to_owned();
        Box::pin(async move {
            let Some((responder, inflight)) = picked else {
                return Err(BusError::NoResponders(subject));
            };
            let Ok(_guard) = inflight.try_read_owned() else {
                // The worker is draining: it takes no new requests.
                return Err(BusError::NoResponders(subject));
            };
            tokio::time::timeout(left, responder(payload))
                .await
                .map_err(|_| BusError::Timeout { subject, timeout })
        })
    }
}

impl Bus for LocalBus {
    fn request(
        &self,
        subject: &str,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, BusError>> {
        let bus = self.clone();
        let subject = subject.to_owned();
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            let (mut subject, mut payload) = (subject, payload);
            // Bounded: a chain has at most this many stages.
            for _ in 0..1024 {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                match bus.ask(&subject, payload, left, timeout).await? {
                    Answer::Reply(b) => return Ok(b),
                    Answer::Forward {
                        subject: next,
                        payload: p,
                    } => (subject, payload) = (next, p),
                }
            }
            Err(BusError::Unavailable(
                "a chain of over 1024 forwards".into(),
            ))
        })
    }

    fn serve(
        &self,
        subject: &str,
        _queue: &str,
        responder: Responder,
    ) -> BoxFuture<'static, Result<Serving, BusError>> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let inflight = Arc::new(tokio::sync::RwLock::new(()));
        self.inner
            .subjects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(subject.to_owned())
            .or_default()
            .push(Worker {
                id,
                responder,
                inflight: inflight.clone(),
            });
        let inner = self.inner.clone();
        let subject = subject.to_owned();
        Box::pin(async move {
            Ok(Serving::new(move || {
                Box::pin(async move {
                    if let Some(w) = inner
                        .subjects
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get_mut(&subject)
                    {
                        w.retain(|w| w.id != id);
                    }
                    let _drained = inflight.write().await;
                }) as BoxFuture<'static, ()>
            }))
        })
    }

    fn describe(&self) -> String {
        "in-process".into()
    }
}
