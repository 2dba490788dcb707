//! The handlers a configuration can name. WS-Addressing is not among them: the
//! dispatcher reads it for every message, since routing depends on it.

mod access_log;
mod body_digest;

use std::sync::Arc;

pub use access_log::AccessLog;
pub use body_digest::{BodyDigest, BODY_SHA256, HANDLERS_NS};

use crate::Handler;

/// Names a configuration may use, and what they build.
pub const NAMES: [&str; 2] = ["access-log", "body-digest"];

/// The handler a configuration names, or `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Arc<dyn Handler>> {
    match name {
        "access-log" => Some(Arc::new(AccessLog)),
        "body-digest" => Some(Arc::new(BodyDigest)),
        _ => None,
    }
}
