//! The handler bus: request/reply of opaque frames on named subjects, with queue groups
//! (several workers on one subject share its requests, and take over from each other).
//!
//! Two implementations with one trait: [`LocalBus`], in process (the embedded default, so
//! `osprey serve` needs nothing else), and [`NatsBus`], over a NATS server (workers in
//! other processes or on other machines). The bus knows nothing of SOAP: the container
//! puts its message context in a [`Frame`] and a worker answers with another.

mod frame;
mod local;
mod nats;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use thiserror::Error;

pub use frame::{Frame, FrameError};
pub use local::LocalBus;
pub use nats::NatsBus;

/// A boxed future, as the bus's object-safe methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a worker does with each request on its subject.
pub type Responder = Arc<dyn Fn(Bytes) -> BoxFuture<'static, Answer> + Send + Sync>;

/// A worker's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Reply to the requester.
    Reply(Bytes),
    /// Pass the work on to a worker of `subject`, which answers the original requester
    /// (one hop per stage of a chain, instead of a return to the requester after each).
    Forward {
        /// The next stage's subject.
        subject: String,
        /// What it is sent.
        payload: Bytes,
    },
}

impl From<Bytes> for Answer {
    fn from(b: Bytes) -> Self {
        Answer::Reply(b)
    }
}

/// A bus failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BusError {
    /// No worker serves the subject (NATS: "no responders").
    #[error("no worker serves {0}")]
    NoResponders(String),
    /// No reply came within the timeout.
    #[error("no reply on {subject} within {timeout:?}")]
    Timeout {
        /// The subject asked.
        subject: String,
        /// The time allowed.
        timeout: Duration,
    },
    /// The connection to the bus failed or is closed.
    #[error("bus unavailable: {0}")]
    Unavailable(String),
}

/// Request/reply on subjects; cheap to clone behind an `Arc`.
pub trait Bus: Send + Sync + 'static {
    /// Sends `payload` to one worker of `subject` and waits up to `timeout` for the reply
    /// (from that worker, or from the last stage it forwarded to).
    fn request(
        &self,
        subject: &str,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, BusError>>;

    /// Serves `subject` in queue group `queue` with `responder` until the returned
    /// [`Serving`] is stopped or dropped.
    fn serve(
        &self,
        subject: &str,
        queue: &str,
        responder: Responder,
    ) -> BoxFuture<'static, Result<Serving, BusError>>;

    /// A short description for logs (`in-process`, `nats://127.0.0.1:4222`).
    fn describe(&self) -> String;

    /// Prepares the calling thread, which must be running a tokio runtime, to carry this
    /// bus's requests made on it by itself: [`NatsBus`] opens a connection driven by this
    /// thread's runtime, so that a request and its reply never cross to another thread.
    /// Called once per serving thread at start-up; requests from threads that were not
    /// attached use the bus's shared connection. The default does nothing.
    fn attach_thread(&self) -> BoxFuture<'static, Result<(), BusError>> {
        Box::pin(async { Ok(()) })
    }
}

/// A running subscription of a worker. Dropping it stops taking new requests.
pub struct Serving {
    stop: Option<Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>>,
}

impl Serving {
    pub(crate) fn new(stop: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static) -> Self {
        Serving {
            stop: Some(Box::new(stop)),
        }
    }

    /// Stops taking new requests and waits until every request already taken has been
    /// answered (a drain).
    pub async fn drain(mut self) {
        if let Some(stop) = self.stop.take() {
            stop().await;
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(stop());
            }
        }
    }
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving").finish_non_exhaustive()
    }
}
