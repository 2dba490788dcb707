//! WS-ResourceFramework 1.2 and WS-BaseNotification 1.3 for Osprey services.
//!
//! A stateful service keeps its resources in a [`ResourceHome`]: each resource is a
//! value of a bound type ([`ResourceState`]) that is also its resource property
//! document, addressed by an endpoint reference whose reference parameter carries its
//! key. [`with_wsrf`] adds the standard port types to a service: GetResourceProperty,
//! GetResourcePropertyDocument, GetMultipleResourceProperties, QueryResourceProperties
//! (an [`xpath`] subset), SetResourceProperties, Destroy, SetTerminationTime, Subscribe
//! and the subscription manager (Unsubscribe, Renew, PauseSubscription,
//! ResumeSubscription).
//!
//! Every change is durable in the `osprey-store` before it is acknowledged, and
//! subscribers of a changed property are notified after that, in order, off the request
//! path ([`notify`]). Time comes from an injected [`Clock`], so lifetimes are tested
//! without sleeping.
//!
//! Protocol parts ([`messages`], [`topic`], [`xpath`], [`doc`], [`WsrfError`]) do no
//! I/O and read no clock.

pub mod client;
pub mod clock;
pub mod doc;
mod error;
mod home;
pub mod messages;
pub mod notify;
pub mod ns;
mod service;
pub mod topic;
pub mod xpath;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::WsrfError;
pub use home::{
    HomeConfig, ResourceHome, ResourceState, CURRENT_TIME, SUBSCRIPTION_KEY, TERMINATION_TIME,
};
pub use osprey_addressing::EndpointReference;
pub use service::{endpoint_address, fault, reference_parameter, with_wsrf};
