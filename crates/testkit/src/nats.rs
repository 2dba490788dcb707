//! A NATS server for tests: `nats-server` (with JetStream, `-js`) on a free loopback port.

use std::time::{Duration, Instant};

use crate::free_port;
use crate::guard::Guard;

/// A running `nats-server`; stopped when dropped (or when the test process ends).
pub struct NatsServer {
    port: u16,
    dir: tempfile::TempDir,
    guard: Guard,
}

impl NatsServer {
    /// Starts a server on a free port.
    ///
    /// # Errors
    /// When `nats-server` is not installed or does not accept connections in time.
    pub fn start() -> Result<NatsServer, String> {
        let dir = tempfile::Builder::new()
            .prefix("osprey-nats-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let server = NatsServer {
            port: free_port(),
            dir,
            guard: Guard::default(),
        };
        server.run()?;
        Ok(server)
    }

    fn run(&self) -> Result<(), String> {
        let store = self.dir.path().join("js");
        let log = self.dir.path().join("server.log");
        self.guard.start(
            &format!(
                "nats-server -a 127.0.0.1 -p {} -js -sd '{}' >>'{}' 2>&1",
                self.port,
                store.display(),
                log.display()
            ),
            "kill -TERM $pid; wait $pid",
        )?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!(
                    "nats-server did not accept connections in 20 s (is it installed?):\n{log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stops the server and waits for it to exit.
    pub fn stop(&self) {
        self.guard.stop();
    }

    /// Stops the server and starts it again on the same port.
    ///
    /// # Errors
    /// As [`Self::start`].
    pub fn restart(&self) -> Result<(), String> {
        self.stop();
        self.run()
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}
