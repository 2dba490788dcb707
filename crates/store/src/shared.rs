//! Records in PostgreSQL, shared by several containers.
//!
//! One table holds every record: `(kind, key)` -> `value`, with a `version` that each
//! change increments (changes are compare-and-set on it, so two containers never apply a
//! change to the same old value), an optional `owner` (a subscription's resource) and an
//! optional `expires` time (epoch ms) that the sweepers of every container delete by, each
//! record exactly once (`DELETE ... RETURNING`). Every statement is prepared once per
//! connection; the answer to a change is given after PostgreSQL committed it
//! (`synchronous_commit = on`), which is the durability point.
//!
//! The connections are driven by the store's own thread, so a store opened anywhere (at
//! start-up, outside any runtime) serves requests from any tokio runtime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row, Statement};

use crate::StoreError;

/// A record read with its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The stored bytes.
    pub value: Vec<u8>,
    /// Incremented by every change; [`SharedStore::replace`] compares it.
    pub version: i64,
    /// When the record expires (epoch ms), if ever.
    pub expires: Option<i64>,
    /// The key of the record it belongs to, if any.
    pub owner: Option<String>,
}

/// A record that was removed, with the records it owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The removed record's key.
    pub key: String,
    /// The owned records removed with it, as (key, value).
    pub owned: Vec<(String, Vec<u8>)>,
}

const SCHEMA: &str = "
BEGIN;
SELECT pg_advisory_xact_lock(7316853);
CREATE TABLE IF NOT EXISTS osprey_records (
    kind    text   NOT NULL,
    key     text   NOT NULL,
    owner   text,
    value   bytea  NOT NULL,
    version bigint NOT NULL DEFAULT 0,
    expires bigint,
    PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS osprey_records_owner
    ON osprey_records (kind, owner) WHERE owner IS NOT NULL;
CREATE INDEX IF NOT EXISTS osprey_records_expires
    ON osprey_records (kind, expires) WHERE expires IS NOT NULL;
COMMIT;";

/// The prepared statements of one connection.
struct Statements {
    insert: Statement,
    insert_owned: Statement,
    get: Statement,
    replace: Statement,
    owned: Statement,
    delete_live: Statement,
    remove_live: Statement,
    remove_expired: Statement,
    expired: Statement,
    delete_expired: Statement,
    count: Statement,
}

impl Statements {
    async fn prepare(c: &Client) -> Result<Self, tokio_postgres::Error> {
        // `$n` for "now" makes liveness a matter of the caller's clock, as in SQLite mode.
        let live = "(expires IS NULL OR expires > $3)";
        Ok(Statements {
            insert: c
                .prepare(
                    "INSERT INTO osprey_records (kind, key, value, expires)
                     VALUES ($1, $2, $3, $4)",
                )
                .await?,
            insert_owned: c
                .prepare(&format!(
                    "INSERT INTO osprey_records (kind, key, owner, value, expires)
                     SELECT $4, $5, $2, $6, $7 FROM osprey_records
                     WHERE kind = $1 AND key = $2 AND {live}"
                ))
                .await?,
            get: c
                .prepare(
                    "SELECT value, version, expires, owner FROM osprey_records
                     WHERE kind = $1 AND key = $2",
                )
                .await?,
            replace: c
                .prepare(
                    "UPDATE osprey_records SET value = $4, expires = $5, version = version + 1
                     WHERE kind = $1 AND key = $2 AND version = $3",
                )
                .await?,
            owned: c
                .prepare(
                    "SELECT key, value FROM osprey_records
                     WHERE kind = $1 AND owner = $2 ORDER BY key",
                )
                .await?,
            delete_live: c
                .prepare(&format!(
                    "DELETE FROM osprey_records WHERE kind = $1 AND key = $2 AND {live}"
                ))
                .await?,
            remove_live: c.prepare(&remove(live)).await?,
            remove_expired: c.prepare(&remove("expires <= $3")).await?,
            expired: c
                .prepare(
                    "SELECT key FROM osprey_records
                     WHERE kind = $1 AND expires <= $2 ORDER BY expires LIMIT 1000",
                )
                .await?,
            delete_expired: c
                .prepare(
                    "DELETE FROM osprey_records WHERE kind = $1 AND expires <= $2
                     RETURNING key",
                )
                .await?,
            count: c
                .prepare("SELECT count(*) FROM osprey_records WHERE kind = $1")
                .await?,
        })
    }
}

/// One statement that removes record ($1, $2) when `condition` holds and, in the same
/// statement, the records of kind $4 it owns; returns `('r', key, NULL)` for the record
/// and `('o', key, value)` for each owned one.
fn remove(condition: &str) -> String {
    format!(
        "WITH r AS (DELETE FROM osprey_records
                    WHERE kind = $1 AND key = $2 AND {condition} RETURNING key),
              o AS (DELETE FROM osprey_records
                    WHERE kind = $4 AND owner IN (SELECT key FROM r) RETURNING key, value)
         SELECT 'r'::text, key, NULL::bytea FROM r
         UNION ALL SELECT 'o'::text, key, value FROM o"
    )
}

struct Conn {
    client: Client,
    st: Statements,
}

struct Inner {
    conninfo: String,
    /// The runtime of the store's thread, which drives every connection.
    rt: tokio::runtime::Handle,
    slots: Vec<Mutex<Arc<Conn>>>,
    next: AtomicUsize,
    _stop: Mutex<Option<oneshot::Sender<()>>>,
}

/// A pool of PostgreSQL connections holding the shared records (cheap to clone).
#[derive(Clone)]
pub struct SharedStore {
    inner: Arc<Inner>,
}

fn db(e: &tokio_postgres::Error) -> StoreError {
    StoreError::Database(describe(e))
}

/// Whether a failed connection may succeed in a moment: no server yet, or one still
/// starting up.
fn transient(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        Some(d) => d.code() == &tokio_postgres::error::SqlState::CANNOT_CONNECT_NOW,
        None => e.is_closed() || std::error::Error::source(e).is_some(),
    }
}

/// The driver's message with the server's (its own `Display` says only "db error").
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => match std::error::Error::source(e) {
            Some(src) => format!("{e}: {src}"),
            None => e.to_string(),
        },
    }
}

/// A connection with its statements prepared; the first one (`create`) also creates the
/// table if it is missing.
async fn open_conn(conninfo: &str, create: bool) -> Result<Conn, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(conninfo, NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %describe(&e), "PostgreSQL connection ended");
        }
    });
    if create {
        client.batch_execute(SCHEMA).await?;
    }
    let st = Statements::prepare(&client).await?;
    Ok(Conn { client, st })
}

impl SharedStore {
    /// Connects `connections` times to the database `conninfo` (a libpq-style
    /// `host=... port=... user=... dbname=...` string or a `postgresql://` URL) and
    /// creates the records table if it is missing. Blocks until connected.
    ///
    /// # Errors
    /// [`StoreError::Open`] when the server cannot be reached or refuses.
    pub fn connect(conninfo: &str, connections: usize) -> Result<SharedStore, StoreError> {
        let open_err = |why: String| StoreError::Open {
            what: redact(conninfo),
            why,
        };
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let info = conninfo.to_owned();
        std::thread::Builder::new()
            .name("osprey-postgres".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                rt.block_on(async move {
                    let opened = async {
                        // A server that is starting (or restarting) refuses for a
                        // moment: try for up to 10 s.
                        let mut tries = 0;
                        let first = loop {
                            match open_conn(&info, true).await {
                                Ok(c) => break c,
                                Err(e) if tries < 100 && transient(&e) => {
                                    tries += 1;
                                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                                }
                                Err(e) => return Err(e),
                            }
                        };
                        let mut conns = vec![first];
                        for _ in 1..connections.max(1) {
                            conns.push(open_conn(&info, false).await?);
                        }
                        Ok::<_, tokio_postgres::Error>(conns)
                    }
                    .await;
                    match opened {
                        Ok(conns) => {
                            let handle = tokio::runtime::Handle::current();
                            let _ = ready_tx.send(Ok((handle, conns)));
                            // Drive the connections until the store is dropped.
                            let _ = stop_rx.await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(describe(&e)));
                        }
                    }
                });
            })
            .map_err(|e| open_err(e.to_string()))?;
        let (rt, conns) = ready_rx
            .recv()
            .map_err(|_| open_err("the connection thread ended".into()))?
            .map_err(open_err)?;
        Ok(SharedStore {
            inner: Arc::new(Inner {
                conninfo: conninfo.to_owned(),
                rt,
                slots: conns.into_iter().map(|c| Mutex::new(Arc::new(c))).collect(),
                next: AtomicUsize::new(0),
                _stop: Mutex::new(Some(stop_tx)),
            }),
        })
    }

    /// A connection, round robin; one whose server went away is replaced.
    async fn conn(&self) -> Result<Arc<Conn>, StoreError> {
        let i = self.inner.next.fetch_add(1, Ordering::Relaxed) % self.inner.slots.len();
        let slot = &self.inner.slots[i];
        let current = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if !current.client.is_closed() {
            return Ok(current);
        }
        let info = self.inner.conninfo.clone();
        let fresh = self
            .inner
            .rt
            .spawn(async move { open_conn(&info, false).await })
            .await
            .map_err(|e| StoreError::Database(e.to_string()))?
            .map_err(|e| db(&e))?;
        let fresh = Arc::new(fresh);
        *slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh.clone();
        Ok(fresh)
    }

    /// Runs the statement `pick` chooses on a pooled connection; rows changed.
    async fn execute(
        &self,
        pick: fn(&Statements) -> &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let c = self.conn().await?;
        c.client
            .execute(pick(&c.st), params)
            .await
            .map_err(|e| db(&e))
    }

    /// Runs the query `pick` chooses on a pooled connection; its rows.
    async fn query(
        &self,
        pick: fn(&Statements) -> &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let c = self.conn().await?;
        c.client
            .query(pick(&c.st), params)
            .await
            .map_err(|e| db(&e))
    }

    /// Stores a new record.
    ///
    /// # Errors
    /// [`StoreError::Database`], also when the key exists.
    pub async fn insert(
        &self,
        kind: &str,
        key: &str,
        value: &[u8],
        expires: Option<i64>,
    ) -> Result<(), StoreError> {
        self.execute(|s| &s.insert, &[&kind, &key, &value, &expires])
            .await?;
        Ok(())
    }

    /// Stores a new record of `kind` owned by record (`owner_kind`, `owner`), if that
    /// record is live at `now`. Returns whether it was stored.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_owned(
        &self,
        owner_kind: &str,
        owner: &str,
        now: i64,
        kind: &str,
        key: &str,
        value: &[u8],
        expires: Option<i64>,
    ) -> Result<bool, StoreError> {
        let n = self
            .execute(
                |s| &s.insert_owned,
                &[&owner_kind, &owner, &now, &kind, &key, &value, &expires],
            )
            .await?;
        Ok(n == 1)
    }

    /// The record (`kind`, `key`), if stored (expired or not).
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn get(&self, kind: &str, key: &str) -> Result<Option<Versioned>, StoreError> {
        let rows = self.query(|s| &s.get, &[&kind, &key]).await?;
        Ok(rows.into_iter().next().map(|r| Versioned {
            value: r.get(0),
            version: r.get(1),
            expires: r.get(2),
            owner: r.get(3),
        }))
    }

    /// Replaces the record's value and expiry if its version is still `version`.
    /// Returns false when another change came first (read it again and retry).
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn replace(
        &self,
        kind: &str,
        key: &str,
        version: i64,
        value: &[u8],
        expires: Option<i64>,
    ) -> Result<bool, StoreError> {
        let n = self
            .execute(|s| &s.replace, &[&kind, &key, &version, &value, &expires])
            .await?;
        Ok(n == 1)
    }

    /// The records of `kind` owned by `owner`, as (key, value), in key order.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn owned(
        &self,
        kind: &str,
        owner: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let rows = self.query(|s| &s.owned, &[&kind, &owner]).await?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Deletes the record if it is live at `now`; returns whether it was.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn delete_live(&self, kind: &str, key: &str, now: i64) -> Result<bool, StoreError> {
        let n = self
            .execute(|s| &s.delete_live, &[&kind, &key, &now])
            .await?;
        Ok(n == 1)
    }

    /// Removes record (`kind`, `key`) with the records of `owned_kind` it owns, in one
    /// statement, if it is live at `now` (`expired == false`) or expired at `now`
    /// (`expired == true`). `None` when there was no such record (or another container
    /// removed it first).
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn remove(
        &self,
        kind: &str,
        key: &str,
        owned_kind: &str,
        now: i64,
        expired: bool,
    ) -> Result<Option<Removed>, StoreError> {
        let pick: fn(&Statements) -> &Statement = if expired {
            |s| &s.remove_expired
        } else {
            |s| &s.remove_live
        };
        let rows = self.query(pick, &[&kind, &key, &now, &owned_kind]).await?;
        let mut removed: Option<Removed> = None;
        let mut owned = Vec::new();
        for r in rows {
            let what: &str = r.get(0);
            let k: String = r.get(1);
            if what == "r" {
                removed = Some(Removed {
                    key: k,
                    owned: Vec::new(),
                });
            } else {
                owned.push((k, r.get::<_, Vec<u8>>(2)));
            }
        }
        Ok(removed.map(|mut r| {
            owned.sort();
            r.owned = owned;
            r
        }))
    }

    /// Up to 1,000 keys of `kind` expired at `now`, soonest first.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn expired(&self, kind: &str, now: i64) -> Result<Vec<String>, StoreError> {
        let rows = self.query(|s| &s.expired, &[&kind, &now]).await?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// Deletes every record of `kind` expired at `now`; returns their keys.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn delete_expired(&self, kind: &str, now: i64) -> Result<Vec<String>, StoreError> {
        let rows = self.query(|s| &s.delete_expired, &[&kind, &now]).await?;
        Ok(rows.into_iter().map(|r| r.get(0)).collect())
    }

    /// How many records of `kind` are stored.
    ///
    /// # Errors
    /// [`StoreError::Database`].
    pub async fn count(&self, kind: &str) -> Result<u64, StoreError> {
        let rows = self.query(|s| &s.count, &[&kind]).await?;
        let n = rows.first().map_or(0, |r| r.get::<_, i64>(0));
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// `conninfo` without its password, for messages.
fn redact(conninfo: &str) -> String {
    conninfo
        .split_whitespace()
        .map(|kv| {
            if kv.starts_with("password=") {
                "password=***"
            } else {
                kv
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStore")
            .field("database", &redact(&self.inner.conninfo))
            .field("connections", &self.inner.slots.len())
            .finish()
    }
}
