//! What one commit of one small record costs: through the store (`Store::submit` with
//! `Sync::Os`, which appends it to the redo log), against one SQLite transaction in the
//! settings the store used before it had the log (WAL, `synchronous = NORMAL`, checkpoints
//! every 10,000 pages), with the file locked once for the connection's life
//! (`locking_mode = EXCLUSIVE`) and in SQLite's default shared mode (file locks taken and
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

fn store_commit(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store =
        osprey_store::Store::open_sqlite_with(&dir.path().join("s.db"), osprey_store::Sync::Os)
            .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let value = vec![7u8; 120];
    let mut n = 0u64;
    c.bench_function("one-record commit through the store (redo log)", |b| {
        b.iter(|| {
            n += 1;
            let w = osprey_store::Write::put("counter", format!("k{}", n % 1000), value.clone());
            rt.block_on(store.submit(vec![w])).unwrap();
        });
    });
}

criterion_group!(benches, store_commit, commit);
criterion_main!(benches);
