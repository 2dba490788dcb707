//! Durable state for Osprey: named records (`kind`, `key`) -> bytes, kept in SQLite (WAL)
//! by default ([`Store`]), or in PostgreSQL shared by several containers
//! ([`SharedStore`]).
//!
//! A commit appends its group of writes to a redo log in front of the database, one
//! record per group, which is folded into SQLite every few megabytes (see `redo`): a
//! small change costs its own bytes, not the 4 KB B-tree pages SQLite would write for it.
//!
//! Writes are committed in groups: every write queued while a commit is on disk joins the
//! next commit, so a burst of N concurrent updates costs one `fsync`, not N.
//! [`Store::submit`] queues a write at once (so callers that queue under their own lock
//! keep their order) and returns a [`Commit`] that resolves
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
mod redo;
mod shared;
mod sqlite;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::thread::JoinHandle;

pub use error::StoreError;
pub use shared::{Removed, SharedStore, Versioned};
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
    /// compactions of the redo log: it survives a crash (or `SIGKILL`) of the process; a
    /// power loss may lose the commits since the last compaction, never the database's
    /// consistency.
    Os,
}

/// What a backend does: one connection, which commits and, at start-up, reads.
trait Backend: Send + 'static {
    /// Applies `writes` in order, atomically and durably (taking them: a backend may keep
    /// them, as the redo log keeps the latest values until it compacts).
    fn commit(&mut self, writes: Vec<Write>) -> Result<(), StoreError>;
    /// Every record of `kind`, in key order.
    fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError>;
}

/// The one connection, shared by the committer and the start-up reads (a single
/// connection may hold the database file's lock for the process: see `sqlite`).
type Connection = Arc<Mutex<Box<dyn Backend>>>;

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
    /// The sequence number of the last job committed (or failed).
    durable: tokio::sync::watch::Sender<u64>,
}

/// Commits `jobs` as one transaction and answers each.
fn commit_jobs(backend: &mut dyn Backend, jobs: Vec<Job>, shared: &Shared) {
    let Some(last_seq) = jobs.last().map(|j| j.seq) else {
        return;
    };
    let mut batch: Vec<Write> = Vec::new();
    let mut waiting = Vec::with_capacity(jobs.len());
    for j in jobs {
        batch.extend(j.writes);
        waiting.push(j.done);
    }
    let writes = batch.len();
    let result = backend.commit(batch);
    match &result {
        Ok(()) => {
            shared.commits.fetch_add(1, Ordering::Relaxed);
            shared.writes.fetch_add(writes as u64, Ordering::Relaxed);
        }
        Err(e) => tracing::error!(error = %e, writes, "store commit failed"),
    }
    for done in waiting {
        let _ = done.send(result.clone());
    }
    shared.durable.send_replace(last_seq);
}

/// How commits happen.
enum Engine {
    /// [`Sync::Disk`]: a writer thread takes every queued job into one transaction and
    /// flushes it, so a flush never blocks a thread that serves requests.
    Thread {
        jobs: Mutex<Option<mpsc::Sender<Job>>>,
        handle: Mutex<Option<JoinHandle<()>>>,
    },
    /// [`Sync::Os`]: no flush to wait for, so no thread hop either: the first caller
    /// awaiting a [`Commit`] commits every job queued so far (its own and others'),
    /// while the others wait for it (combining).
    ///
    /// A caller that finds a commit under way waits for the connection (a commit without
    /// a flush takes microseconds) rather than for the committer to wake it: its job is
    /// then already committed, or it commits it itself, and its [`Commit`] is ready when
    /// first polled. No request thread has to wake another (an `eventfd` write and an
    /// `epoll` return per commit under load, measured with `strace -c`).
    Inline(Arc<Combiner>),
}

struct Combiner {
    queue: Mutex<(Vec<Job>, bool)>,
    backend: Connection,
}

impl Combiner {
    /// Commits everything queued, waiting first for a commit under way to end. Every job
    /// queued before the call is committed (or failed) when it returns.
    fn drain(&self, shared: &Shared) {
        let mut backend = self.backend.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let jobs = {
                let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                let n = q.0.len().min(MAX_BATCH);
                q.0.drain(..n).collect::<Vec<_>>()
            };
            if jobs.is_empty() {
                return;
            }
            commit_jobs(&mut **backend, jobs, shared);
        }
    }
}

/// A handle on the store; clones share one writer.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    /// The sequence number of the last job queued; held while a job is queued, so that
    /// queue order is sequence order.
    last_seq: Mutex<u64>,
    engine: Engine,
    durable: tokio::sync::watch::Receiver<u64>,
    backend: Connection,
    shared: Arc<Shared>,
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

    /// A store in memory (an SQLite `:memory:` database, no file, no redo log), for a
    /// process whose state need not outlive it (a handler worker).
    ///
    /// # Errors
    /// [`StoreError`] when SQLite cannot set it up.
    pub fn open_memory() -> Result<Store, StoreError> {
        let backend = sqlite::SqliteBackend::open(Path::new(":memory:"))?;
        Ok(Store::start(Box::new(backend), Sync::Os))
    }

    /// As [`Store::open_sqlite`], with the given [`Sync`]: whether each append to the
    /// redo log (`path` with `.redo` appended) is flushed before it is acknowledged. What
    /// the log holds from before is replayed into the database first.
    ///
    /// The store holds the database file's lock while it is open: a second process (a
    /// second container on the same data directory) cannot open it meanwhile, and gets a
    /// [`StoreError::Open`] that says so.
    ///
    /// # Errors
    /// [`StoreError`] when the file cannot be opened or its schema created.
    pub fn open_sqlite_with(path: &Path, sync: Sync) -> Result<Store, StoreError> {
        if path == Path::new(":memory:") {
            return Store::open_memory();
        }
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                    what: dir.display().to_string(),
                    why: e.to_string(),
                })?;
            }
        }
        let backend = redo::RedoBackend::open(path, sync)?;
        Ok(Store::start(Box::new(backend), sync))
    }

    fn start(backend: Box<dyn Backend>, sync: Sync) -> Store {
        let backend: Connection = Arc::new(Mutex::new(backend));
        let (durable_tx, durable) = tokio::sync::watch::channel(0u64);
        let shared = Arc::new(Shared {
            commits: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            durable: durable_tx,
        });
        let engine = match sync {
            Sync::Disk => {
                let (tx, rx) = mpsc::channel::<Job>();
                let (s, b) = (shared.clone(), backend.clone());
                let handle = std::thread::Builder::new()
                    .name("osprey-store".into())
                    .spawn(move || write_loop(&b, &rx, &s))
                    .expect("spawning the store writer thread");
                Engine::Thread {
                    jobs: Mutex::new(Some(tx)),
                    handle: Mutex::new(Some(handle)),
                }
            }
            Sync::Os => Engine::Inline(Arc::new(Combiner {
                queue: Mutex::new((Vec::new(), false)),
                backend: backend.clone(),
            })),
        };
        Store {
            inner: Arc::new(Inner {
                last_seq: Mutex::new(0),
                engine,
                durable,
                backend,
                shared,
            }),
        }
    }

    /// Queues `writes` (applied atomically, after every write queued before them) and
    /// returns a future that resolves once they are durable.
    pub fn submit(&self, writes: Vec<Write>) -> Commit {
        let (done, rx) = oneshot::channel();
        let Ok(mut last) = self.inner.last_seq.lock() else {
            return Commit::closed();
        };
        *last += 1;
        let seq = *last;
        let job = Job { seq, writes, done };
        let (sent, combiner) = match &self.inner.engine {
            Engine::Thread { jobs, .. } => {
                let sent = jobs
                    .lock()
                    .ok()
                    .and_then(|j| j.as_ref().map(|tx| tx.send(job).is_ok()))
                    .unwrap_or(false);
                (sent, None)
            }
            Engine::Inline(c) => {
                let sent = match c.queue.lock() {
                    Ok(mut q) if !q.1 => {
                        q.0.push(job);
                        true
                    }
                    _ => false,
                };
                (sent, Some((c.clone(), self.inner.shared.clone())))
            }
        };
        drop(last);
        let combiner = combiner.filter(|_| sent);
        Commit {
            seq,
            rx: sent.then_some(rx),
            // Let the other requests this thread has ready queue their writes first, so
            // that one transaction takes them all (see `Commit::poll`).
            pause: combiner
                .is_some()
                .then(|| Box::pin(tokio::task::yield_now()) as Pause),
            combiner,
        }
    }

    /// Resolves once the write whose [`Commit::seq`] is `seq`, and every write queued
    /// before it, has been committed (or has failed: its own [`Commit`] says which).
    /// For work that must follow a write without holding its `Commit`, such as a
    /// notification of a change.
    pub fn after(&self, seq: u64) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.inner.durable.clone();
        let combiner = match &self.inner.engine {
            Engine::Inline(c) => Some((c.clone(), self.inner.shared.clone())),
            Engine::Thread { .. } => None,
        };
        async move {
            if let Some((c, shared)) = combiner {
                c.drain(&shared);
            }
            let _ = rx.wait_for(|&d| d >= seq).await;
        }
    }

    /// Every record of `kind`, in key order.
    ///
    /// # Errors
    /// [`StoreError`] when the database cannot be read or a record is damaged.
    pub fn load(&self, kind: &str) -> Result<Vec<Record>, StoreError> {
        let mut backend = self.inner.backend.lock().map_err(|_| StoreError::Closed)?;
        backend.load(kind)
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
        match &self.inner.engine {
            Engine::Thread { jobs, handle } => {
                if let Ok(mut j) = jobs.lock() {
                    j.take();
                }
                let h = handle.lock().ok().and_then(|mut h| h.take());
                if let Some(h) = h {
                    let _ = h.join();
                }
            }
            Engine::Inline(c) => {
                if let Ok(mut q) = c.queue.lock() {
                    q.1 = true;
                }
                c.drain(&self.inner.shared);
            }
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

fn write_loop(backend: &Connection, rx: &mpsc::Receiver<Job>, shared: &Shared) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        let mut writes = jobs[0].writes.len();
        while writes < MAX_BATCH {
            match rx.try_recv() {
                Ok(j) => {
                    writes += j.writes.len();
                    jobs.push(j);
                }
                Err(_) => break,
            }
        }
        // As in `Combiner::drain`: a panic elsewhere while the lock was held leaves the
        // connection usable (a failed transaction is rolled back by `commit`).
        let mut b = backend.lock().unwrap_or_else(PoisonError::into_inner);
        commit_jobs(&mut **b, jobs, shared);
    }
}

/// Resolves when the writes it was returned for are durable.
#[must_use = "a write is only durable once its Commit resolves"]
pub struct Commit {
    seq: u64,
    rx: Option<oneshot::Receiver<Result<(), StoreError>>>,
    /// For [`Sync::Os`]: the combiner this commit may have to run.
    combiner: Option<(Arc<Combiner>, Arc<Shared>)>,
    /// For [`Sync::Os`]: one yield to the runtime before committing.
    pause: Option<Pause>,
}

/// A yield to the runtime: `tokio::task::yield_now`, which reschedules the task only
/// after the runtime has looked for I/O, so requests that arrived meanwhile run first.
type Pause = Pin<Box<dyn Future<Output = ()> + Send + std::marker::Sync>>;

impl Commit {
    fn closed() -> Self {
        Commit {
            seq: 0,
            rx: None,
            combiner: None,
            pause: None,
        }
    }

    /// The write's place in the store's queue (see [`Store::after`]).
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl Future for Commit {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Under load the requests of one runtime thread arrive together: yielding once
        // lets each queue its writes before the first of them commits, so one
        // transaction (one WAL append, one set of file locks) serves them all.
        if let Some(pause) = self.pause.as_mut() {
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.pause = None;
        }
        if let Some((c, shared)) = self.combiner.take() {
            c.drain(&shared);
        }
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
