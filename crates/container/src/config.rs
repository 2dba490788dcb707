//! The TOML configuration: listeners, limits, services and their handler chains.
//!
//! ```toml
//! [server]
//! listen = ["127.0.0.1:8080"]
//! read_timeout = "10s"
//!
//! [limits]
//! max_message_size = 16777216
//! max_depth = 64
//!
//! [data]
//! dir = "osprey-data"      # where stateful services keep their state (SQLite)
//! sync = "disk"            # or "os": see DataConfig::sync
//! # postgres = "host=127.0.0.1 port=5432 user=osprey dbname=osprey"
//! #                        # keep resources in PostgreSQL, shared by several containers
//!
//! [notifications]          # WS-BaseNotification delivery (osprey-wsrf's DeliveryConfig)
//! attempts = 5
//! on_failure = "drop"      # or "unsubscribe"
//!
//! [bus]                    # where placed handlers run
//! # nats = "nats://127.0.0.1:4222"   # absent: an in-process bus (workers in this process)
//! timeout = "2s"           # time allowed for a worker's answer
//! prefix = "osprey.handler"          # subject of handler NAME: <prefix>.NAME
//! mode = "sequential"      # or "chained": each worker forwards to the next stage
//!
//! [[service]]
//! name = "echo"            # which built-in service
//! path = "/wstest"
//! handlers = ["access-log", "body-digest"]
//! remote = ["body-digest"] # these run on workers (`osprey handler-worker`)
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use osprey_xml::Limits;
use serde::Deserialize;
use thiserror::Error;

/// The whole configuration.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Listener settings.
    #[serde(default)]
    pub server: ServerConfig,
    /// Message limits (`[limits]`, the fields of [`osprey_xml::Limits`]).
    #[serde(default)]
    pub limits: Limits,
    /// Where stateful services keep their state.
    #[serde(default)]
    pub data: DataConfig,
    /// Where placed handlers run.
    #[serde(default)]
    pub bus: BusConfig,
    /// Handler settings, `[handler.NAME]` (read by the handler named).
    #[serde(default, rename = "handler")]
    pub handler_settings: std::collections::BTreeMap<String, toml::Table>,
    /// Notification delivery settings, read by `osprey-wsrf` (`DeliveryConfig`), which
    /// checks their names and values.
    #[serde(default)]
    pub notifications: toml::Table,
    /// Hosted services.
    #[serde(default = "default_services", rename = "service")]
    pub services: Vec<ServiceConfig>,
}

/// `[data]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DataConfig {
    /// Directory of the SQLite database (`osprey-data`, relative to the working
    /// directory).
    pub dir: PathBuf,
    /// When an acknowledged change is safe: `"disk"` (flushed before the answer: it
    /// survives a machine crash) or `"os"` (in the operating system before the answer: it
    /// survives a crash or kill of the container; flushed at checkpoints).
    pub sync: SyncMode,
    /// A PostgreSQL database (libpq `key=value` string or `postgresql://` URL) that keeps
    /// the resources instead of `dir`, so that every container configured with it serves
    /// the same resources.
    pub postgres: Option<String>,
    /// Connections each container opens to `postgres`.
    pub postgres_connections: usize,
}

/// `[data] sync`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Flush each group commit to the disk before answering.
    #[default]
    Disk,
    /// Hand each commit to the operating system before answering.
    Os,
}

impl Default for DataConfig {
    fn default() -> Self {
        DataConfig {
            dir: PathBuf::from("osprey-data"),
            sync: SyncMode::Disk,
            postgres: None,
            postgres_connections: 4,
        }
    }
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Addresses to listen on.
    pub listen: Vec<SocketAddr>,
    /// Time allowed for a request head, or each chunk of a body (`"10s"`, `"500ms"`).
    pub read_timeout: String,
    /// Time allowed for in-flight exchanges at shutdown.
    pub shutdown_grace: String,
    /// Threads serving connections, each with its own single-threaded runtime (0: one per
    /// core).
    pub workers: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: vec![SocketAddr::from(([127, 0, 0, 1], 8080))],
            read_timeout: "10s".into(),
            shutdown_grace: "30s".into(),
            workers: 0,
        }
    }
}

/// One `[[service]]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    /// The built-in service to host (`"echo"`).
    pub name: String,
    /// Path it is served at (`"/wstest"`).
    pub path: String,
    /// Handlers of its chain, by name; each runs in the phase its type belongs to.
    #[serde(default)]
    pub handlers: Vec<String>,
    /// Which of `handlers` run on workers reached over the bus, not in process.
    #[serde(default)]
    pub remote: Vec<String>,
    /// Which of the remote handlers are independent of each other: those of one phase
    /// are asked at the same time, their changes merged in the order of `handlers`.
    #[serde(default)]
    pub parallel: Vec<String>,
}

/// `[bus]`: how placed handlers are reached.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BusConfig {
    /// A NATS server (`nats://host:port`); `None`: the in-process bus, whose workers
    /// this container runs itself.
    pub nats: Option<String>,
    /// Time allowed for a worker's answer (`"2s"`).
    pub timeout: String,
    /// Subject prefix: handler `NAME` is served on `<prefix>.NAME`.
    pub prefix: String,
    /// How consecutive remote handlers run: `"sequential"` (each a round trip from the
    /// container) or `"chained"` (each worker forwards to the next).
    pub mode: crate::ChainMode,
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            nats: None,
            timeout: "2s".into(),
            prefix: "osprey.handler".into(),
            mode: crate::ChainMode::Sequential,
        }
    }
}

fn default_services() -> Vec<ServiceConfig> {
    vec![
        ServiceConfig {
            name: "echo".into(),
            path: "/wstest".into(),
            handlers: Vec::new(),
            remote: Vec::new(),
            parallel: Vec::new(),
        },
        ServiceConfig {
            name: "counter".into(),
            path: "/counter".into(),
            handlers: Vec::new(),
            remote: Vec::new(),
            parallel: Vec::new(),
        },
    ]
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server: ServerConfig::default(),
            limits: Limits::default(),
            handler_settings: std::collections::BTreeMap::new(),
            bus: BusConfig::default(),
            data: DataConfig::default(),
            notifications: toml::Table::new(),
            services: default_services(),
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is invalid or has unknown keys.
    #[error("invalid configuration: {0}")]
    Toml(#[from] toml::de::Error),
    /// A value is out of range or unknown.
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Parses and validates a configuration.
    ///
    /// # Errors
    /// [`ConfigError`] for invalid TOML, unknown keys, or invalid values.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let config: Config = toml::from_str(text)?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and validates a configuration file.
    ///
    /// # Errors
    /// As [`Config::parse`], and when the file cannot be read.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text)
    }

    /// Checks values a parse cannot.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the offending value.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.read_timeout()?;
        self.shutdown_grace()?;
        if self.server.listen.is_empty() {
            return Err(ConfigError::Invalid("server.listen is empty".into()));
        }
        let l = &self.limits;
        for (name, v) in [
            ("max_message_size", l.max_message_size),
            ("max_depth", l.max_depth),
            ("max_elements", l.max_elements),
            ("max_name_len", l.max_name_len),
        ] {
            if v == 0 {
                return Err(ConfigError::Invalid(format!(
                    "limits.{name} must be positive"
                )));
            }
        }
        let mut paths: Vec<&str> = Vec::new();
        for s in &self.services {
            if !s.path.starts_with('/') {
                return Err(ConfigError::Invalid(format!(
                    "service path {:?} must start with '/'",
                    s.path
                )));
            }
            if paths.contains(&s.path.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "two services at path {:?}",
                    s.path
                )));
            }
            paths.push(&s.path);
            if let Some(p) = s.parallel.iter().find(|p| !s.remote.contains(p)) {
                return Err(ConfigError::Invalid(format!(
                    "service {:?}: parallel handler {p:?} is not remote",
                    s.path
                )));
            }
            if let Some(r) = s.remote.iter().find(|r| !s.handlers.contains(r)) {
                return Err(ConfigError::Invalid(format!(
                    "service {:?}: remote handler {r:?} is not in its handlers",
                    s.path
                )));
            }
        }
        self.bus_timeout()?;
        Ok(())
    }

    /// `bus.timeout` as a duration.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when it is not a positive duration.
    pub fn bus_timeout(&self) -> Result<Duration, ConfigError> {
        parse_duration(&self.bus.timeout)
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "bus.timeout {:?} is not a duration like \"2s\"",
                    self.bus.timeout
                ))
            })
    }

    /// `server.read_timeout` as a duration.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when it is not a duration.
    pub fn read_timeout(&self) -> Result<Duration, ConfigError> {
        parse_duration(&self.server.read_timeout).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "server.read_timeout {:?} is not a duration like \"10s\"",
                self.server.read_timeout
            ))
        })
    }

    /// `server.shutdown_grace` as a duration.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] when it is not a duration.
    pub fn shutdown_grace(&self) -> Result<Duration, ConfigError> {
        parse_duration(&self.server.shutdown_grace).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "server.shutdown_grace {:?} is not a duration like \"30s\"",
                self.server.shutdown_grace
            ))
        })
    }
}

/// Parses `"250ms"`, `"10s"`, `"2m"` (a positive number and a unit).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return None,
    };
    (secs.is_finite() && secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_serve_echo_on_8080() {
        let c = Config::parse("").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.services[0].path, "/wstest");
        assert_eq!(c.limits, Limits::default());
    }

    #[test]
    fn full_config_parses() {
        let c = Config::parse(
            r#"
            [server]
            listen = ["127.0.0.1:0", "[::1]:0"]
            read_timeout = "500ms"
            [limits]
            max_depth = 10
            [[service]]
            name = "echo"
            path = "/a"
            handlers = ["access-log"]
            "#,
        )
        .unwrap();
        assert_eq!(c.read_timeout().unwrap(), Duration::from_millis(500));
        assert_eq!(c.limits.max_depth, 10);
        assert_eq!(c.services[0].handlers, ["access-log"]);
    }

    #[test]
    fn bad_configs_are_refused_with_reasons() {
        assert!(matches!(
            Config::parse("[server]\nbogus = 1"),
            Err(ConfigError::Toml(_))
        ));
        assert!(matches!(
            Config::parse("[server]\nread_timeout = \"soon\""),
            Err(ConfigError::Invalid(_))
        ));
        assert!(matches!(
            Config::parse("[limits]\nmax_depth = 0"),
            Err(ConfigError::Invalid(_))
        ));
        let twice = "[[service]]\nname='echo'\npath='/a'\n[[service]]\nname='echo'\npath='/a'";
        assert!(matches!(Config::parse(twice), Err(ConfigError::Invalid(_))));
    }
}
