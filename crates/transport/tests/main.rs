//! Transport conformance: HTTP/1.1 keep-alive, chunked bodies, h2c prior knowledge, body
//! limits and streaming responses, against a listener on 127.0.0.1:0.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use osprey_transport::http::{HttpClient, HttpConfig, HttpConnection, HttpServer};
use osprey_transport::{InboundMessage, MessageService, OutboundBody, OutboundMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Echoes the body; `/stream` answers 3 chunks from a producer task.
struct Echo;

impl MessageService for Echo {
    async fn handle(&self, msg: InboundMessage) -> OutboundMessage {
        if msg.path == "/stream" {
            let (tx, rx) = tokio::sync::mpsc::channel(2);
            tokio::spawn(async move {
                for i in 0..3 {
                    let _ = tx.send(Ok(Bytes::from(format!("chunk{i};")))).await;
                }
            });
            return OutboundMessage {
                status: 200,
                content_type: "text/plain",
                body: OutboundBody::Stream(rx),
            };
        }
        let action = msg.soap_action.clone().unwrap_or_default();
        match msg.body.collect().await {
            Ok(b) => {
                OutboundMessage::full(200, "text/plain", [action.as_bytes(), b"|", &b].concat())
            }
            Err(e) => OutboundMessage::full(413, "text/plain", e.to_string()),
        }
    }
}

async fn start(config: HttpConfig) -> std::net::SocketAddr {
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve(Arc::new(Echo), std::future::pending()));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_keep_alive_serves_many_requests_on_one_connection() {
    let addr = start(HttpConfig::default()).await;
    let mut conn = HttpConnection::connect(addr).await.unwrap();
    for i in 0..100 {
        let r = conn
            .post("/x", &[], Bytes::from(format!("n{i}")))
            .await
            .unwrap();
        assert_eq!((r.status, &r.body[..]), (200, format!("|n{i}").as_bytes()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soapaction_quotes_are_removed() {
    let addr = start(HttpConfig::default()).await;
    let client = HttpClient::new(Duration::from_secs(5));
    let r = client
        .post(
            &format!("http://{addr}/x"),
            "text/xml",
            &[("SOAPAction", "\"urn:a\"")],
            Bytes::from_static(b"b"),
        )
        .await
        .unwrap();
    assert_eq!(&r.body[..], b"urn:a|b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_with_prior_knowledge_on_the_same_listener() {
    let addr = start(HttpConfig::default()).await;
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    for i in 0..10 {
        let req = hyper::Request::post(format!("http://{addr}/x"))
            .body(Full::new(Bytes::from(format!("h2-{i}"))))
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.version(), hyper::Version::HTTP_2);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], format!("|h2-{i}").as_bytes());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_bodies_are_read_and_limited() {
    let addr = start(HttpConfig {
        max_body: 10,
        ..HttpConfig::default()
    })
    .await;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).ends_with("|abcde"));
    let client = HttpClient::new(Duration::from_secs(5));
    let r = client
        .post(
            &format!("http://{addr}/x"),
            "text/plain",
            &[],
            Bytes::from(vec![b'x'; 11]),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 413);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_responses_arrive_whole() {
    let addr = start(HttpConfig::default()).await;
    let r = HttpClient::new(Duration::from_secs(5))
        .get(&format!("http://{addr}/stream"))
        .await
        .unwrap();
    assert_eq!(&r.body[..], b"chunk0;chunk1;chunk2;");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_serving_thread_runs_its_start_work_before_taking_connections() {
    let ran: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let mut server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        HttpConfig {
            workers: 2,
            ..HttpConfig::default()
        },
    )
    .await
    .unwrap();
    let seen = ran.clone();
    server.on_thread_start(Arc::new(move |i| {
        let seen = seen.clone();
        Box::pin(async move {
            // Start-up work on the thread's own runtime, the first thread's the slowest.
            let ms = if i == 0 { 400 } else { 50 };
            tokio::time::sleep(Duration::from_millis(ms)).await;
            let name = std::thread::current().name().unwrap_or("").to_owned();
            seen.lock().unwrap().push(format!("{i} {name}"));
        })
    }));
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve(Arc::new(Echo), std::future::pending()));
    // Connecting during the start-up work is not refused: the answer comes once every
    // thread is ready.
    let mut conn = HttpConnection::connect(addr).await.unwrap();
    let r = conn
        .post("/x", &[], Bytes::from_static(b"a"))
        .await
        .unwrap();
    assert_eq!((r.status, &r.body[..]), (200, &b"|a"[..]));
    let mut ran = ran.lock().unwrap().clone();
    ran.sort();
    assert_eq!(ran, ["0 osprey-worker-0", "1 osprey-worker-1"]);
}

/// A raw HTTP/1.1 server on 127.0.0.1:0 answering every request `ok`, counting the
/// connections it accepts.
struct Counting {
    addr: std::net::SocketAddr,
    accepted: Arc<std::sync::atomic::AtomicUsize>,
}

impl Counting {
    /// `close_first`: the first connection is closed unanswered.
    async fn start(close_first: bool) -> Counting {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                if count.fetch_add(1, Ordering::SeqCst) == 0 && close_first {
                    drop(s);
                    continue;
                }
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Ok(n) = s.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        // Requests without bodies (GET): each ends with a blank line.
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            let _ = s
                                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                                .await;
                        }
                    }
                });
            }
        });
        Counting { addr, accepted }
    }

    /// Connections accepted so far.
    fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Has `client` preconnect to `url` (a URL of this server) and waits (boundedly)
    /// until this server has accepted that connection.
    async fn preconnected(&self, client: &HttpClient, url: &str) {
        client.preconnect(url);
        for _ in 0..200 {
            if self.accepted() >= 1 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("no early connection to {url}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn preconnect_opens_the_connection_the_first_request_uses() {
    let server = Counting::start(false).await;
    let client = HttpClient::new(Duration::from_secs(5));
    let url = format!("http://{}/x", server.addr);
    // Accepted before any request is made.
    server.preconnected(&client, &url).await;
    for _ in 0..3 {
        let r = client.get(&url).await.unwrap();
        assert_eq!((r.status, &r.body[..]), (200, &b"ok"[..]));
    }
    assert_eq!(server.accepted(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_closed_early_connection_is_not_used() {
    let server = Counting::start(true).await;
    let client = HttpClient::new(Duration::from_secs(5));
    let url = format!("http://{}/x", server.addr);
    server.preconnected(&client, &url).await;
    // Let the close arrive.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let r = client.get(&url).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(server.accepted(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn preconnect_by_host_name_and_to_another_host() {
    let server = Counting::start(false).await;
    let other = Counting::start(false).await;
    let client = HttpClient::new(Duration::from_secs(5));
    let url = format!("http://localhost:{}/x", server.addr.port());
    server.preconnected(&client, &url).await;
    // A request to another host connects there and leaves the early connection alone.
    let r = client
        .get(&format!("http://{}/y", other.addr))
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(other.accepted(), 1);
    let r = client.get(&url).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(server.accepted(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn preconnect_to_nothing_listening_is_harmless() {
    // A port just freed: nothing listens there.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let client = HttpClient::new(Duration::from_secs(5));
    client.preconnect(&format!("http://{addr}/x"));
    client.preconnect("not a url");
    client.preconnect("https://127.0.0.1:1/");
    let err = client.get(&format!("http://{addr}/x")).await.unwrap_err();
    assert!(err.to_string().contains("HTTP exchange failed"), "{err}");
}
