//! What one SQLite transaction of one small record costs in the store's settings (WAL,
//! `synchronous = NORMAL` as with `[data] sync = "os"`, checkpoints every 10,000 pages),
//! with the file locked once for the connection's life (`locking_mode = EXCLUSIVE`, as
//! the store opens it) against SQLite's default shared mode (file locks taken and
//! released by every transaction). `cargo bench -p osprey-store --bench commit`
#![allow(missing_docs, clippy::unwrap_used)] // a benchmark binary

use criterion::{criterion_group, criterion_main, Criterion};
use rusqlite::{params, Connection};

fn open(dir: &std::path::Path, exclusive: bool) -> Connection {
    let conn = Connection::open(dir.join("bench.db")).unwrap();
    if exclusive {
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .unwrap();
    }
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 10_000)
        .unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS records (
             kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
             PRIMARY KEY (kind, key)
         ) WITHOUT ROWID;",
    )
    .unwrap();
    conn
}

fn commit(c: &mut Criterion) {
    let value = vec![7u8; 120];
    for (name, exclusive) in [("exclusive", true), ("shared", false)] {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(dir.path(), exclusive);
        let mut n = 0u64;
        c.bench_function(&format!("one-record transaction, {name} locking"), |b| {
            b.iter(|| {
                n += 1;
                conn.execute_batch("BEGIN").unwrap();
                conn.prepare_cached(
                    "INSERT OR REPLACE INTO records (kind, key, value) VALUES (?1, ?2, ?3)",
                )
                .unwrap()
                .execute(params!["counter", format!("k{}", n % 1000), value])
                .unwrap();
                conn.execute_batch("COMMIT").unwrap();
            });
        });
    }
}

criterion_group!(benches, commit);
criterion_main!(benches);
