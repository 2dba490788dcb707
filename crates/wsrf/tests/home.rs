//! ResourceHome over a real SQLite store, with a manual clock: lifetimes are tested by
//! moving time, never by sleeping.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use osprey_addressing::EndpointReference;
use osprey_binding::XmlType;
use osprey_soap::SoapVersion;
use osprey_store::Store;
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

struct Fixture {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    clock: Arc<ManualClock>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        Fixture {
            _dir: dir,
            path,
            clock: Arc::new(ManualClock::at(T0)),
        }
    }

    fn home(&self) -> Arc<ResourceHome<Props>> {
        ResourceHome::open(
            HomeConfig {
                kind: "props".into(),
                key_name: QName::new_static("urn:t", "Key"),
                delivery: Default::default(),
            },
            Store::open_sqlite(&self.path).unwrap(),
            self.clock.clone(),
        )
        .unwrap()
    }
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

#[tokio::test]
async fn resources_live_change_and_die() {
    let f = Fixture::new();
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
    assert_eq!(home.read(&key, |p| p.count).unwrap(), 2);
    // A failing change changes nothing.
    let e = home
        .update(&key, |p| {
            p.count = 99;
            Err::<(), _>(WsrfError::InvalidModification("no".into()))
        })
        .await;
    assert!(e.is_err());
    assert_eq!(home.read(&key, |p| p.count).unwrap(), 2);
    home.destroy(&key).await.unwrap();
    assert!(matches!(
        home.read(&key, |_| ()),
        Err(WsrfError::ResourceUnknown(_))
    ));
    assert!(matches!(
        home.destroy(&key).await,
        Err(WsrfError::ResourceUnknown(_))
    ));
}

#[tokio::test]
async fn state_and_subscriptions_survive_a_restart() {
    let f = Fixture::new();
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
        home.read(&key, |p| (p.count, p.label.clone())).unwrap(),
        (41, "kept".into())
    );
    let doc = home.document(&key).unwrap();
    let term = doc
        .elements()
        .find(|e| e.name == osprey_wsrf::TERMINATION_TIME)
        .unwrap();
    assert_eq!(term.string_value(), "2027-01-15T08:01:00Z");
    // The subscription came back with the resource: destroying it removes both.
    home.destroy(&key).await.unwrap();
}

#[tokio::test]
async fn scheduled_destruction_follows_the_clock() {
    let f = Fixture::new();
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let (new, now) = home
        .set_termination(&key, &TerminationRequest::After(10_000))
        .await
        .unwrap();
    assert_eq!(now.unix_seconds() * 1000, T0);
    assert_eq!(new.unwrap().unix_seconds() * 1000, T0 + 10_000);
    f.clock.advance(Duration::from_secs(9));
    assert!(home.read(&key, |_| ()).is_ok());
    f.clock.advance(Duration::from_secs(1));
    // Expired: unknown at once, removed by the next sweep, and gone after a restart.
    assert!(matches!(
        home.read(&key, |_| ()),
        Err(WsrfError::ResourceUnknown(_))
    ));
    assert_eq!(home.sweep().await, 1);
    assert!(home.is_empty());
    drop(home);
    assert!(f.home().is_empty());
}

#[tokio::test]
async fn lifetime_requests_in_the_past_are_refused() {
    let f = Fixture::new();
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

#[tokio::test]
async fn set_resource_properties_is_checked_and_atomic() {
    let f = Fixture::new();
    let home = f.home();
    let key = home.create(Props::default(), None).await.unwrap();
    let count = |v: &str| Element::with_text(QName::new_static("urn:t", "Count"), v);
    home.set_properties(&key, &[SetComponent::Update(vec![count("7")])])
        .await
        .unwrap();
    assert_eq!(home.read(&key, |p| p.count).unwrap(), 7);
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
    assert_eq!(home.read(&key, |p| p.count).unwrap(), 7);
}

#[tokio::test]
async fn subscriptions_are_checked_and_expire() {
    let f = Fixture::new();
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

#[tokio::test]
async fn insert_appends_in_schema_order_and_delete_removes_every_value() {
    let f = Fixture::new();
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
        home.read(&key, |p| p.tags.clone()).unwrap(),
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
    assert_eq!(home.read(&key, |p| p.tags.clone()).unwrap(), ["z"]);
}
