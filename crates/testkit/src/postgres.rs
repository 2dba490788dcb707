//! A PostgreSQL server for tests: `initdb` into a temporary directory and `postgres` on a
//! free loopback port, as `nobody` when the tests run as root.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::guard::Guard;
use crate::{free_port, running_as_root};

/// A running PostgreSQL server (trust authentication, superuser `osprey`).
pub struct Postgres {
    port: u16,
    _dir: tempfile::TempDir,
    guard: Guard,
}

/// The directory holding `initdb` and `postgres`: `$OSPREY_PG_BIN`, else `PATH`, else
/// Debian's `/usr/lib/postgresql/<version>/bin` (newest first).
fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("OSPREY_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").is_file() && dir.join("postgres").is_file() {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop()
}

/// `sh` quoting.
fn q(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

impl Postgres {
    /// The server shared by every test of this process, started on first use.
    ///
    /// # Panics
    /// When PostgreSQL is not installed or does not start (`scripts/test` installs it).
    pub fn shared() -> &'static Postgres {
        static PG: OnceLock<Postgres> = OnceLock::new();
        PG.get_or_init(|| match Postgres::start() {
            Ok(pg) => pg,
            Err(e) => panic!("PostgreSQL for the tests: {e}"),
        })
    }

    /// Starts a new server.
    ///
    /// # Errors
    /// When the binaries are missing or the server does not accept connections in time.
    pub fn start() -> Result<Postgres, String> {
        let bin = bin_dir().ok_or(
            "initdb and postgres were not found (install Debian's postgresql, or set \
             OSPREY_PG_BIN)",
        )?;
        let dir = tempfile::Builder::new()
            .prefix("osprey-pg-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        // PostgreSQL refuses to run as root: run it as nobody, in a directory it owns.
        let as_user = if running_as_root() {
            let status = Command::new("chown")
                .args(["-R", "nobody:"])
                .arg(dir.path())
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !status.success() {
                return Err("chown of the data directory failed".into());
            }
            "setpriv --reuid=nobody --regid=nogroup --clear-groups "
        } else {
            ""
        };
        let initdb = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{as_user}{} -D {} -U osprey --auth=trust --no-sync -E UTF8 --locale=C",
                q(&bin.join("initdb")),
                q(&data)
            ))
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !initdb.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&initdb.stderr)
            ));
        }
        let port = free_port();
        // The guard: starts the server, waits for its stdin to close (the test process
        // ended or dropped the fixture), then stops the server it started, by PID, and
        // removes its files (a fixture held in a static is never dropped).
        let pg = Postgres {
            port,
            guard: Guard::default(),
            _dir: dir,
        };
        let dir = pg._dir.path();
        pg.guard.start(
            &format!(
                "{as_user}{} -D {} -p {port} -h 127.0.0.1 -k {} >{} 2>&1",
                q(&bin.join("postgres")),
                q(&data),
                q(dir),
                q(&dir.join("server.log")),
            ),
            &format!("kill -INT $pid; wait $pid; rm -rf {}", q(dir)),
        )?;
        // It listens before it has finished starting up: wait for its own word.
        let deadline = Instant::now() + Duration::from_secs(30);
        let log = pg._dir.path().join("server.log");
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("ready to accept connections")
                && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                return Ok(pg);
            }
            if Instant::now() > deadline {
                return Err(format!("postgres did not become ready in 30 s:\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A libpq connection string for database `postgres` as superuser `osprey`.
    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=osprey dbname=postgres",
            self.port
        )
    }

    /// Stops the server and waits for it to exit.
    pub fn stop(&self) {
        self.guard.stop();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
