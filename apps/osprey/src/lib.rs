//! The `osprey` binary's library half: building a container from a configuration (so
//! that tests start exactly what `osprey serve` starts), and the dynamic client behind
//! `osprey call`.

pub mod call;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use osprey_bus::{Bus, LocalBus, NatsBus};
use osprey_container::{
    handlers, remote, Config, Dispatcher, Handler, OperationDefinition, Pipeline, Placement,
    Service, ServiceRegistry, Stage, SyncMode,
};
use osprey_counter::CounterState;
use osprey_store::{SharedStore, Store};
use osprey_wsrf::notify::DeliveryConfig;
use osprey_wsrf::{Clock, HomeConfig, ResourceHome, SystemClock};

/// Built-in services a configuration can name.
pub const SERVICES: [&str; 2] = ["echo", "counter"];

/// What the stateful services of one container share: one store (opened when the
/// first stateful service is built), the clock and the notification settings.
pub struct State {
    dir: Option<PathBuf>,
    sync: osprey_store::Sync,
    store: Option<Store>,
    postgres: Option<(String, usize)>,
    shared: Option<SharedStore>,
    delivery: DeliveryConfig,
    clock: Arc<dyn Clock>,
}

impl State {
    /// State kept under `config.data.dir`, with `config.notifications` for delivery.
    ///
    /// # Errors
    /// When `[notifications]` has unknown keys or wrong values.
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        let delivery: DeliveryConfig = toml::Value::Table(config.notifications.clone())
            .try_into()
            .context("invalid [notifications]")?;
        Ok(State {
            dir: Some(config.data.dir.clone()),
            sync: match config.data.sync {
                SyncMode::Disk => osprey_store::Sync::Disk,
                SyncMode::Os => osprey_store::Sync::Os,
            },
            store: None,
            postgres: config
                .data
                .postgres
                .clone()
                .map(|db| (db, config.data.postgres_connections)),
            shared: None,
            delivery,
            clock: Arc::new(SystemClock),
        })
    }

    /// State in memory only (for printing a WSDL, say): nothing is kept.
    pub fn ephemeral() -> Self {
        State {
            dir: None,
            sync: osprey_store::Sync::Os,
            store: None,
            postgres: None,
            shared: None,
            delivery: DeliveryConfig::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// The store, opened on first use (at start-up).
    ///
    /// # Errors
    /// When the database cannot be opened.
    pub fn store(&mut self) -> anyhow::Result<Store> {
        if let Some(s) = &self.store {
            return Ok(s.clone());
        }
        let store = match &self.dir {
            Some(dir) => {
                let path = dir.join("osprey.db");
                let store = Store::open_sqlite_with(&path, self.sync)
                    .with_context(|| format!("opening the state store {}", path.display()))?;
                tracing::info!("state in {} (sync: {:?})", path.display(), self.sync);
                store
            }
            None => Store::open_memory().context("opening a memory store")?,
        };
        self.store = Some(store.clone());
        Ok(store)
    }

    /// The PostgreSQL store, when one is configured, connected on first use (at
    /// start-up).
    ///
    /// # Errors
    /// When the database cannot be reached.
    pub fn shared_store(&mut self) -> anyhow::Result<Option<SharedStore>> {
        let Some((db, connections)) = &self.postgres else {
            return Ok(None);
        };
        if self.shared.is_none() {
            let store = SharedStore::connect(db, *connections)
                .context("connecting to the PostgreSQL state store")?;
            tracing::info!("state in PostgreSQL ({store:?})");
            self.shared = Some(store);
        }
        Ok(self.shared.clone())
    }

    /// The counter resources, loaded from the store (or, with PostgreSQL, read from the
    /// database as they are used). Their sweeper (scheduled destruction) runs when a
    /// tokio runtime is current.
    ///
    /// # Errors
    /// When the store cannot be opened or read.
    pub fn counter_home(&mut self) -> anyhow::Result<Arc<ResourceHome<CounterState>>> {
        let config = HomeConfig {
            kind: "counter".into(),
            key_name: osprey_counter::COUNTER_KEY,
            delivery: self.delivery.clone(),
        };
        let home = match self.shared_store()? {
            Some(shared) => ResourceHome::open_shared(config, shared, self.clock.clone()),
            None => {
                let home = ResourceHome::open(config, self.store()?, self.clock.clone())
                    .context("loading counters")?;
                if let Some(n) = home.in_memory() {
                    tracing::info!("{n} counters loaded");
                }
                home
            }
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            home.start_sweeper(Duration::from_millis(250));
        }
        Ok(home)
    }
}

/// The service a configuration names.
///
/// # Errors
/// When no built-in service has that name, or its state cannot be loaded.
pub fn service_by_name(name: &str, state: &mut State) -> anyhow::Result<Arc<dyn Service>> {
    match name {
        "echo" => Ok(Arc::new(osprey_echo::service())),
        "counter" => Ok(Arc::new(osprey_counter::service(&state.counter_home()?))),
        _ => bail!(
            "unknown service {name:?} (built-in services: {})",
            SERVICES.join(", ")
        ),
    }
}

/// The handler `name`, built from its `[handler.NAME]` settings in `config`, for requests
/// to `operations`.
///
/// # Errors
/// An unknown name, or settings it refuses.
pub fn handler_by_name(
    config: &Config,
    name: &str,
    operations: &[OperationDefinition],
) -> anyhow::Result<Arc<dyn Handler>> {
    let empty = toml::Table::new();
    let settings = config.handler_settings.get(name).unwrap_or(&empty);
    handlers::build(name, settings, operations).map_err(anyhow::Error::msg)
}

/// The operations of every built-in service (what a handler worker, which may serve any
/// of them, validates against).
///
/// # Errors
/// When a built-in service cannot be built.
pub fn builtin_operations() -> anyhow::Result<Vec<OperationDefinition>> {
    let mut state = State::ephemeral();
    let mut ops = Vec::new();
    for name in SERVICES {
        ops.extend(
            service_by_name(name, &mut state)?
                .definition()
                .operations
                .iter()
                .cloned(),
        );
    }
    Ok(ops)
}

/// The bus placed handlers are reached over: NATS when `[bus] nats` names a server,
/// else an in-process bus.
///
/// # Errors
/// When the NATS server cannot be reached within 10 s.
pub async fn connect_bus(config: &Config) -> anyhow::Result<Arc<dyn Bus>> {
    Ok(match &config.bus.nats {
        Some(url) => Arc::new(
            NatsBus::connect(url, Duration::from_secs(10))
                .await
                .with_context(|| format!("connecting to NATS at {url}"))?,
        ),
        None => Arc::new(LocalBus::new()),
    })
}

/// The dispatcher for `config`: every service, chain and WSDL built now, the bus of
/// placed handlers connected, and the state of stateful services loaded. Call it inside
/// a tokio runtime that lives as long as the dispatcher (it drives the bus connection and
/// background work such as scheduled destruction).
///
/// # Errors
/// When the configuration names an unknown service or handler, state cannot load, or
/// the bus cannot be reached.
pub async fn build_dispatcher(config: &Config) -> anyhow::Result<Dispatcher> {
    let mut registry = ServiceRegistry::new();
    let mut state = State::new(config)?;
    let placed = config.services.iter().any(|s| !s.remote.is_empty());
    let bus = if placed {
        Some(connect_bus(config).await?)
    } else {
        None
    };
    let timeout = config.bus_timeout()?;
    let mut local_workers = Vec::new();
    for s in &config.services {
        let service = service_by_name(&s.name, &mut state)
            .with_context(|| format!("service at {}", s.path))?;
        let mut chain = Vec::new();
        for h in &s.handlers {
            let handler = handler_by_name(config, h, &service.definition().operations)
                .with_context(|| format!("service at {}", s.path))?;
            let placement = match &bus {
                Some(bus) if s.remote.contains(h) => {
                    let subject = remote::subject(&config.bus.prefix, h);
                    if config.bus.nats.is_none()
                        && !local_workers.iter().any(|(s, _)| *s == subject)
                    {
                        local_workers.push((subject.clone(), handler.clone()));
                    }
                    Some(Placement {
                        bus: bus.clone(),
                        subject,
                        timeout,
                    })
                }
                _ => None,
            };
            chain.push(Stage {
                handler,
                placement,
                parallel: s.parallel.contains(h),
            });
        }
        registry.add(&s.path, service, Pipeline::placed(chain, config.bus.mode));
    }
    let dispatcher = Dispatcher::new(registry, config.limits.clone());
    // With the in-process bus, this container is its own worker.
    if let Some(bus) = &bus {
        for (subject, handler) in local_workers {
            let serving =
                remote::serve_handler(&**bus, &subject, handler, dispatcher.limits().clone())
                    .await
                    .with_context(|| format!("serving {subject} in process"))?;
            dispatcher.hold(serving);
        }
    }
    Ok(dispatcher)
}
