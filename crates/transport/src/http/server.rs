//! The HTTP listener: HTTP/1.1 keep-alive and h2c on one socket, read timeouts, and a
//! graceful shutdown that lets in-flight exchanges finish.
//!
//! Thread per core: the accept loop hands each connection to one of N single-threaded
//! runtimes (round robin), where the connection stays for its lifetime. No request wakes
//! another thread, and no task moves between cores (measured against tokio's work-stealing
//! scheduler in docs/benchmarks.md, "echoVoid against the ceiling").

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use super::body::{InboundBody, ResponseBody};
use crate::{InboundMessage, MessageService, Method, OutboundBody};

/// Listener settings.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest request body read, in bytes; larger ones get 413 unread.
    pub max_body: usize,
    /// How long a request head, or each chunk of a body, may take to arrive.
    pub read_timeout: Duration,
    /// How long shutdown waits for in-flight exchanges.
    pub shutdown_grace: Duration,
    /// Threads serving connections, each with its own single-threaded runtime (0: one per
    /// core).
    pub workers: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            max_body: 16 * 1024 * 1024,
            read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
            workers: 0,
        }
    }
}

/// Work each serving thread does once, on its own runtime, before it takes connections
/// (such as opening connections that its requests will use): called with the thread's
/// index.
pub type ThreadInit = Arc<dyn Fn(usize) -> Pin<Box<dyn Future<Output = ()>>> + Send + Sync>;

/// A bound HTTP listener.
pub struct HttpServer {
    listener: TcpListener,
    config: HttpConfig,
    thread_init: Option<ThreadInit>,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free port).
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn bind(addr: SocketAddr, config: HttpConfig) -> io::Result<Self> {
        Ok(HttpServer {
            listener: TcpListener::bind(addr).await?,
            config,
            thread_init: None,
        })
    }

    /// Sets the work each serving thread does before it takes connections; [`serve`]
    /// accepts once every thread has done it.
    ///
    /// [`serve`]: HttpServer::serve
    pub fn on_thread_start(&mut self, init: ThreadInit) {
        self.thread_init = Some(init);
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the socket cannot report it.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// How many serving threads [`serve`] starts: the configured number, or one per CPU
    /// the process may use. Connections go to them in turn, in the order they are
    /// accepted, so that many connections made one after another reach every thread.
    ///
    /// [`serve`]: HttpServer::serve
    pub fn workers(&self) -> usize {
        match self.config.workers {
            // `available_parallelism` reads the cgroup's CPU quota files.
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        }
    }

    /// Serves `service` until `shutdown` completes, then stops accepting and waits up to
    /// the grace period for open exchanges to finish.
    ///
    /// # Errors
    /// Never in practice: accept errors (such as running out of file descriptors) are
    /// logged and retried.
    pub async fn serve<S: MessageService>(
        self,
        service: Arc<S>,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        self.serve_with(service, shutdown, false).await
    }

    /// As [`Self::serve`], with every connection served on the caller's runtime: no thread
    /// of its own (`workers` and the thread start-up work are not used). For an endpoint a
    /// client embeds, such as a notification consumer, which then costs no thread start.
    ///
    /// # Errors
    /// As [`Self::serve`].
    pub async fn serve_inline<S: MessageService>(
        self,
        service: Arc<S>,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        self.serve_with(service, shutdown, true).await
    }

    async fn serve_with<S: MessageService>(
        self,
        service: Arc<S>,
        shutdown: impl Future<Output = ()>,
        inline: bool,
    ) -> io::Result<()> {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(self.config.read_timeout)
            .keep_alive(true);
        builder.http2().timer(TokioTimer::new());
        let builder = Arc::new(builder);
        let graceful = GracefulShutdown::new();
        let pool = if inline {
            None
        } else {
            let (pool, started) = WorkerPool::start(self.workers(), self.thread_init.clone())?;
            for s in started {
                let _ = s.await;
            }
            Some(pool)
        };
        let config = Arc::new(self.config);
        tokio::pin!(shutdown);
        let mut next = 0usize;
        loop {
            let (stream, remote) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let service = service.clone();
            let config = config.clone();
            let builder = builder.clone();
            let watcher = graceful.watcher();
            let serve = move |stream: tokio::net::TcpStream| async move {
                let svc = service_fn(move |req: Request<Incoming>| {
                    let service = service.clone();
                    let config = config.clone();
                    async move { Ok::<_, Infallible>(exchange(&*service, req, remote, &config).await) }
                });
                let conn = builder.serve_connection(TokioIo::new(stream), svc);
                if let Err(e) = watcher.watch(conn).await {
                    tracing::debug!(error = %e, %remote, "connection ended with an error");
                }
            };
            let Some(pool) = &pool else {
                // Served here: the socket stays registered with this runtime.
                tokio::spawn(serve(stream));
                continue;
            };
            // The socket moves to the worker's runtime: it must be registered there.
            let stream = match stream.into_std() {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "could not hand over a connection");
                    continue;
                }
            };
            next = next.wrapping_add(1);
            pool.spawn(next, async move {
                match tokio::net::TcpStream::from_std(stream) {
                    Ok(stream) => serve(stream).await,
                    Err(e) => tracing::warn!(error = %e, "could not register a connection"),
                }
            });
        }
        drop(self.listener);
        if tokio::time::timeout(config.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("shutdown grace period over; closing remaining connections");
        }
        if let Some(pool) = pool {
            pool.stop();
        }
        Ok(())
    }
}

/// N threads, each running a single-threaded tokio runtime until stopped.
struct WorkerPool {
    handles: Vec<tokio::runtime::Handle>,
    stops: Vec<tokio::sync::oneshot::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl WorkerPool {
    /// Starts `n` threads, each running `init` (if any) first; the receivers resolve as
    /// each thread is ready.
    fn start(
        n: usize,
        init: Option<ThreadInit>,
    ) -> io::Result<(Self, Vec<tokio::sync::oneshot::Receiver<()>>)> {
        let mut pool = WorkerPool {
            handles: Vec::new(),
            stops: Vec::new(),
            threads: Vec::new(),
        };
        let mut started = Vec::new();
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
            let init = init.clone();
            pool.handles.push(rt.handle().clone());
            pool.stops.push(tx);
            started.push(ready_rx);
            pool.threads.push(
                std::thread::Builder::new()
                    .name(format!("osprey-worker-{i}"))
                    .spawn(move || {
                        rt.block_on(async {
                            if let Some(init) = init {
                                init(i).await;
                            }
                            let _ = ready_tx.send(());
                            let _ = rx.await;
                        });
                    })?,
            );
        }
        Ok((pool, started))
    }

    fn spawn(&self, n: usize, task: impl Future<Output = ()> + Send + 'static) {
        self.handles[n % self.handles.len()].spawn(task);
    }

    /// Stops every worker (dropping connections still open) and joins the threads.
    fn stop(self) {
        drop(self.stops);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

async fn exchange<S: MessageService>(
    service: &S,
    req: Request<Incoming>,
    remote: SocketAddr,
    config: &HttpConfig,
) -> Response<ResponseBody> {
    let (parts, body) = req.into_parts();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let method = match parts.method {
        hyper::Method::GET => Method::Get,
        hyper::Method::POST => Method::Post,
        ref m => Method::Other(m.to_string()),
    };
    let declared = header(CONTENT_LENGTH.as_str()).and_then(|v| v.trim().parse().ok());
    let msg = InboundMessage {
        method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        content_type: header(CONTENT_TYPE.as_str()).map(str::to_owned),
        soap_action: header("soapaction").map(|v| v.trim().trim_matches('"').to_owned()),
        host: header(HOST.as_str())
            .map(str::to_owned)
            .or_else(|| parts.uri.authority().map(|a| a.to_string())),
        remote: Some(remote),
        body: InboundBody::new(body, declared, config.max_body, config.read_timeout),
    };
    let out = service.handle(msg).await;
    let body = match out.body {
        OutboundBody::Full(b) => ResponseBody::Full(Some(b)),
        OutboundBody::Stream(rx) => ResponseBody::Stream(rx),
    };
    let mut resp = Response::new(body);
    *resp.status_mut() =
        hyper::StatusCode::from_u16(out.status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(out.content_type));
    resp
}
