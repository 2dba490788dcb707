//! HTTP clients: a pooled one for general calls and a single-connection one whose
//! requests go out back to back on one keep-alive connection (a load agent's worker).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, CONTENT_TYPE, HOST};
use hyper::{Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use thiserror::Error;
use tokio::io::ReadBuf;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

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
///
/// [`HttpClient::preconnect`] opens a connection ahead of the first request, so that a
/// client's first call does not wait for the TCP handshake nor for the server to take the
/// connection on.
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<Connector, Full<Bytes>>,
    connector: Connector,
    timeout: Duration,
}

impl HttpClient {
    /// A client whose calls time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        let connector = Connector {
            http,
            early: Arc::new(Mutex::new(None)),
        };
        let inner = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector.clone());
        HttpClient {
            inner,
            connector,
            timeout,
        }
    }

    /// Starts opening a connection to `url`'s host; the first request to that host that
    /// needs a new connection takes it (if it is still open and was opened less than
    /// [`EARLY_MAX_AGE`] ago; otherwise it connects as usual). For an IP address the
    /// connection attempt (the SYN) leaves before this returns, so the server takes the
    /// connection on while the caller prepares its first request; a host name is resolved
    /// and connected in the background. Does nothing outside a Tokio runtime or for a URL
    /// that cannot be parsed; a failed attempt is not reported (the request that would
    /// have used it connects itself). One early connection at a time: a later call
    /// replaces (and closes) one not taken yet, as does dropping the client.
    pub fn preconnect(&self, url: &str) {
        let Ok(uri) = url.parse::<Uri>() else {
            return;
        };
        let Some(key) = host_key(&uri) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let ip = key.0.trim_start_matches('[').trim_end_matches(']');
        let task = match ip.parse::<std::net::IpAddr>() {
            Ok(ip) => {
                let Ok(stream) = start_connect(SocketAddr::new(ip, key.1)) else {
                    return;
                };
                let _guard = runtime.enter();
                let Ok(stream) = TcpStream::from_std(stream) else {
                    return;
                };
                runtime.spawn(async move {
                    stream.writable().await.ok()?;
                    match stream.take_error() {
                        Ok(None) => Some(TokioIo::new(stream)),
                        _ => None,
                    }
                })
            }
            Err(_) => {
                let mut http = self.connector.http.clone();
                runtime.spawn(async move {
                    std::future::poll_fn(|cx| {
                        tower_service::Service::<Uri>::poll_ready(&mut http, cx)
                    })
                    .await
                    .ok()?;
                    tower_service::Service::call(&mut http, uri).await.ok()
                })
            }
        };
        let early = Early {
            key,
            opened: Instant::now(),
            task,
        };
        *self
            .connector
            .early
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(early);
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

/// How long a connection opened by [`HttpClient::preconnect`] stays eligible for a first
/// request: well under the header-read timeouts servers put on idle new connections
/// (Osprey's is 10 s), so the request does not race the server closing it.
pub const EARLY_MAX_AGE: Duration = Duration::from_secs(5);

/// A connection being opened ahead of its request.
struct Early {
    key: (String, u16),
    opened: Instant,
    task: JoinHandle<Option<TokioIo<TcpStream>>>,
}

/// The pool's connector: hands out the early connection for its host once, and
/// otherwise connects as hyper's `HttpConnector` does.
#[derive(Clone)]
struct Connector {
    http: HttpConnector,
    early: Arc<Mutex<Option<Early>>>,
}

/// A non-blocking TCP socket whose connection attempt to `addr` has been sent (with
/// `TCP_NODELAY`, as the pool's connector sets it).
fn start_connect(addr: SocketAddr) -> std::io::Result<std::net::TcpStream> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    socket.set_tcp_nodelay(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(socket.into())
}

/// `(host, port)` of an `http` URI (the port defaulted), the key of an early connection.
fn host_key(uri: &Uri) -> Option<(String, u16)> {
    if uri.scheme_str() != Some("http") {
        return None;
    }
    let host = uri.host()?.to_ascii_lowercase();
    Some((host, uri.port_u16().unwrap_or(80)))
}

/// Whether a connection nobody has written to yet is still open and quiet: the server
/// has neither closed it (a read would see the end) nor sent anything unasked.
fn still_open(io: &TokioIo<TcpStream>) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    matches!(io.inner().poll_peek(&mut cx, &mut buf), Poll::Pending)
}

type ConnectFuture = Pin<
    Box<
        dyn Future<Output = Result<TokioIo<TcpStream>, Box<dyn std::error::Error + Send + Sync>>>
            + Send,
    >,
>;

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<TcpStream>;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = ConnectFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower_service::Service::<Uri>::poll_ready(&mut self.http, cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let early = {
            let mut slot = self.early.lock().unwrap_or_else(|e| e.into_inner());
            match (slot.as_ref(), host_key(&uri)) {
                (Some(e), Some(key)) if e.key == key => slot.take(),
                _ => None,
            }
        };
        let mut http = self.http.clone();
        Box::pin(async move {
            if let Some(early) = early {
                if early.opened.elapsed() < EARLY_MAX_AGE {
                    if let Ok(Some(io)) = early.task.await {
                        if still_open(&io) {
                            return Ok(io);
                        }
                    }
                }
            }
            tower_service::Service::call(&mut http, uri)
                .await
                .map_err(Into::into)
        })
    }
}

/// Re-exported so callers can build header values without naming hyper.
pub use hyper::header::HeaderValue as Value;
