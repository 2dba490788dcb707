//! A shared home: resources and subscriptions in PostgreSQL, served by every container
//! opened on the same database.
//!
//! Reads load the record. A change reads the record and its version, applies the change
//! to the decoded state, and stores it only if the version is unchanged; when another
//! container came first it reads again (a bounded number of times). The answer is sent
//! after PostgreSQL committed the change. Notifications go from the container that made
//! the change, to the subscriptions stored at that moment; within one container, changes
//! to one resource are made and notified in order (a per-key lock), so each subscription
//! sees them in version order. Destruction and expiry remove the resource and its
//! subscriptions in one statement, which exactly one container wins.

use std::hash::BuildHasher;

use osprey_binding::{decode_element, encode_element};
use osprey_store::{SharedStore, StoreError};
use osprey_xml::Limits;

use super::{unavailable, ResourceHome, ResourceState, Subscription};
use crate::WsrfError;

/// How often a change is tried again when other containers keep changing the resource.
const CAS_ATTEMPTS: usize = 32;
const ORDER_LOCKS: usize = 64;

/// The PostgreSQL side of a home.
pub(super) struct Shared {
    store: SharedStore,
    /// Serialise changes of one key within this container (so notifications leave in
    /// version order); hashed, so unrelated keys rarely wait for each other.
    order: Box<[tokio::sync::Mutex<()>]>,
    hasher: std::collections::hash_map::RandomState,
}

fn damaged(what: &str, key: &str, e: &impl std::fmt::Display) -> WsrfError {
    WsrfError::ResourceUnavailable(format!("the stored {what} {key:?} is damaged: {e}"))
}

impl Shared {
    pub(super) fn new(store: SharedStore) -> Self {
        Shared {
            store,
            order: (0..ORDER_LOCKS)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            hasher: std::collections::hash_map::RandomState::new(),
        }
    }

    fn order(&self, key: &str) -> &tokio::sync::Mutex<()> {
        #[allow(clippy::cast_possible_truncation)]
        let i = (self.hasher.hash_one(key) as usize) % ORDER_LOCKS;
        &self.order[i]
    }

    pub(super) async fn count<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
    ) -> Result<usize, WsrfError> {
        let n = self
            .store
            .count(&home.config.kind)
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    pub(super) async fn create<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: String,
        state: &S,
        termination: Option<i64>,
    ) -> Result<String, WsrfError> {
        self.store
            .insert(
                &home.config.kind,
                &key,
                encode_element(state).as_bytes(),
                termination,
            )
            .await
            .map_err(|e| unavailable(&e))?;
        Ok(key)
    }

    /// The live resource `key`: its state, termination time and version.
    async fn load<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
    ) -> Result<(S, Option<i64>, i64), WsrfError> {
        let rec = self
            .store
            .get(&home.config.kind, key)
            .await
            .map_err(|e| unavailable(&e))?;
        match rec {
            Some(r) if !home.expired(r.expires, now) => {
                let state = decode_element::<S>(&r.value, &Limits::default())
                    .map_err(|e| damaged("resource", key, &e))?;
                Ok((state, r.expires, r.version))
            }
            _ => Err(ResourceHome::<S>::unknown(key)),
        }
    }

    pub(super) async fn read<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
    ) -> Result<(S, Option<i64>), WsrfError> {
        let (state, termination, _) = self.load(home, key, now).await?;
        Ok((state, termination))
    }

    pub(super) async fn update<S: ResourceState, R>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
        mut f: impl FnMut(&mut S) -> Result<R, WsrfError>,
    ) -> Result<R, WsrfError> {
        let _order = self.order(key).lock().await;
        for _ in 0..CAS_ATTEMPTS {
            let (before, termination, version) = self.load(home, key, now).await?;
            let mut next = before.clone();
            let result = f(&mut next)?;
            let stored = self
                .store
                .replace(
                    &home.config.kind,
                    key,
                    version,
                    encode_element(&next).as_bytes(),
                    termination,
                )
                .await
                .map_err(|e| unavailable(&e))?;
            if !stored {
                // Another container changed it first: start again from its value.
                tokio::task::yield_now().await;
                continue;
            }
            let subs = self.subscriptions(home, key, now).await?;
            if !subs.is_empty() {
                let deliveries = home.change_notifications(
                    key,
                    &before,
                    &next,
                    subs.iter().map(|(k, s)| (k.as_str(), s)),
                    || None,
                );
                for d in deliveries {
                    home.notifier.send(d);
                }
            }
            return Ok(result);
        }
        Err(WsrfError::ResourceUnavailable(format!(
            "resource {key:?} changed under {CAS_ATTEMPTS} attempts in a row; try again"
        )))
    }

    /// The live subscriptions of resource `key`.
    async fn subscriptions<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
    ) -> Result<Vec<(String, Subscription)>, WsrfError> {
        let rows = self
            .store
            .owned(&home.sub_kind, key)
            .await
            .map_err(|e| unavailable(&e))?;
        let mut subs = decode_subscriptions(rows);
        subs.retain(|(_, s)| !home.expired(s.termination, now));
        Ok(subs)
    }

    pub(super) async fn set_termination<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
        termination: Option<i64>,
    ) -> Result<(), WsrfError> {
        let _order = self.order(key).lock().await;
        for _ in 0..CAS_ATTEMPTS {
            let rec = self
                .store
                .get(&home.config.kind, key)
                .await
                .map_err(|e| unavailable(&e))?;
            let Some(rec) = rec.filter(|r| !home.expired(r.expires, now)) else {
                return Err(ResourceHome::<S>::unknown(key));
            };
            let stored = self
                .store
                .replace(&home.config.kind, key, rec.version, &rec.value, termination)
                .await
                .map_err(|e| unavailable(&e))?;
            if stored {
                return Ok(());
            }
        }
        Err(WsrfError::ResourceUnavailable(format!(
            "resource {key:?} changed under {CAS_ATTEMPTS} attempts in a row; try again"
        )))
    }

    pub(super) async fn terminate<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
        expired: bool,
    ) -> Result<(), WsrfError> {
        let _order = self.order(key).lock().await;
        let removed = self
            .store
            .remove(&home.config.kind, key, &home.sub_kind, now, expired)
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(|| ResourceHome::<S>::unknown(key))?;
        let subs = decode_subscriptions(removed.owned);
        let reason = if expired { "expired" } else { "destroyed" };
        for d in home.termination_notifications(key, now, reason, &subs, || None) {
            home.notifier.send(d);
        }
        Ok(())
    }

    pub(super) async fn subscribe<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
        sub_key: &str,
        sub: &Subscription,
    ) -> Result<(), WsrfError> {
        let stored = self
            .store
            .insert_owned(
                &home.config.kind,
                key,
                now,
                &home.sub_kind,
                sub_key,
                encode_element(sub).as_bytes(),
                sub.termination,
            )
            .await
            .map_err(|e| unavailable(&e))?;
        if stored {
            Ok(())
        } else {
            Err(ResourceHome::<S>::unknown(key))
        }
    }

    pub(super) async fn unsubscribe<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
    ) -> Result<(), WsrfError> {
        let deleted = self
            .store
            .delete_live(&home.sub_kind, key, now)
            .await
            .map_err(|e| unavailable(&e))?;
        if deleted {
            Ok(())
        } else {
            Err(ResourceHome::<S>::unknown_subscription(key))
        }
    }

    pub(super) async fn change_subscription<S: ResourceState>(
        &self,
        home: &ResourceHome<S>,
        key: &str,
        now: i64,
        f: impl Fn(&mut Subscription) -> Result<(), WsrfError>,
    ) -> Result<(), WsrfError> {
        for _ in 0..CAS_ATTEMPTS {
            let rec = self
                .store
                .get(&home.sub_kind, key)
                .await
                .map_err(|e| unavailable(&e))?;
            let Some(rec) = rec.filter(|r| !home.expired(r.expires, now)) else {
                return Err(ResourceHome::<S>::unknown_subscription(key));
            };
            let mut sub = decode_element::<Subscription>(&rec.value, &Limits::default())
                .map_err(|e| damaged("subscription", key, &e))?;
            f(&mut sub)?;
            let stored = self
                .store
                .replace(
                    &home.sub_kind,
                    key,
                    rec.version,
                    encode_element(&sub).as_bytes(),
                    sub.termination,
                )
                .await
                .map_err(|e| unavailable(&e))?;
            if stored {
                return Ok(());
            }
        }
        Err(WsrfError::ResourceUnavailable(format!(
            "subscription {key:?} changed under {CAS_ATTEMPTS} attempts in a row; try again"
        )))
    }

    /// Removes what expired at `now`; every container sweeps, and each expired record
    /// is removed (and its termination notified) by exactly one of them.
    pub(super) async fn sweep<S: ResourceState>(&self, home: &ResourceHome<S>, now: i64) -> usize {
        let expired = match self.store.expired(&home.config.kind, now).await {
            Ok(keys) => keys,
            Err(e) => {
                log_sweep_error(&e);
                return 0;
            }
        };
        let mut destroyed = 0;
        for key in expired {
            if self.terminate(home, &key, now, true).await.is_ok() {
                destroyed += 1;
            }
        }
        if let Err(e) = self.store.delete_expired(&home.sub_kind, now).await {
            log_sweep_error(&e);
        }
        destroyed
    }
}

fn log_sweep_error(e: &StoreError) {
    tracing::warn!(error = %e, "sweeping expired resources failed; trying again next time");
}

fn decode_subscriptions(rows: Vec<(String, Vec<u8>)>) -> Vec<(String, Subscription)> {
    rows.into_iter()
        .filter_map(
            |(k, v)| match decode_element::<Subscription>(&v, &Limits::default()) {
                Ok(s) => Some((k, s)),
                Err(e) => {
                    tracing::error!(key = %k, error = %e, "damaged subscription record skipped");
                    None
                }
            },
        )
        .collect()
}
