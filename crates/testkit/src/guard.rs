//! The guard every fixture server runs under: `sh` starts the server, holds its PID, and
//! stops it when its stdin (a pipe from the test process) closes, so that a server never
//! outlives the tests, however they end.

use std::io::Write as _;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// A server started by [`Guard::start`]; stopped by [`Guard::stop`] or when the test
/// process ends.
#[derive(Default)]
pub(crate) struct Guard {
    running: Mutex<Option<(Child, ChildStdin)>>,
}

impl Guard {
    /// Runs `start` (a shell command that starts the server in the background as `$!`),
    /// then waits for stdin to close, then runs `stop` (which may use `$pid`).
    pub(crate) fn start(&self, start: &str, stop: &str) -> Result<(), String> {
        let script = format!("{start} & pid=$!; read _ ; {stop}");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting a server: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        *self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((child, stdin));
        Ok(())
    }

    /// Tells the guard to stop its server and waits until it has.
    pub(crate) fn stop(&self) {
        let taken = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some((mut child, mut stdin)) = taken {
            let _ = stdin.write_all(b"\n");
            drop(stdin);
            let _ = child.wait();
        }
    }
}
