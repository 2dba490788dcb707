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

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use indicatif::{ProgressBar, ProgressStyle};
use osprey_bus::{Bus, NatsBus};
use osprey_soap::SoapVersion;
use osprey_transport::http::{ClientError, HeaderValue as Value, HttpConnection, HttpResponse};
use serde::Serialize;

use crate::lifecycle::Stat;
use crate::process::{start_until, word_after, Proc};
use crate::wstest::{parse_http_url, request_body, run_wstest, Operation, WsTestConfig};

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
    /// Requests sent to one set-up back to back before the next set-up's turn (1: each
    /// request to the next set-up). The paper sent each set-up's requests back to back;
    /// taking the set-ups in turn, a block at a time, spreads the machine's noise over all
    /// of them alike.
    pub block: usize,
    /// Unmeasured exchanges at the start of each block: the first requests to a container
    /// after the others had their turn are slower (its caches went to the others), and
    /// the shorter a step's requests the more that weighs on its overhead per handler.
    pub block_warmup: usize,
    /// Worker processes serving the handler.
    pub workers: usize,
    /// Handlers in the pipelined-throughput comparison.
    pub pipelined_handlers: usize,
    /// Measured time of each throughput run.
    pub throughput_duration: Duration,
    /// Digest rounds of the CPU-heavy handlers of the parallel comparison (0: skip it).
    pub heavy_rounds: u32,
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
            block: 100,
            block_warmup: 5,
            workers: 1,
            pipelined_handlers: 10,
            throughput_duration: Duration::from_secs(3),
            heavy_rounds: 4000,
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
    /// Request round trip with the handlers chained (each worker forwards to the next).
    pub chained: Stat,
    /// `(T_chained - T_local) / N` on the means (ms).
    pub chained_overhead_ms: f64,
    /// The same on the medians (ms).
    pub chained_overhead_p50_ms: f64,
}

/// Two CPU-heavy placed handlers, one after the other or at the same time.
#[derive(Debug, Clone, Serialize)]
pub struct Parallel {
    /// Digest rounds of each handler.
    pub rounds: u32,
    /// Worker processes serving them.
    pub workers: usize,
    /// Both in process (ms).
    pub local: Stat,
    /// Placed, sequential (ms).
    pub sequential: Stat,
    /// Placed, parallel (ms).
    pub parallel: Stat,
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
    /// The parallel comparison.
    pub parallel: Option<Parallel>,
    /// Cost of one in-process handler that does nothing: the pipeline's own work (ns).
    pub in_process_ns: f64,
    /// Worker processes.
    pub workers: usize,
    /// Requests per step.
    pub requests: usize,
    /// Requests sent to one set-up back to back before the next set-up's turn.
    pub block: usize,
    /// Unmeasured exchanges at the start of each block.
    pub block_warmup: usize,
    /// Wall time of the whole run (s).
    pub took_s: f64,
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

/// How a container's chain of `n` body-digest handlers is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// In process.
    Local,
    /// Each handler a round trip to a worker.
    Sequential,
    /// One hop per handler, workers forwarding.
    Chained,
    /// All asked at once.
    Parallel,
}

/// The configuration of a container with echo at /wstest behind `n` body-digest handlers
/// set up as `setup`; placed ones on `nats` under subject `prefix`, digesting `rounds`
/// times.
fn chain_toml(n: usize, setup: Setup, nats: &str, prefix: &str, rounds: u32) -> String {
    let mut toml = String::new();
    if setup != Setup::Local {
        let mode = if setup == Setup::Chained {
            "chained"
        } else {
            "sequential"
        };
        toml.push_str(&format!(
            "[bus]\nnats = \"{nats}\"\ntimeout = \"10s\"\nprefix = \"{prefix}\"\nmode = \"{mode}\"\n\n"
        ));
    }
    let chain = vec![format!("\"{HANDLER}\""); n].join(", ");
    toml.push_str(&format!(
        "[[service]]\nname = \"echo\"\npath = \"/wstest\"\nhandlers = [{chain}]\n"
    ));
    if setup != Setup::Local {
        toml.push_str(&format!("remote = [\"{HANDLER}\"]\n"));
    }
    if setup == Setup::Parallel {
        toml.push_str(&format!("parallel = [\"{HANDLER}\"]\n"));
    }
    toml.push_str(&format!("\n[handler.{HANDLER}]\nrounds = {rounds}\n"));
    toml
}

/// `osprey serve` with configuration `toml`; returns it and the echo service's URL.
fn start_container(
    binary: &Path,
    dir: &Path,
    label: &str,
    toml: &str,
) -> Result<(Proc, String), String> {
    let file = dir.join(format!("osprey-{label}.toml"));
    std::fs::write(&file, toml).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(binary);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .arg("--data")
        .arg(dir);
    let (p, line) = start_until(cmd, "serving echo at ", "osprey serve")?;
    let url = word_after(&line, "serving echo at ").ok_or("no URL in the readiness line")?;
    Ok((p, url))
}

/// `osprey handler-worker` serving the digest handler under `prefix` with `rounds`.
fn start_worker(
    cfg: &HandlersConfig,
    dir: &Path,
    nats: &str,
    prefix: &str,
    rounds: u32,
) -> Result<Proc, String> {
    let file = dir.join(format!("worker-{prefix}.toml"));
    std::fs::write(&file, format!("[handler.{HANDLER}]\nrounds = {rounds}\n"))
        .map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&cfg.binary);
    cmd.args([
        "handler-worker",
        "--nats",
        nats,
        "--handler",
        HANDLER,
        "--prefix",
        prefix,
        "--config",
    ])
    .arg(&file);
    Ok(start_until(cmd, "handler-worker ready", "osprey handler-worker")?.0)
}

/// A kept-alive connection to one container's echo service.
struct Target {
    conn: HttpConnection,
    path: String,
    url: String,
}

impl Target {
    async fn connect(url: &str) -> Result<Self, String> {
        let (addr, path) = parse_http_url(url)?;
        let conn = HttpConnection::connect(addr)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        Ok(Target {
            conn,
            path,
            url: url.to_owned(),
        })
    }

    /// One echoStruct exchange; checks the answer and the digest header.
    async fn exchange(&mut self, body: &Bytes) -> Result<Duration, String> {
        let (r, took) = match self.post(body).await {
            Ok(done) => done,
            Err(first) => {
                // A container closes a connection left idle past its read timeout (a
                // long block of the other set-ups): connect again, once.
                self.conn = HttpConnection::connect(self.conn.peer())
                    .await
                    .map_err(|e| format!("{}: {first}; connecting again: {e}", self.url))?;
                self.post(body)
                    .await
                    .map_err(|e| format!("{}: {first}; again: {e}", self.url))?
            }
        };
        let text = String::from_utf8_lossy(&r.body);
        if r.status != 200 || !text.contains("echoStructResponse") || !text.contains("BodyDigest") {
            return Err(format!("{} answered {}: {text:.300}", self.url, r.status));
        }
        Ok(took)
    }

    async fn post(&mut self, body: &Bytes) -> Result<(HttpResponse, Duration), ClientError> {
        let headers = [
            (
                "content-type",
                Value::from_static("text/xml; charset=utf-8"),
            ),
            (
                "soapaction",
                Value::from_static("\"urn:wstest/echoStruct\""),
            ),
        ];
        let t = Instant::now();
        let r = self.conn.post(&self.path, &headers, body.clone()).await?;
        Ok((r, t.elapsed()))
    }
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
    // The subscription reaches the server on another connection: wait (boundedly) until
    // it answers.
    for attempt in 0..50 {
        match client
            .request("osprey.bench.rtt", payload.clone(), wait)
            .await
        {
            Ok(_) => break,
            Err(e) if attempt == 49 => return Err(e.to_string()),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
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

/// Subject prefix of the experiment's workers.
const PREFIX: &str = "osprey.handler";

/// `cfg.requests` exchanges with each of `urls` over a kept-alive connection each, taken
/// in turn `cfg.block` requests at a time (so that the machine's noise, and its drift over
/// the run, fall on all alike), each block after `cfg.block_warmup` unmeasured ones; their
/// round trips (ms), in the order of `urls`.
async fn interleaved(
    cfg: &HandlersConfig,
    urls: &[&str],
    body: &Bytes,
    bar: &ProgressBar,
) -> Result<Vec<Stat>, String> {
    let mut targets = Vec::with_capacity(urls.len());
    for u in urls {
        targets.push(Target::connect(u).await?);
    }
    let requests = cfg.requests;
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(requests); urls.len()];
    let block = cfg.block.max(1);
    let mut sent = 0;
    while sent < requests {
        let n = block.min(requests - sent);
        for (t, s) in targets.iter_mut().zip(samples.iter_mut()) {
            for _ in 0..cfg.block_warmup {
                t.exchange(body).await?;
            }
            for _ in 0..n {
                s.push(ms(t.exchange(body).await?));
                bar.inc(1);
            }
        }
        sent += n;
    }
    samples
        .iter()
        .map(|s| Stat::of(s).ok_or_else(|| "no samples".to_owned()))
        .collect()
}

/// The figures of one comparison's three set-ups, in order.
fn three(stats: &[Stat]) -> Result<[Stat; 3], String> {
    stats
        .try_into()
        .map_err(|_| format!("{} sets of samples for three set-ups", stats.len()))
}

/// A handler that does nothing: what an in-process handler costs the pipeline.
struct Noop;

impl osprey_container::Handler for Noop {
    fn name(&self) -> &str {
        "noop"
    }
    fn phase(&self) -> osprey_container::Phase {
        osprey_container::Phase::Route
    }
    fn inbound(
        &self,
        _: &mut osprey_container::MessageContext,
    ) -> Result<(), osprey_container::ContainerError> {
        Ok(())
    }
}

/// Nanoseconds per in-process handler: a 50-handler pipeline against an empty one, run
/// inbound on a decoded echoStruct message.
fn in_process_cost(rt: &tokio::runtime::Runtime) -> Result<f64, String> {
    use osprey_container::{MessageContext, Pipeline};
    let limits = Arc::new(osprey_xml::Limits::default());
    let bytes = Bytes::from(request_body(Operation::Struct, SoapVersion::V11));
    let envelope = osprey_soap::Envelope::decode(&bytes, &limits).map_err(|e| e.to_string())?;
    let mut ctx = MessageContext {
        understood: vec![false; envelope.headers.len()],
        bytes,
        envelope,
        path: "/wstest".into(),
        host: None,
        soap_action: None,
        addressing: None,
        response_headers: Vec::new(),
        action: String::new(),
        output_action: String::new(),
        remote: None,
        limits,
        properties: Vec::new(),
    };
    const N: usize = 50;
    const ITERS: u32 = 20_000;
    let empty = Pipeline::new(Vec::new());
    let full = Pipeline::new((0..N).map(|_| Arc::new(Noop) as Arc<_>).collect());
    let mut time = |p: &Pipeline| {
        rt.block_on(async {
            let t = Instant::now();
            for _ in 0..ITERS {
                let (ran, r) = p.inbound(&mut ctx).await;
                std::hint::black_box((ran, r.is_ok()));
            }
            t.elapsed()
        })
    };
    // Best of five, each way: the least disturbed run.
    let (mut e, mut f) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        e = e.min(time(&empty));
        f = f.min(time(&full));
    }
    #[allow(clippy::cast_precision_loss)]
    Ok((f.saturating_sub(e).as_nanos() as f64) / f64::from(ITERS) / N as f64)
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
        workers.push(start_worker(cfg, dir, &nats, PREFIX, 1)?);
    }
    let bar = if cfg.progress {
        let b = ProgressBar::new((cfg.counts.len() * cfg.requests * 3) as u64);
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
    bar.set_message("NATS round trip");
    let nats_round_trip = rt.block_on(nats_round_trip(&nats, 1000))?;
    // Every step's three containers run at once and the steps are measured together,
    // a block of requests at a time each: drift in the machine's speed over the run falls
    // on all steps alike instead of on whichever step was measured then.
    bar.set_message(format!("N = {:?}", cfg.counts));
    let mut containers = Vec::new();
    for &n in &cfg.counts {
        for setup in [Setup::Local, Setup::Sequential, Setup::Chained] {
            let toml = chain_toml(n, setup, &nats, PREFIX, 1);
            containers.push(start_container(
                &cfg.binary,
                dir,
                &format!("{n}-{setup:?}"),
                &toml,
            )?);
        }
    }
    let urls: Vec<&str> = containers.iter().map(|(_, u)| u.as_str()).collect();
    let samples = rt.block_on(interleaved(cfg, &urls, &body, &bar))?;
    drop(containers);
    let mut steps = Vec::new();
    for (&n, set) in cfg.counts.iter().zip(samples.chunks_exact(3)) {
        let [local, distributed, chained] = three(set)?;
        #[allow(clippy::cast_precision_loss)]
        let nf = n as f64;
        steps.push(Step {
            handlers: n,
            overhead_ms: (distributed.mean - local.mean) / nf,
            overhead_p50_ms: (distributed.p50 - local.p50) / nf,
            chained_overhead_ms: (chained.mean - local.mean) / nf,
            chained_overhead_p50_ms: (chained.p50 - local.p50) / nf,
            local,
            distributed,
            chained,
        });
    }
    let pipelined = if cfg.pipelined_handlers > 0 {
        bar.set_message(format!("throughput, {} handlers", cfg.pipelined_handlers));
        let toml = chain_toml(cfg.pipelined_handlers, Setup::Sequential, &nats, PREFIX, 1);
        let (_dist, url) = start_container(&cfg.binary, dir, "pipelined", &toml)?;
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
    let parallel = if cfg.heavy_rounds > 0 {
        bar.set_message("parallel, CPU-heavy handlers");
        let heavy = "osprey.heavy";
        let _heavy_workers = [
            start_worker(cfg, dir, &nats, heavy, cfg.heavy_rounds)?,
            start_worker(cfg, dir, &nats, heavy, cfg.heavy_rounds)?,
        ];
        let urls = [Setup::Local, Setup::Sequential, Setup::Parallel]
            .iter()
            .map(|&setup| {
                let toml = chain_toml(2, setup, &nats, heavy, cfg.heavy_rounds);
                start_container(&cfg.binary, dir, &format!("heavy-{setup:?}"), &toml)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let urls: Vec<&str> = urls.iter().map(|(_, u)| u.as_str()).collect();
        let stats = rt.block_on(interleaved(cfg, &urls, &body, &ProgressBar::hidden()))?;
        let [local, sequential, parallel] = three(&stats)?;
        Some(Parallel {
            rounds: cfg.heavy_rounds,
            workers: 2,
            local,
            sequential,
            parallel,
        })
    } else {
        None
    };
    let in_process_ns = in_process_cost(&rt)?;
    bar.finish_and_clear();
    drop(workers);
    Ok(HandlersReport {
        nats,
        request_bytes: body.len(),
        nats_round_trip,
        steps,
        pipelined,
        parallel,
        in_process_ns,
        workers: cfg.workers.max(1),
        requests: cfg.requests,
        block: cfg.block,
        block_warmup: cfg.block_warmup,
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
             ({} requests per step and set-up, {} at a time after {} unmeasured, {} B \
             echoStruct requests, {} worker process{})\n\n",
            self.requests,
            self.block,
            self.block_warmup,
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
        s.push_str(&row("Chained, ms (mean ± sd)", &|p| {
            format!("{:.3} ± {:.3}", p.chained.mean, p.chained.sd)
        }));
        s.push_str(&row("Chained overhead per handler, ms (means)", &|p| {
            format!("{:.3}", p.chained_overhead_ms)
        }));
        s.push_str(&row("Chained / sequential overhead", &|p| {
            format!("{:.2}x", p.chained_overhead_ms / p.overhead_ms)
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
        if let Some(p) = &self.parallel {
            s.push_str(&format!(
                "Parallel, 2 CPU-heavy handlers ({} digest rounds) on {} workers: {:.3} ms \
                 vs {:.3} ms sequential ({:.2}x), {:.3} ms in process (means)\n",
                p.rounds,
                p.workers,
                p.parallel.mean,
                p.sequential.mean,
                p.parallel.mean / p.sequential.mean,
                p.local.mean
            ));
        }
        s.push_str(&format!(
            "In-process handler (does nothing): {:.1} ns per handler\n",
            self.in_process_ns
        ));
        s.push_str(
            "Paper (ms per handler): multi-core 4.52-4.63, LAN cluster 3.25-3.31, \
             single processor 3.72-3.81\n",
        );
        s
    }

    /// One CSV row per step.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "handlers,local_mean_ms,local_sd_ms,local_p50_ms,distributed_mean_ms,distributed_sd_ms,distributed_p50_ms,overhead_ms,overhead_p50_ms,chained_mean_ms,chained_overhead_ms,nats_rtt_ms\n",
        );
        for p in &self.steps {
            s.push_str(&format!(
                "{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}\n",
                p.handlers,
                p.local.mean,
                p.local.sd,
                p.local.p50,
                p.distributed.mean,
                p.distributed.sd,
                p.distributed.p50,
                p.overhead_ms,
                p.overhead_p50_ms,
                p.chained.mean,
                p.chained_overhead_ms,
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
