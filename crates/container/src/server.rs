//! Starting the container: listeners for each configured address, and shutdown.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use osprey_transport::http::{HeaderValue, HttpConfig, HttpConnection, HttpServer, ThreadInit};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{Config, Dispatcher};

/// A started container.
pub struct Running {
    /// The addresses actually bound (port 0 resolved).
    pub addrs: Vec<SocketAddr>,
    /// Serving threads of each listener, in the order of `addrs`.
    workers: Vec<usize>,
    /// The hosted services' paths.
    paths: Vec<String>,
    tasks: Vec<JoinHandle<io::Result<()>>>,
}

/// The action of the warm-up exchanges: no service has it, so each is answered with a
/// fault and changes nothing (the message is routed, and refused, before any handler of
/// the service's chain runs).
pub const WARM_UP_ACTION: &str = "urn:osprey:warm-up";

/// How long the warm-up waits for each answer.
const WARM_UP_TIMEOUT: Duration = Duration::from_secs(5);

impl Running {
    /// Runs a request through every serving thread of every listener before clients
    /// come: for each thread, one connection from this process that POSTs a SOAP 1.1
    /// envelope with WS-Addressing headers and the action [`WARM_UP_ACTION`] to each
    /// service's path, which the dispatcher answers with a fault. Connections reach the
    /// threads in turn (see [`HttpServer::workers`]), so each thread has parsed,
    /// dispatched and answered a message, and has a connection's buffers, before the
    /// first client's request: a container's first request costs what a later client's
    /// does (the lazy-initialisation experiment's case 1 against case 2). Returns the
    /// exchanges made; one that fails is logged and the rest go on.
    pub async fn warm_up(&self) -> usize {
        let started = Instant::now();
        let mut done = 0;
        for (addr, &workers) in self.addrs.iter().zip(&self.workers) {
            let target = local_target(*addr);
            for _ in 0..workers {
                match tokio::time::timeout(WARM_UP_TIMEOUT, self.warm_up_one(target)).await {
                    Ok(Ok(n)) => done += n,
                    Ok(Err(e)) => tracing::warn!(%target, error = %e, "warm-up exchange failed"),
                    Err(_) => tracing::warn!(%target, "warm-up exchange timed out"),
                }
            }
        }
        tracing::debug!(
            exchanges = done,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "warmed up"
        );
        done
    }

    /// One connection to `target` with a warm-up exchange per service path.
    async fn warm_up_one(&self, target: SocketAddr) -> Result<usize, String> {
        let mut conn = HttpConnection::connect(target)
            .await
            .map_err(|e| e.to_string())?;
        let headers = [
            (
                "content-type",
                HeaderValue::from_static("text/xml; charset=utf-8"),
            ),
            (
                "soapaction",
                HeaderValue::from_str(&format!("\"{WARM_UP_ACTION}\""))
                    .map_err(|e| e.to_string())?,
            ),
        ];
        let mut n = 0;
        for path in &self.paths {
            let body = warm_up_envelope();
            let r = conn
                .post(path, &headers, body)
                .await
                .map_err(|e| e.to_string())?;
            if r.status != 500 {
                return Err(format!("{path} answered {} instead of a fault", r.status));
            }
            n += 1;
        }
        Ok(n)
    }

    /// Waits until every listener has shut down and in-flight exchanges finished.
    ///
    /// # Errors
    /// When a listener task failed.
    pub async fn wait(self) -> io::Result<()> {
        for t in self.tasks {
            t.await.map_err(io::Error::other)??;
        }
        Ok(())
    }
}

/// The bound listeners of a container that is not serving yet.
///
/// Binding comes first at start-up: from then on the kernel completes clients'
/// connections and queues them, so a client that connects while the services are still
/// being built waits for its answer instead of being refused and retrying.
pub struct Listeners {
    servers: Vec<HttpServer>,
}

impl Listeners {
    /// The addresses actually bound (port 0 resolved), in configuration order.
    ///
    /// # Errors
    /// When a socket cannot report its address.
    pub fn addrs(&self) -> io::Result<Vec<SocketAddr>> {
        self.servers.iter().map(HttpServer::local_addr).collect()
    }

    /// Serves `dispatcher` on every listener until `shutdown` completes.
    ///
    /// # Errors
    /// When a socket cannot report its address.
    pub fn serve(
        self,
        dispatcher: Dispatcher,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<Running> {
        let addrs = self.addrs()?;
        let workers = self.servers.iter().map(HttpServer::workers).collect();
        let paths = dispatcher.registry().paths().map(str::to_owned).collect();
        let mut servers = self.servers;
        let buses = dispatcher.buses();
        if !buses.is_empty() {
            let init: ThreadInit = Arc::new(move |thread| {
                let buses = buses.clone();
                Box::pin(async move {
                    for bus in &buses {
                        if let Err(e) = bus.attach_thread().await {
                            tracing::warn!(
                                thread,
                                bus = %bus.describe(),
                                error = %e,
                                "no connection of this thread's own; using the shared one"
                            );
                        }
                    }
                })
            });
            for server in &mut servers {
                server.on_thread_start(init.clone());
            }
        }
        let dispatcher = Arc::new(dispatcher);
        let (stop_tx, stop_rx) = watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        });
        let mut tasks = Vec::new();
        for server in servers {
            let mut stop = stop_rx.clone();
            let d = dispatcher.clone();
            tasks.push(tokio::spawn(async move {
                server
                    .serve(d, async move {
                        let _ = stop.wait_for(|s| *s).await;
                    })
                    .await
            }));
        }
        Ok(Running {
            addrs,
            workers,
            paths,
            tasks,
        })
    }
}

/// Where this process reaches its own listener on `addr`: the address itself, or the
/// loopback address of its family when it listens on all addresses.
fn local_target(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// The warm-up request: WS-Addressing headers as a client sends them, an empty body.
fn warm_up_envelope() -> Bytes {
    Bytes::from(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\" \
         xmlns:wsa=\"http://www.w3.org/2005/08/addressing\"><soap:Header>\
         <wsa:Action>{WARM_UP_ACTION}</wsa:Action>\
         <wsa:MessageID>{}</wsa:MessageID></soap:Header><soap:Body/></soap:Envelope>",
        osprey_addressing::new_message_id()
    ))
}

/// Binds every listen address of `config` (see [`Listeners`]).
///
/// # Errors
/// When an address cannot be bound or the configuration's durations are invalid.
pub async fn bind(config: &Config) -> io::Result<Listeners> {
    let http = HttpConfig {
        max_body: config.limits.max_message_size,
        read_timeout: config.read_timeout().map_err(io::Error::other)?,
        shutdown_grace: config.shutdown_grace().map_err(io::Error::other)?,
        workers: config.server.workers,
    };
    let mut servers = Vec::new();
    for addr in &config.server.listen {
        servers.push(
            HttpServer::bind(*addr, http.clone())
                .await
                .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?,
        );
    }
    Ok(Listeners { servers })
}

/// Binds every listen address of `config` and serves `dispatcher` until `shutdown`
/// completes. Returns once all listeners are bound (clients connecting from then on are
/// queued, not refused); [`Running::warm_up`] is the caller's to run.
///
/// # Errors
/// When an address cannot be bound or the configuration's durations are invalid.
pub async fn run(
    config: &Config,
    dispatcher: Dispatcher,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<Running> {
    bind(config).await?.serve(dispatcher, shutdown)
}

/// A future that completes on SIGTERM or SIGINT (Ctrl-C). The handlers are installed
/// when this is called, not when the future is first polled: call it before binding, so that
/// a signal arriving once the container is ready always shuts it down gracefully.
///
/// # Errors
/// When the signal handlers cannot be installed (or outside a tokio runtime).
pub fn shutdown_signal() -> io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            tracing::info!("shutting down: finishing in-flight requests");
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async move {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down: finishing in-flight requests");
        })
    }
}
