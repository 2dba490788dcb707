//! A redo log in front of SQLite: a commit appends its writes to a log file, one record per
//! group commit, and the log is compacted into SQLite now and then.
//!
//! Committing to SQLite writes every B-tree page the group touched into its WAL (4 KB a
//! page, however small the change) and updates the WAL index; appending to the log writes
//! the changed records alone, in one `pwrite`. The log is folded into SQLite (latest value
//! per record, one transaction) when it passes [`COMPACT_AT`] bytes, before a read, and when
//! the store is dropped; then it starts again after its header.
//!
//! The file: a header (`OSPREDO1`, then the *generation*, a `u64`), then records, each
//! `len: u32, crc: u32, payload` (little-endian; `crc` is CRC-32 of the generation's bytes
//! and the payload). A payload is a `u32` count of writes, each `1, kind, key, value`
//! (put) or `2, kind, key` (delete), every string or value a `u32` length and its bytes.
//! The file is given its room up front (`fallocate`), so the records are written over
//! zeros, or over the records of an earlier generation, which fail their CRC under the
//! current one: the log ends at the first record that does not check out.
//!
//! Crashes. A record is acknowledged only once `pwrite` has returned (and, with
//! [`Sync::Disk`], `fdatasync`): a process killed mid-append leaves a torn record, which
//! fails its length or CRC check when the log is read at the next open, as does anything
//! after it (nothing after it was acknowledged, since records are written in order).
//! Compaction first commits the records and the next generation number to SQLite (with
//! `synchronous = FULL`), then writes that generation into the log's header: a log whose
//! generation is older than SQLite's was already compacted (a crash between the two steps)
//! and is ignored, so no record is applied twice over a newer value.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::sqlite::SqliteBackend;
use crate::{Backend, Record, StoreError, Sync, Write};

/// The log is compacted into SQLite once it is this long.
pub(crate) const COMPACT_AT: u64 = 8 << 20;
/// The room the log file is given up front: a compaction's worth and a margin for the
/// group that crosses it.
const PREALLOCATE: u64 = COMPACT_AT + (1 << 20);

const MAGIC: &[u8; 8] = b"OSPREDO1";
const HEADER: u64 = 16;
const PUT: u8 = 1;
const DELETE: u8 = 2;

/// The latest value of each record changed since the last compaction (`None`: deleted).
type Pending = BTreeMap<(String, String), Option<Vec<u8>>>;

/// SQLite with a redo log in front.
pub(crate) struct RedoBackend {
    base: SqliteBackend,
    file: File,
    path: PathBuf,
    sync: Sync,
    generation: u64,
    /// The log's length: where the next record goes.
    len: u64,
    pending: Pending,
    /// A record reused for encoding.
    buf: Vec<u8>,
    /// Set when a compaction committed the next generation to SQLite but could not write
    /// it into the log's header: a record appended now would be under a header the next
    /// open ignores, so none is until a compaction succeeds.
    broken: bool,
}

fn io_err(what: &Path, e: &std::io::Error) -> StoreError {
    StoreError::Database(format!("redo log {}: {e}", what.display()))
}

impl RedoBackend {
    /// Opens the database at `db` and its log (`db` with `.redo` appended), replays what the
    /// log holds for the database's generation, and compacts it.
    pub(crate) fn open(db: &Path, sync: Sync) -> Result<Self, StoreError> {
        let mut base = SqliteBackend::open(db)?;
        let mut path = db.as_os_str().to_owned();
        path.push(".redo");
        let path = PathBuf::from(path);
        let open_err = |e: std::io::Error| StoreError::Open {
            what: path.display().to_string(),
            why: e.to_string(),
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(open_err)?;
        let generation = base.generation()?;
        let size = file.metadata().map_err(open_err)?.len();
        let mut source = FileSource {
            file: &file,
            size,
            buf: Vec::new(),
            base: 0,
        };
        let replayed = replay(&mut source, generation).map_err(|why| StoreError::Open {
            what: path.display().to_string(),
            why,
        })?;
        let mut redo = RedoBackend {
            base,
            file,
            path,
            sync,
            generation,
            len: HEADER,
            pending: replayed.pending,
            buf: Vec::new(),
            broken: false,
        };
        if !(replayed.current && replayed.records == 0) {
            // Fold what was replayed into SQLite and start the log again under the next
            // generation (which also disowns a torn tail, and any older log).
            redo.compact()?;
            if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
                // The log's directory entry, for a log created just now.
                File::open(dir)
                    .and_then(|d| d.sync_all())
                    .map_err(|e| io_err(dir, &e))?;
            }
        }
        redo.preallocate();
        Ok(redo)
    }

    /// Gives the log its room up front (`fallocate`): a flush after a write inside
    /// the file's allocated size need not also write the file's new size and extents,
    /// which an append's does (on this machine's disk, `fdatasync` after an overwrite took
    /// 90-100 us against 115-135 us after an append; docs/benchmarks.md). Best effort: on a
    /// file system that cannot, the log grows by appends.
    fn preallocate(&self) {
        if self.file.metadata().is_ok_and(|m| m.len() >= PREALLOCATE) {
            return;
        }
        let flags = rustix::fs::FallocateFlags::empty();
        if let Err(e) = rustix::fs::fallocate(&self.file, flags, 0, PREALLOCATE) {
            tracing::debug!(error = %e, "redo log not preallocated");
        }
    }

    /// Commits the pending records and the next generation to SQLite, then writes that
    /// generation into the log's header: the log reads as empty from then on.
    fn compact(&mut self) -> Result<(), StoreError> {
        let next = self.generation + 1;
        let writes: Vec<Write> = std::mem::take(&mut self.pending)
            .into_iter()
            .map(|((kind, key), value)| match value {
                Some(value) => Write::Put { kind, key, value },
                None => Write::Delete { kind, key },
            })
            .collect();
        self.base.commit_generation(&writes, next)?;
        self.generation = next;
        let mut header = [0u8; HEADER as usize];
        header[..8].copy_from_slice(MAGIC);
        header[8..].copy_from_slice(&next.to_le_bytes());
        // The records after the header are now of an older generation: they fail their
        // checks under this one, so the log reads as empty until it is written again.
        let reset = (|| {
            self.file.write_all_at(&header, 0)?;
            self.file.sync_data()
        })();
        match reset {
            Ok(()) => {
                self.len = HEADER;
                self.broken = false;
                Ok(())
            }
            Err(e) => {
                // SQLite holds everything; the log's content is of an older generation and
                // is ignored at the next open, but nothing may be appended to it now.
                self.broken = true;
                Err(io_err(&self.path, &e))
            }
        }
    }

    fn append(&mut self, writes: &[Write]) -> Result<(), StoreError> {
        if self.broken {
            // Try to start a clean log (this compacts nothing new: pending is empty).
            self.compact()?;
        }
        encode(&mut self.buf, self.generation, writes);
        let written = (|| {
            self.file.write_all_at(&self.buf, self.len)?;
            if self.sync == Sync::Disk {
                self.file.sync_data()?;
            }
            Ok::<(), std::io::Error>(())
        })();
        if let Err(e) = written {
            // What part of the record reached the file fails its checks, and the next
            // record is written over it.
            return Err(io_err(&self.path, &e));
        }
        self.len += self.buf.len() as u64;
        Ok(())
    }
}

impl Backend for RedoBackend {
    fn commit(&mut self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.append(&writes)?;
        for w in writes {
            match w {
                Write::Put { kind, key, value } => self.pending.insert((kind, key), Some(value)),
                Write::Delete { kind, key } => self.pending.insert((kind, key), None),
            };
        }
        if self.len >= COMPACT_AT {
            // The commit is in the log already: a failed compaction is retried later.
            if let Err(e) = self.compact() {
                tracing::warn!(error = %e, "redo log compaction failed; retried at the next commit");
            }
        }
        Ok(())
    }

    fn load(&mut self, kind: &str) -> Result<Vec<Record>, StoreError> {
        if !self.pending.is_empty() {
            self.compact()?;
        }
        self.base.load(kind)
    }
}

impl Drop for RedoBackend {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            if let Err(e) = self.compact() {
                tracing::warn!(error = %e, "redo log not compacted at close; replayed at the next open");
            }
        }
    }
}

/// Appends `writes` to `out` (cleared first) as one record of `generation`.
fn encode(out: &mut Vec<u8>, generation: u64, writes: &[Write]) {
    fn field(out: &mut Vec<u8>, bytes: &[u8]) {
        let len = u32::try_from(bytes.len()).expect("a record field under 4 GiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out.clear();
    out.extend_from_slice(&[0; 8]);
    let count = u32::try_from(writes.len()).expect("under 4 billion writes");
    out.extend_from_slice(&count.to_le_bytes());
    for w in writes {
        match w {
            Write::Put { kind, key, value } => {
                out.push(PUT);
                field(out, kind.as_bytes());
                field(out, key.as_bytes());
                field(out, value);
            }
            Write::Delete { kind, key } => {
                out.push(DELETE);
                field(out, kind.as_bytes());
                field(out, key.as_bytes());
            }
        }
    }
    let len = u32::try_from(out.len() - 8).expect("a record under 4 GiB");
    let crc = checksum(generation, &out[8..]);
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..8].copy_from_slice(&crc.to_le_bytes());
}

fn checksum(generation: u64, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&generation.to_le_bytes());
    h.update(payload);
    h.finalize()
}

/// Bytes of a log, read where asked.
trait Source {
    /// The bytes `at..at + n`, or `None` past the end.
    fn get(&mut self, at: u64, n: usize) -> Option<&[u8]>;
}

impl Source for &[u8] {
    fn get(&mut self, at: u64, n: usize) -> Option<&[u8]> {
        let at = usize::try_from(at).ok()?;
        <[u8]>::get(self, at..at.checked_add(n)?)
    }
}

/// A log file read ahead in chunks (a preallocated log is mostly room, read only as far as
/// its records go).
struct FileSource<'f> {
    file: &'f File,
    size: u64,
    buf: Vec<u8>,
    /// The file offset of `buf[0]`.
    base: u64,
}

impl Source for FileSource<'_> {
    fn get(&mut self, at: u64, n: usize) -> Option<&[u8]> {
        const CHUNK: u64 = 256 << 10;
        let end = at.checked_add(n as u64)?;
        if end > self.size {
            return None;
        }
        if at < self.base || end > self.base + self.buf.len() as u64 {
            let want = (n as u64).max(CHUNK).min(self.size - at);
            self.buf.resize(usize::try_from(want).ok()?, 0);
            self.file.read_exact_at(&mut self.buf, at).ok()?;
            self.base = at;
        }
        let from = usize::try_from(at - self.base).ok()?;
        self.buf.get(from..from + n)
    }
}

/// What a log held.
struct Replayed {
    /// The latest value of each record it changed.
    pending: Pending,
    /// Records read.
    records: usize,
    /// The log is of the database's generation (not empty, older, or newer).
    current: bool,
}

/// The latest value of each record in `log` when it is of `generation` (nothing for an
/// empty log or one of an older generation), up to its first torn or damaged record.
///
/// # Errors
/// A file that is not a redo log, or one of a newer generation than the database's (the
/// log and the database do not belong together).
fn replay(log: &mut impl Source, generation: u64) -> Result<Replayed, String> {
    let mut replayed = Replayed {
        pending: Pending::new(),
        records: 0,
        current: false,
    };
    let Some(header) = log.get(0, HEADER as usize) else {
        // Empty, or a header torn while the log was created: nothing was appended.
        return Ok(replayed);
    };
    if &header[..8] != MAGIC {
        return Err("not an Osprey redo log".into());
    }
    let logged = u64::from_le_bytes(header[8..16].try_into().expect("eight bytes"));
    if logged < generation {
        return Ok(replayed);
    }
    if logged > generation {
        return Err(format!(
            "the redo log is of generation {logged}, newer than the database's {generation}: \
             they do not belong together"
        ));
    }
    replayed.current = true;
    let mut at = HEADER;
    while let Some(len) = log
        .get(at, 4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")))
    {
        let Some((len, changes)) = log
            .get(at, 8 + len as usize)
            .and_then(|bytes| record(bytes, 0, generation))
        else {
            break;
        };
        at += 8 + len as u64;
        replayed.records += 1;
        for (kind, key, value) in changes {
            replayed.pending.insert((kind, key), value);
        }
    }
    Ok(replayed)
}

/// One change of a record: kind, key and the new value (`None`: deleted).
type Change = (String, String, Option<Vec<u8>>);

/// The record at `at`: its payload's length and its changes; `None` when it is torn or
/// damaged (or the log ends).
fn record(bytes: &[u8], at: usize, generation: u64) -> Option<(usize, Vec<Change>)> {
    let word = |i: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?))
    };
    let len = word(at)? as usize;
    let crc = word(at + 4)?;
    let payload = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
    if checksum(generation, payload) != crc {
        return None;
    }
    let mut p = Cursor(payload);
    let count = p.u32()?;
    let mut changes = Vec::new();
    for _ in 0..count {
        let tag = p.byte()?;
        let kind = String::from_utf8(p.field()?.to_vec()).ok()?;
        let key = String::from_utf8(p.field()?.to_vec()).ok()?;
        let value = match tag {
            PUT => Some(p.field()?.to_vec()),
            DELETE => None,
            _ => return None,
        };
        changes.push((kind, key, value));
    }
    Some((len, changes))
}

/// Reads a payload front to back.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn field(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn puts(n: usize) -> Vec<Write> {
        (0..n)
            .map(|i| Write::put("k", format!("{i}"), vec![i as u8; i]))
            .collect()
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let mut buf = Vec::new();
        let writes = vec![
            Write::put("counter", "a", b"<v>1</v>".to_vec()),
            Write::delete("counter", "b"),
            Write::put("", "", Vec::new()),
        ];
        encode(&mut buf, 7, &writes);
        let (len, changes) = record(&buf, 0, 7).unwrap();
        assert_eq!(len + 8, buf.len());
        assert_eq!(
            changes,
            vec![
                ("counter".into(), "a".into(), Some(b"<v>1</v>".to_vec())),
                ("counter".into(), "b".into(), None),
                (String::new(), String::new(), Some(Vec::new())),
            ]
        );
        // Another generation's record does not check out.
        assert_eq!(record(&buf, 0, 8), None);
    }

    #[test]
    fn every_torn_or_flipped_record_is_refused() {
        let mut buf = Vec::new();
        encode(&mut buf, 1, &puts(4));
        for cut in 0..buf.len() {
            assert_eq!(record(&buf[..cut], 0, 1), None, "cut at {cut}");
        }
        for i in 0..buf.len() {
            let mut bad = buf.clone();
            bad[i] ^= 0x10;
            assert_eq!(record(&bad, 0, 1), None, "byte {i} flipped");
        }
    }

    #[test]
    fn replay_keeps_the_latest_value_and_stops_at_a_torn_tail() {
        let mut log = MAGIC.to_vec();
        log.extend_from_slice(&3u64.to_le_bytes());
        let mut buf = Vec::new();
        for writes in [
            vec![Write::put("k", "a", b"1".to_vec())],
            vec![Write::put("k", "a", b"2".to_vec()), Write::delete("k", "b")],
            vec![Write::put("k", "a", b"3".to_vec())],
        ] {
            encode(&mut buf, 3, &writes);
            log.extend_from_slice(&buf);
        }
        let read = |bytes: &[u8], generation| replay(&mut &bytes[..], generation);
        let torn = log.len() - 2;
        let replayed = read(&log[..torn], 3).unwrap();
        assert_eq!(replayed.records, 2);
        assert_eq!(
            replayed.pending.into_iter().collect::<Vec<_>>(),
            vec![
                (("k".into(), "a".into()), Some(b"2".to_vec())),
                (("k".into(), "b".into()), None),
            ]
        );
        assert_eq!(read(&log, 3).unwrap().records, 3);
        // Room after the records (a preallocated log), or records of an older generation
        // (a log started again after a compaction), end the log as a torn tail does.
        let mut roomy = log.clone();
        roomy.resize(log.len() + 4096, 0);
        assert_eq!(read(&roomy, 3).unwrap().records, 3);
        let mut restarted = log.clone();
        restarted[8..16].copy_from_slice(&4u64.to_le_bytes());
        let fresh = read(&restarted, 4).unwrap();
        assert!(fresh.current && fresh.records == 0);
        // A log of an older generation was compacted already; a newer one is refused.
        let old = read(&log, 4).unwrap();
        assert!(!old.current && old.pending.is_empty());
        assert!(read(&log, 2).is_err());
        assert!(read(b"something else entirely", 3).is_err());
        assert!(!read(&log[..10], 3).unwrap().current);
    }
}
