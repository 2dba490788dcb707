use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

#[test]
fn puts_and_deletes_survive_reopening() {
    for sync in [Sync::Disk, Sync::Os] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        rt().block_on(async {
            let store = Store::open_sqlite_with(&path, sync).unwrap();
            store
                .submit(vec![
                    Write::put("a", "1", b"one".to_vec()),
                    Write::put("a", "2", b"two".to_vec()),
                    Write::put("b", "1", b"other kind".to_vec()),
                ])
                .await
                .unwrap();
            store.submit(vec![Write::delete("a", "1")]).await.unwrap();
            store
                .submit(vec![Write::put("a", "2", b"two'".to_vec())])
                .await
                .unwrap();
            store.close();
        });
        let store = Store::open_sqlite_with(&path, sync).unwrap();
        assert_eq!(
            store.load("a").unwrap(),
            vec![Record {
                key: "2".into(),
                value: b"two'".to_vec()
            }]
        );
        assert_eq!(store.load("b").unwrap().len(), 1);
        assert!(store.load("none").unwrap().is_empty());
    }
}

#[test]
fn concurrent_writes_share_commits_and_keep_their_order() {
    for sync in [Sync::Disk, Sync::Os] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sqlite_with(&dir.path().join("s.db"), sync).unwrap();
        rt().block_on(async {
            // Queue 1,000 writes before awaiting any: the writer groups them.
            let commits: Vec<Commit> = (0..1000)
                .map(|i| store.submit(vec![Write::put("n", "x", i.to_string().into_bytes())]))
                .collect();
            for c in commits {
                c.await.unwrap();
            }
        });
        let stats = store.stats();
        assert_eq!(stats.writes, 1000);
        assert!(stats.commits < 1000, "no batching: {stats:?}");
        // The last queued write wins: order is kept.
        assert_eq!(store.load("n").unwrap()[0].value, b"999");
    }
}

#[test]
fn a_closed_store_refuses_writes_clearly() {
    for sync in [Sync::Disk, Sync::Os] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sqlite_with(&dir.path().join("s.db"), sync).unwrap();
        store.close();
        let r = rt().block_on(store.submit(vec![Write::delete("a", "b")]));
        assert_eq!(r, Err(StoreError::Closed));
    }
}

#[test]
fn an_unopenable_path_is_a_clear_error() {
    for sync in [Sync::Disk, Sync::Os] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"not a directory").unwrap();
        let err = Store::open_sqlite_with(&file.join("s.db"), sync).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err}");
    }
}

#[test]
fn after_resolves_once_the_write_is_committed() {
    for sync in [Sync::Disk, Sync::Os] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sqlite_with(&dir.path().join("s.db"), sync).unwrap();
        rt().block_on(async {
            let c = store.submit(vec![Write::put("k", "1", b"v".to_vec())]);
            let seq = c.seq();
            store.after(seq).await;
            // Committed before `after` resolved: a read finds it.
            assert_eq!(store.load("k").unwrap().len(), 1);
            c.await.unwrap();
        });
    }
}

#[test]
fn a_second_store_on_the_same_file_is_refused_until_the_first_closes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let first = Store::open_sqlite_with(&path, Sync::Os).unwrap();
    put(&first, "a", "1", b"kept");
    let err = Store::open_sqlite_with(&path, Sync::Os).unwrap_err();
    assert!(
        err.to_string().contains("in use by another process"),
        "{err}"
    );
    // The refused open changed nothing.
    assert_eq!(first.load("a").unwrap()[0].value, b"kept");
    first.close();
    drop(first);
    let second = Store::open_sqlite_with(&path, Sync::Os).unwrap();
    assert_eq!(second.load("a").unwrap()[0].value, b"kept");
}

/// What a process killed now would leave on disk: the database's files (its WAL and the
/// redo log included, all written before any commit was acknowledged) copied elsewhere,
/// while the store stays open.
fn crash_copy(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Commits one put and waits for it.
fn put(store: &Store, kind: &str, key: &str, value: &[u8]) {
    rt().block_on(store.submit(vec![Write::put(kind, key, value.to_vec())]))
        .unwrap();
}

fn value(store: &Store, kind: &str, key: &str) -> Option<Vec<u8>> {
    store
        .load(kind)
        .unwrap()
        .into_iter()
        .find(|r| r.key == key)
        .map(|r| r.value)
}

#[test]
fn acknowledged_writes_survive_a_crash_and_a_torn_tail_loses_only_the_last() {
    for sync in [Sync::Disk, Sync::Os] {
        let (live, crashed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = Store::open_sqlite_with(&live.path().join("s.db"), sync).unwrap();
        rt().block_on(async {
            for i in 0..100u32 {
                let w = vec![
                    Write::put("n", "x", i.to_string().into_bytes()),
                    Write::put("n", format!("k{i}"), b"v".to_vec()),
                ];
                store.submit(w).await.unwrap();
            }
            store.submit(vec![Write::delete("n", "k7")]).await.unwrap();
        });
        crash_copy(live.path(), crashed.path());
        let db = crashed.path().join("s.db");
        {
            let back = Store::open_sqlite_with(&db, sync).unwrap();
            assert_eq!(value(&back, "n", "x").as_deref(), Some(&b"99"[..]));
            assert_eq!(back.load("n").unwrap().len(), 100, "x and k0..k99 but k7");
            assert_eq!(value(&back, "n", "k7"), None);
        }
        // Crash again, this time in the middle of appending the last group: it is lost,
        // every group before it is kept, and the store works on.
        let again = tempfile::tempdir().unwrap();
        put(&store, "n", "x", b"last");
        crash_copy(live.path(), again.path());
        // The last record's last bytes never reached the file (records follow the 16-byte
        // header, each a u32 length, a u32 CRC and the payload; the log's room is zeros).
        let log = again.path().join("s.db.redo");
        let mut bytes = std::fs::read(&log).unwrap();
        let (mut at, mut end) = (16, 16);
        loop {
            let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            if len == 0 {
                break;
            }
            end = at + 8 + len;
            at = end;
        }
        bytes[end - 3..end].fill(0);
        std::fs::write(&log, &bytes).unwrap();
        let back = Store::open_sqlite_with(&again.path().join("s.db"), sync).unwrap();
        assert_eq!(value(&back, "n", "x").as_deref(), Some(&b"99"[..]));
        put(&back, "n", "x", b"after");
        back.close();
        drop(back);
        let reopened = Store::open_sqlite_with(&again.path().join("s.db"), sync).unwrap();
        assert_eq!(value(&reopened, "n", "x").as_deref(), Some(&b"after"[..]));
    }
}

#[test]
fn a_redo_log_already_compacted_is_not_replayed_over_newer_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let log = dir.path().join("s.db.redo");
    let store = Store::open_sqlite_with(&db, Sync::Os).unwrap();
    put(&store, "n", "x", b"old");
    // The log as a crash between compaction's two steps would leave it: holding "old",
    // under the generation SQLite has since moved past.
    let stale = std::fs::read(&log).unwrap();
    assert_eq!(value(&store, "n", "x").as_deref(), Some(&b"old"[..]));
    put(&store, "n", "x", b"new");
    store.close();
    drop(store);
    std::fs::write(&log, stale).unwrap();
    let back = Store::open_sqlite_with(&db, Sync::Os).unwrap();
    assert_eq!(value(&back, "n", "x").as_deref(), Some(&b"new"[..]));
}

#[test]
fn a_file_that_is_no_redo_log_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let store = Store::open_sqlite_with(&db, Sync::Os).unwrap();
    put(&store, "n", "x", b"kept");
    store.close();
    drop(store);
    let log = dir.path().join("s.db.redo");
    std::fs::write(&log, b"somebody else's file, long enough").unwrap();
    let err = Store::open_sqlite_with(&db, Sync::Os).unwrap_err();
    assert!(err.to_string().contains("not an Osprey redo log"), "{err}");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"somebody else's file, long enough"
    );
}

#[test]
fn a_memory_store_keeps_records_and_writes_no_file() {
    for store in [
        Store::open_memory().unwrap(),
        Store::open_sqlite(std::path::Path::new(":memory:")).unwrap(),
    ] {
        put(&store, "m", "1", b"v");
        assert_eq!(value(&store, "m", "1").as_deref(), Some(&b"v"[..]));
    }
    assert!(!std::path::Path::new(":memory:.redo").exists());
    assert!(!std::path::Path::new(":memory:").exists());
}

#[test]
fn records_of_an_earlier_generation_left_in_the_log_are_not_replayed() {
    for sync in [Sync::Disk, Sync::Os] {
        let (live, crashed) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = Store::open_sqlite_with(&live.path().join("s.db"), sync).unwrap();
        rt().block_on(async {
            for v in ["1", "2", "3"] {
                store
                    .submit(vec![Write::put("n", "x", v.as_bytes().to_vec())])
                    .await
                    .unwrap();
            }
        });
        // A read compacts: "3" goes into SQLite and the log starts again at its header,
        // over records 1, 2, 3 of the generation before, which stay in the file.
        assert_eq!(value(&store, "n", "x").as_deref(), Some(&b"3"[..]));
        // The same size as "1"'s record, written where it was: "2" and "3" follow it.
        put(&store, "n", "x", b"4");
        crash_copy(live.path(), crashed.path());
        let back = Store::open_sqlite_with(&crashed.path().join("s.db"), sync).unwrap();
        assert_eq!(value(&back, "n", "x").as_deref(), Some(&b"4"[..]));
    }
}
