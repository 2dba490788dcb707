//! Several containers on one PostgreSQL database (`--postgres`): real `osprey serve`
//! processes and a real PostgreSQL server on loopback (osprey-testkit).

use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use osprey_counter::{CounterClient, VALUE};
use osprey_testkit::Postgres;
use osprey_wsrf::client::NotificationConsumer;
use osprey_wsrf::ns;
use osprey_xml::QName;

use crate::durability::moved;
use crate::support::spawn_osprey;

/// A container process, killed when dropped (also when a test fails).
struct Container {
    child: Child,
    url: String,
    _data: tempfile::TempDir,
}

impl Container {
    /// A container on the shared test database, with its own (unused) data directory.
    fn start() -> Container {
        let data = tempfile::tempdir().unwrap();
        let db = Postgres::shared().conninfo();
        let (child, url) = spawn_osprey("127.0.0.1:0", data.path(), "", &["--postgres", &db]);
        Container {
            child,
            url,
            _data: data,
        }
    }

    /// SIGKILL, and wait for it to end.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_containers_serve_the_same_counters() {
    let (a, b) = (Container::start(), Container::start());
    let ca = CounterClient::new(&a.url, Duration::from_secs(5));
    let cb = CounterClient::new(&b.url, Duration::from_secs(5));
    let epr_a = ca.create().await.unwrap();
    let epr_b = moved(&epr_a, &b.url);

    // A subscription made through B hears of a change made through A.
    let mut consumer = NotificationConsumer::start().await.unwrap();
    cb.wsrf
        .subscribe(&epr_b, &consumer.epr(), &VALUE)
        .await
        .unwrap();
    assert_eq!(ca.add(&epr_a, 5).await.unwrap(), 5);
    let n = consumer
        .next(Duration::from_secs(10))
        .await
        .expect("a notification for the add made through the other container");
    assert_eq!(n.message.new_values()[0].string_value(), "5");
    assert_eq!(cb.value(&epr_b).await.unwrap(), 5);

    // Concurrent adds through both containers: none is lost (compare-and-set).
    let mut load = Vec::new();
    for i in 0..16 {
        let (c, epr) = if i % 2 == 0 {
            (ca.clone(), epr_a.clone())
        } else {
            (cb.clone(), epr_b.clone())
        };
        load.push(tokio::spawn(async move {
            for _ in 0..25 {
                c.add(&epr, 1).await.unwrap();
            }
        }));
    }
    for t in load {
        t.await.unwrap();
    }
    assert_eq!(ca.value(&epr_a).await.unwrap(), 5 + 16 * 25);
    assert_eq!(cb.value(&epr_b).await.unwrap(), 5 + 16 * 25);

    // Destroyed through B: gone for A too.
    cb.wsrf.destroy(&epr_b).await.unwrap();
    let err = ca.value(&epr_a).await.unwrap_err();
    assert_eq!(
        err.fault_element(),
        Some(QName::new_static(ns::R, "ResourceUnknownFault")),
        "{err}"
    );
}

/// One container is killed with SIGKILL under a 16-connection add load spread over two:
/// the other keeps serving, and every acknowledged add is in Value.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_one_container_loses_no_acknowledged_add() {
    let (mut a, b) = (Container::start(), Container::start());
    let ca = CounterClient::new(&a.url, Duration::from_secs(5));
    let cb = CounterClient::new(&b.url, Duration::from_secs(5));
    let epr_a = ca.create().await.unwrap();
    let epr_b = moved(&epr_a, &b.url);

    let acked = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let stop_b = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for i in 0..16 {
        let through_a = i % 2 == 0;
        let (c, epr) = if through_a {
            (ca.clone(), epr_a.clone())
        } else {
            (cb.clone(), epr_b.clone())
        };
        let (acked, sent, stop_b) = (acked.clone(), sent.clone(), stop_b.clone());
        load.push(tokio::spawn(async move {
            // Bounded: A's clients stop at their first failure (the kill), B's when told,
            // and every client after 20,000 adds.
            for _ in 0..20_000 {
                if stop_b.load(Ordering::Relaxed) {
                    break;
                }
                sent.fetch_add(1, Ordering::SeqCst);
                match c.add(&epr, 1).await {
                    Ok(_) => acked.fetch_add(1, Ordering::SeqCst),
                    Err(e) if through_a => {
                        let _ = e;
                        break;
                    }
                    Err(e) => panic!("the surviving container failed an add: {e}"),
                };
            }
        }));
    }
    for _ in 0..3000 {
        if acked.load(Ordering::SeqCst) >= 300 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    a.kill(); // SIGKILL
              // B keeps serving after A died.
    let before = acked.load(Ordering::SeqCst);
    for _ in 0..3000 {
        if acked.load(Ordering::SeqCst) >= before + 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop_b.store(true, Ordering::Relaxed);
    for t in load {
        t.await.unwrap();
    }
    let (acked, sent) = (acked.load(Ordering::SeqCst), sent.load(Ordering::SeqCst));
    assert!(
        acked >= before + 100,
        "B stopped serving after A was killed"
    );
    let value = u64::try_from(cb.value(&epr_b).await.unwrap()).unwrap();
    assert!(
        (acked..=sent).contains(&value),
        "Value {value}: {acked} adds were acknowledged, {sent} sent"
    );
    drop(b);
}
