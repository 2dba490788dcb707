//! The lifecycle (lazy-initialisation) experiment of Taiani, Hiltunen and Schlichting,
//! "The Impact of Web Service Integration on Grid Performance" (HPDC 2005), §2.
//!
//! For each of N containers (fresh `osprey serve` processes), 5 successive client
//! processes each create 5 counters, and for each counter: create, subscribe (preparing
//! the request and sending it timed apart), 5 adds each waiting for its notification, and
//! destroy. Clients and containers are separate OS processes, because the experiment is
//! about cold starts. Each measurement belongs to one of the paper's cases:
//!
//! | case | container | client | resource |
//! |---|---|---|---|
//! | 1 | new | new | new |
//! | 2 | old | new | new |
//! | 3 | old | old | new |
//! | 4 | old | old | old (stable) |
//!
//! and the initialisation overheads are differences of case means, as the paper computes
//! them: container = case 1 - case 2, client = case 2 - case 3, resource = case 3 - case 4.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use osprey_counter::{CounterClient, VALUE};
use osprey_wsrf::client::{ClientError, NotificationConsumer};
use serde::{Deserialize, Serialize};

use crate::process::{start_until, word_after, Proc};

/// A timed step of the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Creating the client: its HTTP connection pool, the start of its connection to the
    /// container (`CounterClient::new` sends the SYN) and its notification consumer (a
    /// loopback listener). Once per client, counted with its first resource.
    ClientSetup,
    /// The createCounter round trip.
    Create,
    /// Building the Subscribe request.
    PrepareSubscription,
    /// The Subscribe round trip.
    Subscribe,
    /// An add round trip.
    Add,
    /// From sending an add to its notification's arrival.
    Notification,
    /// The Destroy round trip.
    Destroy,
}

impl Step {
    /// The row name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Step::ClientSetup => "Creating the client (pool, connection, consumer)",
            Step::Create => "Sending the create request",
            Step::PrepareSubscription => "Preparing the subscription",
            Step::Subscribe => "Sending the subscription request",
            Step::Add => "Add latency",
            Step::Notification => "Notification",
            Step::Destroy => "Destroy",
        }
    }
}

/// One measurement, as a client process reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Container number (0-based), filled in by the orchestrator.
    #[serde(default)]
    pub container: usize,
    /// Client number within the container (0-based), filled in by the orchestrator.
    #[serde(default)]
    pub client: usize,
    /// Resource number within the client (1-based, as in the paper).
    pub resource: usize,
    /// Add number within the resource (1-based), for adds and notifications.
    pub add: Option<usize>,
    /// The step.
    pub step: Step,
    /// Latency in milliseconds.
    pub ms: f64,
}

impl Sample {
    /// The paper's case (1 to 4) of this measurement.
    pub fn case(&self) -> u8 {
        match (self.step, self.add) {
            // Adds after the first on a resource: nothing is new.
            (Step::Add | Step::Notification, Some(a)) if a > 1 => 4,
            _ if self.resource > 1 => 3,
            _ if self.client > 0 => 2,
            _ => 1,
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What one client process does against the counter service at `url`: `resources`
/// counters, `adds` adds on each, every add waiting for its notification.
///
/// # Errors
/// A failed call, or a notification that does not arrive within 10 s.
pub async fn run_client(url: &str, resources: usize, adds: usize) -> Result<Vec<Sample>, String> {
    let err = |what: &str, e: ClientError| format!("{what}: {e}");
    let mut out = Vec::new();
    let t = Instant::now();
    let client = CounterClient::new(url, Duration::from_secs(30));
    let mut consumer = NotificationConsumer::start()
        .await
        .map_err(|e| format!("notification consumer: {e}"))?;
    let setup = ms(t.elapsed());
    for r in 1..=resources {
        let sample = |step, add, ms| Sample {
            container: 0,
            client: 0,
            resource: r,
            add,
            step,
            ms,
        };
        out.push(sample(
            Step::ClientSetup,
            None,
            if r == 1 { setup } else { 0.0 },
        ));
        let t = Instant::now();
        let epr = client.create().await.map_err(|e| err("create", e))?;
        out.push(sample(Step::Create, None, ms(t.elapsed())));
        let t = Instant::now();
        let prepared = client
            .wsrf
            .prepare_subscribe(&epr, &consumer.epr(), &VALUE)
            .map_err(|e| err("subscribe", e))?;
        out.push(sample(Step::PrepareSubscription, None, ms(t.elapsed())));
        let t = Instant::now();
        let _: osprey_wsrf::messages::SubscribeResponse = client
            .wsrf
            .send(&prepared)
            .await
            .map_err(|e| err("subscribe", e))?;
        out.push(sample(Step::Subscribe, None, ms(t.elapsed())));
        for a in 1..=adds {
            let t = Instant::now();
            let value = client.add(&epr, 1).await.map_err(|e| err("add", e))?;
            out.push(sample(Step::Add, Some(a), ms(t.elapsed())));
            // Wait for this add's notification (NewValues = value).
            loop {
                let n = consumer
                    .next(Duration::from_secs(10))
                    .await
                    .ok_or_else(|| {
                        format!("no notification for add {a} of resource {r} within 10 s")
                    })?;
                let new = n.message.new_values().first().map(|e| e.string_value());
                if new.as_deref().map(str::trim) == Some(value.to_string().as_str()) {
                    out.push(sample(Step::Notification, Some(a), ms(n.at - t)));
                    break;
                }
            }
        }
        let t = Instant::now();
        client
            .wsrf
            .destroy(&epr)
            .await
            .map_err(|e| err("destroy", e))?;
        out.push(sample(Step::Destroy, None, ms(t.elapsed())));
    }
    Ok(out)
}

/// The experiment's shape.
#[derive(Debug, Clone)]
pub struct LifecycleConfig {
    /// The `osprey` binary (containers and clients are its processes).
    pub binary: PathBuf,
    /// Containers started one after another.
    pub containers: usize,
    /// Client processes per container, one after another.
    pub clients: usize,
    /// Resources per client.
    pub resources: usize,
    /// Adds per resource.
    pub adds: usize,
    /// Show a progress bar.
    pub progress: bool,
}

/// A mean and a standard deviation, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stat {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
    pub sd: f64,
    /// Median.
    pub p50: f64,
    /// Samples.
    pub n: usize,
}

impl Stat {
    pub(crate) fn of(v: &[f64]) -> Option<Stat> {
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let mut sorted = v.to_vec();
        sorted.sort_by(f64::total_cmp);
        let p50 = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Stat { mean, sd, p50, n })
    }
}

/// Everything measured, with the tables derived from it.
#[derive(Debug, Clone, Serialize)]
pub struct LifecycleReport {
    /// Containers, clients per container, resources per client, adds per resource.
    pub shape: [usize; 4],
    /// Wall-clock time of the whole experiment, in seconds.
    pub seconds: f64,
    /// Table 1 rows: step, then case 1, 2, 3 statistics.
    pub table1: Vec<(Step, [Option<Stat>; 3])>,
    /// Table 1 total (create + subscribe, preparation included, client set-up included).
    pub table1_total: [Option<Stat>; 3],
    /// Table 2 rows: add latency and notification, cases 1 to 4.
    pub table2: Vec<(Step, [Option<Stat>; 4])>,
    /// Every sample.
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

/// Starts `osprey serve` on a free loopback port with state in `data`; returns the
/// process (stopped when dropped) and the counter URL once it serves.
fn start_container(binary: &Path, data: &Path) -> Result<(Proc, String), String> {
    let mut cmd = Command::new(binary);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data);
    let (proc, line) = start_until(cmd, "serving counter at ", "osprey serve")?;
    let url = word_after(&line, "serving counter at ")
        .ok_or("the container did not report a counter endpoint (is the counter in its config?)")?;
    Ok((proc, url))
}

/// Runs one client process against `url`; returns its samples.
fn run_client_process(cfg: &LifecycleConfig, url: &str) -> Result<Vec<Sample>, String> {
    let out = Command::new(&cfg.binary)
        .args(["bench", "lifecycle-client", "--url", url])
        .args(["--resources", &cfg.resources.to_string()])
        .args(["--adds", &cfg.adds.to_string()])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("starting a client process: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "client process failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("client output: {e}"))
}

/// Runs the experiment.
///
/// # Errors
/// When a container or client process fails; the message says which and why.
pub fn run(cfg: &LifecycleConfig) -> Result<LifecycleReport, String> {
    let started = Instant::now();
    let work = std::env::temp_dir().join(format!("osprey-lifecycle-{}", std::process::id()));
    let bar = cfg.progress.then(|| {
        let b = indicatif::ProgressBar::new((cfg.containers * cfg.clients) as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} client processes {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut samples = Vec::new();
    let result = (|| {
        for c in 0..cfg.containers {
            let data = work.join(format!("container-{c}"));
            // Stopped (and gone) when dropped, before the next container starts.
            let (container, url) = start_container(&cfg.binary, &data)?;
            for k in 0..cfg.clients {
                let got = run_client_process(cfg, &url);
                let got = match got {
                    Ok(g) => g,
                    Err(e) => return Err(format!("container {c}, client {k}: {e}")),
                };
                samples.extend(got.into_iter().map(|mut s| {
                    s.container = c;
                    s.client = k;
                    s
                }));
                if let Some(b) = &bar {
                    b.set_message(format!("(container {}/{})", c + 1, cfg.containers));
                    b.inc(1);
                }
            }
            drop(container);
            let _ = std::fs::remove_dir_all(&data);
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&work);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    result?;
    Ok(report(cfg, samples, started.elapsed()))
}

fn report(cfg: &LifecycleConfig, samples: Vec<Sample>, took: Duration) -> LifecycleReport {
    let stat = |step: Step, case: u8| {
        let v: Vec<f64> = samples
            .iter()
            .filter(|s| s.step == step && s.case() == case)
            .map(|s| s.ms)
            .collect();
        Stat::of(&v)
    };
    let steps1 = [
        Step::ClientSetup,
        Step::Create,
        Step::PrepareSubscription,
        Step::Subscribe,
    ];
    let table1 = steps1
        .iter()
        .map(|&s| (s, [stat(s, 1), stat(s, 2), stat(s, 3)]))
        .collect();
    // Set-up total per resource: the sum of its set-up steps, then averaged per case.
    let total = |case: u8| {
        let mut per: std::collections::BTreeMap<(usize, usize, usize), f64> = Default::default();
        for s in samples
            .iter()
            .filter(|s| steps1.contains(&s.step) && s.case() == case)
        {
            *per.entry((s.container, s.client, s.resource)).or_default() += s.ms;
        }
        Stat::of(&per.values().copied().collect::<Vec<_>>())
    };
    let table2 = [Step::Add, Step::Notification, Step::Destroy]
        .iter()
        .map(|&s| (s, [stat(s, 1), stat(s, 2), stat(s, 3), stat(s, 4)]))
        .collect();
    LifecycleReport {
        shape: [cfg.containers, cfg.clients, cfg.resources, cfg.adds],
        seconds: took.as_secs_f64(),
        table1,
        table1_total: [total(1), total(2), total(3)],
        table2,
        samples,
    }
}

fn cell(s: &Option<Stat>) -> String {
    match s {
        Some(s) => format!("{:.3} ± {:.3}", s.mean, s.sd),
        None => "-".into(),
    }
}

fn diff(a: &Option<Stat>, b: &Option<Stat>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.3}", a.mean - b.mean),
        _ => "-".into(),
    }
}

impl LifecycleReport {
    /// The paper's Tables 1 and 2 for these measurements, as Markdown tables (ms,
    /// mean ± standard deviation).
    pub fn tables(&self) -> String {
        let [n, k, r, a] = self.shape;
        let mut s = String::new();
        s.push_str(&format!(
            "{n} containers x {k} clients x {r} resources x {a} adds, in {:.1} s\n\n",
            self.seconds
        ));
        s.push_str("Table 1. Resource set-up latencies (ms, mean ± sd), with the initialisation overheads\n\n");
        s.push_str("| step | Case 1: new client, new container | Case 2: new client, old container | Case 3: stabilised | Container init overhead | Client init overhead |\n");
        s.push_str("|---|---:|---:|---:|---:|---:|\n");
        for (step, c) in &self.table1 {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                step.label(),
                cell(&c[0]),
                cell(&c[1]),
                cell(&c[2]),
                diff(&c[0], &c[1]),
                diff(&c[1], &c[2])
            ));
        }
        let t = &self.table1_total;
        s.push_str(&format!(
            "| **Total** | {} | {} | {} | {} | {} |\n\n",
            cell(&t[0]),
            cell(&t[1]),
            cell(&t[2]),
            diff(&t[0], &t[1]),
            diff(&t[1], &t[2])
        ));
        s.push_str("Table 2. Request and notification latencies (ms, mean ± sd), with the initialisation overheads\n\n");
        s.push_str("| | Case 1: new cont., new client, new res. | Case 2: old cont., new client, new res. | Case 3: old cont., old client, new res. | Case 4: stable | Cont. init overhead | Client init overhead | Res. init overhead |\n");
        s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (step, c) in &self.table2 {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                step.label(),
                cell(&c[0]),
                cell(&c[1]),
                cell(&c[2]),
                cell(&c[3]),
                diff(&c[0], &c[1]),
                diff(&c[1], &c[2]),
                diff(&c[2], &c[3])
            ));
        }
        let p50 = |step: Step, case: usize| {
            self.table2
                .iter()
                .find(|(s, _)| *s == step)
                .and_then(|(_, c)| c[case])
                .map(|c| c.p50)
        };
        if let (Some(add), Some(notify)) = (p50(Step::Add, 3), p50(Step::Notification, 3)) {
            s.push_str(&format!(
                "\nStable (case 4) medians: add {add:.3} ms, notification {notify:.3} ms ({:.2}x the add).\n",
                notify / add
            ));
        }
        s
    }

    /// Every sample as CSV (`container,client,resource,add,step,case,ms`).
    pub fn csv(&self) -> String {
        let mut out = String::from("container,client,resource,add,step,case,ms\n");
        for s in &self.samples {
            let step = serde_json::to_value(s.step)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            out.push_str(&format!(
                "{},{},{},{},{},{},{:.6}\n",
                s.container,
                s.client,
                s.resource,
                s.add.map(|a| a.to_string()).unwrap_or_default(),
                step,
                s.case(),
                s.ms
            ));
        }
        out
    }

    /// Mean over containers of `f(sample)` for samples matching `keep`, by (client,
    /// resource, add): the data of Figures 2 to 4.
    pub fn mean_by(
        &self,
        keep: impl Fn(&Sample) -> bool,
    ) -> std::collections::BTreeMap<(usize, usize, usize), f64> {
        let mut acc: std::collections::BTreeMap<(usize, usize, usize), (f64, usize)> =
            Default::default();
        let mut per_resource: std::collections::BTreeMap<(usize, usize, usize, usize), f64> =
            Default::default();
        for s in self.samples.iter().filter(|s| keep(s)) {
            *per_resource
                .entry((s.container, s.client, s.resource, s.add.unwrap_or(0)))
                .or_default() += s.ms;
        }
        for ((_, k, r, a), v) in per_resource {
            let e = acc.entry((k, r, a)).or_default();
            e.0 += v;
            e.1 += 1;
        }
        acc.into_iter()
            .map(|(key, (sum, n))| (key, sum / n as f64))
            .collect()
    }

    /// Writes `<stem>.csv`, `<stem>.json`, `<stem>.md` (the tables) and the chart of
    /// Figures 2-4 as `<stem>.svg` and `<stem>.png`; returns the paths written. The chart
    /// is skipped with a message when no TrueType font is installed.
    ///
    /// # Errors
    /// When a file cannot be written.
    pub fn write(&self, stem: &Path) -> Result<Vec<PathBuf>, String> {
        let mut written = Vec::new();
        let with = |ext: &str| stem.with_extension(ext);
        let put = |p: PathBuf, bytes: &[u8], written: &mut Vec<PathBuf>| {
            std::fs::File::create(&p)
                .and_then(|mut f| f.write_all(bytes))
                .map_err(|e| format!("writing {}: {e}", p.display()))?;
            written.push(p);
            Ok::<_, String>(())
        };
        if let Some(dir) = stem.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
        }
        put(with("csv"), self.csv().as_bytes(), &mut written)?;
        let json = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        put(with("json"), &json, &mut written)?;
        put(with("md"), self.tables().as_bytes(), &mut written)?;
        for ext in ["svg", "png"] {
            match crate::chart::lifecycle_chart(self, &with(ext)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(client: usize, resource: usize, add: Option<usize>, step: Step) -> Sample {
        Sample {
            container: 0,
            client,
            resource,
            add,
            step,
            ms: 1.0,
        }
    }

    #[test]
    fn cases_follow_the_paper() {
        assert_eq!(s(0, 1, None, Step::Create).case(), 1);
        assert_eq!(s(3, 1, None, Step::Create).case(), 2);
        assert_eq!(s(0, 2, None, Step::Create).case(), 3);
        assert_eq!(s(0, 1, Some(1), Step::Add).case(), 1);
        assert_eq!(s(2, 1, Some(1), Step::Notification).case(), 2);
        assert_eq!(s(2, 4, Some(1), Step::Add).case(), 3);
        assert_eq!(s(0, 1, Some(2), Step::Add).case(), 4);
        assert_eq!(s(4, 5, Some(5), Step::Notification).case(), 4);
    }

    #[test]
    fn statistics_are_the_sample_mean_and_deviation() {
        let st = Stat::of(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(st.mean, 2.5);
        assert_eq!(st.p50, 2.5);
        assert_eq!(Stat::of(&[3.0, 1.0, 2.0]).unwrap().p50, 2.0);
        assert!((st.sd - 1.290_994).abs() < 1e-6);
        assert_eq!(Stat::of(&[7.0]).unwrap().sd, 0.0);
        assert!(Stat::of(&[]).is_none());
    }
}
