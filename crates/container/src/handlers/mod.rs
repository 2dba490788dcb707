//! The handlers a configuration can name, each built from its `[handler.NAME]` settings.
//! WS-Addressing is not among them: the dispatcher reads it for every message, since
//! routing depends on it.

mod access_log;
mod audit;
mod body_digest;
mod rate_limit;
mod validate;
mod wsse;

use std::sync::Arc;

pub use access_log::AccessLog;
pub use audit::{AuditLog, AuditSettings};
pub use body_digest::{BodyDigest, DigestSettings, BODY_SHA256, HANDLERS_NS};
pub use rate_limit::{RateLimit, RateSettings};
pub use validate::SchemaValidation;
pub use wsse::{UsernameToken, WsseSettings, WSSE_NS, WSSE_USER, WSU_NS};

use osprey_wsdl::OperationDefinition;

use crate::Handler;

/// Names a configuration may use, and what they build.
pub const NAMES: [&str; 6] = [
    "access-log",
    "audit-log",
    "body-digest",
    "rate-limit",
    "schema-validate",
    "wsse-username",
];

/// The handler `name`, built from its settings (`[handler.NAME]`, an empty table when
/// the configuration has none) for requests to `operations` (which `schema-validate`
/// checks payloads against).
///
/// # Errors
/// An unknown name, or settings the handler refuses (with the reason).
pub fn build(
    name: &str,
    settings: &toml::Table,
    operations: &[OperationDefinition],
) -> Result<Arc<dyn Handler>, String> {
    fn parse<T: serde::de::DeserializeOwned>(name: &str, t: &toml::Table) -> Result<T, String> {
        toml::Value::Table(t.clone())
            .try_into()
            .map_err(|e| format!("[handler.{name}]: {e}"))
    }
    let handler: Arc<dyn Handler> = match name {
        "access-log" => Arc::new(AccessLog),
        "body-digest" => Arc::new(BodyDigest::new(&parse(name, settings)?)?),
        "audit-log" => Arc::new(AuditLog::new(&parse(name, settings)?)?),
        "rate-limit" => Arc::new(RateLimit::new(parse(name, settings)?)?),
        "wsse-username" => Arc::new(UsernameToken::new(parse(name, settings)?)?),
        "schema-validate" => Arc::new(SchemaValidation::new(operations)),
        _ => {
            return Err(format!(
                "unknown handler {name:?} (known: {})",
                NAMES.join(", ")
            ))
        }
    };
    Ok(handler)
}

/// The handler a configuration names, with default settings; `None` for an unknown name
/// or one that needs settings.
pub fn by_name(name: &str) -> Option<Arc<dyn Handler>> {
    build(name, &toml::Table::new(), &[]).ok()
}
