//! The log writer thread: group commit, segment roll, checkpoint scheduling.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::format::{self, Op};
use super::index::{FileId, LiveEntry, Loc, LogIndex};
use super::recover::{seg_path, write_checkpoint};
use super::{Notify, Outcome, Req, Shared};
use crate::error::QmError;
use crate::fs::{Filesystem, LogFile};

/// Bodies longer than this are written straight from their `Bytes`, never copied.
const DIRECT_WRITE: usize = 64 * 1024;

/// State owned by the writer thread.
pub(super) struct Writer {
    pub fs: Arc<dyn Filesystem>,
    pub dir: PathBuf,
    pub cfg: super::WalConfig,
    pub shared: Arc<Shared>,
    pub seg: u64,
    pub file: Box<dyn LogFile>,
    pub offset: u64,
    /// Where the live persistent messages are, for checkpoints and paged-out reads.
    pub index: Arc<LogIndex>,
    pub live_bytes: u64,
    pub max_seq: u64,
    pub since_ckpt: u64,
    /// About how much the newest checkpoint holds (what it copied, as counted in `live_bytes`).
    pub ckpt_bytes: u64,
    pub free: Arc<Mutex<Vec<PathBuf>>>,
    pub ckpt_busy: Arc<AtomicBool>,
    pub ckpt_thread: Option<JoinHandle<()>>,
    /// A spare segment is being zero-filled.
    pub filling: Arc<AtomicBool>,
    /// Set when a failed sync could not be neutralised: nothing can be promised any more.
    pub poisoned: Option<Failure>,
    pub buf: Vec<u8>,
    /// The segment's blocks below this offset are written (a fresh segment is only sized,
    /// so its blocks are allocated as the log reaches them; see [`Writer::zero_ahead`]).
    pub zeroed_to: u64,
    /// Several segments survived the last run: fold them into a checkpoint once running.
    pub fold_at_start: bool,
}

/// How often an idle writer looks again whether dead log can be reclaimed (a checkpoint
/// may still be running).
const RECLAIM_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// How far ahead of the log's end a fresh segment is zero-filled at a time.
const ZERO_AHEAD: u64 = 1 << 20;
static ZEROS: [u8; ZERO_AHEAD as usize] = [0; ZERO_AHEAD as usize];

/// A failed log step. A group commit hands the same failure to every request of the batch,
/// so the filesystem's error is shared rather than turned into text.
#[derive(Clone, Debug)]
pub(super) struct Failure {
    what: &'static str,
    source: Arc<io::Error>,
    /// The log cannot be trusted any more: reported as a log failure whatever the cause.
    poisoned: bool,
}

impl Failure {
    fn step(what: &'static str, e: io::Error) -> Failure {
        Failure {
            what,
            source: Arc::new(e),
            poisoned: false,
        }
    }

    fn poison(what: &'static str, e: io::Error) -> Failure {
        Failure {
            poisoned: true,
            ..Failure::step(what, e)
        }
    }

    fn error(&self) -> QmError {
        if self.poisoned {
            QmError::Log {
                what: self.what.to_string(),
                source: self.source.clone(),
            }
        } else {
            QmError::write_failed(self.what, self.source.clone())
        }
    }
}

/// What a message weighs in a checkpoint: its body plus an allowance for the descriptor.
pub(super) fn entry_size(body_len: usize) -> u32 {
    u32::try_from(body_len + 256).unwrap_or(u32::MAX)
}

impl Writer {
    pub fn run(mut self) {
        if std::mem::take(&mut self.fold_at_start) {
            self.start_checkpoint();
        }
        loop {
            let mut ib = self.shared.inbox.lock();
            while ib.reqs.is_empty() && !ib.stop {
                if !self.dead_log() {
                    self.shared.wake.wait(&mut ib);
                } else if self.shared.wake.wait_for(&mut ib, RECLAIM_POLL).timed_out()
                    && self.reclaim_due()
                {
                    break;
                }
            }
            if ib.reqs.is_empty() {
                if ib.stop {
                    break;
                }
                drop(ib);
                self.reclaim();
                continue;
            }
            let mut batch = std::mem::take(&mut ib.reqs);
            drop(ib);
            let outcome = self.write_batch(&batch);
            if let Ok(at) = &outcome {
                let seg = self.seg;
                let index = self.index.clone();
                let mut live = index.live.lock();
                for (r, (off, len)) in batch.iter_mut().zip(at) {
                    let ops = std::mem::take(&mut r.ops);
                    self.apply(&mut live, ops, FileId::Seg(seg), *off, *len);
                }
            }
            let result = || -> Outcome { outcome.as_ref().map(|_| ()).map_err(Failure::error) };
            // Blocked committers first (they are other threads, which can run meanwhile),
            // then the completions, here, in log order.
            let mut then = Vec::new();
            for r in batch {
                match r.done {
                    Notify::Nobody => {}
                    Notify::Waiter(d) => {
                        *d.slot.lock() = Some(result());
                        d.cv.notify_one();
                    }
                    Notify::Then(f) => then.push(f),
                }
            }
            for f in then {
                let r = result();
                // A completion that panics must not take the log writer down with it.
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || f(r))).is_err() {
                    tracing::error!("a log completion panicked; this is a bug, please report it");
                }
            }
            if outcome.is_ok()
                && self.offset >= self.cfg.segment_size
                && let Err(e) = self.roll()
            {
                tracing::warn!(
                    "log segment roll failed, continuing in segment {}: {e}",
                    self.seg
                );
            }
            if self.reclaim_due() {
                self.reclaim();
            }
        }
        if let Some(t) = self.ckpt_thread.take() {
            let _ = t.join();
        }
    }

    /// Index the ops of the record at `off` (payload `len` bytes) in `file`.
    fn apply(
        &mut self,
        live: &mut std::collections::HashMap<u64, LiveEntry>,
        ops: Vec<Op>,
        file: FileId,
        off: u64,
        len: u32,
    ) {
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Put { seq, msg, .. } => {
                    let size = entry_size(msg.body.len());
                    let loc = Loc {
                        file,
                        off,
                        len,
                        op: i as u32,
                    };
                    self.live_bytes += u64::from(size);
                    self.max_seq = self.max_seq.max(seq);
                    let e = LiveEntry {
                        loc,
                        size,
                        backout: None,
                    };
                    if let Some(old) = live.insert(seq, e) {
                        self.live_bytes -= u64::from(old.size);
                    }
                }
                Op::Remove { seq } => {
                    if let Some(e) = live.remove(&seq) {
                        self.live_bytes -= u64::from(e.size);
                    }
                }
                Op::Backout { seq, count } => {
                    if let Some(e) = live.get_mut(&seq) {
                        e.backout = Some(count);
                    }
                }
            }
        }
    }

    /// Write every request as one record each, then one fdatasync for all of them. Returns
    /// each record's offset and payload length.
    fn write_batch(&mut self, batch: &[Req]) -> Result<Vec<(u64, u32)>, Failure> {
        if let Some(p) = &self.poisoned {
            return Err(p.clone());
        }
        let start = self.offset;
        let mut written = 0u64;
        let mut at = Vec::with_capacity(batch.len());
        let res = (|| -> io::Result<()> {
            self.buf.clear();
            for r in batch {
                let parts = format::commit_payload(&r.ops);
                at.push((start + written, parts.len as u32));
                self.buf
                    .extend_from_slice(&format::header(self.seg, &parts));
                written += (format::HEADER + parts.len) as u64;
                for p in &parts.parts {
                    if p.len() > DIRECT_WRITE {
                        self.file.write_all(&self.buf)?;
                        self.buf.clear();
                        self.file.write_all(p)?;
                    } else {
                        self.buf.extend_from_slice(p);
                    }
                }
            }
            // A zero header right after the batch ends the log there for recovery: a recycled
            // segment holds an older segment's records past it, which would otherwise read
            // as a torn tail after every clean stop. The next batch overwrites it.
            let terminated = start + written + format::HEADER as u64 <= self.cfg.segment_size;
            if terminated {
                self.buf.extend_from_slice(&[0u8; format::HEADER]);
            }
            self.file.write_all(&self.buf)?;
            if terminated {
                self.file.seek(start + written)?;
            }
            Ok(())
        })();
        if self.buf.capacity() > 4 << 20 {
            self.buf = Vec::with_capacity(64 * 1024);
        }
        if let Err(e) = res {
            // Invariant 2: the next batch overwrites the partial one from `start`.
            if let Err(e2) = self.file.seek(start) {
                self.poisoned = Some(Failure::poison("cannot rewind log after failed write", e2));
            }
            return Err(Failure::step("log write", e));
        }
        self.zero_ahead(start + written);
        if let Err(e) = self.file.sync_data() {
            tracing::error!(
                "log fdatasync failed in segment {} at {start}: {e}",
                self.seg
            );
            self.neutralise(start);
            return Err(Failure::step("log fdatasync", e));
        }
        self.offset = start + written;
        self.since_ckpt += written;
        let c = &self.shared.counters;
        c.syncs.fetch_add(1, Ordering::Relaxed);
        c.records.fetch_add(batch.len() as u64, Ordering::Relaxed);
        c.bytes.fetch_add(written, Ordering::Relaxed);
        Ok(at)
    }

    /// Zero-fill the fresh segment from `end` (the batch's end, the file position) to the
    /// next `ZERO_AHEAD` boundary once the log has reached the zeroed part's end. A sync
    /// that must also allocate blocks (a journal commit on ext4) is about 1.5× slower than
    /// one that overwrites written blocks (5,200 vs 7,900 syncs/s of 6.6 KB here), and every
    /// commit waits for it; allocating a MiB at a time moves that cost to one sync in
    /// several hundred. Best effort: the zeros lie past the log's end, where recovery
    /// stops anyway (a zero header), and a failure only leaves the blocks unallocated.
    fn zero_ahead(&mut self, end: u64) {
        if end <= self.zeroed_to {
            return;
        }
        let target = ((end / ZERO_AHEAD + 1) * ZERO_AHEAD).min(self.cfg.segment_size);
        if target <= end {
            self.zeroed_to = u64::MAX;
            return;
        }
        let filled = self.file.write_all(&ZEROS[..(target - end) as usize]);
        if let Err(e) = self.file.seek(end) {
            self.poisoned = Some(Failure::poison("cannot rewind log after zero-filling", e));
        }
        self.zeroed_to = match filled {
            Ok(()) => target,
            Err(_) => u64::MAX,
        };
    }

    /// After a failed sync the batch may or may not be on disk: zero its first header and
    /// sync that, so recovery ends the log before it either way.
    fn neutralise(&mut self, start: u64) {
        let r = (|| -> io::Result<()> {
            self.file.seek(start)?;
            self.file.write_all(&[0u8; format::HEADER])?;
            self.file.sync_data()?;
            self.file.seek(start)
        })();
        if let Err(error) = r {
            tracing::error!(%error, "Log unusable after a failed fdatasync; restart to recover.");
            self.poisoned = Some(Failure::poison(
                "log unusable after a failed fdatasync; restart to recover",
                error,
            ));
        }
    }

    /// Close this segment with END, start the next one, maybe start a checkpoint.
    fn roll(&mut self) -> io::Result<()> {
        let end = format::simple_payload(vec![format::T_END]);
        self.file.seek(self.offset)?;
        self.file.write_all(&format::header(self.seg, &end))?;
        self.file.write_all(&end.parts[0])?;
        self.file.sync_data()?;
        let next = self.seg + 1;
        let (file, zeroed_to) = open_segment(
            &*self.fs,
            &self.dir,
            next,
            &self.free,
            self.cfg.segment_size,
        )?;
        self.file = file;
        self.zeroed_to = zeroed_to;
        self.seg = next;
        self.offset = 0;
        self.maybe_checkpoint();
        super::prealloc::ensure_spare(
            &self.fs,
            &self.dir,
            &self.free,
            &self.filling,
            self.cfg.segment_size,
        );
        Ok(())
    }

    /// Most of the log on disk is dead: messages put in bulk and since got (a drained
    /// backlog), with too little traffic after them to fill segments and trigger the usual
    /// checkpoint. Three quarters dead, and at least `checkpoint_min_bytes` of log — or none of
    /// it live while the newest checkpoint still holds messages: a reclaim that ran while the
    /// backlog was being drained left them there, and they would stay until traffic came.
    fn dead_log(&self) -> bool {
        let on_disk = self.since_ckpt + self.ckpt_bytes;
        let drained = self.live_bytes == 0 && self.ckpt_bytes > 0;
        self.poisoned.is_none()
            && (on_disk >= self.cfg.checkpoint_min_bytes || drained)
            && on_disk / 4 > self.live_bytes
    }

    /// [`Writer::dead_log`], and no checkpoint is running.
    fn reclaim_due(&self) -> bool {
        self.dead_log() && !self.ckpt_busy.load(Ordering::Acquire)
    }

    /// Close the current segment early (unless it is empty) and checkpoint what precedes it,
    /// so that the dead log is released.
    fn reclaim(&mut self) {
        if self.offset > 0
            && let Err(e) = self.roll()
        {
            tracing::warn!("log segment roll to reclaim space failed: {e}");
            // Not again until more is written.
            self.since_ckpt = 0;
            self.ckpt_bytes = 0;
            return;
        }
        self.start_checkpoint();
    }

    fn maybe_checkpoint(&mut self) {
        if self.since_ckpt < self.cfg.checkpoint_min_bytes || self.since_ckpt < self.live_bytes {
            return;
        }
        self.start_checkpoint();
    }

    /// Checkpoint everything before the current segment in the background (unless one is
    /// running already).
    fn start_checkpoint(&mut self) {
        if self.ckpt_busy.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(t) = self.ckpt_thread.take() {
            let _ = t.join();
        }
        let mut snapshot: Vec<(u64, LiveEntry)> = {
            let live = self.index.live.lock();
            live.iter().map(|(k, v)| (*k, *v)).collect()
        };
        snapshot.sort_unstable_by_key(|(k, _)| *k);
        self.since_ckpt = 0;
        self.ckpt_bytes = snapshot.iter().map(|(_, e)| u64::from(e.size)).sum();
        let (fs, dir, seg, next_seq) = (
            self.fs.clone(),
            self.dir.clone(),
            self.seg,
            self.max_seq + 1,
        );
        let (free, busy, keep) = (
            self.free.clone(),
            self.ckpt_busy.clone(),
            self.cfg.free_segments,
        );
        let shared = self.shared.clone();
        let index = self.index.clone();
        let t = std::thread::Builder::new()
            .name("qm-checkpoint".into())
            .spawn(move || {
                match write_checkpoint(&*fs, &dir, seg, next_seq, &index, &snapshot) {
                    Ok(moves) => {
                        shared.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
                        index.relocate(&moves);
                        index.releasing(|| {
                            super::recover::release_before(&*fs, &dir, seg, &free, keep)
                        });
                    }
                    Err(e) => tracing::error!("checkpoint at segment {seg} failed (log kept): {e}"),
                }
                busy.store(false, Ordering::Release);
            });
        match t {
            Ok(t) => self.ckpt_thread = Some(t),
            Err(e) => {
                tracing::error!("cannot start checkpoint thread: {e}");
                self.ckpt_busy.store(false, Ordering::Release);
            }
        }
    }
}

/// Open segment `n` for writing at offset 0: reuse a free segment file if one is kept,
/// else create and size it; the directory is synced so the name is durable. Also returns
/// how much of it is known to be written already (all of a reused file, nothing of a new
/// one: see [`Writer::zero_ahead`]).
pub(super) fn open_segment(
    fs: &dyn Filesystem,
    dir: &Path,
    n: u64,
    free: &Mutex<Vec<PathBuf>>,
    size: u64,
) -> io::Result<(Box<dyn LogFile>, u64)> {
    let path = seg_path(dir, n);
    let reused = free.lock().pop();
    let (mut f, zeroed_to) = match reused {
        Some(old) => {
            fs.rename(&old, &path)?;
            (fs.open_write(&path)?, u64::MAX)
        }
        None => {
            let mut f = fs.open_write(&path)?;
            f.set_len(size)?;
            (f, 0)
        }
    };
    f.seek(0)?;
    fs.sync_dir(dir)?;
    Ok((f, zeroed_to))
}
