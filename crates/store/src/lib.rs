//! Durable state for Osprey: named records (`kind`, `key`) -> bytes, kept in SQLite (WAL)
//! by default.
//!
//! Writes go through one writer thread that commits them in groups: every write queued
//! while a commit is on disk joins the next commit, so a burst of N concurrent updates
//! costs one `fsync`, not N. [`Store::submit`] queues a write at once (so callers that
//! queue under their own lock keep their order) and returns a [`Commit`] that resolves
//! when the write is durable: a caller acknowledges an update to its client only after
//! that.
//!
//! ```
//! use osprey_store::{Store, Write};
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open_sqlite(&dir.path().join("state.db")).unwrap();
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! rt.block_on(store.submit(vec![Write::put("counter", "k1", b"<v>1</v>".to_vec())])).unwrap();
//! assert_eq!(store.load("counter").unwrap()[0].key, "k1");
//! ```

mod error;
mod sqlite;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

pub use error::StoreError;
use tokio::sync::oneshot;

/// One change to the stored records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Insert or replace record (`kind`, `key`).
    Put {
        /// The record's kind (a resource type, a subscription table, ...).
        kind: String,
        /// The record's key within its kind.
        key: String,
        /// The record's bytes.
        value: Vec<u8>,
    },
    /// Delete record (`kind`, `key`); deleting a missing record is not an error.
    Delete {
        /// The record's kind.
        kind: String,
        /// The record's key.
        key: String,
    },
}

impl Write {
    /// A [`Write::Put`].
    pub fn put(kind: impl Into<String>, key: impl Into<String>, value: Vec<u8>) -> Self {
        Write::Put {
            kind: kind.into(),
            key: key.into(),
            value,
        }
    }

    /// A [`Write::Delete`].
    pub fn delete(kind: impl Into<String>, key: impl Into<String>) -> Self {
        Write::Delete {
            kind: kind.into(),
            key: key.into(),
        }
    }
}

/// A stored record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The record's key within its kind.
    pub key: String,
    /// The record's bytes.
    pub value: Vec<u8>,
}

/// When a commit counts as done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sync {
    /// Each (group) commit is flushed to the disk (`fsync`) before it is acknowledged:
    /// it survives a crash of the machine. Costs one flush per group commit.
    #[default]
    Disk,
    /// Each commit is in the operating system before it is acknowledged, and flushed at
    /// checkpoints: it survives a crash (or `SIGKILL`) of the process; a power loss may
    /// lose the last commits before a checkpoint, never the database's consistency.
    Os,
}

/// What a backend does; the writer thread owns one.
trait Backend: Send + 'static {
    /// Applies `writes` in order, atomically and durably.
    fn commit(&mut self, writes: &[Write]) -> Result<(), StoreError>;
}

/// Counters of the writer, to show what batching buys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Transactions committed.
    pub commits: u64,
    /// Writes committed.
    pub writes: u64,
}

struct Job {
    seq: u64,
    writes: Vec<Write>,
    done: oneshot::Sender<Result<(), StoreError>>,
}

struct Shared {
    commits: AtomicU64,
    writes: AtomicU64,
}

/// A handle on the store; clones share one writer.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// The queue to the writer, and the sequence number of the last job queued.
    jobs: Mutex<(Option<mpsc::Sender<Job>>, u64)>,
    durable: tokio::sync::watch::Receiver<u64>,
    reader: Mutex<Box<dyn Reader>>,
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// Reads at start-up (a separate connection from the writer's).
trait Reader: Send + 'static {
    fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError>;
}

/// The most writes one commit takes, so one transaction stays short.
const MAX_BATCH: usize = 4096;

impl Store {
    /// Opens (creating if needed) the SQLite database at `path`, in WAL mode, with
    /// [`Sync::Disk`]: a commit is on disk when it is acknowledged.
    ///
    /// # Errors
    /// [`StoreError`] when the file cannot be opened or its schema created.
    pub fn open_sqlite(path: &Path) -> Result<Store, StoreError> {
        Store::open_sqlite_with(path, Sync::Disk)
    }

    /// As [`Store::open_sqlite`], with the given [`Sync`] (SQLite's `synchronous` is
    /// `FULL` for [`Sync::Disk`], `NORMAL` for [`Sync::Os`]).
    ///
    /// # Errors
    /// [`StoreError`] when the file cannot be opened or its schema created.
    pub fn open_sqlite_with(path: &Path, sync: Sync) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                    what: dir.display().to_string(),
                    why: e.to_string(),
                })?;
            }
        }
        let writer = sqlite::SqliteBackend::open(path, sync)?;
        let reader = sqlite::SqliteBackend::open(path, sync)?;
        Ok(Store::start(Box::new(writer), Box::new(reader)))
    }

    fn start(backend: Box<dyn Backend>, reader: Box<dyn Reader>) -> Store {
        let (tx, rx) = mpsc::channel::<Job>();
        let (durable_tx, durable) = tokio::sync::watch::channel(0u64);
        let shared = Arc::new(Shared {
            commits: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        });
        let s = shared.clone();
        let writer = std::thread::Builder::new()
            .name("osprey-store".into())
            .spawn(move || write_loop(backend, &rx, &s, &durable_tx))
            .expect("spawning the store writer thread");
        Store {
            inner: Arc::new(Inner {
                jobs: Mutex::new((Some(tx), 0)),
                durable,
                reader: Mutex::new(reader),
                shared,
                writer: Mutex::new(Some(writer)),
            }),
        }
    }

    /// Queues `writes` (applied atomically, after every write queued before them) and
    /// returns a future that resolves once they are durable.
    pub fn submit(&self, writes: Vec<Write>) -> Commit {
        let (done, rx) = oneshot::channel();
        let mut seq = 0;
        let sent = match self.inner.jobs.lock() {
            Ok(mut jobs) => {
                let (tx, last) = &mut *jobs;
                *last += 1;
                seq = *last;
                match tx.as_ref() {
                    Some(tx) => tx.send(Job { seq, writes, done }).is_ok(),
                    None => false,
                }
            }
            Err(_) => false,
        };
        Commit {
            seq,
            rx: sent.then_some(rx),
        }
    }

    /// Resolves once the write whose [`Commit::seq`] is `seq`, and every write queued
    /// before it, has been committed (or has failed: its own [`Commit`] says which).
    /// For work that must follow a write without holding its `Commit`, such as a
    /// notification of a change.
    pub fn after(&self, seq: u64) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.inner.durable.clone();
        async move {
            let _ = rx.wait_for(|&d| d >= seq).await;
        }
    }

    /// Every record of `kind`, in key order.
    ///
    /// # Errors
    /// [`StoreError`] when the database cannot be read or a record is damaged.
    pub fn load(&self, kind: &str) -> Result<Vec<Record>, StoreError> {
        let mut reader = self.inner.reader.lock().map_err(|_| StoreError::Closed)?;
        reader.load(kind)
    }

    /// Commits and writes done so far.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            commits: self.inner.shared.commits.load(Ordering::Relaxed),
            writes: self.inner.shared.writes.load(Ordering::Relaxed),
        }
    }

    /// Stops accepting writes, commits what is queued and waits for the writer to end.
    pub fn close(&self) {
        if let Ok(mut jobs) = self.inner.jobs.lock() {
            jobs.0.take();
        }
        let handle = self.inner.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("stats", &self.stats())
            .finish()
    }
}

fn write_loop(
    mut backend: Box<dyn Backend>,
    rx: &mpsc::Receiver<Job>,
    shared: &Shared,
    durable: &tokio::sync::watch::Sender<u64>,
) {
    let mut batch: Vec<Write> = Vec::new();
    let mut waiting: Vec<oneshot::Sender<Result<(), StoreError>>> = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut job = Some(first);
        let mut last_seq = 0;
        while let Some(j) = job.take() {
            last_seq = j.seq;
            batch.extend(j.writes);
            waiting.push(j.done);
            if batch.len() >= MAX_BATCH {
                break;
            }
            job = rx.try_recv().ok();
        }
        let result = backend.commit(&batch);
        match &result {
            Ok(()) => {
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .writes
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
            }
            Err(e) => tracing::error!(error = %e, writes = batch.len(), "store commit failed"),
        }
        for done in waiting.drain(..) {
            let _ = done.send(result.clone());
        }
        durable.send_replace(last_seq);
        batch.clear();
    }
}

/// Resolves when the writes it was returned for are durable.
#[must_use = "a write is only durable once its Commit resolves"]
pub struct Commit {
    seq: u64,
    rx: Option<oneshot::Receiver<Result<(), StoreError>>>,
}

impl Commit {
    /// The write's place in the store's queue (see [`Store::after`]).
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl Future for Commit {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.rx.as_mut() {
            None => Poll::Ready(Err(StoreError::Closed)),
            Some(rx) => Pin::new(rx)
                .poll(cx)
                .map(|r| r.unwrap_or(Err(StoreError::Closed))),
        }
    }
}

#[cfg(test)]
mod tests;
