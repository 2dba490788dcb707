//! The WSRF counter end to end: the typed client and a notification consumer against the
//! container as `osprey serve` starts it, and each WSRF fault from raw requests.

use std::time::Duration;

use osprey_counter::{CounterClient, VALUE};
use osprey_wsrf::client::{ClientError, NotificationConsumer};
use osprey_wsrf::messages::TerminationRequest;
use osprey_wsrf::{ns, topic, EndpointReference};

use crate::support::{post, Server};

const WAIT: Duration = Duration::from_secs(10);

fn client(server: &Server) -> CounterClient {
    CounterClient::new(&format!("http://{}/counter", server.addr), WAIT)
}

/// A container, a client, a listening consumer and a fresh counter.
async fn counter_with_consumer() -> (
    Server,
    CounterClient,
    NotificationConsumer,
    EndpointReference,
) {
    let server = Server::start("").await;
    let c = client(&server);
    let consumer = NotificationConsumer::start().await.unwrap();
    let epr = c.create().await.unwrap();
    (server, c, consumer, epr)
}

fn fault_reason(e: ClientError) -> String {
    match e {
        ClientError::Fault(f) => f.reason,
        other => panic!("expected a fault, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_add_read_destroy() {
    let server = Server::start("").await;
    let c = client(&server);
    let epr = c.create().await.unwrap();
    assert_eq!(epr.address, format!("http://{}/counter", server.addr));
    assert_eq!(c.add(&epr, 5).await.unwrap(), 5);
    assert_eq!(c.add(&epr, -7).await.unwrap(), -2);
    assert_eq!(c.value(&epr).await.unwrap(), -2);
    // Two counters are independent.
    let other = c.create().await.unwrap();
    assert_eq!(c.add(&other, 1).await.unwrap(), 1);
    assert_eq!(c.value(&epr).await.unwrap(), -2);
    // The whole document: Value, then the lifetime properties.
    let doc = c.wsrf.get_document(&epr).await.unwrap();
    assert_eq!(doc.name.local(), "CounterResourceProperties");
    let names: Vec<_> = doc.elements().map(|e| e.name.local().to_owned()).collect();
    assert_eq!(names, ["Value", "CurrentTime", "TerminationTime"]);
    // The lifetime properties are part of the document.
    let doc = c.wsrf.query(&epr, "count(/*/*)", &[]).await.unwrap();
    assert_eq!(
        doc,
        osprey_wsrf::messages::QueryResourcePropertiesResponse::Value("3".into())
    );
    c.wsrf.destroy(&epr).await.unwrap();
    let e = c.add(&epr, 1).await.unwrap_err();
    // The client sees the spec's fault element, not only the text.
    assert_eq!(
        e.fault_element(),
        Some(osprey_xml::QName::new_static(ns::R, "ResourceUnknownFault"))
    );
    assert!(fault_reason(e).contains("unknown resource"));
    assert_eq!(c.value(&other).await.unwrap(), 1);
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_add_is_notified_in_order_to_a_subscriber() {
    let (_server, c, mut consumer, epr) = counter_with_consumer().await;
    let sub = c
        .wsrf
        .subscribe(&epr, &consumer.epr(), &VALUE)
        .await
        .unwrap();
    let term = c
        .wsrf
        .subscribe(&epr, &consumer.epr(), &topic::RESOURCE_TERMINATION)
        .await
        .unwrap();
    assert_ne!(sub.subscription, term.subscription);
    for i in 1..=5 {
        assert_eq!(c.add(&epr, 1).await.unwrap(), i);
    }
    for i in 1..=5 {
        let n = consumer
            .next(WAIT)
            .await
            .expect("a notification within 10 s");
        let m = &n.message;
        assert_eq!(
            m.topic.as_ref().map(|t| (t.0.as_str(), &t.1)),
            Some((ns::TOPIC_SIMPLE, &VALUE))
        );
        assert_eq!(m.producer.as_ref(), Some(&epr));
        assert_eq!(m.subscription.as_ref(), Some(&sub.subscription));
        assert_eq!(
            m.message.name.local(),
            "ResourcePropertyValueChangeNotification"
        );
        assert_eq!(
            m.new_values()[0].string_value(),
            i.to_string(),
            "notification {i} out of order"
        );
    }
    // Paused: no notification; resumed: notified again; unsubscribed: none.
    c.wsrf.pause(&sub.subscription).await.unwrap();
    c.add(&epr, 1).await.unwrap();
    c.wsrf.resume(&sub.subscription).await.unwrap();
    c.add(&epr, 1).await.unwrap();
    let n = consumer
        .next(WAIT)
        .await
        .expect("a notification after resume");
    assert_eq!(n.message.new_values()[0].string_value(), "7");
    c.wsrf.unsubscribe(&sub.subscription).await.unwrap();
    c.add(&epr, 1).await.unwrap();
    c.wsrf.destroy(&epr).await.unwrap();
    let n = consumer
        .next(WAIT)
        .await
        .expect("the termination notification");
    assert_eq!(
        n.message.topic.as_ref().map(|t| &t.1),
        Some(&topic::RESOURCE_TERMINATION)
    );
    assert_eq!(n.message.message.name.local(), "TerminationNotification");
    assert!(consumer.next(Duration::from_millis(300)).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_refuses_connections_is_retried_then_dropped() {
    let server = Server::start(
        "[notifications]\nattempts = 3\nbackoff_ms = 10\non_failure = \"unsubscribe\"\n",
    )
    .await;
    let c = client(&server);
    // A port nobody listens on: bind one, note it, close it.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let epr = c.create().await.unwrap();
    let sub = c
        .wsrf
        .subscribe(
            &epr,
            &EndpointReference::new(format!("http://{dead}/gone")),
            &VALUE,
        )
        .await
        .unwrap();
    // The request path does not wait for the consumer.
    for _ in 0..20 {
        c.add(&epr, 1).await.unwrap();
    }
    // After its retries the subscription is destroyed, by policy (a bounded wait).
    let mut gone = None;
    for _ in 0..200 {
        // Pause then resume: either fails once the policy has removed it.
        let probe = match c.wsrf.pause(&sub.subscription).await {
            Ok(()) => c.wsrf.resume(&sub.subscription).await,
            Err(e) => Err(e),
        };
        if let Err(e) = probe {
            gone = Some(fault_reason(e));
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(gone
        .expect("subscription still alive after 5 s")
        .contains("no subscription"));
    assert_eq!(c.value(&epr).await.unwrap(), 20);
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn termination_time_in_the_past_is_refused_and_the_future_is_kept() {
    let server = Server::start("").await;
    let c = client(&server);
    let epr = c.create().await.unwrap();
    let e = c
        .wsrf
        .set_termination_time(&epr, TerminationRequest::After(-1000))
        .await
        .unwrap_err();
    assert!(fault_reason(e).contains("termination time"));
    let r = c
        .wsrf
        .set_termination_time(&epr, TerminationRequest::After(3_600_000))
        .await
        .unwrap();
    let diff = r.new_termination_time.unwrap().unix_seconds() - r.current_time.unix_seconds();
    assert!((3599..=3600).contains(&diff), "{diff}");
}

/// Each bad request gets its spec fault element in the detail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_wsrf_requests_get_their_spec_faults() {
    let server = Server::start("").await;
    let c = client(&server);
    let epr = c.create().await.unwrap();
    let key = epr.reference_parameters[0].clone();
    let envelope = |header: &str, body: &str| {
        format!(
            r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header>{header}</s:Header><s:Body>{body}</s:Body></s:Envelope>"#
        )
    };
    let rp = "http://docs.oasis-open.org/wsrf/rp-2";
    let cases = [
        (
            osprey_wsrf::ns::action::GET_RP,
            envelope(
                &key,
                &format!(
                    r#"<GetResourceProperty xmlns="{rp}" xmlns:c="urn:osprey:counter">c:Nope</GetResourceProperty>"#
                ),
            ),
            "InvalidResourcePropertyQNameFault",
        ),
        (
            osprey_wsrf::ns::action::GET_RP,
            envelope(
                &key,
                &format!(r#"<GetResourceProperty xmlns="{rp}">x:Value</GetResourceProperty>"#),
            ),
            "InvalidResourcePropertyQNameFault",
        ),
        (
            osprey_wsrf::ns::action::GET_RP,
            envelope(
                "",
                &format!(r#"<GetResourceProperty xmlns="{rp}">Value</GetResourceProperty>"#),
            ),
            "ResourceUnknownFault",
        ),
        (
            osprey_wsrf::ns::action::QUERY_RP,
            envelope(
                &key,
                &format!(
                    r#"<QueryResourceProperties xmlns="{rp}"><QueryExpression Dialect="http://www.w3.org/TR/1999/REC-xpath-19991116">/*/[</QueryExpression></QueryResourceProperties>"#
                ),
            ),
            "InvalidQueryExpressionFault",
        ),
        (
            osprey_wsrf::ns::action::QUERY_RP,
            envelope(
                &key,
                &format!(
                    r#"<QueryResourceProperties xmlns="{rp}"><QueryExpression Dialect="urn:sql">select 1</QueryExpression></QueryResourceProperties>"#
                ),
            ),
            "UnknownQueryExpressionDialectFault",
        ),
        (
            osprey_wsrf::ns::action::SUBSCRIBE,
            envelope(
                &key,
                r#"<Subscribe xmlns="http://docs.oasis-open.org/wsn/b-2" xmlns:wsa="http://www.w3.org/2005/08/addressing" xmlns:c="urn:osprey:counter"><ConsumerReference><wsa:Address>http://127.0.0.1:9/c</wsa:Address></ConsumerReference><Filter><TopicExpression Dialect="http://docs.oasis-open.org/wsn/t-1/TopicExpression/Full">c:Value</TopicExpression></Filter></Subscribe>"#,
            ),
            "TopicExpressionDialectUnknownFault",
        ),
        (
            osprey_wsrf::ns::action::SUBSCRIBE,
            envelope(
                &key,
                r#"<Subscribe xmlns="http://docs.oasis-open.org/wsn/b-2" xmlns:wsa="http://www.w3.org/2005/08/addressing" xmlns:c="urn:osprey:counter"><ConsumerReference><wsa:Address>http://127.0.0.1:9/c</wsa:Address></ConsumerReference><Filter><TopicExpression Dialect="http://docs.oasis-open.org/wsn/t-1/TopicExpression/Simple">c:Other</TopicExpression></Filter></Subscribe>"#,
            ),
            "TopicNotSupportedFault",
        ),
        (
            osprey_wsrf::ns::action::SET_TERMINATION_TIME,
            envelope(
                &key,
                r#"<SetTerminationTime xmlns="http://docs.oasis-open.org/wsrf/rl-2"><RequestedTerminationTime>2001-01-01T00:00:00Z</RequestedTerminationTime></SetTerminationTime>"#,
            ),
            "UnableToSetTerminationTimeFault",
        ),
    ];
    for (action, body, fault) in cases {
        let r = post(server.addr, "/counter", action, body.as_bytes()).await;
        assert_eq!(r.status, 500, "{}", r.text());
        assert!(
            r.text().contains(&format!("<{fault} ")),
            "expected {fault}: {}",
            r.text()
        );
    }
    server.assert_serving().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_content_filter_selects_the_notifications() {
    let (_server, c, mut consumer, epr) = counter_with_consumer().await;
    let prepared = c
        .wsrf
        .prepare_subscribe_filtered(
            &epr,
            &consumer.epr(),
            &VALUE,
            Some((
                "rp:NewValues/c:Value > 3",
                &[("rp", ns::RP), ("c", osprey_counter::NS)],
            )),
        )
        .unwrap();
    let _: osprey_wsrf::messages::SubscribeResponse = c.wsrf.send(&prepared).await.unwrap();
    for _ in 0..5 {
        c.add(&epr, 1).await.unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..2 {
        let n = consumer
            .next(WAIT)
            .await
            .expect("a notification that passes the filter");
        got.push(n.message.new_values()[0].string_value());
    }
    assert_eq!(got, ["4", "5"]);
    assert!(consumer.next(Duration::from_millis(300)).await.is_none());
    // A filter outside the subset is refused when subscribing.
    let bad = c
        .wsrf
        .prepare_subscribe_filtered(
            &epr,
            &consumer.epr(),
            &VALUE,
            Some(("c:Value/..", &[("c", osprey_counter::NS)])),
        )
        .unwrap();
    let e = c
        .wsrf
        .send::<osprey_wsrf::messages::SubscribeResponse>(&bad)
        .await
        .unwrap_err();
    assert!(fault_reason(e).contains("invalid message content expression"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_counter_speaks_soap_1_2_too() {
    let server = Server::start("").await;
    let url = format!("http://{}/counter", server.addr);
    let wsrf = osprey_wsrf::client::WsrfClient::new(WAIT).soap12();
    let created: osprey_counter::CreateCounterResponse = wsrf
        .call(
            &EndpointReference::new(url),
            "urn:osprey:counter/createCounter",
            &osprey_counter::CreateCounter {},
        )
        .await
        .unwrap();
    let epr = created.endpoint_reference.0;
    let added: osprey_counter::AddResponse = wsrf
        .call(
            &epr,
            "urn:osprey:counter/add",
            &osprey_counter::Add { value: 3 },
        )
        .await
        .unwrap();
    assert_eq!(added.value, 3);
    let values = wsrf.get_property(&epr, &VALUE).await.unwrap();
    assert_eq!(values[0].string_value(), "3");
    wsrf.destroy(&epr).await.unwrap();
    let e = wsrf.destroy(&epr).await.unwrap_err();
    assert_eq!(
        e.fault_element(),
        Some(osprey_xml::QName::new_static(ns::R, "ResourceUnknownFault"))
    );
}

/// A consumer that accepts connections and never answers holds up neither the adds nor
/// the other consumers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_consumer_does_not_hold_up_requests_or_other_consumers() {
    let server = Server::start("[notifications]\ntimeout_ms = 60000\nattempts = 1\n").await;
    let c = client(&server);
    // Accepts, reads nothing, answers nothing (for the whole test).
    let hang = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_addr = hang.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut conns = Vec::new();
        while let Ok((s, _)) = hang.accept().await {
            conns.push(s);
        }
    });
    let mut good = NotificationConsumer::start().await.unwrap();
    let epr = c.create().await.unwrap();
    c.wsrf
        .subscribe(
            &epr,
            &EndpointReference::new(format!("http://{hang_addr}/c")),
            &VALUE,
        )
        .await
        .unwrap();
    c.wsrf.subscribe(&epr, &good.epr(), &VALUE).await.unwrap();
    let started = std::time::Instant::now();
    for i in 1..=20 {
        assert_eq!(c.add(&epr, 1).await.unwrap(), i);
    }
    // Each send to the hanging consumer would take a minute; 20 adds took far less.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    for i in 1..=20 {
        let n = good.next(WAIT).await.expect("the good consumer is served");
        assert_eq!(n.message.new_values()[0].string_value(), i.to_string());
    }
    held.abort();
}

/// WSRF faults go out with WSRF's fault action; other faults keep WS-Addressing's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wsrf_faults_carry_the_wsrf_fault_action() {
    let server = Server::start("").await;
    let wsa = |action: &str| {
        format!(
            r#"<wsa:Action xmlns:wsa="http://www.w3.org/2005/08/addressing">{action}</wsa:Action><wsa:MessageID xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:uuid:1</wsa:MessageID>"#
        )
    };
    let envelope = |action: &str, body: &str| {
        format!(
            r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header>{}<c:CounterKey xmlns:c="urn:osprey:counter">nope</c:CounterKey></s:Header><s:Body>{body}</s:Body></s:Envelope>"#,
            wsa(action)
        )
    };
    let add = "urn:osprey:counter/add";
    let r = post(
        server.addr,
        "/counter",
        add,
        envelope(
            add,
            r#"<add xmlns="urn:osprey:counter"><value>1</value></add>"#,
        )
        .as_bytes(),
    )
    .await;
    assert!(r.text().contains("ResourceUnknownFault"), "{}", r.text());
    assert!(
        r.text()
            .contains(">http://docs.oasis-open.org/wsrf/fault</Action>"),
        "{}",
        r.text()
    );
    // A schema fault (not WSRF's) keeps WS-Addressing's fault action.
    let r = post(
        server.addr,
        "/counter",
        add,
        envelope(
            add,
            r#"<add xmlns="urn:osprey:counter"><value>x</value></add>"#,
        )
        .as_bytes(),
    )
    .await;
    assert!(
        r.text()
            .contains(">http://www.w3.org/2005/08/addressing/soap/fault</Action>"),
        "{}",
        r.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_up_reaches_every_serving_thread_and_stores_nothing() {
    let mut config = osprey_container::Config::parse("[server]\nworkers = 3\n").unwrap();
    config.server.listen = vec!["127.0.0.1:0".parse().unwrap()];
    let data = tempfile::tempdir().unwrap();
    config.data.dir = data.path().to_owned();
    let dispatcher = osprey::build_dispatcher(&config).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = osprey_container::run(&config, dispatcher, async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    // One connection per serving thread, one exchange per service (echo and counter).
    assert_eq!(running.warm_up().await, 3 * config.services.len());
    let addr = running.addrs[0];
    let c = CounterClient::new(&format!("http://{addr}/counter"), WAIT);
    let epr = c.create().await.unwrap();
    assert_eq!(c.add(&epr, 2).await.unwrap(), 2);
    let _ = stop.send(());
    running.wait().await.unwrap();
    // Only the client's counter was stored.
    let store = osprey_store::Store::open_sqlite(&data.path().join("osprey.db")).unwrap();
    assert_eq!(store.load("counter").unwrap().len(), 1);
    assert!(store.load("counter/subscription").unwrap().is_empty());
}
