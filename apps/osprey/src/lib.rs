//! The `osprey` binary's library half: building a container from a configuration (so
//! that tests start exactly what `osprey serve` starts), and the dynamic client behind
//! `osprey call`.

pub mod call;

use std::sync::Arc;

use anyhow::{bail, Context};
use osprey_container::{handlers, Config, Dispatcher, Pipeline, Service, ServiceRegistry};

/// Built-in services a configuration can name.
pub const SERVICES: [&str; 1] = ["echo"];

/// The service a configuration names.
///
/// # Errors
/// When no built-in service has that name.
pub fn service_by_name(name: &str) -> anyhow::Result<Arc<dyn Service>> {
    match name {
        "echo" => Ok(Arc::new(osprey_echo::service())),
        _ => bail!(
            "unknown service {name:?} (built-in services: {})",
            SERVICES.join(", ")
        ),
    }
}

/// The dispatcher for `config`: every service, chain and WSDL built now.
///
/// # Errors
/// When the configuration names an unknown service or handler.
pub fn build_dispatcher(config: &Config) -> anyhow::Result<Dispatcher> {
    let mut registry = ServiceRegistry::new();
    for s in &config.services {
        let service = service_by_name(&s.name).with_context(|| format!("service at {}", s.path))?;
        let mut chain = Vec::new();
        for h in &s.handlers {
            let handler = handlers::by_name(h).with_context(|| {
                format!(
                    "unknown handler {:?} for {} (known: {})",
                    h,
                    s.path,
                    handlers::NAMES.join(", ")
                )
            })?;
            chain.push(handler);
        }
        registry.add(&s.path, service, Pipeline::new(chain));
    }
    Ok(Dispatcher::new(registry, config.limits.clone()))
}
