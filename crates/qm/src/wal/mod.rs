//! The write-ahead log of persistent messages.
//!
//! # On-disk format
//!
//! Everything lives in `<data dir>/log/`:
//!
//! * `seg-<16 hex digits>.wal` — log segments, numbered from 0 upwards. A segment is
//!   preallocated to `segment_size` bytes (or is a recycled older segment) and filled from
//!   offset 0 with records. A new segment's blocks are written with zeros a MiB at a time
//!   just ahead of the log's end, so that a commit's fdatasync overwrites allocated blocks
//!   instead of allocating them (a journal commit per sync otherwise).
//! * `ckpt-<16 hex digits>.ckpt` — a checkpoint: every live persistent message as of the end of
//!   segment N-1, where N is the number in the name. Recovery loads it, then replays
//!   segments N, N+1, …
//! * `free-*.wal` — old segments kept for reuse, or zero-filled spares made in the background
//!   once the log has rolled (overwriting allocated space syncs faster than appending);
//!   `*.tmp` — unfinished checkpoint or spare, deleted at open.
//!
//! A **record** is `len: u32 LE`, `crc: u32 LE`, then `len` payload bytes, with
//! `crc = crc32(segment number u64 LE ‖ len ‖ payload)`. Checkpoint files use the number
//! `u64::MAX`. A zero header (`len = 0, crc = 0`) or the end of file ends a file cleanly. A
//! payload starts with its type byte:
//!
//! * `1` COMMIT — `count: u32`, then `count` ops: `1` PUT (`seq u64, expire_ms u64, queue
//!   (u16 len + UTF-8), message` in the [`crate::codec`] encoding), `2` REMOVE (`seq u64`) or
//!   `3` BACKOUT (`seq u64, count u32`: the message's BackoutCount, written when a get under
//!   syncpoint takes it, like MQ's HardenGetBackout).
//!   One record is one unit of work (or one put/get outside syncpoint): all of it or none.
//! * `2` END — the segment is closed; the log continues in the next segment.
//! * `10` CKPT_HEAD — `next_segment u64, next_seq u64, count u64` (first record of a checkpoint).
//! * `11` CKPT_END — `count u64` (last record of a checkpoint; its absence = invalid checkpoint).
//!
//! # Invariants
//!
//! 1. A caller is told "committed" only after the record and everything before it were
//!    written and `fdatasync` returned success (group commit: every request queued while the
//!    previous batch was syncing is written in one batch and shares one sync). A caller of
//!    [`Wal::commit_then`] is not waiting: its completion runs after that point.
//! 2. Within a file, valid records form a contiguous prefix. After a failed write the next
//!    batch overwrites from the failed batch's start; after a failed sync the batch's first
//!    header is zeroed and synced (or, if that fails too, the log refuses further work) so a
//!    failed commit can never come back at recovery.
//! 3. Segment N+1 is started only after segment N was closed with an END record and synced,
//!    or, at open, cut (truncated) at its valid end. A segment that is not the last one and
//!    has neither means lost data: recovery reports it.
//! 4. A checkpoint is written to `.tmp`, synced, renamed and the directory synced before any
//!    segment it covers is recycled or deleted.
//! 5. Recovery = newest checkpoint + replay of later segments until each file's first invalid
//!    record. An invalid tail of the last segment is a torn write of an unacknowledged batch:
//!    it is dropped and logged, and the segment is truncated at its valid end (so complete
//!    records of that batch behind a torn one can never be read later); new records go to a
//!    new segment.
//! 6. Sequence numbers (`seq`) are unique for the life of the data directory: after recovery
//!    they continue above every sequence number still referenced.
//! 7. The log index ([`LogIndex`]) names, for every live persistent message, a record that
//!    holds its PUT in a file that exists: an entry is added only after its record is synced,
//!    a checkpoint (one COMMIT record per message) moves the entries it copied only once it
//!    is durable, and files are released only after that, with no reader inside one.

mod format;
mod index;
mod prealloc;
mod recover;
mod writer;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use crate::error::{QmError, Result};
use crate::fs::Filesystem;
use crate::model::{Message, MsgId};

pub use format::Op;
pub(crate) use index::LogIndex;

/// Log tuning.
#[derive(Debug, Clone)]
pub struct WalConfig {
    /// Size a segment is preallocated to and rolled at.
    pub segment_size: u64,
    /// Log bytes written since the last checkpoint before a new one is considered (it is
    /// taken when also more than the live data).
    pub checkpoint_min_bytes: u64,
    /// Old segments kept for reuse.
    pub free_segments: usize,
}

impl Default for WalConfig {
    fn default() -> Self {
        WalConfig {
            segment_size: 64 << 20,
            checkpoint_min_bytes: 128 << 20,
            free_segments: 2,
        }
    }
}

/// A persistent message as recovered.
#[derive(Debug, Clone)]
pub struct LiveMsg {
    /// Its queue.
    pub queue: String,
    /// Unix-millisecond expiry, 0 = never.
    pub expire_ms: u64,
    /// The message.
    pub msg: Message,
}

/// A recovered persistent message as its queue indexes it; the message itself stays in
/// the log until read ([`LogIndex::read`]).
#[derive(Debug, Clone)]
pub struct LiveSummary {
    /// Its queue.
    pub queue: Arc<str>,
    /// Unix-millisecond expiry, 0 = never.
    pub expire_ms: u64,
    /// MQMD Priority.
    pub priority: u8,
    /// MQMD MsgId.
    pub msg_id: MsgId,
    /// MQMD CorrelId.
    pub correl_id: MsgId,
    /// MQMD GroupId.
    pub group_id: MsgId,
    /// MQMD BackoutCount, as last logged.
    pub backout_count: u32,
    /// Body length in bytes.
    pub body_len: usize,
}

/// What recovery found.
pub struct Recovered {
    /// Live persistent messages by sequence number (= original put order).
    pub msgs: BTreeMap<u64, LiveSummary>,
    /// First sequence number free for use.
    pub next_seq: u64,
    /// Bytes after the log's valid end that were not a clean end (a torn or corrupt tail),
    /// when there were any.
    pub dropped_tail: Option<u64>,
    /// Where each live message is, kept up to date by the log writer.
    pub(crate) index: Arc<LogIndex>,
}

impl Recovered {
    /// Read back the live message `seq` from the log.
    pub fn message(&self, seq: u64) -> Result<LiveMsg> {
        self.index.read(seq)
    }
}

/// Counters for benchmarks and tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct WalStats {
    /// fdatasync calls made for commits.
    pub syncs: u64,
    /// Commit records written.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
}

#[derive(Default)]
struct Counters {
    syncs: AtomicU64,
    records: AtomicU64,
    bytes: AtomicU64,
    checkpoints: AtomicU64,
}

type Outcome = Result<(), QmError>;

/// Where a waiting committer gets its answer.
struct Done {
    slot: Mutex<Option<Outcome>>,
    cv: Condvar,
}

/// What runs on the writer thread once a record is synced (or failed): see
/// [`Wal::commit_then`].
pub(crate) type Completion = Box<dyn FnOnce(Result<()>) + Send>;

/// Who learns a record's outcome.
enum Notify {
    /// Nobody ([`Wal::submit`]).
    Nobody,
    /// A thread blocked in [`Wal::commit`].
    Waiter(Arc<Done>),
    /// A completion run by the writer thread ([`Wal::commit_then`]).
    Then(Completion),
}

struct Req {
    ops: Vec<Op>,
    done: Notify,
}

#[derive(Default)]
struct Inbox {
    reqs: Vec<Req>,
    stop: bool,
}

struct Shared {
    inbox: Mutex<Inbox>,
    wake: Condvar,
    counters: Counters,
}

/// Handle to the log; the writer thread runs until [`Wal::shutdown`] or drop.
pub struct Wal {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Wal {
    /// Recover the log in `dir` and start its writer thread.
    pub fn open(fs: Arc<dyn Filesystem>, dir: &Path, cfg: WalConfig) -> Result<(Wal, Recovered)> {
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox::default()),
            wake: Condvar::new(),
            counters: Counters::default(),
        });
        let (w, rec) = recover::open(fs, dir, cfg, shared.clone())?;
        let thread = std::thread::Builder::new()
            .name("qm-log-writer".into())
            .spawn(move || w.run())
            .map_err(|e| QmError::io("log writer thread", e))?;
        Ok((
            Wal {
                shared,
                thread: Mutex::new(Some(thread)),
            },
            rec,
        ))
    }

    /// Make `ops` durable as one record; returns once synced (group commit).
    pub fn commit(&self, ops: Vec<Op>) -> Result<()> {
        let done = Arc::new(Done {
            slot: Mutex::new(None),
            cv: Condvar::new(),
        });
        {
            let mut ib = self.shared.inbox.lock();
            if ib.stop {
                return Err(QmError::ShutDown);
            }
            ib.reqs.push(Req {
                ops,
                done: Notify::Waiter(done.clone()),
            });
        }
        self.shared.wake.notify_one();
        let mut slot = done.slot.lock();
        loop {
            if let Some(r) = slot.take() {
                return r;
            }
            done.cv.wait(&mut slot);
        }
    }

    /// Make `ops` durable as one record without waiting: `then` runs with the outcome on the
    /// log writer thread once the record's batch is synced (or failed), in log order; at
    /// once on this thread when the log is shut down. A thread that would otherwise block
    /// in [`Wal::commit`] only to act on the outcome (answer a network client, deliver a
    /// message) hands that work to the writer instead, which does it without a thread
    /// switch; meanwhile the next batch gathers. `then` must not block: the next batch is
    /// written after it, so it must never call [`Wal::commit`] (that would wait for the
    /// writer running it); it may call this again, which joins the next batch.
    pub(crate) fn commit_then(&self, ops: Vec<Op>, then: Completion) {
        let mut ib = self.shared.inbox.lock();
        if ib.stop {
            drop(ib);
            return then(Err(QmError::ShutDown));
        }
        ib.reqs.push(Req {
            ops,
            done: Notify::Then(then),
        });
        drop(ib);
        self.shared.wake.notify_one();
    }

    /// Log `ops` without waiting (used for removals nobody waits on, e.g. expired messages).
    pub fn submit(&self, ops: Vec<Op>) {
        let mut ib = self.shared.inbox.lock();
        if !ib.stop {
            ib.reqs.push(Req {
                ops,
                done: Notify::Nobody,
            });
            drop(ib);
            self.shared.wake.notify_one();
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> WalStats {
        let c = &self.shared.counters;
        WalStats {
            syncs: c.syncs.load(Ordering::Relaxed),
            records: c.records.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            checkpoints: c.checkpoints.load(Ordering::Relaxed),
        }
    }

    /// Write what is queued, then stop the writer thread.
    pub fn shutdown(&self) {
        self.shared.inbox.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.lock().take()
            // A completion may drop the last handle on the queue manager, and so the log,
            // on the writer thread itself: it then ends once it has written what is queued.
            && t.thread().id() != std::thread::current().id()
        {
            let _ = t.join();
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests;
