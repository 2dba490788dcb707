//! The SQLite backend: one table of records, WAL journal, `synchronous=FULL`.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection};

use crate::{Backend, Reader, Record, StoreError, Sync, Write};

pub(crate) struct SqliteBackend {
    conn: Connection,
}

fn db_err(e: rusqlite::Error) -> StoreError {
    StoreError::Database(e.to_string())
}

impl SqliteBackend {
    pub(crate) fn open(path: &Path, sync: Sync) -> Result<Self, StoreError> {
        let open_err = |e: rusqlite::Error| StoreError::Open {
            what: path.display().to_string(),
            why: e.to_string(),
        };
        let conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(open_err)?;
        // WAL lets the start-up reader and the writer work side by side. FULL syncs the
        // WAL at each commit; NORMAL leaves the commit in the OS and syncs at checkpoints.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        let level = match sync {
            Sync::Disk => "FULL",
            Sync::Os => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", level)
            .map_err(open_err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS records (
                 kind  TEXT NOT NULL,
                 key   TEXT NOT NULL,
                 value BLOB NOT NULL,
                 PRIMARY KEY (kind, key)
             ) WITHOUT ROWID;",
        )
        .map_err(open_err)?;
        Ok(SqliteBackend { conn })
    }
}

impl SqliteBackend {
    fn apply(&mut self, writes: &[Write]) -> Result<(), StoreError> {
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

impl Backend for SqliteBackend {
    fn commit(&mut self, writes: &[Write]) -> Result<(), StoreError> {
        self.run("BEGIN")?;
        match self.apply(writes).and_then(|()| self.run("COMMIT")) {
            Ok(()) => Ok(()),
            Err(e) => {
                // Nothing of a failed group is kept.
                let _ = self.run("ROLLBACK");
                Err(e)
            }
        }
    }
}

impl Reader for SqliteBackend {
    fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError> {
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
