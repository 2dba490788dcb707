//! The container: hosts [`Service`]s, routes each SOAP message to an operation, and runs
//! the service's handler chain around it.
//!
//! The message path: a transport hands the [`Dispatcher`] an inbound message; it reads the
//! body under the configured limits, decodes the envelope, reads WS-Addressing headers,
//! finds the service (by path, else by `wsa:Action`) and the operation (by `wsa:Action`,
//! SOAPAction or payload element), checks `mustUnderstand` headers against what the
//! chain understands, runs the inbound [`Pipeline`], invokes the operation, runs the
//! pipeline outbound in reverse, and encodes the response. Errors of every stage are
//! [`ContainerError`]s, turned into SOAP faults in one place.
//!
//! Everything (services, chains, WSDL documents) is built before the first request.

mod config;
mod context;
mod dispatcher;
mod error;
mod handler;
pub mod handlers;
mod pipeline;
mod registry;
pub mod remote;
mod server;
mod service;

pub use config::{
    parse_duration, BusConfig, Config, ConfigError, DataConfig, ServerConfig, ServiceConfig,
    SyncMode,
};
pub use context::MessageContext;
pub use dispatcher::Dispatcher;
pub use error::ContainerError;
pub use handler::{Handler, Phase};
pub use pipeline::{ChainMode, Outcome, Pipeline, Stage};
pub use registry::{Route, ServiceRegistry};
pub use remote::Placement;
pub use server::{bind, run, shutdown_signal, Listeners, Running};
pub use service::{OperationFuture, Service, TypedService, TypedServiceBuilder};

pub use osprey_soap::{Fault, FaultCode, SoapVersion};
pub use osprey_wsdl::{ElementDefinition, OperationDefinition, ServiceDefinition};
