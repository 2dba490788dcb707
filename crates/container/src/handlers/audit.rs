//! An audit log: one JSON line per request, appended to a file, before the operation runs.
//!
//! ```toml
//! [handler.audit-log]
//! file = "audit.log"
//! ```

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::{ContainerError, Handler, MessageContext, Phase};

/// `[handler.audit-log]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// The file lines are appended to (created if missing).
    #[serde(default = "default_file")]
    pub file: PathBuf,
}

fn default_file() -> PathBuf {
    PathBuf::from("osprey-audit.log")
}

/// Appends `{"time_ms":..,"peer":..,"path":..,"action":..,"user":..,"body_sha256":..,"bytes":..}`
/// per request. A line that cannot be written faults the request: an audit that can be
/// skipped is not an audit.
#[derive(Debug)]
pub struct AuditLog {
    file: Mutex<File>,
}

impl AuditLog {
    /// Opens (or creates) the log file.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn new(settings: &AuditSettings) -> Result<Self, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&settings.file)
            .map_err(|e| format!("audit log {}: {e}", settings.file.display()))?;
        Ok(AuditLog {
            file: Mutex::new(file),
        })
    }
}

/// `s` as a JSON string literal.
fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Handler for AuditLog {
    fn name(&self) -> &str {
        "audit-log"
    }

    fn phase(&self) -> Phase {
        Phase::Route
    }

    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let opt = |v: Option<&str>| v.map_or_else(|| "null".to_owned(), json);
        let line = format!(
            "{{\"time_ms\":{time_ms},\"peer\":{},\"path\":{},\"action\":{},\"user\":{},\"body_sha256\":{},\"bytes\":{}}}\n",
            opt(ctx.remote.map(|r| r.to_string()).as_deref()),
            json(&ctx.path),
            json(&ctx.action),
            opt(ctx.property(super::WSSE_USER)),
            opt(ctx.property(super::BODY_SHA256)),
            ctx.bytes.len()
        );
        self.file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .write_all(line.as_bytes())
            .map_err(|e| ContainerError::Panicked(format!("audit log: {e}")))
    }
}
