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
    rt().block_on(first.submit(vec![Write::put("a", "1", b"kept".to_vec())]))
        .unwrap();
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
