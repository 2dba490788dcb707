//! Transports: they move [`InboundMessage`]s in and [`OutboundMessage`]s out, and know
//! nothing about SOAP.
//!
//! The HTTP transport ([`http`]) serves HTTP/1.1 with keep-alive and HTTP/2 (h2c with
//! prior knowledge) on one listener, and has a pooled client. Bodies arrive as an
//! [`InboundBody`] the receiver pulls chunk by chunk or collects under a size limit, and
//! leave either whole or as a stream of chunks ([`OutboundBody::Stream`]), so large
//! bodies need not be held in memory.
//!
//! Only this crate names hyper.

pub mod http;

use std::future::Future;
use std::net::SocketAddr;

use bytes::Bytes;

pub use http::body::{BodyError, InboundBody};

/// The request method, as far as the container cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// `GET` (WSDL and other documents).
    Get,
    /// `POST` (SOAP messages).
    Post,
    /// Anything else, by name.
    Other(String),
}

/// A request as the transport received it: metadata, and a body still to be read.
#[derive(Debug)]
pub struct InboundMessage {
    /// Request method.
    pub method: Method,
    /// Request path (`/wstest`).
    pub path: String,
    /// Query string without `?` (`wsdl`), if any.
    pub query: Option<String>,
    /// `Content-Type`, if given.
    pub content_type: Option<String>,
    /// `SOAPAction` with its quotes removed, if given.
    pub soap_action: Option<String>,
    /// `Host`, if given (used to write service addresses into WSDL).
    pub host: Option<String>,
    /// The peer's address.
    pub remote: Option<SocketAddr>,
    /// The body.
    pub body: InboundBody,
}

/// A response for the transport to send.
#[derive(Debug)]
pub struct OutboundMessage {
    /// Status code (200, 400, 500, ...).
    pub status: u16,
    /// `Content-Type` of the body.
    pub content_type: &'static str,
    /// The body.
    pub body: OutboundBody,
}

/// A response body: whole, or a stream of chunks produced while it is sent.
#[derive(Debug)]
pub enum OutboundBody {
    /// The whole body.
    Full(Bytes),
    /// Chunks from a producer task; an `Err` aborts the response.
    Stream(tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>),
}

impl OutboundMessage {
    /// A response with a whole body.
    pub fn full(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        OutboundMessage {
            status,
            content_type,
            body: OutboundBody::Full(body.into()),
        }
    }
}

/// What a listener hands each request to.
pub trait MessageService: Send + Sync + 'static {
    /// Handles one request. Never fails: errors are responses too.
    fn handle(&self, msg: InboundMessage) -> impl Future<Output = OutboundMessage> + Send;
}
