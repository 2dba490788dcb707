//! Starting servers and speaking raw HTTP to them.

use std::net::SocketAddr;
use std::time::Duration;

use osprey_container::{Config, Dispatcher};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

pub const ECHO_VOID: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><echoVoid xmlns="urn:wstest"/></soapenv:Body></soapenv:Envelope>"#;

/// A running container; stops when dropped (or explicitly, to test shutdown).
pub struct Server {
    pub addr: SocketAddr,
    /// The state directory of stateful services, removed when the server is dropped.
    pub data: Option<tempfile::TempDir>,
    stop: Option<oneshot::Sender<()>>,
    pub done: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(config_toml: &str) -> Server {
        let mut config = Config::parse(config_toml).expect("test config is valid");
        config.server.listen = vec!["127.0.0.1:0".parse().unwrap()];
        let data = tempfile::tempdir().unwrap();
        config.data.dir = data.path().to_owned();
        let mut server =
            Self::start_with(&config, osprey::build_dispatcher(&config).await.unwrap()).await;
        server.data = Some(data);
        server
    }

    pub async fn start_with(config: &Config, dispatcher: Dispatcher) -> Server {
        let (tx, rx) = oneshot::channel::<()>();
        let running = osprey_container::run(config, dispatcher, async {
            let _ = rx.await;
        })
        .await
        .unwrap();
        let addr = running.addrs[0];
        let done = tokio::spawn(running.wait());
        Server {
            addr,
            data: None,
            stop: Some(tx),
            done: Some(done),
        }
    }

    pub async fn echo() -> Server {
        Self::start("").await
    }

    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Asserts the server still answers echoVoid correctly.
    pub async fn assert_serving(&self) {
        let r = post(
            self.addr,
            "/wstest",
            "urn:wstest/echoVoid",
            ECHO_VOID.as_bytes(),
        )
        .await;
        assert_eq!(r.status, 200, "server stopped serving: {}", r.text());
        assert!(r.text().contains("echoVoidResponse"));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// POSTs a SOAP 1.1 message and reads the response.
pub async fn post(addr: SocketAddr, path: &str, action: &str, body: &[u8]) -> Response {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: \"{action}\"\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut msg = head.into_bytes();
    msg.extend_from_slice(body);
    raw(addr, &msg).await
}

/// Sends raw bytes on a fresh connection and reads one response (bounded by 20 s).
pub async fn raw(addr: SocketAddr, bytes: &[u8]) -> Response {
    tokio::time::timeout(Duration::from_secs(20), async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        // The server may answer (and close) before reading everything: a failed write is
        // not a failed test, the response is what counts.
        let _ = s.write_all(bytes).await;
        read_response(&mut s).await.expect("a response")
    })
    .await
    .expect("response within 20 s")
}

/// Reads one HTTP/1.1 response with a Content-Length or chunked body.
pub async fn read_response(s: &mut TcpStream) -> Option<Response> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let lower = head.to_ascii_lowercase();
    let len: usize = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Response { status, head, body })
}

/// Compares `actual` with the golden file `tests/data/<name>`; `OSPREY_BLESS=1` rewrites it.
pub fn check(name: &str, actual: &[u8]) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("OSPREY_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read(&path).unwrap_or_else(|_| panic!("missing golden file {path}"));
    assert_eq!(
        String::from_utf8_lossy(actual),
        String::from_utf8_lossy(&expected),
        "golden file {name}"
    );
}

/// The envelope of the standard request for `op` (the bytes the peers are sent).
pub fn request(op: osprey_bench::Operation) -> Vec<u8> {
    osprey_bench::wstest::request_body(op, osprey_soap::SoapVersion::V11)
}

/// Reads `child`'s log until a line containing `ready` and returns it
/// ([`osprey_bench::process::await_ready`]); without one, kills the child and panics with
/// what it logged.
pub fn await_ready(child: &mut std::process::Child, ready: &str, what: &str) -> String {
    osprey_bench::process::await_ready(child, ready, what).unwrap_or_else(|e| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{e}")
    })
}

/// Starts the real `osprey serve` on `addr` with state in `data`, the configuration
/// `config_toml` and `args`; returns the child and the counter's URL once it serves.
pub fn spawn_osprey(
    addr: &str,
    data: &std::path::Path,
    config_toml: &str,
    args: &[&str],
) -> (std::process::Child, String) {
    let config = data.join("osprey.toml");
    std::fs::write(&config, config_toml).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_osprey"))
        .args(["serve", "--listen", addr, "--config"])
        .arg(&config)
        .arg("--data")
        .arg(data)
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line = await_ready(&mut child, "serving counter at", "osprey serve");
    let url = line
        .split("serving counter at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_owned();
    (child, url)
}
