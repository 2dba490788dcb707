//! Test fixtures: real servers started as child processes on loopback, for the tests
//! that need what a user would run (PostgreSQL, NATS).
//!
//! Each server runs under a small `sh` guard that holds the server's PID and whose stdin
//! is a pipe from the test process: when the test process ends, however it ends, the pipe
//! closes and the guard stops the server it started. Nothing is left running and nothing
//! else is touched.

mod guard;
mod nats;
mod postgres;

pub use nats::NatsServer;
pub use postgres::Postgres;

use std::net::TcpListener;

/// A TCP port free on 127.0.0.1 now.
///
/// # Panics
/// When no port can be bound.
#[allow(clippy::expect_used)] // a fixture: failing to find a port fails the test
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding a free loopback port")
        .port()
}

/// Whether this process runs as root (servers such as PostgreSQL refuse to).
pub fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
