//! The handlers a configuration can name. WS-Addressing is not among them: the
//! dispatcher reads it for every message, since routing depends on it.

mod access_log;

use std::sync::Arc;

pub use access_log::AccessLog;

use crate::Handler;

/// Names a configuration may use, and what they build.
pub const NAMES: [&str; 1] = ["access-log"];

/// The handler a configuration names, or `None` for an unknown name.
pub fn by_name(name: &str) -> Option<Arc<dyn Handler>> {
    match name {
        "access-log" => Some(Arc::new(AccessLog)),
        _ => None,
    }
}
