//! Both buses against the same checks: the in-process one, and a real `nats-server`
//! started on loopback (osprey-testkit).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use osprey_bus::{Answer, Bus, BusError, LocalBus, NatsBus, Responder};
use osprey_testkit::NatsServer;

const T: Duration = Duration::from_secs(2);

/// A responder that answers `<tag>:<payload>` after `delay`, counting its calls.
fn echo(tag: &'static str, delay: Duration, calls: Arc<AtomicUsize>) -> Responder {
    Arc::new(move |p: Bytes| {
        let calls = calls.clone();
        Box::pin(async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            let mut out = tag.as_bytes().to_vec();
            out.push(b':');
            out.extend_from_slice(&p);
            Answer::Reply(Bytes::from(out))
        })
    })
}

async fn request_reply_queue_groups_and_drain(bus: Arc<dyn Bus>) {
    // Nobody serves yet.
    assert!(matches!(
        bus.request("h.a", Bytes::from_static(b"x"), T).await,
        Err(BusError::NoResponders(_) | BusError::Timeout { .. })
    ));
    let (c1, c2) = (Arc::default(), Arc::default());
    let w1 = bus
        .serve("h.a", "h.a", echo("w1", Duration::ZERO, Arc::clone(&c1)))
        .await
        .unwrap();
    let w2 = bus
        .serve("h.a", "h.a", echo("w2", Duration::ZERO, Arc::clone(&c2)))
        .await
        .unwrap();
    for i in 0..40 {
        let r = bus
            .request("h.a", Bytes::from(format!("{i}")), T)
            .await
            .unwrap();
        assert!(r.ends_with(format!(":{i}").as_bytes()));
    }
    // One queue group: every request went to exactly one worker, both took a share.
    let (n1, n2) = (c1.load(Ordering::SeqCst), c2.load(Ordering::SeqCst));
    assert_eq!(n1 + n2, 40);
    assert!(n1 > 0 && n2 > 0, "w1 {n1}, w2 {n2}");
    // A drained worker takes no more: w2 serves everything after.
    w1.drain().await;
    for _ in 0..10 {
        let r = bus
            .request("h.a", Bytes::from_static(b"y"), T)
            .await
            .unwrap();
        assert_eq!(&r[..], b"w2:y");
    }
    w2.drain().await;
}

async fn slow_worker_times_out_and_drain_waits_for_work_in_flight(bus: Arc<dyn Bus>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let w = bus
        .serve(
            "h.slow",
            "h.slow",
            echo("s", Duration::from_millis(300), calls),
        )
        .await
        .unwrap();
    let short = Duration::from_millis(50);
    assert!(matches!(
        bus.request("h.slow", Bytes::from_static(b"x"), short).await,
        Err(BusError::Timeout { .. })
    ));
    // A request in flight when the drain starts still gets its answer.
    let b = bus.clone();
    let pending =
        tokio::spawn(async move { b.request("h.slow", Bytes::from_static(b"z"), T).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    w.drain().await;
    assert_eq!(&pending.await.unwrap().unwrap()[..], b"s:z");
}

/// Stage 1 forwards to stage 2, which answers the requester directly.
async fn a_forward_is_answered_by_the_last_stage(bus: Arc<dyn Bus>) {
    let first: Responder = Arc::new(|p: Bytes| {
        Box::pin(async move {
            let mut v = p.to_vec();
            v.extend_from_slice(b"+1");
            Answer::Forward {
                subject: "h.stage2".into(),
                payload: Bytes::from(v),
            }
        })
    });
    let _s1 = bus.serve("h.stage1", "h.stage1", first).await.unwrap();
    let _s2 = bus
        .serve(
            "h.stage2",
            "h.stage2",
            echo("s2", Duration::ZERO, Arc::default()),
        )
        .await
        .unwrap();
    let r = bus
        .request("h.stage1", Bytes::from_static(b"m"), T)
        .await
        .unwrap();
    assert_eq!(&r[..], b"s2:m+1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_bus() {
    let bus: Arc<dyn Bus> = Arc::new(LocalBus::new());
    request_reply_queue_groups_and_drain(bus.clone()).await;
    slow_worker_times_out_and_drain_waits_for_work_in_flight(bus.clone()).await;
    a_forward_is_answered_by_the_last_stage(bus).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_bus() {
    let server = NatsServer::start().unwrap();
    let bus: Arc<dyn Bus> = Arc::new(NatsBus::connect(&server.url(), T).await.unwrap());
    request_reply_queue_groups_and_drain(bus.clone()).await;
    slow_worker_times_out_and_drain_waits_for_work_in_flight(bus.clone()).await;
    a_forward_is_answered_by_the_last_stage(bus).await;
}

/// The server restarts: requests meanwhile fail cleanly, then both sides reconnect by
/// themselves and serve again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_bus_reconnects_after_a_server_restart() {
    let server = NatsServer::start().unwrap();
    let worker = NatsBus::connect(&server.url(), T).await.unwrap();
    let client = NatsBus::connect(&server.url(), T).await.unwrap();
    let _w = worker
        .serve("h.r", "h.r", echo("w", Duration::ZERO, Arc::default()))
        .await
        .unwrap();
    assert!(client
        .request("h.r", Bytes::from_static(b"1"), T)
        .await
        .is_ok());
    server.stop();
    assert!(client
        .request("h.r", Bytes::from_static(b"2"), Duration::from_millis(300))
        .await
        .is_err());
    server.restart().unwrap();
    // Bounded: up to 15 s for both clients to reconnect and resubscribe.
    let mut ok = false;
    for _ in 0..150 {
        if client
            .request("h.r", Bytes::from_static(b"3"), Duration::from_millis(100))
            .await
            .is_ok()
        {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "no reply after the server came back");
}

/// The inbox prefix of the connection a request went over: the responder answers with
/// the request's reply subject (`_INBOX.<connection's prefix>.<token>`).
async fn inbox_of(bus: &NatsBus) -> String {
    let reply = bus
        .request("h.whoami", Bytes::from_static(b"?"), T)
        .await
        .unwrap();
    let subject = String::from_utf8(reply.to_vec()).unwrap();
    subject.rsplit_once('.').unwrap().0.to_owned()
}

/// Spawns a thread running a single-threaded runtime that attaches itself to `bus` (or
/// not) and returns the inbox prefixes of two requests made on it.
fn two_requests_on_a_thread(bus: &NatsBus, attach: bool) -> (String, String) {
    let bus = bus.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            if attach {
                bus.attach_thread().await.unwrap();
            }
            (inbox_of(&bus).await, inbox_of(&bus).await)
        })
    })
    .join()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_threads_send_over_connections_of_their_own() {
    use futures_util::StreamExt;
    let server = NatsServer::start().unwrap();
    let bus = NatsBus::connect(&server.url(), T).await.unwrap();
    // A responder that answers each request with its reply subject.
    let client = bus.client().clone();
    let mut sub = client.subscribe("h.whoami").await.unwrap();
    client.flush().await.unwrap();
    let responder = tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let reply = m.reply.unwrap();
            client
                .publish(reply.clone(), Bytes::from(reply.to_string()))
                .await
                .unwrap();
        }
    });
    let shared = inbox_of(&bus).await;
    let (a1, a2) = two_requests_on_a_thread(&bus, true);
    let (b1, b2) = two_requests_on_a_thread(&bus, true);
    let (u1, u2) = two_requests_on_a_thread(&bus, false);
    // An attached thread keeps to one connection of its own; each attached thread has a
    // different one; a thread that was not attached uses the shared connection.
    assert_eq!(a1, a2);
    assert_eq!(b1, b2);
    assert_ne!(a1, shared);
    assert_ne!(b1, shared);
    assert_ne!(a1, b1);
    assert_eq!((u1, u2), (shared.clone(), shared));
    responder.abort();
}
