//! Handler chains placed by configuration: in process, on the in-process bus, and on
//! `osprey handler-worker` processes over a real nats-server (osprey-testkit).

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use osprey_testkit::NatsServer;
use sha2::{Digest, Sha256};

use crate::support::{await_ready, post, Response, Server};

const STRUCT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><echoVoid xmlns="urn:wstest"/></soapenv:Body></soapenv:Envelope>"#;

/// The digest the body-digest handler must report: SHA-256 of the payload element.
fn expected_digest() -> String {
    let d = Sha256::digest(br#"<echoVoid xmlns="urn:wstest"/>"#);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn config(remote: bool, nats: Option<&str>) -> String {
    let mut c = String::new();
    if let Some(url) = nats {
        c.push_str(&format!("[bus]\nnats = \"{url}\"\ntimeout = \"1s\"\n"));
    }
    c.push_str("[[service]]\nname = \"echo\"\npath = \"/wstest\"\n");
    c.push_str("handlers = [\"body-digest\"]\n");
    if remote {
        c.push_str("remote = [\"body-digest\"]\n");
    }
    c
}

async fn echo_void(server: &Server) -> Response {
    post(
        server.addr,
        "/wstest",
        "urn:wstest/echoVoid",
        STRUCT.as_bytes(),
    )
    .await
}

fn assert_digested(r: &Response) {
    let text = r.text();
    assert_eq!(r.status, 200, "{text}");
    assert!(text.contains("echoVoidResponse"), "{text}");
    assert!(
        text.contains(&format!(r#"algorithm="sha256">{}<"#, expected_digest())),
        "no BodyDigest header with the payload's digest: {text}"
    );
}

/// 16 connections sending echoVoid through the digest handler: each request must be
/// answered (with the digest) or fault with HandlerUnavailable within 10 s, never hang.
struct Load {
    stop: Arc<std::sync::atomic::AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<(u32, u32)>>,
}

impl Load {
    /// Starts the load: at most `per_connection` requests each (bounded), until told to
    /// stop.
    fn start(server: &Arc<Server>, per_connection: usize) -> Load {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tasks = (0..16)
            .map(|_| {
                let (server, stop) = (server.clone(), stop.clone());
                tokio::spawn(async move {
                    let (mut ok, mut faults) = (0, 0);
                    for _ in 0..per_connection {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let r = tokio::time::timeout(Duration::from_secs(10), echo_void(&server))
                            .await
                            .expect("a request hung");
                        if r.status == 200 {
                            assert_digested(&r);
                            ok += 1;
                        } else {
                            assert!(r.text().contains("HandlerUnavailable"), "{}", r.text());
                            faults += 1;
                        }
                    }
                    (ok, faults)
                })
            })
            .collect();
        Load { stop, tasks }
    }

    /// Stops the load; returns the answered and faulted requests.
    async fn finish(self) -> (u32, u32) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.wait().await
    }

    /// Lets every connection send all its requests; returns the answered and faulted.
    async fn wait(self) -> (u32, u32) {
        let (mut ok, mut faults) = (0, 0);
        for t in self.tasks {
            let (o, f) = t.await.unwrap();
            ok += o;
            faults += f;
        }
        (ok, faults)
    }
}

/// A worker process; SIGKILLed when dropped.
struct Worker(Child);

impl Worker {
    fn start(nats: &str, handler: &str) -> Worker {
        Self::start_with(nats, handler, &[])
    }

    fn start_with(nats: &str, handler: &str, args: &[&str]) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_osprey"))
            .args(["handler-worker", "--nats", nats, "--handler", handler])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        await_ready(&mut child, "handler-worker ready", "osprey handler-worker");
        Worker(child)
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// SIGTERM: the worker drains and exits by itself.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.0.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let status = self.0.wait().unwrap();
        std::mem::forget(self);
        status
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_is_configuration_the_answer_is_the_same() {
    for (remote, what) in [(false, "in process"), (true, "on the in-process bus")] {
        let server = Server::start(&config(remote, None)).await;
        let r = echo_void(&server).await;
        assert_eq!(r.status, 200, "body-digest {what}: {}", r.text());
        assert_digested(&r);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_on_worker_processes_over_nats() {
    let nats = NatsServer::start().unwrap();
    let server = Server::start(&config(true, Some(&nats.url()))).await;

    // No worker yet: a Receiver fault that names the handler, and the server serves on.
    let r = echo_void(&server).await;
    let text = r.text();
    assert_eq!(r.status, 500, "{text}");
    assert!(text.contains("HandlerUnavailable"), "{text}");
    assert!(text.contains("body-digest"), "{text}");

    let w1 = Worker::start(&nats.url(), "body-digest");
    assert_digested(&echo_void(&server).await);

    // A second worker joins; one is killed under a 16-connection load: every request
    // gets its answer (the handler is idempotent, so a lost one is retried on the other
    // worker) or a clear fault, and none hangs.
    let mut w2 = Worker::start(&nats.url(), "body-digest");
    let server = Arc::new(server);
    let load = Load::start(&server, 60);
    tokio::time::sleep(Duration::from_millis(150)).await;
    w2.kill();
    let (ok, faults) = load.wait().await;
    assert_eq!(ok + faults, 16 * 60);
    assert!(ok > 16 * 60 / 2, "{ok} answered, {faults} faulted");

    // NATS restarts under a 16-connection load: every request in flight gets its answer
    // or a clear fault (none hangs); then the container and the worker reconnect by
    // themselves and serve again.
    let load = Load::start(&server, 2000);
    tokio::time::sleep(Duration::from_millis(200)).await;
    nats.stop();
    // While it is down, a request that has to reach the worker faults in bounded time.
    let r = tokio::time::timeout(Duration::from_secs(10), echo_void(&server))
        .await
        .expect("a request hung while NATS was down");
    assert!(r.text().contains("HandlerUnavailable"), "{}", r.text());
    nats.restart().unwrap();
    let mut served = false;
    for _ in 0..100 {
        if echo_void(&server).await.status == 200 {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (ok, faults) = load.finish().await;
    assert!(served, "no answer after NATS came back");
    // (Requests sent just before the outage may still be answered: the client holds
    // them while it reconnects, within the handler's timeout.)
    assert!(ok > 0, "nothing answered ({faults} faults)");
    assert_digested(&echo_void(&server).await);

    // SIGTERM: the worker drains and exits cleanly.
    assert!(w1.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_faults_the_excess_and_settings_are_checked() {
    let server = Server::start(
        "[[service]]\nname = \"echo\"\npath = \"/wstest\"\nhandlers = [\"rate-limit\"]\n\
         [handler.rate-limit]\nper_second = 0.01\nburst = 2\n",
    )
    .await;
    for _ in 0..2 {
        assert_eq!(echo_void(&server).await.status, 200);
    }
    let r = echo_void(&server).await;
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(r.text().contains("RateLimited"), "{}", r.text());

    // A handler's settings are checked at start-up, with the reason.
    let config = osprey_container::Config::parse(
        "[[service]]\nname = \"echo\"\npath = \"/wstest\"\nhandlers = [\"wsse-username\"]\n",
    )
    .unwrap();
    let e = osprey::build_dispatcher(&config).await.err().unwrap();
    assert!(
        format!("{e:#}").contains("[handler.wsse-username]"),
        "{e:#}"
    );
}

/// Chained (each worker forwards to the next stage) and parallel (independent handlers
/// asked at once) modes over NATS give the same answers as sequential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chained_and_parallel_modes_over_nats() {
    let nats = NatsServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let settings = "[handler.rate-limit]\nper_second = 0.01\nburst = 7\n";
    let file = dir.path().join("worker.toml");
    std::fs::write(&file, settings).unwrap();
    let _w = Worker::start_with(
        &nats.url(),
        "body-digest,rate-limit",
        &["--config", file.to_str().unwrap()],
    );
    let chained = Server::start(&format!(
        "[bus]\nnats = \"{}\"\nmode = \"chained\"\n\
         [[service]]\nname = \"echo\"\npath = \"/wstest\"\n\
         handlers = [\"body-digest\", \"body-digest\", \"body-digest\"]\n\
         remote = [\"body-digest\"]\n",
        nats.url()
    ))
    .await;
    for _ in 0..5 {
        let r = echo_void(&chained).await;
        assert_digested(&r);
        assert_eq!(
            r.text().matches("BodyDigest").count(),
            2,
            "one header (open and close tag)"
        );
    }
    // Two independent handlers of one phase, asked at once: both take effect (every
    // answer carries the digest, and the rate limit, which only this service's requests
    // reach, faults the eighth request).
    let parallel = Server::start(&format!(
        "[bus]\nnats = \"{}\"\n\
         [[service]]\nname = \"echo\"\npath = \"/wstest\"\n\
         handlers = [\"body-digest\", \"rate-limit\"]\n\
         remote = [\"body-digest\", \"rate-limit\"]\n\
         parallel = [\"body-digest\", \"rate-limit\"]\n{settings}",
        nats.url()
    ))
    .await;
    for _ in 0..7 {
        assert_digested(&echo_void(&parallel).await);
    }
    let r = echo_void(&parallel).await;
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(r.text().contains("RateLimited"), "{}", r.text());
}

/// Schema validation on a worker: a bad request is refused there with the decoder's
/// fault (element and path), a good one passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_validation_on_a_worker_names_the_bad_element() {
    let nats = NatsServer::start().unwrap();
    let mut w = Worker::start(&nats.url(), "schema-validate");
    let server = Server::start(&format!(
        "[bus]\nnats = \"{}\"\n\
         [[service]]\nname = \"echo\"\npath = \"/wstest\"\n\
         handlers = [\"schema-validate\"]\nremote = [\"schema-validate\"]\n",
        nats.url()
    ))
    .await;
    let good = crate::support::request(osprey_bench::Operation::Struct);
    let r = post(server.addr, "/wstest", "urn:wstest/echoStruct", &good).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let bad =
        String::from_utf8(good)
            .unwrap()
            .replacen("<varInt>0</varInt>", "<varInt>abc</varInt>", 1);
    assert!(bad.contains("abc"));
    let r = post(
        server.addr,
        "/wstest",
        "urn:wstest/echoStruct",
        bad.as_bytes(),
    )
    .await;
    let text = r.text();
    assert_eq!(r.status, 500, "{text}");
    assert!(text.contains("InvalidValue"), "{text}");
    assert!(text.contains("/echoStruct/input/item/varInt"), "{text}");
    // Every request goes through the worker: without it, even a good one cannot pass.
    w.kill();
    let good = crate::support::request(osprey_bench::Operation::Struct);
    let r = post(server.addr, "/wstest", "urn:wstest/echoStruct", &good).await;
    assert!(r.text().contains("HandlerUnavailable"), "{}", r.text());
    assert!(r.text().contains("schema-validate"), "{}", r.text());
}

/// The buses a container's serving threads attach to are those its placed handlers use,
/// each once, and none when every handler runs in process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_threads_attach_to_each_bus_of_placed_handlers_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().display();
    let placed = osprey_container::Config::parse(&format!(
        "[data]\ndir = \"{data}/a\"\n\
         [[service]]\nname = \"echo\"\npath = \"/a\"\n\
         handlers = [\"body-digest\", \"audit-log\"]\nremote = [\"body-digest\", \"audit-log\"]\n\
         [[service]]\nname = \"echo\"\npath = \"/b\"\n\
         handlers = [\"body-digest\"]\nremote = [\"body-digest\"]\n\
         [handler.audit-log]\nfile = \"{data}/audit.log\"\n"
    ))
    .unwrap();
    let d = osprey::build_dispatcher(&placed).await.unwrap();
    assert_eq!(d.buses().len(), 1);
    let local = osprey_container::Config::parse(&format!(
        "[data]\ndir = \"{data}/b\"\n\
         [[service]]\nname = \"echo\"\npath = \"/a\"\nhandlers = [\"body-digest\"]\n"
    ))
    .unwrap();
    let d = osprey::build_dispatcher(&local).await.unwrap();
    assert!(d.buses().is_empty());
}
