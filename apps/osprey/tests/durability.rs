//! State survives SIGKILL: the real binary is killed during a 16-connection add load and
//! restarted on the same data directory.

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use osprey_counter::{CounterClient, VALUE};
use osprey_wsrf::client::NotificationConsumer;
use osprey_wsrf::EndpointReference;

use crate::support::spawn_osprey;

/// Starts `osprey serve` on `addr` with state in `data` and `[data] sync = sync`; returns
/// once it serves.
fn serve(addr: &str, data: &std::path::Path, sync: &str) -> (Child, String) {
    spawn_osprey(addr, data, &format!("[data]\nsync = \"{sync}\"\n"), &[])
}

/// Rewrites an EPR for a container that came back on another port.
pub fn moved(epr: &EndpointReference, url: &str) -> EndpointReference {
    EndpointReference {
        address: url.to_owned(),
        reference_parameters: epr.reference_parameters.clone(),
    }
}

/// With either `[data] sync` mode: "disk" flushes before answering, "os" hands the commit
/// to the operating system, which keeps it when the process is killed.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_add_survives_sigkill_and_subscriptions_deliver_again() {
    for sync in ["disk", "os"] {
        sigkill_during_adds(sync).await;
    }
}

async fn sigkill_during_adds(sync: &str) {
    let data = tempfile::tempdir().unwrap();
    let (mut child, url) = serve("127.0.0.1:0", data.path(), sync);
    let c = CounterClient::new(&url, Duration::from_secs(5));
    let epr = c.create().await.unwrap();
    let mut consumer = NotificationConsumer::start().await.unwrap();
    c.wsrf
        .subscribe(&epr, &consumer.epr(), &VALUE)
        .await
        .unwrap();

    let acked = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..16 {
        let (c, epr) = (c.clone(), epr.clone());
        let (acked, sent, stop) = (acked.clone(), sent.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            // Bounded: stops at the first failure (the kill) or after 100,000 adds.
            for _ in 0..100_000 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                sent.fetch_add(1, Ordering::SeqCst);
                match c.add(&epr, 1).await {
                    Ok(_) => acked.fetch_add(1, Ordering::SeqCst),
                    Err(_) => break,
                };
            }
        }));
    }
    // Let the load run, then kill without warning.
    // (Bounded: at most 30 s, then the kill happens anyway and the check still holds.)
    for _ in 0..3000 {
        if acked.load(Ordering::SeqCst) >= 500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for t in load {
        t.await.unwrap();
    }
    let (acked, sent) = (acked.load(Ordering::SeqCst), sent.load(Ordering::SeqCst));

    let (mut child, url) = serve("127.0.0.1:0", data.path(), sync);
    let c = CounterClient::new(&url, Duration::from_secs(5));
    let epr = moved(&epr, &url);
    let value = u64::try_from(c.value(&epr).await.unwrap()).unwrap();
    assert!(
        (acked..=sent).contains(&value),
        "sync = {sync}: Value {value}: {acked} adds were acknowledged, {sent} sent"
    );
    // The subscription was stored: the restarted container notifies again.
    while consumer.next(Duration::from_millis(200)).await.is_some() {}
    let after = c.add(&epr, 1).await.unwrap();
    let n = consumer
        .next(Duration::from_secs(10))
        .await
        .expect("a notification from the restarted container");
    assert_eq!(n.message.new_values()[0].string_value(), after.to_string());
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `osprey bench handlers` end to end, small: a nats-server it starts itself, real
/// container and worker processes, the table, CSV, JSON and chart written.
#[cfg(unix)]
#[test]
fn bench_handlers_runs_the_papers_experiment() {
    let out = tempfile::tempdir().unwrap();
    let stem = out.path().join("h");
    let run = Command::new(env!("CARGO_BIN_EXE_osprey"))
        .args(["bench", "handlers", "--counts", "1,3", "--requests", "5"])
        .args(["--block", "2", "--block-warmup", "1"])
        .args(["--pipelined", "2", "--throughput-duration", "300ms"])
        .args(["--heavy-rounds", "10", "--out"])
        .arg(&stem)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("| Handlers | 1 | 3 |"), "{stdout}");
    assert!(
        stdout.contains("Overhead per handler, ms (formula 1"),
        "{stdout}"
    );
    assert!(stdout.contains("Raw NATS request/reply, 4 KB"), "{stdout}");
    assert!(stdout.contains("Pipelined, 2 placed handlers"), "{stdout}");
    for line in [
        "Pipelined, 2 placed handlers",
        "Chained overhead per handler",
        "Parallel, 2 CPU-heavy handlers",
        "In-process handler (does nothing)",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let csv = std::fs::read_to_string(stem.with_extension("csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(stem.with_extension("json")).unwrap()).unwrap();
    assert_eq!(json["steps"][1]["handlers"], 3);
    // Blocks of 2, 2 and 1 measured exchanges, each after one that is not.
    assert_eq!(json["steps"][1]["distributed"]["n"], 5);
    assert_eq!(json["block"], 2);
    assert_eq!(json["block_warmup"], 1);
    assert!(stem.with_extension("svg").exists());
}

/// `osprey bench lifecycle` end to end, small: real container and client processes,
/// the tables, CSV, JSON and chart written.
#[cfg(unix)]
#[test]
fn bench_lifecycle_runs_the_papers_experiment() {
    let out = tempfile::tempdir().unwrap();
    let stem = out.path().join("lc");
    let run = Command::new(env!("CARGO_BIN_EXE_osprey"))
        .args(["bench", "lifecycle", "--containers", "2", "--clients", "2"])
        .args(["--resources", "2", "--adds", "2", "--out"])
        .arg(&stem)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("Table 1. Resource set-up latencies"),
        "{stdout}"
    );
    assert!(stdout.contains("| Notification |"), "{stdout}");
    let csv = std::fs::read_to_string(stem.with_extension("csv")).unwrap();
    // 2 containers x 2 clients x 2 resources x (4 set-up steps + 2 x 2 add steps + destroy).
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 2 * 9, "{csv}");
    for case in 1..=4 {
        assert!(csv.contains(&format!(",{case},")), "no case {case} sample");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(stem.with_extension("json")).unwrap()).unwrap();
    assert_eq!(json["shape"], serde_json::json!([2, 2, 2, 2]));
    // The chart (scripts/test installs the font it needs).
    let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
    assert!(svg.contains("Fig. 2: resource set-up"), "{svg:.200}");
    assert!(stem.with_extension("png").exists());
}
