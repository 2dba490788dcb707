//! Request bodies pulled under a size limit and an idle timeout; response bodies.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use thiserror::Error;

/// Why a request body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body (or its declared Content-Length) is larger than the limit.
    #[error("request body larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// No data arrived within the read timeout.
    #[error("request body not received within {0:?}")]
    Timeout(Duration),
    /// The connection failed or the framing was invalid.
    #[error("request body could not be read: {0}")]
    Io(String),
}

/// A request body not yet read.
#[derive(Debug)]
pub struct InboundBody {
    inner: Option<Incoming>,
    preloaded: Option<Bytes>,
    declared: Option<u64>,
    limit: usize,
    idle: Duration,
    read: usize,
}

impl InboundBody {
    pub(crate) fn new(
        inner: Incoming,
        declared: Option<u64>,
        limit: usize,
        idle: Duration,
    ) -> Self {
        InboundBody {
            inner: Some(inner),
            preloaded: None,
            declared,
            limit,
            idle,
            read: 0,
        }
    }

    /// A body already in memory (tests, in-process calls).
    pub fn from_bytes(bytes: impl Into<Bytes>, limit: usize) -> Self {
        let bytes = bytes.into();
        InboundBody {
            inner: None,
            declared: Some(bytes.len() as u64),
            preloaded: Some(bytes),
            limit,
            idle: Duration::from_secs(30),
            read: 0,
        }
    }

    /// The Content-Length the sender declared, if any.
    pub fn declared_len(&self) -> Option<u64> {
        self.declared
    }

    /// The next chunk, or `None` at the end.
    ///
    /// # Errors
    /// [`BodyError::TooLarge`] once more than the limit has arrived (or was declared),
    /// [`BodyError::Timeout`] when a chunk takes longer than the idle timeout.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, BodyError>> {
        if self.declared.is_some_and(|d| d > self.limit as u64) {
            return Some(Err(BodyError::TooLarge { limit: self.limit }));
        }
        if let Some(b) = self.preloaded.take() {
            return Some(self.count(b));
        }
        let inner = self.inner.as_mut()?;
        loop {
            let frame = match tokio::time::timeout(self.idle, inner.frame()).await {
                Err(_) => return Some(Err(BodyError::Timeout(self.idle))),
                Ok(None) => return None,
                Ok(Some(Err(e))) => return Some(Err(BodyError::Io(e.to_string()))),
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                return Some(self.count(data));
            }
        }
    }

    fn count(&mut self, b: Bytes) -> Result<Bytes, BodyError> {
        self.read += b.len();
        if self.read > self.limit {
            return Err(BodyError::TooLarge { limit: self.limit });
        }
        Ok(b)
    }

    /// The whole body, held in memory.
    ///
    /// # Errors
    /// As [`Self::chunk`].
    pub async fn collect(mut self) -> Result<Bytes, BodyError> {
        let first = match self.chunk().await {
            None => return Ok(Bytes::new()),
            Some(r) => r?,
        };
        let Some(second) = self.chunk().await else {
            return Ok(first);
        };
        let mut buf =
            BytesMut::with_capacity(self.declared.map_or(first.len() * 2, |d| d as usize));
        buf.extend_from_slice(&first);
        buf.extend_from_slice(&second?);
        while let Some(chunk) = self.chunk().await {
            buf.extend_from_slice(&chunk?);
        }
        Ok(buf.freeze())
    }
}

/// The response body type handed to hyper.
pub(crate) enum ResponseBody {
    Full(Option<Bytes>),
    Stream(tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match &mut *self {
            ResponseBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, ResponseBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            ResponseBody::Full(None) => SizeHint::with_exact(0),
            ResponseBody::Stream(_) => SizeHint::default(),
        }
    }
}
