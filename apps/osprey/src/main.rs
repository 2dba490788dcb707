//! `osprey`: the grid services container and its tools.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use osprey_bench::{Operation, WsTestConfig};
use osprey_container::Config;

/// mimalloc: glibc malloc and free were a large share of each request's instructions
/// (docs/benchmarks.md, "Where an Osprey request's time goes").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "osprey",
    version,
    about = "A fast, dependable grid services container (SOAP, WSDL, WS-Addressing)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the container (default: echo at http://127.0.0.1:8080/wstest and the WSRF
    /// counter at /counter, state in ./osprey-data).
    Serve(ServeArgs),
    /// Call an operation of any SOAP service, reading its WSDL at run time.
    Call(CallArgs),
    /// Print the WSDL of a built-in service (for wsdl-first clients and code generators).
    Wsdl(WsdlArgs),
    /// Run handlers for containers whose chains place them on workers: serves each
    /// handler's bus subject (its queue group) until SIGTERM, then drains.
    HandlerWorker(HandlerWorkerArgs),
    /// Run a benchmark.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Args)]
struct HandlerWorkerArgs {
    /// The NATS server (`nats://host:port`).
    #[arg(long, value_name = "URL")]
    nats: String,
    /// Handlers to run (comma-separated or repeated), e.g. `body-digest`.
    #[arg(
        long = "handler",
        value_name = "NAME",
        value_delimiter = ',',
        required = true
    )]
    handlers: Vec<String>,
    /// Subject prefix: handler NAME is served on `<prefix>.NAME` (as `[bus] prefix`).
    #[arg(long, default_value = "osprey.handler")]
    prefix: String,
    /// A configuration whose `[handler.NAME]` tables set up the handlers (the
    /// container's own file will do).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Threads that run handlers. With 1 (the default) one thread carries the NATS
    /// connection and every handler call, so a request wakes no other thread; more
    /// suit CPU-heavy handlers (or run more workers: they share the subject's queue).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,
}

#[derive(Args)]
struct WsdlArgs {
    /// The built-in service (echo, counter).
    #[arg(default_value = "echo")]
    service: String,
    /// Endpoint address written into the WSDL.
    #[arg(long, default_value = "http://127.0.0.1:8080/wstest")]
    address: String,
}

#[derive(Args)]
struct ServeArgs {
    /// TOML configuration file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Listen address (repeatable); replaces the configured ones.
    #[arg(long)]
    listen: Vec<SocketAddr>,
    /// Directory for the state of stateful services (default: ./osprey-data).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Keep resources in this PostgreSQL database instead (libpq `key=value` string or
    /// `postgresql://` URL), shared with every container given the same database.
    #[arg(long, value_name = "CONNINFO")]
    postgres: Option<String>,
}

#[derive(Args)]
struct CallArgs {
    /// Endpoint URL, e.g. http://127.0.0.1:8080/wstest.
    url: String,
    /// Operation name, e.g. echoStruct.
    operation: String,
    /// WSDL location (default: URL?wsdl).
    #[arg(long)]
    wsdl: Option<String>,
    /// File with the payload element or a whole envelope.
    #[arg(long, conflicts_with = "param")]
    body: Option<PathBuf>,
    /// A child of the payload element, NAME=VALUE (repeatable).
    #[arg(long, value_parser = parse_param)]
    param: Vec<(String, String)>,
    /// Address a WS-Resource: a file holding its endpoint reference (as --save-epr
    /// writes it, or a whole createCounter response).
    #[arg(long)]
    epr: Option<PathBuf>,
    /// Write the endpoint reference the response carries to this file.
    #[arg(long)]
    save_epr: Option<PathBuf>,
    /// GetResourceProperty / GetMultipleResourceProperties: a property name (repeatable).
    #[arg(long)]
    property: Vec<String>,
    /// QueryResourceProperties: an XPath 1.0 expression (tns: the service's namespace).
    #[arg(long)]
    query: Option<String>,
    /// Subscribe: the topic (a property name); notifications are printed as they arrive.
    #[arg(long)]
    topic: Option<String>,
    /// Subscribe: stop after this many notifications (default: until Ctrl-C).
    #[arg(long)]
    count: Option<usize>,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// WS Test 1.0 load against any SOAP endpoint serving the WS Test contract.
    Wstest(WsTestArgs),
    /// The lifecycle (lazy-initialisation) experiment of Taiani et al. (HPDC 2005):
    /// fresh containers and client processes, cases 1-4, Tables 1-2 and Figures 2-4.
    Lifecycle(LifecycleArgs),
    /// The distributed-handler experiment of Yildiz and Fox: N identical handlers in
    /// process against each a NATS round trip to a worker process; overhead per handler
    /// (their formula 1, Tables 1-3, Figures 4-6), the raw NATS floor, pipelining.
    Handlers(HandlersArgs),
    /// One client process of the lifecycle experiment (started by `bench lifecycle`);
    /// prints its measurements as JSON.
    #[command(hide = true)]
    LifecycleClient(LifecycleClientArgs),
}

#[derive(Args)]
struct LifecycleArgs {
    /// Containers, each a fresh `osprey serve` process.
    #[arg(long, default_value_t = 50)]
    containers: usize,
    /// Client processes per container, one after another.
    #[arg(long, default_value_t = 5)]
    clients: usize,
    /// Counters each client creates.
    #[arg(long, default_value_t = 5)]
    resources: usize,
    /// Adds per counter, each waiting for its notification.
    #[arg(long, default_value_t = 5)]
    adds: usize,
    /// Where to write STEM.csv, STEM.json, STEM.md (the tables), STEM.svg and STEM.png (the chart).
    #[arg(long, default_value = "lifecycle")]
    out: PathBuf,
}

#[derive(Args)]
struct HandlersArgs {
    /// A NATS server; without it, `nats-server` is started on a free loopback port.
    #[arg(long, value_name = "URL")]
    nats: Option<String>,
    /// Handler counts, one step each.
    #[arg(long, value_delimiter = ',', default_value = "1,10,20,30,40,50")]
    counts: Vec<usize>,
    /// Requests per step, for each set-up.
    #[arg(long, default_value_t = 100)]
    requests: usize,
    /// Requests sent to one set-up back to back before the next set-up's turn (1: the
    /// set-ups take every request in turn).
    #[arg(long, default_value_t = 100)]
    block: usize,
    /// Unmeasured exchanges at the start of each block (a container's first requests
    /// after the others' turn find its caches cold).
    #[arg(long, default_value_t = 5)]
    block_warmup: usize,
    /// `osprey handler-worker` processes serving the handler.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Placed handlers in the pipelined-throughput comparison (0: skip it).
    #[arg(long, default_value_t = 10)]
    pipelined: usize,
    /// Measured time of each throughput run (one request at a time, then 16).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    throughput_duration: Duration,
    /// Digest rounds of the two CPU-heavy handlers of the parallel comparison (0: skip).
    #[arg(long, default_value_t = 4000)]
    heavy_rounds: u32,
    /// Where to write STEM.csv, STEM.json, STEM.md, STEM.svg and STEM.png.
    #[arg(long, default_value = "handlers")]
    out: PathBuf,
}

#[derive(Args)]
struct LifecycleClientArgs {
    /// The counter service.
    #[arg(long)]
    url: String,
    #[arg(long, default_value_t = 5)]
    resources: usize,
    #[arg(long, default_value_t = 5)]
    adds: usize,
}

#[derive(Args)]
struct WsTestArgs {
    /// Endpoint URL.
    #[arg(long, default_value = "http://127.0.0.1:8080/wstest")]
    url: String,
    /// echoVoid, echoStruct or echoList; or, against the WSRF counter (--url
    /// .../counter), add (one counter per connection, every value checked) or
    /// createCounter.
    #[arg(long, default_value = "echoStruct")]
    op: Operation,
    /// Concurrent keep-alive connections.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Measured time (e.g. 10s, 500ms, 1m).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// Unmeasured warm-up before it.
    #[arg(long, default_value = "0s", value_parser = parse_duration_or_zero)]
    warmup: Duration,
    /// Send SOAP 1.2 requests.
    #[arg(long)]
    soap12: bool,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn parse_param(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{s:?} is not NAME=VALUE"))
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    osprey_container::parse_duration(s)
        .ok_or_else(|| format!("{s:?} is not a duration like 10s, 500ms or 1m"))
}

fn parse_duration_or_zero(s: &str) -> Result<Duration, String> {
    if s.trim_end_matches(['s', 'm']).trim() == "0" {
        return Ok(Duration::ZERO);
    }
    parse_duration(s)
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` prints the chain of contexts on one line, without a backtrace.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("OSPREY_LOG")
                .unwrap_or_else(|_| "info,async_nats=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::Serve(a) => serve(a),
        Command::Call(a) => runtime()?.block_on(call(a)),
        Command::HandlerWorker(a) => {
            let rt = match a.threads {
                1 => tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build(),
                n => tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(usize::from(n))
                    .enable_all()
                    .build(),
            }
            .context("starting the async runtime")?;
            rt.block_on(handler_worker(a))
        }
        Command::Wsdl(a) => {
            let service = osprey::service_by_name(&a.service, &mut osprey::State::ephemeral())?;
            print!(
                "{}",
                osprey_wsdl::generate(service.definition(), &a.address)
            );
            Ok(())
        }
        Command::Bench(BenchCommand::Wstest(a)) => runtime()?.block_on(bench_wstest(a)),
        Command::Bench(BenchCommand::Lifecycle(a)) => bench_lifecycle(a),
        Command::Bench(BenchCommand::Handlers(a)) => bench_handlers(a),
        Command::Bench(BenchCommand::LifecycleClient(a)) => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the async runtime")?;
            let samples = rt
                .block_on(osprey_bench::lifecycle::run_client(
                    &a.url,
                    a.resources,
                    a.adds,
                ))
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::to_string(&samples)?);
            Ok(())
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let mut config = match &a.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    if !a.listen.is_empty() {
        config.server.listen = a.listen;
    }
    if let Some(dir) = a.data {
        config.data.dir = dir;
    }
    if let Some(db) = a.postgres {
        config.data.postgres = Some(db);
    }
    config.validate()?;
    // Connections are served by the transport's own per-core threads; this runtime only
    // accepts, and waits for signals.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        // Signal handlers first: a signal that arrives once we are listening is always
        // graceful. Then the listeners, so that clients connecting while the services
        // are built queue in the kernel instead of being refused.
        let signals = osprey_container::shutdown_signal().context("installing signal handlers")?;
        let listeners = osprey_container::bind(&config).await?;
        let dispatcher = osprey::build_dispatcher(&config).await?;
        let running = listeners.serve(dispatcher, signals)?;
        // Every serving thread answers a message before the first client's (nothing
        // left to do for the first time on a client's request).
        running.warm_up().await;
        for addr in &running.addrs {
            for s in &config.services {
                tracing::info!(
                    "serving {} at http://{addr}{} (WSDL: http://{addr}{}?wsdl)",
                    s.name,
                    s.path,
                    s.path
                );
            }
        }
        running.wait().await?;
        tracing::info!("stopped");
        Ok(())
    })
}

async fn handler_worker(a: HandlerWorkerArgs) -> anyhow::Result<()> {
    let config = match &a.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    // Only schema validation needs the services' operations (building them opens the
    // built-in services' state).
    let operations = if a.handlers.iter().any(|h| h == "schema-validate") {
        osprey::builtin_operations()?
    } else {
        Vec::new()
    };
    let handlers = a
        .handlers
        .iter()
        .map(|n| osprey::handler_by_name(&config, n, &operations).map(|h| (n, h)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let signals = osprey_container::shutdown_signal().context("installing signal handlers")?;
    let bus = osprey_bus::NatsBus::connect(&a.nats, Duration::from_secs(10))
        .await
        .with_context(|| format!("connecting to NATS at {}", a.nats))?;
    let limits = Arc::new(osprey_xml::Limits::default());
    let mut serving = Vec::new();
    for (name, handler) in handlers {
        let subject = osprey_container::remote::subject(&a.prefix, name);
        serving.push(
            osprey_container::remote::serve_handler(&bus, &subject, handler, limits.clone())
                .await
                .with_context(|| format!("serving {subject}"))?,
        );
        tracing::info!("handler {name} ready on {subject} via {}", a.nats);
    }
    tracing::info!("handler-worker ready");
    signals.await;
    for s in serving {
        s.drain().await;
    }
    tracing::info!("handler-worker drained and stopped");
    Ok(())
}

async fn call(a: CallArgs) -> anyhow::Result<()> {
    let body = match &a.body {
        Some(p) => Some(std::fs::read(p).with_context(|| format!("reading {}", p.display()))?),
        None => None,
    };
    let epr = match &a.epr {
        Some(p) => {
            let xml = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
            Some(osprey::call::find_epr(&xml).with_context(|| {
                format!(
                    "{} holds no endpoint reference (an element with a wsa:Address)",
                    p.display()
                )
            })?)
        }
        None => None,
    };
    // A subscriber listens before it subscribes, so no notification is missed.
    let mut consumer = match &a.topic {
        Some(_) => Some(
            osprey_wsrf::client::NotificationConsumer::start()
                .await
                .context("starting the notification consumer on a loopback port")?,
        ),
        None => None,
    };
    let wsrf = osprey::call::WsrfArgs {
        properties: a.property,
        query: a.query,
        subscribe: a.topic.clone().zip(
            consumer
                .as_ref()
                .map(osprey_wsrf::client::NotificationConsumer::epr),
        ),
    };
    let req = osprey::call::CallRequest {
        url: a.url,
        operation: a.operation,
        wsdl: a.wsdl,
        body,
        params: a.param,
        epr,
        wsrf,
    };
    let resp = osprey::call::call(&req).await?;
    println!("{}", String::from_utf8_lossy(&resp.body));
    if let Some(f) = resp.fault {
        bail!(
            "the service answered with a fault (HTTP {}): {f}",
            resp.status
        );
    }
    if resp.status != 200 {
        bail!("HTTP {}", resp.status);
    }
    if let Some(path) = &a.save_epr {
        let epr = osprey::call::find_epr(&resp.body)
            .context("the response carries no endpoint reference to save")?;
        std::fs::write(path, osprey::call::epr_document(&epr))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("endpoint reference saved to {}", path.display());
    }
    if let Some(consumer) = consumer.as_mut() {
        eprintln!("subscribed; printing notifications as they arrive (Ctrl-C stops)");
        let mut seen = 0;
        while a.count.is_none_or(|n| seen < n) {
            tokio::select! {
                n = consumer.next(Duration::from_secs(3600)) => {
                    let Some(n) = n else { continue };
                    println!("{}", n.message.message.to_xml());
                    seen += 1;
                }
                _ = tokio::signal::ctrl_c() => break,
            }
        }
    }
    Ok(())
}

fn bench_lifecycle(a: LifecycleArgs) -> anyhow::Result<()> {
    for (name, v) in [
        ("--containers", a.containers),
        ("--clients", a.clients),
        ("--resources", a.resources),
        ("--adds", a.adds),
    ] {
        if v == 0 {
            bail!("{name} must be at least 1");
        }
    }
    let cfg = osprey_bench::LifecycleConfig {
        binary: std::env::current_exe().context("locating the osprey binary")?,
        containers: a.containers,
        clients: a.clients,
        resources: a.resources,
        adds: a.adds,
        progress: true,
    };
    let report = osprey_bench::lifecycle::run(&cfg).map_err(anyhow::Error::msg)?;
    print!("{}", report.tables());
    for p in report.write(&a.out).map_err(anyhow::Error::msg)? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

fn bench_handlers(a: HandlersArgs) -> anyhow::Result<()> {
    if a.requests == 0 || a.block == 0 || a.counts.is_empty() || a.counts.contains(&0) {
        bail!("--requests, --block and every --counts value must be at least 1");
    }
    let cfg = osprey_bench::HandlersConfig {
        binary: std::env::current_exe().context("locating the osprey binary")?,
        nats: a.nats,
        counts: a.counts,
        requests: a.requests,
        block: a.block,
        block_warmup: a.block_warmup,
        workers: a.workers.max(1),
        pipelined_handlers: a.pipelined,
        throughput_duration: a.throughput_duration,
        heavy_rounds: a.heavy_rounds,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    let report = osprey_bench::handlers::run(&cfg).map_err(anyhow::Error::msg)?;
    print!("{}", report.table());
    for p in report.write(&a.out).map_err(anyhow::Error::msg)? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

async fn bench_wstest(a: WsTestArgs) -> anyhow::Result<()> {
    if a.connections == 0 {
        bail!("--connections must be at least 1");
    }
    let mut cfg = WsTestConfig::new(&a.url, a.op).map_err(anyhow::Error::msg)?;
    cfg.connections = a.connections;
    cfg.duration = a.duration;
    cfg.warmup = a.warmup;
    cfg.soap12 = a.soap12;
    cfg.progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let report = osprey_bench::run_wstest(&cfg)
        .await
        .map_err(anyhow::Error::msg)?;
    print!("{report}");
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if report.errors > 0 {
        bail!(
            "{} of {} exchanges failed; the figures above count only correct answers",
            report.errors,
            report.errors + report.requests
        );
    }
    Ok(())
}
