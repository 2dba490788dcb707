//! The distributed-handler experiment (Yildiz and Fox, "Measuring Overhead for
//! Distributed Web Service Handler"): N identical handlers in a service's chain, run in
//! process (the paper's Axis set-up) or each as a round trip to a worker process over
//! NATS (its DHArch set-up, sequential); 100 requests per step; the overhead per
//! handler is `(T_distributed - T_local) / N` (the paper's formula 1). The raw NATS
//! request/reply round trip with a 4 KB payload is measured in the same run as the
//! floor, and pipelined throughput (many requests in flight through the placed chain) is
//! compared with one request at a time.
//!
//! Containers and workers are separate processes (`osprey serve`, `osprey
//! handler-worker`); without `--nats` a `nats-server` child is started on a free
//! loopback port and stopped by PID at the end.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use indicatif::{ProgressBar, ProgressStyle};
use osprey_bus::{Bus, NatsBus};
use osprey_soap::SoapVersion;
use osprey_transport::http::HttpClient;
use serde::Serialize;

use crate::lifecycle::Stat;
use crate::wstest::{request_body, run_wstest, Operation, WsTestConfig};

/// The handler the experiment repeats: SHA-256 of the body (real work, idempotent).
pub const HANDLER: &str = "body-digest";

/// What to run.
#[derive(Debug, Clone)]
pub struct HandlersConfig {
    /// The `osprey` binary (containers and workers are started from it).
    pub binary: PathBuf,
    /// A NATS server; `None`: start `nats-server` on a free loopback port.
    pub nats: Option<String>,
    /// Handler counts, one step each (the paper: 1, 10, 20, 30, 40, 50).
    pub counts: Vec<usize>,
    /// Requests per step and set-up (the paper: 100).
    pub requests: usize,
    /// Worker processes serving the handler.
    pub workers: usize,
    /// Handlers in the pipelined-throughput comparison.
    pub pipelined_handlers: usize,
    /// Measured time of each throughput run.
    pub throughput_duration: Duration,
    /// Draw a progress bar.
    pub progress: bool,
}

impl Default for HandlersConfig {
    fn default() -> Self {
        HandlersConfig {
            binary: PathBuf::from("osprey"),
            nats: None,
            counts: vec![1, 10, 20, 30, 40, 50],
            requests: 100,
            workers: 1,
            pipelined_handlers: 10,
            throughput_duration: Duration::from_secs(3),
            progress: false,
        }
    }
}

/// One step: N handlers, local and distributed.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Handlers in the chain.
    pub handlers: usize,
    /// Request round trip with the chain in process (ms).
    pub local: Stat,
    /// Request round trip with every handler a round trip to a worker (ms).
    pub distributed: Stat,
    /// `(T_distributed - T_local) / N` on the means (ms), formula (1).
    pub overhead_ms: f64,
    /// The same on the medians (ms), less sensitive to a noisy shared machine.
    pub overhead_p50_ms: f64,
}

/// Pipelined against one-at-a-time throughput through a placed chain.
#[derive(Debug, Clone, Serialize)]
pub struct Pipelined {
    /// Placed handlers in the chain.
    pub handlers: usize,
    /// Requests/s with one request in flight.
    pub sequential_rps: f64,
    /// Requests/s with 16 connections.
    pub pipelined_rps: f64,
    /// Connections of the pipelined run.
    pub connections: usize,
}

/// The experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct HandlersReport {
    /// The NATS server used.
    pub nats: String,
    /// Bytes of each request (an echoStruct envelope).
    pub request_bytes: usize,
    /// Raw NATS request/reply round trip with a 4 KB payload (ms).
    pub nats_round_trip: Stat,
    /// The steps.
    pub steps: Vec<Step>,
    /// The pipelined comparison.
    pub pipelined: Option<Pipelined>,
    /// Worker processes.
    pub workers: usize,
    /// Requests per step.
    pub requests: usize,
    /// Wall time of the whole run (s).
    pub took_s: f64,
}

/// A child process stopped (SIGTERM, then wait) when dropped.
struct Proc(Child);

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

/// Starts `cmd` with its stderr read until a line containing `ready` (returned), then
/// drained in the background.
fn start_until(mut cmd: Command, ready: &str, what: &str) -> Result<(Proc, String), String> {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {what}: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let proc = Proc(child);
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    let line = lines
        .by_ref()
        .take(100)
        .map_while(Result::ok)
        .inspect(|l| seen.push(l.clone()))
        .find(|l| l.contains(ready));
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    match line {
        Some(l) => Ok((proc, l)),
        None => Err(format!("{what} did not start:\n{}", seen.join("\n"))),
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// `nats-server` on a free loopback port.
fn start_nats() -> Result<(Proc, String), String> {
    let port = free_port()?;
    let mut cmd = Command::new("nats-server");
    cmd.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
    let (p, _) = start_until(
        cmd,
        "Server is ready",
        "nats-server (install it, or pass --nats)",
    )?;
    Ok((p, format!("nats://127.0.0.1:{port}")))
}

/// `osprey serve` with echo at /wstest behind `n` body-digest handlers, placed on
/// workers over `nats` when given.
fn start_container(
    binary: &Path,
    dir: &Path,
    n: usize,
    nats: Option<&str>,
) -> Result<(Proc, String), String> {
    let mut toml = String::new();
    if let Some(url) = nats {
        toml.push_str(&format!("[bus]\nnats = \"{url}\"\ntimeout = \"10s\"\n\n"));
    }
    let chain = vec![format!("\"{HANDLER}\""); n].join(", ");
    toml.push_str(&format!(
        "[[service]]\nname = \"echo\"\npath = \"/wstest\"\nhandlers = [{chain}]\n"
    ));
    if nats.is_some() {
        toml.push_str(&format!("remote = [\"{HANDLER}\"]\n"));
    }
    let file = dir.join(format!("osprey-{n}-{}.toml", nats.is_some()));
    std::fs::write(&file, toml).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(binary);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .arg("--data")
        .arg(dir);
    let (p, line) = start_until(cmd, "serving echo at ", "osprey serve")?;
    let url = line
        .split("serving echo at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .ok_or("no URL in the readiness line")?
        .to_owned();
    Ok((p, url))
}

/// One echoStruct exchange; checks the answer and the digest header.
async fn exchange(client: &HttpClient, url: &str, body: &Bytes) -> Result<Duration, String> {
    let t = Instant::now();
    let r = client
        .post(
            url,
            "text/xml; charset=utf-8",
            &[("soapaction", "\"urn:wstest/echoStruct\"")],
            body.clone(),
        )
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let took = t.elapsed();
    let text = String::from_utf8_lossy(&r.body);
    if r.status != 200 || !text.contains("echoStructResponse") || !text.contains("BodyDigest") {
        return Err(format!("{url} answered {}: {text:.300}", r.status));
    }
    Ok(took)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Raw NATS request/reply with a 4 KB payload: `n` sequential round trips.
async fn nats_round_trip(url: &str, n: usize) -> Result<Stat, String> {
    let wait = Duration::from_secs(10);
    let server = NatsBus::connect(url, wait)
        .await
        .map_err(|e| e.to_string())?;
    let client = NatsBus::connect(url, wait)
        .await
        .map_err(|e| e.to_string())?;
    let _serving = server
        .serve(
            "osprey.bench.rtt",
            "osprey.bench.rtt",
            Arc::new(|p: Bytes| Box::pin(async move { osprey_bus::Answer::Reply(p) })),
        )
        .await
        .map_err(|e| e.to_string())?;
    let payload = Bytes::from(vec![b'x'; 4096]);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 5 {
        let t = Instant::now();
        client
            .request("osprey.bench.rtt", payload.clone(), wait)
            .await
            .map_err(|e| e.to_string())?;
        if i >= n / 5 {
            samples.push(ms(t.elapsed()));
        }
    }
    Stat::of(&samples).ok_or_else(|| "no samples".into())
}

/// Runs the experiment.
///
/// # Errors
/// When a process does not start, or an exchange fails or answers wrongly.
pub fn run(cfg: &HandlersConfig) -> Result<HandlersReport, String> {
    let started = Instant::now();
    let dir = std::env::temp_dir().join(format!("osprey-bench-handlers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = run_in(cfg, &dir, started);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(cfg: &HandlersConfig, dir: &Path, started: Instant) -> Result<HandlersReport, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (_nats_proc, nats) = match &cfg.nats {
        Some(u) => (None, u.clone()),
        None => {
            let (p, u) = start_nats()?;
            (Some(p), u)
        }
    };
    let mut workers = Vec::new();
    for _ in 0..cfg.workers.max(1) {
        let mut cmd = Command::new(&cfg.binary);
        cmd.args(["handler-worker", "--nats", &nats, "--handler", HANDLER]);
        workers.push(start_until(cmd, "handler-worker ready", "osprey handler-worker")?.0);
    }
    let bar = if cfg.progress {
        let b = ProgressBar::new((cfg.counts.len() * cfg.requests * 2) as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} handlers {msg} [{bar:30}] {pos}/{len}")
                .map_err(|e| e.to_string())?
                .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let body = Bytes::from(request_body(Operation::Struct, SoapVersion::V11));
    let client = HttpClient::new(Duration::from_secs(30));
    bar.set_message("NATS round trip");
    let nats_round_trip = rt.block_on(nats_round_trip(&nats, 1000))?;
    let mut steps = Vec::new();
    for &n in &cfg.counts {
        bar.set_message(format!("N = {n}"));
        let (_local, local_url) = start_container(&cfg.binary, dir, n, None)?;
        let (_dist, dist_url) = start_container(&cfg.binary, dir, n, Some(&nats))?;
        let (local, distributed) = rt.block_on(async {
            // Warm both, then alternate them request by request, so that the machine's
            // noise falls on both alike.
            for _ in 0..10 {
                exchange(&client, &local_url, &body).await?;
                exchange(&client, &dist_url, &body).await?;
            }
            let (mut l, mut d) = (Vec::new(), Vec::new());
            for _ in 0..cfg.requests {
                l.push(ms(exchange(&client, &local_url, &body).await?));
                d.push(ms(exchange(&client, &dist_url, &body).await?));
                bar.inc(2);
            }
            Ok::<_, String>((l, d))
        })?;
        let (local, distributed) = (
            Stat::of(&local).ok_or("no samples")?,
            Stat::of(&distributed).ok_or("no samples")?,
        );
        #[allow(clippy::cast_precision_loss)]
        let nf = n as f64;
        steps.push(Step {
            handlers: n,
            overhead_ms: (distributed.mean - local.mean) / nf,
            overhead_p50_ms: (distributed.p50 - local.p50) / nf,
            local,
            distributed,
        });
    }
    let pipelined = if cfg.pipelined_handlers > 0 {
        bar.set_message(format!("throughput, {} handlers", cfg.pipelined_handlers));
        let (_dist, url) = start_container(&cfg.binary, dir, cfg.pipelined_handlers, Some(&nats))?;
        let mut wcfg = WsTestConfig::new(&url, Operation::Struct)?;
        wcfg.duration = cfg.throughput_duration;
        wcfg.warmup = Duration::from_millis(500);
        let throughput = |connections: usize| {
            let mut c = wcfg.clone();
            c.connections = connections;
            rt.block_on(run_wstest(&c)).map(|r| r.requests_per_second)
        };
        let sequential_rps = throughput(1)?;
        let pipelined_rps = throughput(16)?;
        Some(Pipelined {
            handlers: cfg.pipelined_handlers,
            sequential_rps,
            pipelined_rps,
            connections: 16,
        })
    } else {
        None
    };
    bar.finish_and_clear();
    drop(workers);
    Ok(HandlersReport {
        nats,
        request_bytes: body.len(),
        nats_round_trip,
        steps,
        pipelined,
        workers: cfg.workers.max(1),
        requests: cfg.requests,
        took_s: started.elapsed().as_secs_f64(),
    })
}

impl HandlersReport {
    /// The paper's table shape (its Tables 1-3 have one row of overheads), with the
    /// round-trip times behind them and the NATS floor.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let head: Vec<String> = self.steps.iter().map(|p| p.handlers.to_string()).collect();
        s.push_str(&format!(
            "Overheads of handler distribution for the increasing number of handlers \
             ({} requests per step, {} B echoStruct requests, {} worker process{})\n\n",
            self.requests,
            self.request_bytes,
            self.workers,
            if self.workers == 1 { "" } else { "es" }
        ));
        s.push_str(&format!("| Handlers | {} |\n", head.join(" | ")));
        s.push_str(&format!("|---|{}\n", "---:|".repeat(head.len())));
        let row = |name: &str, f: &dyn Fn(&Step) -> String| {
            let cells: Vec<String> = self.steps.iter().map(f).collect();
            format!("| {name} | {} |\n", cells.join(" | "))
        };
        s.push_str(&row("Local chain, ms (mean ± sd)", &|p| {
            format!("{:.3} ± {:.3}", p.local.mean, p.local.sd)
        }));
        s.push_str(&row("Distributed sequential, ms (mean ± sd)", &|p| {
            format!("{:.3} ± {:.3}", p.distributed.mean, p.distributed.sd)
        }));
        s.push_str(&row("Overhead per handler, ms (formula 1, means)", &|p| {
            format!("{:.3}", p.overhead_ms)
        }));
        s.push_str(&row("Overhead per handler, ms (medians)", &|p| {
            format!("{:.3}", p.overhead_p50_ms)
        }));
        let rtt = self.nats_round_trip.mean;
        s.push_str(&row("Overhead / NATS round trip", &|p| {
            format!("{:.2}x", p.overhead_ms / rtt)
        }));
        s.push_str(&format!(
            "\nRaw NATS request/reply, 4 KB: {:.3} ms mean, {:.3} ms median ({} round trips)\n",
            self.nats_round_trip.mean, self.nats_round_trip.p50, self.nats_round_trip.n
        ));
        if let Some(p) = &self.pipelined {
            s.push_str(&format!(
                "Pipelined, {} placed handlers: {:.0} req/s with {} connections vs {:.0} req/s \
                 one at a time ({:.2}x)\n",
                p.handlers,
                p.pipelined_rps,
                p.connections,
                p.sequential_rps,
                p.pipelined_rps / p.sequential_rps
            ));
        }
        s.push_str(
            "Paper (ms per handler): multi-core 4.52-4.63, LAN cluster 3.25-3.31, \
             single processor 3.72-3.81\n",
        );
        s
    }

    /// One CSV row per step.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "handlers,local_mean_ms,local_sd_ms,local_p50_ms,distributed_mean_ms,distributed_sd_ms,distributed_p50_ms,overhead_ms,overhead_p50_ms,nats_rtt_ms\n",
        );
        for p in &self.steps {
            s.push_str(&format!(
                "{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}\n",
                p.handlers,
                p.local.mean,
                p.local.sd,
                p.local.p50,
                p.distributed.mean,
                p.distributed.sd,
                p.distributed.p50,
                p.overhead_ms,
                p.overhead_p50_ms,
                self.nats_round_trip.mean
            ));
        }
        s
    }

    /// Writes STEM.csv, STEM.json, STEM.md (the table), STEM.svg and STEM.png (the
    /// chart); returns what was written.
    ///
    /// # Errors
    /// When a file cannot be written (a missing font only skips the chart).
    pub fn write(&self, stem: &Path) -> Result<Vec<PathBuf>, String> {
        let with = |ext: &str| stem.with_extension(ext);
        if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let json = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        let mut written = Vec::new();
        for (ext, bytes) in [
            ("csv", self.csv().into_bytes()),
            ("json", json),
            ("md", self.table().into_bytes()),
        ] {
            std::fs::write(with(ext), bytes)
                .map_err(|e| format!("writing {}: {e}", with(ext).display()))?;
            written.push(with(ext));
        }
        for ext in ["svg", "png"] {
            match crate::chart::handlers_chart(self, &with(ext)) {
                Ok(()) => written.push(with(ext)),
                Err(e) => {
                    eprintln!("chart not drawn: {e}");
                    break;
                }
            }
        }
        Ok(written)
    }
}
