//! ResourceHome over a real SQLite store and over a real PostgreSQL server (a shared
//! home), with a manual clock: lifetimes are tested by moving time, never by sleeping.
//! Every test runs against both (modules `sqlite` and `postgres` at the end).

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use osprey_addressing::EndpointReference;
use osprey_binding::XmlType;
use osprey_soap::SoapVersion;
use osprey_store::{SharedStore, Store};
use osprey_testkit::Postgres;
use osprey_wsrf::doc::Element;
use osprey_wsrf::messages::{Expression, SetComponent, Subscribe, TerminationRequest};
use osprey_wsrf::{ns, HomeConfig, ManualClock, ResourceHome, ResourceState, WsrfError};
use osprey_xml::{QName, Scope};

#[derive(XmlType, Debug, Clone, PartialEq, Default)]
#[xml(namespace = "urn:t", element = "Props")]
struct Props {
    #[xml(rename = "Count")]
    count: i32,
    #[xml(rename = "Label")]
    label: String,
    #[xml(rename = "Tag")]
    tags: Vec<String>,
}

impl ResourceState for Props {
    fn modifiable(p: &QName) -> bool {
        p.local() == "Count" || p.local() == "Tag"
    }
}

const T0: i64 = 1_800_000_000_000;

enum Backend {
    Sqlite(tempfile::TempDir),
    /// A kind of its own on the shared server, so tests do not see each other's records.
    Postgres(String),
}

struct Fixture {
    backend: Backend,
    clock: Arc<ManualClock>,
}

impl Fixture {
    fn sqlite() -> Self {
        Fixture {
            backend: Backend::Sqlite(tempfile::tempdir().unwrap()),
            clock: Arc::new(ManualClock::at(T0)),
        }
    }

    fn postgres() -> Self {
        Fixture {
            backend: Backend::Postgres(format!("props-{}", uuid_like())),
            clock: Arc::new(ManualClock::at(T0)),
        }
    }

    /// A home over the fixture's state: opening it again is a container restart.
    fn home(&self) -> Arc<ResourceHome<Props>> {
        let config = |kind: &str| HomeConfig {
            kind: kind.into(),
            key_name: QName::new_static("urn:t", "Key"),
            delivery: Default::default(),
        };
        match &self.backend {
            Backend::Sqlite(dir) => ResourceHome::open(
                config("props"),
                Store::open_sqlite(&dir.path().join("s.db")).unwrap(),
                self.clock.clone(),
            )
            .unwrap(),
            Backend::Postgres(kind) => ResourceHome::open_shared(
                config(kind),
                SharedStore::connect(&Postgres::shared().conninfo(), 2).unwrap(),
                self.clock.clone(),
            ),
        }
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{t:x}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn topic(text: &str, dialect: &str) -> Expression {
    let mut scope = Scope::default();
    scope.bind("t", "urn:t");
    Expression {
        dialect: dialect.into(),
        text: text.into(),
        scope,
    }
}

fn subscribe(text: &str, dialect: &str, initial: Option<&str>) -> Subscribe {
    Subscribe {
        consumer: EndpointReference::new("http://127.0.0.1:9/consumer"),
        topic: Some(topic(text, dialect)),
        message_content: None,
        initial_termination_time: initial.map(str::to_owned),
        unknown_filters: Vec::new(),
    }
}

async fn resources_live_change_and_die(f: Fixture) {
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let v = home
        .update(&key, |p| {
            p.count += 2;
            Ok(p.count)
        })
        .await
        .unwrap();
    assert_eq!(v, 2);
    assert_eq!(home.read(&key, |p| p.count).await.unwrap(), 2);
    // A failing change changes nothing.
    let e = home
        .update(&key, |p| {
            p.count = 99;
            Err::<(), _>(WsrfError::InvalidModification("no".into()))
        })
        .await;
    assert!(e.is_err());
    assert_eq!(home.read(&key, |p| p.count).await.unwrap(), 2);
    home.destroy(&key).await.unwrap();
    assert!(matches!(
        home.read(&key, |_| ()).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
    assert!(matches!(
        home.destroy(&key).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
}

async fn state_and_subscriptions_survive_a_restart(f: Fixture) {
    let key;
    {
        let home = f.home();
        key = home
            .create(Props::default(), Some(T0 + 60_000))
            .await
            .unwrap();
        home.update(&key, |p| {
            p.count = 41;
            p.label = "kept".into();
            Ok(())
        })
        .await
        .unwrap();
        home.subscribe(
            &key,
            "http://h/c",
            &subscribe("t:Count", ns::TOPIC_SIMPLE, None),
            SoapVersion::V11,
        )
        .await
        .unwrap();
    }
    let home = f.home();
    assert_eq!(
        home.read(&key, |p| (p.count, p.label.clone()))
            .await
            .unwrap(),
        (41, "kept".into())
    );
    let doc = home.document(&key).await.unwrap();
    let term = doc
        .elements()
        .find(|e| e.name == osprey_wsrf::TERMINATION_TIME)
        .unwrap();
    assert_eq!(term.string_value(), "2027-01-15T08:01:00Z");
    // The subscription came back with the resource: destroying it removes both.
    home.destroy(&key).await.unwrap();
}

async fn scheduled_destruction_follows_the_clock(f: Fixture) {
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let (new, now) = home
        .set_termination(&key, &TerminationRequest::After(10_000))
        .await
        .unwrap();
    assert_eq!(now.unix_seconds() * 1000, T0);
    assert_eq!(new.unwrap().unix_seconds() * 1000, T0 + 10_000);
    f.clock.advance(Duration::from_secs(9));
    assert!(home.read(&key, |_| ()).await.is_ok());
    f.clock.advance(Duration::from_secs(1));
    // Expired: unknown at once, removed by the next sweep, and gone after a restart.
    assert!(matches!(
        home.read(&key, |_| ()).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
    assert_eq!(home.sweep().await, 1);
    assert_eq!(home.count().await.unwrap(), 0);
    drop(home);
    assert_eq!(f.home().count().await.unwrap(), 0);
}

async fn lifetime_requests_in_the_past_are_refused(f: Fixture) {
    let home = f.home();
    assert!(matches!(
        home.create(Props::default(), Some(T0 - 1)).await,
        Err(WsrfError::UnableToSetTerminationTime(_))
    ));
    let key = home.create(Props::default(), None).await.unwrap();
    assert!(matches!(
        home.set_termination(&key, &TerminationRequest::After(-1000))
            .await,
        Err(WsrfError::UnableToSetTerminationTime(_))
    ));
    // Never (nil) is accepted.
    let (new, _) = home
        .set_termination(&key, &TerminationRequest::At(None))
        .await
        .unwrap();
    assert_eq!(new, None);
}

async fn set_resource_properties_is_checked_and_atomic(f: Fixture) {
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let count = |v: &str| Element::with_text(QName::new_static("urn:t", "Count"), v);
    home.set_properties(&key, &[SetComponent::Update(vec![count("7")])])
        .await
        .unwrap();
    assert_eq!(home.read(&key, |p| p.count).await.unwrap(), 7);
    let label = Element::with_text(QName::new_static("urn:t", "Label"), "x");
    assert!(matches!(
        home.set_properties(&key, &[SetComponent::Update(vec![label])])
            .await,
        Err(WsrfError::UnableToModifyResourceProperty(_))
    ));
    assert!(matches!(
        home.set_properties(&key, &[SetComponent::Update(vec![count("abc")])])
            .await,
        Err(WsrfError::InvalidModification(_))
    ));
    // Count is required: deleting it leaves an invalid document.
    assert!(matches!(
        home.set_properties(
            &key,
            &[SetComponent::Delete(Ok(QName::new_static(
                "urn:t", "Count"
            )))]
        )
        .await,
        Err(WsrfError::InvalidModification(_))
    ));
    assert!(matches!(
        home.set_properties(
            &key,
            &[SetComponent::Delete(Ok(QName::new_static("urn:t", "Nope")))]
        )
        .await,
        Err(WsrfError::InvalidResourcePropertyQName(_))
    ));
    assert_eq!(home.read(&key, |p| p.count).await.unwrap(), 7);
}

async fn subscriptions_are_checked_and_expire(f: Fixture) {
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let sub = |t: &str, d: &str, i: Option<&str>| subscribe(t, d, i);
    let err = |s: Subscribe| {
        let home = home.clone();
        let key = key.clone();
        async move {
            home.subscribe(&key, "http://h/c", &s, SoapVersion::V11)
                .await
                .unwrap_err()
        }
    };
    assert!(matches!(
        err(sub("t:Nope", ns::TOPIC_SIMPLE, None)).await,
        WsrfError::TopicNotSupported(_)
    ));
    assert!(matches!(
        err(sub("t:Count", ns::TOPIC_FULL, None)).await,
        WsrfError::TopicExpressionDialectUnknown(_)
    ));
    assert!(matches!(
        err(sub("t:Count", ns::TOPIC_SIMPLE, Some("-PT1S"))).await,
        WsrfError::UnacceptableInitialTerminationTime(_)
    ));
    assert!(matches!(
        err(sub("t:Count", ns::TOPIC_SIMPLE, Some("soon"))).await,
        WsrfError::UnacceptableInitialTerminationTime(_)
    ));
    let mut bad_consumer = sub("t:Count", ns::TOPIC_SIMPLE, None);
    bad_consumer.consumer.address = "mailto:x".into();
    assert!(matches!(
        err(bad_consumer).await,
        WsrfError::SubscribeCreationFailed(_)
    ));

    let resp = home
        .subscribe(
            &key,
            "http://h/c",
            &sub("t:Count", ns::TOPIC_SIMPLE, Some("PT10S")),
            SoapVersion::V11,
        )
        .await
        .unwrap();
    let sub_key = resp.subscription.reference_parameters[0]
        .split('>')
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_owned();
    home.set_paused(&sub_key, true).await.unwrap();
    home.set_paused(&sub_key, false).await.unwrap();
    let (t, _) = home.renew(&sub_key, "PT20S").await.unwrap();
    assert_eq!(t.unwrap().unix_seconds() * 1000, T0 + 20_000);
    assert!(matches!(
        home.renew(&sub_key, "-PT1S").await,
        Err(WsrfError::UnacceptableTerminationTime(_))
    ));
    f.clock.advance(Duration::from_secs(21));
    assert!(matches!(
        home.set_paused(&sub_key, true).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
    home.sweep().await;
    assert!(matches!(
        home.unsubscribe(&sub_key).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
}

async fn insert_appends_in_schema_order_and_delete_removes_every_value(f: Fixture) {
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let tag = |v: &str| Element::with_text(QName::new_static("urn:t", "Tag"), v);
    home.set_properties(&key, &[SetComponent::Insert(vec![tag("a"), tag("b")])])
        .await
        .unwrap();
    home.set_properties(&key, &[SetComponent::Insert(vec![tag("c")])])
        .await
        .unwrap();
    assert_eq!(
        home.read(&key, |p| p.tags.clone()).await.unwrap(),
        ["a", "b", "c"]
    );
    // Several components apply in order, all or none.
    home.set_properties(
        &key,
        &[
            SetComponent::Delete(Ok(QName::new_static("urn:t", "Tag"))),
            SetComponent::Insert(vec![tag("z")]),
        ],
    )
    .await
    .unwrap();
    assert_eq!(home.read(&key, |p| p.tags.clone()).await.unwrap(), ["z"]);
}

/// Each test above, once per backend.
macro_rules! on_each_backend {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Fixture::sqlite()).await;
            })*
        }
        mod postgres {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Fixture::postgres()).await;
            })*
        }
    };
}

on_each_backend!(
    resources_live_change_and_die,
    state_and_subscriptions_survive_a_restart,
    scheduled_destruction_follows_the_clock,
    lifetime_requests_in_the_past_are_refused,
    set_resource_properties_is_checked_and_atomic,
    subscriptions_are_checked_and_expire,
    insert_appends_in_schema_order_and_delete_removes_every_value,
);
