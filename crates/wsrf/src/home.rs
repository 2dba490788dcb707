//! `ResourceHome`: the resources of one type, their lifetimes and subscriptions.
//!
//! A home keeps its resources in one of two ways. By default (`open`) they live in this
//! container's memory and every change is made durable in the local store (SQLite) before
//! it is acknowledged. A shared home (`open_shared`) keeps them in PostgreSQL only, so
//! that several containers serve the same resources: reads load the record, changes are
//! compare-and-set on its version, and every container's sweeper takes its share of the
//! expired records (see `docs/design-shared-state.md`).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use osprey_addressing::EndpointReference;
use osprey_binding::{decode_element, encode_element, DateTime, TypeDesc, XmlElement};
use osprey_soap::SoapVersion;
use osprey_store::{SharedStore, Store, StoreError, Write};
use osprey_xml::{Limits, QName, XmlWriter};

use crate::clock::{to_datetime, Clock};
use crate::doc::{Element, Node};
use crate::messages::{
    Epr, NotificationMessage, Notify, SetComponent, Subscribe, SubscribeResponse,
    TerminationRequest,
};
use crate::notify::{Delivery, DeliveryConfig, Notifier, Ready};
use crate::{ns, topic, xpath, WsrfError};

mod shared;
use shared::Shared;

/// The state of a resource type, which is also its resource property document: each
/// field of the bound type is a resource property (its element is the property's QName).
/// WS-ResourceLifetime's `CurrentTime` and `TerminationTime` are appended by the home.
pub trait ResourceState: XmlElement + Clone + Send + Sync + 'static {
    /// Whether `SetResourceProperties` may change `property` (by default none may).
    fn modifiable(property: &QName) -> bool {
        let _ = property;
        false
    }
}

/// How a home is named and where its records go.
#[derive(Debug, Clone)]
pub struct HomeConfig {
    /// The store kind of its resources (`counter`); subscriptions are kept under
    /// `<kind>/subscription`.
    pub kind: String,
    /// The reference parameter element that carries a resource's key in its EPR.
    pub key_name: QName,
    /// Notification delivery.
    pub delivery: DeliveryConfig,
}

/// The reference parameter that carries a subscription's key.
pub const SUBSCRIPTION_KEY: QName = QName::new_static(ns::OSPREY_WSRF, "SubscriptionKey");

/// `CurrentTime` resource property (WS-ResourceLifetime).
pub const CURRENT_TIME: QName = QName::new_static(ns::RL, "CurrentTime");
/// `TerminationTime` resource property (WS-ResourceLifetime).
pub const TERMINATION_TIME: QName = QName::new_static(ns::RL, "TerminationTime");

const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";
const SHARDS: usize = 64;

struct Slot<S> {
    state: S,
    termination: Option<i64>,
    subscriptions: Vec<String>,
}

/// One of the maps of resources. Lock order: a shard, then `subscriptions`.
type Shard<S> = Mutex<HashMap<String, Slot<S>>>;

/// A subscription as stored (and as kept in memory).
#[derive(osprey_binding::XmlType, Debug, Clone, PartialEq)]
#[xml(namespace = "urn:osprey:wsrf", element = "subscription")]
struct Subscription {
    resource: String,
    consumer: Epr,
    topic_ns: String,
    topic_local: String,
    producer: String,
    soap12: bool,
    paused: bool,
    termination: Option<i64>,
    /// A MessageContent filter (XPath 1.0), if any.
    filter: Option<String>,
    /// The namespaces its prefixes name, as `prefix=uri`.
    filter_namespaces: Vec<String>,
}

impl Subscription {
    /// Whether `message` passes the subscription's MessageContent filter (the context
    /// node is the message element). Filters were checked when the subscription was
    /// made; one that no longer parses passes nothing.
    fn accepts(&self, message: &Element) -> bool {
        let Some(text) = &self.filter else {
            return true;
        };
        let mut scope = osprey_xml::Scope::default();
        for b in &self.filter_namespaces {
            if let Some((p, u)) = b.split_once('=') {
                scope.bind(p, u);
            }
        }
        match xpath::Expr::parse(text, &scope) {
            Ok(e) => e.matches(message),
            Err(_) => false,
        }
    }
}

/// The resources of one type.
pub struct ResourceHome<S: ResourceState> {
    config: HomeConfig,
    sub_kind: String,
    backing: Backing<S>,
    clock: Arc<dyn Clock>,
    notifier: Notifier,
    properties: Vec<QName>,
    topics: Vec<QName>,
}

/// Where a home's resources are.
enum Backing<S> {
    /// In memory, written through to the local store.
    Local(Local<S>),
    /// In PostgreSQL, shared with other containers.
    Shared(Shared),
}

/// The in-memory resources and subscriptions of a local home.
struct Local<S> {
    shards: Box<[Shard<S>]>,
    hasher: std::collections::hash_map::RandomState,
    subscriptions: Mutex<HashMap<String, Subscription>>,
    store: Store,
}

impl<S> Local<S> {
    fn shard(&self, key: &str) -> &Shard<S> {
        #[allow(clippy::cast_possible_truncation)]
        let i = (self.hasher.hash_one(key) as usize) % SHARDS;
        &self.shards[i]
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a shard was held cannot leave it half-changed: every change is
    // computed before it is stored, so the data is still consistent.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn unavailable(e: &StoreError) -> WsrfError {
    WsrfError::ResourceUnavailable(format!("the change could not be stored: {e}"))
}

/// A fresh resource or subscription key: 128 random bits in hex.
fn new_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl<S: ResourceState> ResourceHome<S> {
    /// A home over the local `store`, loading the resources and subscriptions it holds
    /// (expired ones are destroyed as the first sweep runs).
    ///
    /// # Errors
    /// [`StoreError`] when the stored records cannot be read.
    pub fn open(
        config: HomeConfig,
        store: Store,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<Self>, StoreError> {
        let local = Local {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: std::collections::hash_map::RandomState::new(),
            subscriptions: Mutex::new(HashMap::new()),
            store,
        };
        let home = Self::start(config, clock, Backing::Local(local));
        home.load()?;
        Ok(home)
    }

    /// A home whose resources and subscriptions live in PostgreSQL (`store`), shared
    /// with every other container opened on the same database.
    pub fn open_shared(config: HomeConfig, store: SharedStore, clock: Arc<dyn Clock>) -> Arc<Self> {
        Self::start(config, clock, Backing::Shared(Shared::new(store)))
    }

    fn start(config: HomeConfig, clock: Arc<dyn Clock>, backing: Backing<S>) -> Arc<Self> {
        let (notifier, mut failed) = Notifier::start(config.delivery.clone());
        let fields: Vec<QName> = match S::schema() {
            TypeDesc::Complex(c) => c
                .fields
                .iter()
                .map(|f| QName::new_static(c.namespace, f.name))
                .collect(),
            _ => Vec::new(),
        };
        let mut properties = fields.clone();
        properties.extend([CURRENT_TIME, TERMINATION_TIME]);
        let mut topics = fields;
        topics.push(topic::RESOURCE_TERMINATION);
        let home = Arc::new(ResourceHome {
            sub_kind: format!("{}/subscription", config.kind),
            config,
            backing,
            clock,
            notifier,
            properties,
            topics,
        });
        // Subscriptions whose consumer failed for good, under the Unsubscribe policy.
        let weak: Weak<Self> = Arc::downgrade(&home);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                while let Some(key) = failed.recv().await {
                    let Some(home) = weak.upgrade() else { return };
                    let _ = home.unsubscribe(&key).await;
                }
            });
        }
        home
    }

    fn load(&self) -> Result<(), StoreError> {
        let Backing::Local(local) = &self.backing else {
            return Ok(());
        };
        let limits = Limits::default();
        for rec in local.store.load(&self.config.kind)? {
            let text = String::from_utf8_lossy(&rec.value);
            let Some((term, xml)) = text.split_once('\n') else {
                tracing::error!(key = %rec.key, "damaged resource record skipped");
                continue;
            };
            let termination = term.parse::<i64>().ok();
            match decode_element::<S>(xml.as_bytes(), &limits) {
                Ok(state) => {
                    lock(local.shard(&rec.key)).insert(
                        rec.key,
                        Slot {
                            state,
                            termination,
                            subscriptions: Vec::new(),
                        },
                    );
                }
                Err(e) => {
                    tracing::error!(key = %rec.key, error = %e, "damaged resource record skipped")
                }
            }
        }
        // Locks are always taken shard first, then subscriptions.
        for rec in local.store.load(&self.sub_kind)? {
            match decode_element::<Subscription>(&rec.value, &limits) {
                Ok(sub) => {
                    let mut shard = lock(local.shard(&sub.resource));
                    if let Some(slot) = shard.get_mut(&sub.resource) {
                        slot.subscriptions.push(rec.key.clone());
                    }
                    lock(&local.subscriptions).insert(rec.key, sub);
                }
                Err(e) => {
                    tracing::error!(key = %rec.key, error = %e, "damaged subscription record skipped")
                }
            }
        }
        Ok(())
    }

    /// The reference parameter element that carries this home's resource keys.
    pub fn key_name(&self) -> &QName {
        &self.config.key_name
    }

    /// The clock the home reads.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The property QNames of the resource property document, in order.
    pub fn properties(&self) -> &[QName] {
        &self.properties
    }

    /// The topics a subscription may name.
    pub fn topics(&self) -> &[QName] {
        &self.topics
    }

    /// How many resources a local home holds in memory (`None` for a shared home, whose
    /// resources are in the database: see [`Self::count`]).
    pub fn in_memory(&self) -> Option<usize> {
        match &self.backing {
            Backing::Local(l) => Some(l.shards.iter().map(|s| lock(s).len()).sum()),
            Backing::Shared(_) => None,
        }
    }

    /// How many resources the home holds now (in a shared home: the database holds).
    ///
    /// # Errors
    /// `ResourceUnavailable` when the shared store cannot be read.
    pub async fn count(&self) -> Result<usize, WsrfError> {
        match &self.backing {
            Backing::Local(l) => Ok(l.shards.iter().map(|s| lock(s).len()).sum()),
            Backing::Shared(sh) => sh.count(self).await,
        }
    }

    /// Whether the home is shared with other containers (kept in PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self.backing, Backing::Shared(_))
    }

    /// The notifier (for its counters).
    pub fn notifier(&self) -> &Notifier {
        &self.notifier
    }

    /// The EPR of resource `key` at `address`.
    pub fn epr(&self, address: &str, key: &str) -> EndpointReference {
        EndpointReference {
            address: address.to_owned(),
            reference_parameters: vec![key_fragment(&self.config.key_name, key)],
        }
    }

    fn record(state: &S, termination: Option<i64>) -> Vec<u8> {
        let mut v = termination.map_or_else(|| "-".to_owned(), |t| t.to_string());
        v.push('\n');
        v.push_str(&encode_element(state));
        v.into_bytes()
    }

    fn expired(&self, termination: Option<i64>, now: i64) -> bool {
        termination.is_some_and(|t| t <= now)
    }

    /// Creates a resource with `state` and an optional termination time (epoch ms) and
    /// returns its key once it is durable.
    ///
    /// # Errors
    /// `UnableToSetTerminationTime` for a time in the past; `ResourceUnavailable` when
    /// it could not be stored.
    pub async fn create(&self, state: S, termination: Option<i64>) -> Result<String, WsrfError> {
        let now = self.clock.now_ms();
        if self.expired(termination, now) {
            return Err(WsrfError::UnableToSetTerminationTime(format!(
                "the initial termination time {} is not in the future",
                termination
                    .map(to_datetime)
                    .map(|t| t.to_string())
                    .unwrap_or_default()
            )));
        }
        let key = new_key();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.create(self, key, &state, termination).await,
        };
        let commit = {
            let mut shard = lock(local.shard(&key));
            let commit = local.store.submit(vec![Write::put(
                &self.config.kind,
                &key,
                Self::record(&state, termination),
            )]);
            shard.insert(
                key.clone(),
                Slot {
                    state,
                    termination,
                    subscriptions: Vec::new(),
                },
            );
            commit
        };
        commit.await.map_err(|e| unavailable(&e))?;
        Ok(key)
    }

    fn unknown(key: &str) -> WsrfError {
        WsrfError::ResourceUnknown(format!("no resource has key {key:?}"))
    }

    /// Reads resource `key`.
    ///
    /// # Errors
    /// `ResourceUnknown` when there is no such (live) resource.
    pub async fn read<R>(&self, key: &str, f: impl FnOnce(&S) -> R) -> Result<R, WsrfError> {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.read(self, key, now).await.map(|(s, _)| f(&s)),
        };
        let shard = lock(local.shard(key));
        match shard.get(key) {
            Some(slot) if !self.expired(slot.termination, now) => Ok(f(&slot.state)),
            _ => Err(Self::unknown(key)),
        }
    }

    /// Changes resource `key` with `f`, makes the change durable, then notifies the
    /// subscribers of each property whose value changed. Returns `f`'s result once the
    /// change is durable. In a shared home `f` runs again when another container changed
    /// the resource first (so it must compute from the state it is given).
    ///
    /// # Errors
    /// `ResourceUnknown`, any error of `f` (nothing is changed then), or
    /// `ResourceUnavailable` when the change could not be stored.
    pub async fn update<R>(
        &self,
        key: &str,
        mut f: impl FnMut(&mut S) -> Result<R, WsrfError>,
    ) -> Result<R, WsrfError> {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.update(self, key, now, f).await,
        };
        let (result, commit, deliveries) = {
            let mut shard = lock(local.shard(key));
            let slot = match shard.get_mut(key) {
                Some(s) if !self.expired(s.termination, now) => s,
                _ => return Err(Self::unknown(key)),
            };
            let before = (!slot.subscriptions.is_empty()).then(|| slot.state.clone());
            let mut next = slot.state.clone();
            let result = f(&mut next)?;
            let commit = local.store.submit(vec![Write::put(
                &self.config.kind,
                key,
                Self::record(&next, slot.termination),
            )]);
            slot.state = next;
            let deliveries = match before {
                Some(before) => {
                    let subs = lock(&local.subscriptions);
                    let seq = commit.seq();
                    let ready = || -> Option<Ready> { Some(Box::pin(local.store.after(seq))) };
                    self.change_notifications(
                        key,
                        &before,
                        &slot.state,
                        slot.subscriptions
                            .iter()
                            .filter_map(|k| subs.get(k).map(|s| (k.as_str(), s))),
                        ready,
                    )
                }
                None => Vec::new(),
            };
            (result, commit, deliveries)
        };
        for d in deliveries {
            self.notifier.send(d);
        }
        commit.await.map_err(|e| unavailable(&e))?;
        Ok(result)
    }

    /// The resource property document of `key` now.
    ///
    /// # Errors
    /// `ResourceUnknown`.
    pub async fn document(&self, key: &str) -> Result<Element, WsrfError> {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => {
                let (state, termination) = sh.read(self, key, now).await?;
                return Ok(document(&state, termination, now));
            }
        };
        let shard = lock(local.shard(key));
        match shard.get(key) {
            Some(slot) if !self.expired(slot.termination, now) => {
                Ok(document(&slot.state, slot.termination, now))
            }
            _ => Err(Self::unknown(key)),
        }
    }

    /// The property QName a request named, matched against the document's properties
    /// (an unqualified name matches by local name).
    ///
    /// # Errors
    /// `InvalidResourcePropertyQName` when the document has no such property, or the
    /// QName text did not resolve.
    pub fn property(&self, asked: &Result<QName, String>) -> Result<QName, WsrfError> {
        let q = asked
            .as_ref()
            .map_err(|why| WsrfError::InvalidResourcePropertyQName(why.clone()))?;
        self.properties
            .iter()
            .find(|p| *p == q || (q.ns().is_empty() && p.local() == q.local()))
            .cloned()
            .ok_or_else(|| WsrfError::InvalidResourcePropertyQName(q.to_string()))
    }

    /// Applies a `SetResourceProperties` request: all components or none.
    ///
    /// # Errors
    /// `InvalidResourcePropertyQName`, `UnableToModifyResourceProperty` for a read-only
    /// property, `InvalidModification` when the result is not a valid document.
    pub async fn set_properties(
        &self,
        key: &str,
        components: &[SetComponent],
    ) -> Result<(), WsrfError> {
        // Resolve names first: a bad name changes nothing.
        let mut plan: Vec<(QName, Option<Vec<Element>>, bool)> = Vec::new();
        for c in components {
            match c {
                SetComponent::Insert(values) | SetComponent::Update(values) => {
                    let insert = matches!(c, SetComponent::Insert(_));
                    let Some(first) = values.first() else {
                        return Err(WsrfError::InvalidModification(
                            "an Insert or Update holds no property element".into(),
                        ));
                    };
                    if values.iter().any(|v| v.name != first.name) {
                        return Err(WsrfError::InvalidModification(
                            "one Insert or Update changes one property".into(),
                        ));
                    }
                    let q = self.property(&Ok(first.name.clone()))?;
                    plan.push((q, Some(values.clone()), insert));
                }
                SetComponent::Delete(q) => plan.push((self.property(q)?, None, false)),
            }
        }
        for (q, _, _) in &plan {
            if !S::modifiable(q) {
                return Err(WsrfError::UnableToModifyResourceProperty(format!(
                    "{q} is read-only"
                )));
            }
        }
        let properties = self.properties.clone();
        self.update(key, move |state| {
            let mut doc = Element::parse(encode_element(state).as_bytes(), &Limits::default())
                .map_err(|e| WsrfError::InvalidModification(e.to_string()))?;
            for (q, values, insert) in &plan {
                if !insert || values.is_none() {
                    doc.children
                        .retain(|n| !matches!(n, Node::Element(e) if e.name == *q));
                }
                if let Some(values) = values {
                    // New values go where the schema puts the property: after every
                    // element of this or an earlier property (so Insert appends).
                    let rank = |name: &QName| properties.iter().position(|p| p == name);
                    let target = rank(q);
                    let at = doc
                        .children
                        .iter()
                        .rposition(|n| matches!(n, Node::Element(e) if rank(&e.name) <= target))
                        .map_or(0, |i| i + 1);
                    for (i, v) in values.iter().enumerate() {
                        doc.children.insert(at + i, Node::Element(v.clone()));
                    }
                }
            }
            // The bound decoder checks the result against the document's schema.
            *state = decode_element::<S>(doc.to_xml().as_bytes(), &Limits::default())
                .map_err(|e| WsrfError::InvalidModification(e.to_string()))?;
            Ok(())
        })
        .await
    }

    /// Destroys resource `key` and its subscriptions (WS-ResourceLifetime Destroy),
    /// after notifying `ResourceTermination` subscribers.
    ///
    /// # Errors
    /// `ResourceUnknown`; `ResourceUnavailable` when the removal could not be stored.
    pub async fn destroy(&self, key: &str) -> Result<(), WsrfError> {
        self.terminate(key, false).await
    }

    /// Destroys `key` because it was destroyed by request, or (`expired`) because its
    /// termination time passed.
    async fn terminate(&self, key: &str, expired: bool) -> Result<(), WsrfError> {
        let now = self.clock.now_ms();
        let reason = if expired { "expired" } else { "destroyed" };
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.terminate(self, key, now, expired).await,
        };
        let (commit, deliveries) = {
            let mut shard = lock(local.shard(key));
            let slot = match shard.remove(key) {
                Some(s) => s,
                None => return Err(Self::unknown(key)),
            };
            let mut writes = vec![Write::delete(&self.config.kind, key)];
            let mut subs = lock(&local.subscriptions);
            let mut removed = Vec::new();
            for s in &slot.subscriptions {
                if let Some(sub) = subs.remove(s) {
                    removed.push((s.clone(), sub));
                }
                writes.push(Write::delete(&self.sub_kind, s));
            }
            drop(subs);
            let commit = local.store.submit(writes);
            let seq = commit.seq();
            let deliveries = self.termination_notifications(key, now, reason, &removed, || {
                Some(Box::pin(local.store.after(seq)))
            });
            (commit, deliveries)
        };
        for d in deliveries {
            self.notifier.send(d);
        }
        commit.await.map_err(|e| unavailable(&e))
    }

    /// `ResourceTermination` notifications for the subscriptions `removed` with resource
    /// `key`.
    fn termination_notifications(
        &self,
        key: &str,
        now: i64,
        reason: &str,
        removed: &[(String, Subscription)],
        ready: impl Fn() -> Option<Ready>,
    ) -> Vec<Delivery> {
        let message = termination_message(now, reason);
        removed
            .iter()
            .filter(|(_, sub)| !sub.paused && topic_of(sub) == topic::RESOURCE_TERMINATION)
            .map(|(k, sub)| {
                self.delivery(k, sub, key, &topic::RESOURCE_TERMINATION, &message, ready())
            })
            .collect()
    }

    /// Sets the termination time of `key`; returns the new one and the current time.
    ///
    /// # Errors
    /// `ResourceUnknown`; `UnableToSetTerminationTime` for a time in the past.
    pub async fn set_termination(
        &self,
        key: &str,
        request: &TerminationRequest,
    ) -> Result<(Option<DateTime>, DateTime), WsrfError> {
        let now = self.clock.now_ms();
        let termination = request.resolve(now);
        if self.expired(termination, now) {
            return Err(WsrfError::UnableToSetTerminationTime(
                "the requested termination time is in the past".into(),
            ));
        }
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => {
                sh.set_termination(self, key, now, termination).await?;
                return Ok((termination.map(to_datetime), to_datetime(now)));
            }
        };
        let commit = {
            let mut shard = lock(local.shard(key));
            let slot = match shard.get_mut(key) {
                Some(s) if !self.expired(s.termination, now) => s,
                _ => return Err(Self::unknown(key)),
            };
            slot.termination = termination;
            local.store.submit(vec![Write::put(
                &self.config.kind,
                key,
                Self::record(&slot.state, termination),
            )])
        };
        commit.await.map_err(|e| unavailable(&e))?;
        Ok((termination.map(to_datetime), to_datetime(now)))
    }

    /// Subscribes `req.consumer` to a topic of resource `key` (whose EPR address is
    /// `address`), with `version` for the notifications.
    ///
    /// # Errors
    /// The topic faults of [`topic::parse`], `InvalidFilter`, `InvalidMessageContentExpression`,
    /// `UnacceptableInitialTerminationTime`, `SubscribeCreationFailed`, `ResourceUnknown`.
    pub async fn subscribe(
        &self,
        key: &str,
        address: &str,
        req: &Subscribe,
        version: SoapVersion,
    ) -> Result<SubscribeResponse, WsrfError> {
        let now = self.clock.now_ms();
        if let Some(q) = req.unknown_filters.first() {
            return Err(WsrfError::InvalidFilter(format!(
                "filter {q} is not understood (TopicExpression is)"
            )));
        }
        let (filter, filter_namespaces) = match &req.message_content {
            Some(m) if m.dialect != ns::XPATH_DIALECT => {
                return Err(WsrfError::InvalidMessageContentExpression(format!(
                    "dialect {:?} is not supported (XPath 1.0 is)",
                    m.dialect
                )))
            }
            Some(m) => {
                xpath::Expr::parse(&m.text, &m.scope)
                    .map_err(WsrfError::InvalidMessageContentExpression)?;
                let bindings = m
                    .scope
                    .bindings()
                    .filter(|(p, _)| !p.is_empty())
                    .map(|(p, u)| format!("{p}={u}"))
                    .collect();
                (Some(m.text.clone()), bindings)
            }
            None => (None, Vec::new()),
        };
        let topic =
            match &req.topic {
                Some(t) => topic::parse(t, &self.topics)?,
                None => return Err(WsrfError::InvalidFilter(
                    "a TopicExpression is required: this producer publishes per-property topics"
                        .into(),
                )),
            };
        if req.consumer.address.is_empty() || !req.consumer.address.starts_with("http") {
            return Err(WsrfError::SubscribeCreationFailed(format!(
                "consumer address {:?} is not an http URL",
                req.consumer.address
            )));
        }
        let termination = match &req.initial_termination_time {
            Some(t) => future_time(t, now, WsrfError::UnacceptableInitialTerminationTime)?,
            None => None,
        };
        let sub = Subscription {
            resource: key.to_owned(),
            consumer: Epr(req.consumer.clone()),
            topic_ns: topic.ns().to_owned(),
            topic_local: topic.local().to_owned(),
            producer: address.to_owned(),
            soap12: version == SoapVersion::V12,
            paused: false,
            termination,
            filter,
            filter_namespaces,
        };
        let sub_key = new_key();
        match &self.backing {
            Backing::Local(local) => {
                let commit = {
                    let mut shard = lock(local.shard(key));
                    let slot = match shard.get_mut(key) {
                        Some(s) if !self.expired(s.termination, now) => s,
                        _ => return Err(Self::unknown(key)),
                    };
                    slot.subscriptions.push(sub_key.clone());
                    let commit = local.store.submit(vec![Write::put(
                        &self.sub_kind,
                        &sub_key,
                        encode_element(&sub).into_bytes(),
                    )]);
                    lock(&local.subscriptions).insert(sub_key.clone(), sub);
                    commit
                };
                commit.await.map_err(|e| unavailable(&e))?;
            }
            Backing::Shared(sh) => sh.subscribe(self, key, now, &sub_key, &sub).await?,
        }
        Ok(SubscribeResponse {
            subscription: subscription_epr(address, &sub_key),
            current_time: to_datetime(now),
            termination_time: termination.map(to_datetime),
        })
    }

    fn unknown_subscription(key: &str) -> WsrfError {
        WsrfError::ResourceUnknown(format!("no subscription has key {key:?}"))
    }

    /// Ends subscription `key`.
    ///
    /// # Errors
    /// `ResourceUnknown` for an unknown subscription.
    pub async fn unsubscribe(&self, key: &str) -> Result<(), WsrfError> {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.unsubscribe(self, key, now).await,
        };
        let resource = match lock(&local.subscriptions).get(key) {
            Some(s) if !self.expired(s.termination, now) => s.resource.clone(),
            _ => return Err(Self::unknown_subscription(key)),
        };
        let commit = {
            let mut shard = lock(local.shard(&resource));
            if let Some(slot) = shard.get_mut(&resource) {
                slot.subscriptions.retain(|s| s != key);
            }
            lock(&local.subscriptions).remove(key);
            local.store.submit(vec![Write::delete(&self.sub_kind, key)])
        };
        commit.await.map_err(|e| unavailable(&e))
    }

    /// Pauses (`true`) or resumes (`false`) subscription `key`.
    ///
    /// # Errors
    /// `ResourceUnknown` for an unknown subscription.
    pub async fn set_paused(&self, key: &str, paused: bool) -> Result<(), WsrfError> {
        self.change_subscription(key, |s| {
            s.paused = paused;
            Ok(())
        })
        .await
    }

    /// Renews subscription `key` until `request`; returns the new termination time and
    /// the current time.
    ///
    /// # Errors
    /// `UnacceptableTerminationTime` for a time in the past or malformed;
    /// `ResourceUnknown`.
    pub async fn renew(
        &self,
        key: &str,
        request: &str,
    ) -> Result<(Option<DateTime>, DateTime), WsrfError> {
        let now = self.clock.now_ms();
        let at = future_time(request, now, WsrfError::UnacceptableTerminationTime)?;
        self.change_subscription(key, |s| {
            s.termination = at;
            Ok(())
        })
        .await?;
        Ok((at.map(to_datetime), to_datetime(now)))
    }

    async fn change_subscription(
        &self,
        key: &str,
        f: impl Fn(&mut Subscription) -> Result<(), WsrfError>,
    ) -> Result<(), WsrfError> {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.change_subscription(self, key, now, f).await,
        };
        let commit = {
            let mut subs = lock(&local.subscriptions);
            let sub = match subs.get_mut(key) {
                Some(s) if !self.expired(s.termination, now) => s,
                _ => return Err(Self::unknown_subscription(key)),
            };
            f(sub)?;
            local.store.submit(vec![Write::put(
                &self.sub_kind,
                key,
                encode_element(&*sub).into_bytes(),
            )])
        };
        commit.await.map_err(|e| unavailable(&e))
    }

    /// Destroys every resource and subscription whose termination time has passed
    /// (resources notify `ResourceTermination` subscribers with reason `expired`).
    /// Returns how many resources were destroyed.
    pub async fn sweep(&self) -> usize {
        let now = self.clock.now_ms();
        let local = match &self.backing {
            Backing::Local(l) => l,
            Backing::Shared(sh) => return sh.sweep(self, now).await,
        };
        let mut expired = Vec::new();
        for shard in &*local.shards {
            let shard = lock(shard);
            expired.extend(
                shard
                    .iter()
                    .filter(|(_, s)| self.expired(s.termination, now))
                    .map(|(k, _)| k.clone()),
            );
        }
        let mut destroyed = 0;
        for key in expired {
            if self.terminate(&key, true).await.is_ok() {
                destroyed += 1;
            }
        }
        let stale: Vec<String> = lock(&local.subscriptions)
            .iter()
            .filter(|(_, s)| self.expired(s.termination, now))
            .map(|(k, _)| k.clone())
            .collect();
        for key in stale {
            let resource = lock(&local.subscriptions).remove(&key).map(|s| s.resource);
            if let Some(r) = resource {
                if let Some(slot) = lock(local.shard(&r)).get_mut(&r) {
                    slot.subscriptions.retain(|s| *s != key);
                }
            }
            let _ = local
                .store
                .submit(vec![Write::delete(&self.sub_kind, &key)])
                .await;
        }
        destroyed
    }

    /// Runs [`Self::sweep`] every `period` until the home is dropped.
    pub fn start_sweeper(self: &Arc<Self>, period: std::time::Duration) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(home) = weak.upgrade() else { return };
                home.sweep().await;
            }
        });
    }

    /// Value-change notifications for the change of `key` from `before` to `after`, to
    /// the resource's `subscriptions` (key, subscription).
    fn change_notifications<'a>(
        &self,
        key: &str,
        before: &S,
        after: &S,
        subscriptions: impl Iterator<Item = (&'a str, &'a Subscription)> + Clone,
        ready: impl Fn() -> Option<Ready>,
    ) -> Vec<Delivery> {
        let old = property_elements(before);
        let new = property_elements(after);
        let mut out = Vec::new();
        for topic in &self.topics {
            let pick = |els: &[Element]| -> Vec<Element> {
                els.iter().filter(|e| e.name == *topic).cloned().collect()
            };
            let (o, n) = (pick(&old), pick(&new));
            if o == n {
                continue;
            }
            let mut message = None;
            for (sk, sub) in subscriptions.clone() {
                if sub.paused || topic_of(sub) != *topic {
                    continue;
                }
                let m = message.get_or_insert_with(|| value_change_message(&o, &n));
                if sub.accepts(m) {
                    out.push(self.delivery(sk, sub, key, topic, m, ready()));
                }
            }
        }
        out
    }

    fn delivery(
        &self,
        sub_key: &str,
        sub: &Subscription,
        resource: &str,
        topic: &QName,
        message: &Element,
        ready: Option<Ready>,
    ) -> Delivery {
        let notify = Notify {
            messages: vec![NotificationMessage {
                subscription: Some(subscription_epr(&sub.producer, sub_key)),
                topic: Some((ns::TOPIC_SIMPLE.to_owned(), topic.clone())),
                producer: Some(self.epr(&sub.producer, resource)),
                message: message.clone(),
            }],
        };
        let mut w = XmlWriter::with_capacity(1024);
        osprey_binding::encode_element_into(&notify, &mut w);
        Delivery {
            subscription: sub_key.to_owned(),
            consumer: sub.consumer.0.clone(),
            version: if sub.soap12 {
                SoapVersion::V12
            } else {
                SoapVersion::V11
            },
            notify: w.into_bytes(),
            ready,
        }
    }
}

/// A subscription's termination time (`xsd:dateTime` or `xsd:duration` text) in epoch
/// ms, `None` for never; `fault` names the spec fault for text that is malformed or not in
/// the future.
fn future_time(
    text: &str,
    now: i64,
    fault: fn(String) -> WsrfError,
) -> Result<Option<i64>, WsrfError> {
    let at = TerminationRequest::parse(text)
        .ok_or_else(|| {
            fault(format!(
                "{text:?} is neither an xsd:dateTime nor an xsd:duration"
            ))
        })?
        .resolve(now);
    if at.is_some_and(|t| t <= now) {
        return Err(fault(format!("{text} is not in the future")));
    }
    Ok(at)
}

fn topic_of(sub: &Subscription) -> QName {
    QName::new(sub.topic_ns.clone(), sub.topic_local.clone())
}

/// A `<key>value</key>` reference parameter.
fn key_fragment(name: &QName, key: &str) -> String {
    let mut w = XmlWriter::with_capacity(96);
    w.start(name.ns(), name.local());
    w.text(key);
    w.end();
    String::from_utf8_lossy(w.as_bytes()).into_owned()
}

/// The EPR of subscription `key`, managed at `address`.
fn subscription_epr(address: &str, key: &str) -> EndpointReference {
    EndpointReference {
        address: address.to_owned(),
        reference_parameters: vec![key_fragment(&SUBSCRIPTION_KEY, key)],
    }
}

fn property_elements<S: ResourceState>(state: &S) -> Vec<Element> {
    match Element::parse(encode_element(state).as_bytes(), &Limits::default()) {
        Ok(doc) => doc.elements().cloned().collect(),
        Err(_) => Vec::new(),
    }
}

fn document<S: ResourceState>(state: &S, termination: Option<i64>, now: i64) -> Element {
    let mut doc = Element::parse(encode_element(state).as_bytes(), &Limits::default())
        .unwrap_or_else(|_| Element::new(S::qname(), Vec::new()));
    doc.children.push(Node::Element(Element::with_text(
        CURRENT_TIME,
        to_datetime(now).to_string(),
    )));
    let mut term = Element::new(TERMINATION_TIME, Vec::new());
    match termination {
        Some(t) => term.children.push(Node::Text(to_datetime(t).to_string())),
        None => term
            .attributes
            .push((QName::new_static(XSI_NS, "nil"), "true".into())),
    }
    doc.children.push(Node::Element(term));
    doc
}

/// `wsrf-rp:ResourcePropertyValueChangeNotification` with old and new values.
fn value_change_message(old: &[Element], new: &[Element]) -> Element {
    let wrap = |local: &'static str, els: &[Element]| {
        Node::Element(Element::new(
            QName::new_static(ns::RP, local),
            els.iter().cloned().map(Node::Element).collect(),
        ))
    };
    Element::new(
        QName::new_static(ns::RP, "ResourcePropertyValueChangeNotification"),
        vec![wrap("OldValues", old), wrap("NewValues", new)],
    )
}

/// `wsrf-rl:TerminationNotification`.
fn termination_message(now: i64, reason: &str) -> Element {
    Element::new(
        QName::new_static(ns::RL, "TerminationNotification"),
        vec![
            Node::Element(Element::with_text(
                QName::new_static(ns::RL, "TerminationTime"),
                to_datetime(now).to_string(),
            )),
            Node::Element(Element::with_text(
                QName::new_static(ns::RL, "TerminationReason"),
                reason,
            )),
        ],
    )
}

impl<S: ResourceState> std::fmt::Debug for ResourceHome<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceHome")
            .field("kind", &self.config.kind)
            .field("shared", &self.is_shared())
            .finish()
    }
}
