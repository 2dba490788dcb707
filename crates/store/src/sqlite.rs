//! The SQLite backend: one table of records, WAL journal, one connection that holds the
//! database's lock for as long as the store is open.
//!
//! `locking_mode=EXCLUSIVE`, set before WAL mode is entered, keeps SQLite's WAL index in
//! the process's memory (no `-shm` file to map) and spares every transaction the file-lock
//! calls of shared mode: a transaction of one 120-byte record took 1.18 us against 4.01 us
//! in shared mode (`cargo bench -p osprey-store --bench commit`, 2026-11-23). The price is
//! that no other process may open the database meanwhile, which is what a container wants
//! of its state anyway.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection};

use crate::{Backend, Record, StoreError, Write};

pub(crate) struct SqliteBackend {
    conn: Connection,
}

fn db_err(e: rusqlite::Error) -> StoreError {
    StoreError::Database(e.to_string())
}

impl SqliteBackend {
    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |e: rusqlite::Error| StoreError::Open {
            what: path.display().to_string(),
            why: e.to_string(),
        };
        let conn = Connection::open(path).map_err(open_err)?;
        // A process that has just died (SIGKILL) may hold the lock for a moment longer.
        conn.busy_timeout(Duration::from_secs(2))
            .map_err(open_err)?;
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(open_err)?;
        // Every transaction here is a redo log compaction, which must be on disk before
        // the log is emptied: FULL syncs the WAL at each commit.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| busy_or(e, path, open_err))?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err)?;
        // The write lock is taken here, once, and kept: a second process on the same file
        // fails now, with a clear message, not at its first write.
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS records (
                 kind  TEXT NOT NULL,
                 key   TEXT NOT NULL,
                 value BLOB NOT NULL,
                 PRIMARY KEY (kind, key)
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS meta (
                 name  TEXT PRIMARY KEY,
                 value INTEGER NOT NULL
             ) WITHOUT ROWID;
             COMMIT;",
        )
        .map_err(|e| busy_or(e, path, open_err))?;
        Ok(SqliteBackend { conn })
    }

    /// The generation of the last redo log compacted into the database (0: none yet).
    pub(crate) fn generation(&mut self) -> Result<u64, StoreError> {
        let g: Option<i64> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE name = 'redo_generation'",
                [],
                |row| row.get(0),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(db_err)?;
        g.map_or(Ok(0), |g| {
            u64::try_from(g).map_err(|_| {
                StoreError::Database(format!("damaged database: redo log generation {g}"))
            })
        })
    }

    /// Commits `writes` and the redo log generation `generation` in one transaction that
    /// is on disk when this returns: the redo log may be emptied after it. Nothing of a
    /// failed transaction is kept.
    pub(crate) fn commit_generation(
        &mut self,
        writes: &[Write],
        generation: u64,
    ) -> Result<(), StoreError> {
        let g = i64::try_from(generation)
            .map_err(|_| StoreError::Database("redo log generation overflow".into()))?;
        self.commit_then(writes, || {
            self.conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO meta (name, value) VALUES ('redo_generation', ?1)",
                )
                .and_then(|mut s| s.execute(params![g]))
                .map(drop)
                .map_err(db_err)
        })
    }

    /// Applies `writes`, then `more`, in one transaction; nothing of a failed one is kept.
    fn commit_then(
        &self,
        writes: &[Write],
        more: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.run("BEGIN")?;
        match self
            .apply(writes)
            .and_then(|()| more())
            .and_then(|()| self.run("COMMIT"))
        {
            Ok(()) => Ok(()),
            Err(e) => {
                // Nothing of a failed group is kept.
                let _ = self.run("ROLLBACK");
                Err(e)
            }
        }
    }
}

/// "In use by another process" for a lock held elsewhere; `other` for the rest.
fn busy_or(
    e: rusqlite::Error,
    path: &Path,
    other: impl Fn(rusqlite::Error) -> StoreError,
) -> StoreError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            StoreError::Open {
                what: path.display().to_string(),
                why: "the database is in use by another process (another container on the \
                      same data directory?)"
                    .into(),
            }
        }
        _ => other(e),
    }
}

impl SqliteBackend {
    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        let mut put = self
            .conn
            .prepare_cached("INSERT OR REPLACE INTO records (kind, key, value) VALUES (?1, ?2, ?3)")
            .map_err(db_err)?;
        for w in writes {
            match w {
                Write::Put { kind, key, value } => {
                    put.execute(params![kind, key, value]).map_err(db_err)?;
                }
                Write::Delete { kind, key } => {
                    self.conn
                        .prepare_cached("DELETE FROM records WHERE kind = ?1 AND key = ?2")
                        .and_then(|mut d| d.execute(params![kind, key]))
                        .map_err(db_err)?;
                }
            }
        }
        Ok(())
    }

    /// Runs a statement without parameters from the statement cache (`BEGIN`, ...), so a
    /// commit does not parse SQL.
    fn run(&self, sql: &str) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute([]))
            .map(drop)
            .map_err(db_err)
    }
}

/// An in-memory database is its own backend: nothing to make durable, so no redo log.
impl Backend for SqliteBackend {
    fn commit(&mut self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.commit_then(&writes, || Ok(()))
    }

    fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError> {
        SqliteBackend::load(self, kind)
    }
}

impl SqliteBackend {
    /// Every record of `kind`, in key order.
    pub(crate) fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM records WHERE kind = ?1 ORDER BY key")
            .map_err(db_err)?;
        let rows = stmt
            .query_map(params![kind], |row| {
                Ok(Record {
                    key: row.get(0)?,
                    value: row.get(1)?,
                })
            })
            .map_err(db_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db_err)
    }
}
