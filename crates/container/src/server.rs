//! Starting the container: listeners for each configured address, and shutdown.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use osprey_transport::http::{HttpConfig, HttpServer, ThreadInit};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{Config, Dispatcher};

/// A started container.
pub struct Running {
    /// The addresses actually bound (port 0 resolved).
    pub addrs: Vec<SocketAddr>,
    tasks: Vec<JoinHandle<io::Result<()>>>,
}

impl Running {
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
        Ok(Running { addrs, tasks })
    }
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
/// completes. Returns once all listeners are bound, so the container is warm.
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
