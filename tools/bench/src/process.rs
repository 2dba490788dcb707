//! The experiments' child processes (containers, workers, `nats-server`): started with
//! their log read until a readiness line, and stopped by PID (SIGTERM, then wait). The
//! tests that start `osprey` processes use [`await_ready`] too.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A child process, stopped when dropped: SIGTERM (a graceful stop), then a wait until
/// it is gone.
pub(crate) struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .args(["-TERM", &self.0.id().to_string()])
                .status();
        }
        #[cfg(not(unix))]
        {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// Starts `cmd` with its stderr read until a line containing `ready` (returned; see
/// [`await_ready`]). `what` names it in errors.
pub(crate) fn start_until(
    mut cmd: Command,
    ready: &str,
    what: &str,
) -> Result<(Proc, String), String> {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {what}: {e}"))?;
    // Stopped (SIGTERM, then waited for) if it never gets ready.
    let mut proc = Proc(child);
    let line = await_ready(&mut proc.0, ready, what)?;
    Ok((proc, line))
}

/// Reads `child`'s stderr (piped) until a line containing `ready`, among its first 100
/// lines, and returns it; the rest is drained in the background so that the child never
/// blocks on a full pipe. `what` names the child in the error, which carries the lines it
/// logged.
///
/// # Errors
/// When stderr is not piped, or ends or runs past 100 lines without that line.
pub fn await_ready(child: &mut Child, ready: &str, what: &str) -> Result<String, String> {
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| format!("{what}: stderr is not piped"))?;
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    let line = lines
        .by_ref()
        .take(100)
        .map_while(Result::ok)
        .inspect(|l| seen.push(l.clone()))
        .find(|l| l.contains(ready));
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    line.ok_or_else(|| format!("{what} did not start:\n{}", seen.join("\n")))
}

/// The first whitespace-separated word after `marker` in `line` (the URL of a
/// readiness line such as `serving echo at http://...`).
pub(crate) fn word_after(line: &str, marker: &str) -> Option<String> {
    line.split(marker)
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .map(str::to_owned)
}
