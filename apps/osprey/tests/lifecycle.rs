//! Start-up and shutdown, and failures inside services.

use std::sync::Arc;
use std::time::Duration;

use osprey_binding::XmlType;
use osprey_container::{Config, Dispatcher, Fault, Pipeline, ServiceRegistry, TypedService};

use crate::support::*;

#[derive(XmlType)]
#[xml(namespace = "urn:t", element = "work")]
struct Work {
    millis: u64,
    panic: bool,
}

#[derive(XmlType)]
#[xml(namespace = "urn:t", element = "workResponse")]
struct WorkResponse {
    done: bool,
}

async fn start_worker_service() -> Server {
    let svc = TypedService::builder("Work", "urn:t")
        .operation("work", "urn:t/work", |w: Work, _| async move {
            if w.panic {
                panic!("the service broke");
            }
            tokio::time::sleep(Duration::from_millis(w.millis)).await;
            Ok::<_, Fault>(WorkResponse { done: true })
        })
        .build();
    let mut registry = ServiceRegistry::new();
    registry.add("/work", Arc::new(svc), Pipeline::default());
    let mut config = Config::default();
    config.server.listen = vec!["127.0.0.1:0".parse().unwrap()];
    Server::start_with(&config, Dispatcher::new(registry, config.limits.clone())).await
}

fn work(millis: u64, panic: bool) -> String {
    format!(
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><work xmlns="urn:t"><millis>{millis}</millis><panic>{panic}</panic></work></s:Body></s:Envelope>"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_operation_faults_only_its_own_request() {
    let server = start_worker_service().await;
    let r = post(server.addr, "/work", "urn:t/work", work(0, true).as_bytes()).await;
    assert_eq!(r.status, 500);
    assert!(
        r.text().contains("soapenv:Server") || r.text().contains("InternalError"),
        "{}",
        r.text()
    );
    let r = post(
        server.addr,
        "/work",
        "urn:t/work",
        work(0, false).as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_in_flight_requests() {
    let mut server = start_worker_service().await;
    let addr = server.addr;
    let in_flight = tokio::spawn(async move {
        post(addr, "/work", "urn:t/work", work(500, false).as_bytes()).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.stop();
    let r = in_flight.await.unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<done>true</done>"));
    let done = server.done.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), done)
        .await
        .expect("stopped")
        .unwrap()
        .unwrap();
    // And the listener is gone.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_shuts_down_gracefully_on_sigterm() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_osprey"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Ready once it says where it serves (bounded: the first 20 lines).
    let ready = lines
        .by_ref()
        .take(20)
        .map_while(Result::ok)
        .find(|l| l.contains("serving echo at"));
    assert!(ready.is_some(), "no readiness line");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let rest: Vec<String> = lines.take(20).map_while(Result::ok).collect();
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit {exit:?}, log {rest:?}");
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
}

#[test]
fn bad_notification_settings_are_a_clear_start_up_error() {
    let config =
        osprey_container::Config::parse("[notifications]\nattempt = 3\n").expect("valid TOML");
    let err = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { osprey::build_dispatcher(&config).await.err().unwrap() });
    let text = format!("{err:#}");
    assert!(
        text.contains("[notifications]") && text.contains("attempt"),
        "{text}"
    );
}
