//! HTTP clients: a pooled one for general calls and a single-connection one whose
//! requests go out back to back on one keep-alive connection (a load agent's worker).

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE, HOST};
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use thiserror::Error;
use tokio::net::TcpStream;

/// A failed HTTP call.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL could not be used.
    #[error("invalid URL {0:?}")]
    InvalidUrl(String),
    /// Connecting failed.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// Where.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The exchange failed at the HTTP level.
    #[error("HTTP exchange failed: {0}")]
    Http(String),
    /// No complete response within the timeout.
    #[error("no response within {0:?}")]
    Timeout(Duration),
}

/// A response: status, content type and the whole body.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// Body.
    pub body: Bytes,
}

/// A client with a pool of keep-alive connections per host.
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
    timeout: Duration,
}

impl HttpClient {
    /// A client whose calls time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.set_nodelay(true);
        let inner = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector);
        HttpClient { inner, timeout }
    }

    /// GETs `url`.
    ///
    /// # Errors
    /// [`ClientError`] when the URL is invalid or the exchange fails or times out.
    pub async fn get(&self, url: &str) -> Result<HttpResponse, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|_| ClientError::InvalidUrl(url.to_owned()))?;
        let req = Request::get(uri)
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::Http(e.to_string()))?;
        self.send(req).await
    }

    /// POSTs `body` to `url` with the given content type and extra headers.
    ///
    /// # Errors
    /// [`ClientError`] when the URL is invalid or the exchange fails or times out.
    pub async fn post(
        &self,
        url: &str,
        content_type: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<HttpResponse, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|_| ClientError::InvalidUrl(url.to_owned()))?;
        let mut req = Request::post(uri).header(CONTENT_TYPE, content_type);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| ClientError::Http(e.to_string()))?;
        self.send(req).await
    }

    async fn send(&self, req: Request<Full<Bytes>>) -> Result<HttpResponse, ClientError> {
        let exchange = async {
            let resp = self
                .inner
                .request(req)
                .await
                .map_err(|e| ClientError::Http(format!("{e:#}")))?;
            read_response(resp).await
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| ClientError::Timeout(self.timeout))?
    }
}

async fn read_response(
    resp: hyper::Response<hyper::body::Incoming>,
) -> Result<HttpResponse, ClientError> {
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| ClientError::Http(e.to_string()))?
        .to_bytes();
    Ok(HttpResponse {
        status,
        content_type,
        body,
    })
}

/// One HTTP/1.1 keep-alive connection, requests sent one after another.
pub struct HttpConnection {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    host: HeaderValue,
    peer: SocketAddr,
}

impl HttpConnection {
    /// Connects to `addr`.
    ///
    /// # Errors
    /// [`ClientError::Connect`] or a failed HTTP handshake.
    pub async fn connect(addr: SocketAddr) -> Result<Self, ClientError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|source| ClientError::Connect {
                addr: addr.to_string(),
                source,
            })?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let host = HeaderValue::from_str(&addr.to_string())
            .map_err(|e| ClientError::Http(e.to_string()))?;
        Ok(HttpConnection {
            sender,
            host,
            peer: addr,
        })
    }

    /// The server's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// POSTs `body` to `path` and reads the whole response.
    ///
    /// # Errors
    /// [`ClientError::Http`] when the connection fails.
    pub async fn post(
        &mut self,
        path: &str,
        headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<HttpResponse, ClientError> {
        self.sender
            .ready()
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        let mut req = Request::post(path).header(HOST, self.host.clone());
        for (k, v) in headers {
            req = req.header(*k, v.clone());
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| ClientError::Http(e.to_string()))?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| ClientError::Http(e.to_string()))?;
        read_response(resp).await
    }
}

/// Re-exported so callers can build header values without naming hyper.
pub use hyper::header::HeaderValue as Value;
