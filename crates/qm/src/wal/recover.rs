//! Opening the log: checkpoint load, segment replay, torn-tail handling; checkpoint writing.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bytes::Bytes;
use parking_lot::Mutex;

use super::format::{self, Op, Records, Stop};
use super::index::{FileId, LiveEntry, Loc, LogIndex};
use super::writer::{Writer, entry_size, open_segment};
use super::{LiveSummary, Recovered, Shared, WalConfig};
use crate::codec::Reader;
use crate::error::{QmError, Result};
use crate::fs::{Filesystem, ReadAt};

pub(super) fn seg_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("seg-{n:016x}.wal"))
}

pub(super) fn ckpt_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("ckpt-{n:016x}.ckpt"))
}

fn parse_num(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let hex = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    u64::from_str_radix(hex, 16).ok()
}

fn corrupt(path: &Path, detail: impl Into<String>) -> QmError {
    QmError::Corrupt {
        path: path.display().to_string(),
        detail: detail.into(),
        source: None,
    }
}

/// A checksummed record that does not decode.
fn undecodable(path: &Path, what: &str, e: crate::codec::DecodeError) -> QmError {
    QmError::Corrupt {
        path: path.display().to_string(),
        detail: what.into(),
        source: Some(Box::new(e)),
    }
}

/// A live message as recovery tracks it: where its PUT is and what its queue needs to
/// index it, never its body.
struct RecEntry {
    entry: LiveEntry,
    summary: LiveSummary,
}

struct State {
    live: HashMap<u64, RecEntry>,
    max_seq: u64,
    /// Queue names, shared by the entries of each queue.
    names: HashMap<String, Arc<str>>,
}

impl State {
    /// Apply the ops of the record at `off` (payload `len` bytes) of `file`.
    fn apply(&mut self, ops: Vec<Op>, file: FileId, off: u64, len: u32) {
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Put {
                    seq,
                    queue,
                    expire_ms,
                    msg,
                } => {
                    self.max_seq = self.max_seq.max(seq);
                    let queue = match self.names.get(&queue) {
                        Some(q) => q.clone(),
                        None => {
                            let q: Arc<str> = Arc::from(queue.as_str());
                            self.names.insert(queue, q.clone());
                            q
                        }
                    };
                    let entry = LiveEntry {
                        loc: Loc {
                            file,
                            off,
                            len,
                            op: i as u32,
                        },
                        size: entry_size(msg.body.len()),
                        backout: None,
                    };
                    let summary = LiveSummary {
                        queue,
                        expire_ms,
                        priority: msg.md.priority,
                        msg_id: msg.md.msg_id,
                        correl_id: msg.md.correl_id,
                        group_id: msg.md.group_id,
                        backout_count: msg.md.backout_count,
                        body_len: msg.body.len(),
                    };
                    self.live.insert(seq, RecEntry { entry, summary });
                }
                Op::Remove { seq } => {
                    self.live.remove(&seq);
                }
                Op::Backout { seq, count } => {
                    if let Some(m) = self.live.get_mut(&seq) {
                        m.entry.backout = Some(count);
                        m.summary.backout_count = count;
                    }
                }
            }
        }
    }
}

/// Reads the records of a file front to back a chunk at a time, so that a checkpoint of any
/// size is loaded in bounded memory.
struct Stream {
    file: Arc<dyn ReadAt>,
    salt: u64,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    base: u64,
    pos: usize,
    eof: bool,
}

const STREAM_CHUNK: usize = 8 << 20;

impl Stream {
    /// At least `n` bytes from `pos` in `buf`, unless the file ends first.
    fn fill(&mut self, n: usize) -> io::Result<bool> {
        while self.buf.len() - self.pos < n && !self.eof {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
            let want = STREAM_CHUNK.max(n - self.buf.len());
            let got = self.file.read_at(self.base + self.buf.len() as u64, want)?;
            self.eof = got.len() < want;
            self.buf.extend_from_slice(&got);
        }
        Ok(self.buf.len() - self.pos >= n)
    }

    /// The next valid record's offset and payload; `None` at the first invalid one or the end.
    fn next(&mut self) -> io::Result<Option<(u64, Bytes)>> {
        if !self.fill(format::HEADER)? {
            return Ok(None);
        }
        let h = &self.buf[self.pos..self.pos + format::HEADER];
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        if len > format::MAX_RECORD || !self.fill(format::HEADER + len as usize)? {
            return Ok(None);
        }
        let end = self.pos + format::HEADER + len as usize;
        let mut recs = Records::new(Bytes::copy_from_slice(&self.buf[self.pos..end]), self.salt);
        let off = self.base + self.pos as u64;
        match recs.next() {
            Some(p) => {
                self.pos = end;
                Ok(Some((off, p)))
            }
            None => Ok(None),
        }
    }
}

/// Load checkpoint `n`; returns (next_seq).
fn load_checkpoint(fs: &dyn Filesystem, path: &Path, n: u64, st: &mut State) -> Result<u64> {
    let ioerr = |e| QmError::io(path.display().to_string(), e);
    let mut recs = Stream {
        file: fs.open_read(path).map_err(ioerr)?,
        salt: format::CKPT_SEG,
        buf: Vec::new(),
        base: 0,
        pos: 0,
        eof: false,
    };
    let (_, head) = recs
        .next()
        .map_err(ioerr)?
        .ok_or_else(|| corrupt(path, "no header record"))?;
    let mut r = Reader::new(head);
    let bad = |e| undecodable(path, "checkpoint record does not decode", e);
    if r.u8().map_err(bad)? != format::T_CKPT_HEAD {
        return Err(corrupt(path, "first record is not a checkpoint header"));
    }
    let next_seg = r.u64().map_err(bad)?;
    let next_seq = r.u64().map_err(bad)?;
    let count = r.u64().map_err(bad)?;
    if next_seq == u64::MAX {
        // No sequence number would be left to give out (and none is ever assigned this one).
        return Err(corrupt(path, "next sequence number is u64::MAX"));
    }
    if next_seg != n {
        return Err(corrupt(
            path,
            format!("names segment {next_seg}, file says {n}"),
        ));
    }
    let mut seen = 0u64;
    while let Some((off, payload)) = recs.next().map_err(ioerr)? {
        match payload.first() {
            Some(&format::T_COMMIT) => {
                let len = payload.len() as u32;
                let ops = format::decode_commit(payload).map_err(bad)?;
                seen += ops.len() as u64;
                st.apply(ops, FileId::Ckpt(n), off, len);
            }
            Some(&format::T_CKPT_END) => {
                if seen != count {
                    return Err(corrupt(
                        path,
                        format!("holds {seen} messages, header says {count}"),
                    ));
                }
                st.max_seq = st.max_seq.max(next_seq.saturating_sub(1));
                return Ok(next_seq);
            }
            _ => return Err(corrupt(path, "unexpected record type")),
        }
    }
    Err(corrupt(
        path,
        "checkpoint ends without its trailer (checksum or truncation)",
    ))
}

/// Write checkpoint `seg` (covers segments below `seg`) atomically: each live message of
/// `msgs` is read from its record and copied, one record per message (so that reading one
/// back reads nothing else). Returns, per message, where it was and where the copy is.
pub(super) fn write_checkpoint(
    fs: &dyn Filesystem,
    dir: &Path,
    seg: u64,
    next_seq: u64,
    index: &LogIndex,
    msgs: &[(u64, LiveEntry)],
) -> io::Result<Vec<(u64, Loc, Loc)>> {
    let path = ckpt_path(dir, seg);
    let tmp = path.with_extension("tmp");
    let mut f = fs.open_write(&tmp)?;
    f.set_len(0)?;
    let mut head = vec![format::T_CKPT_HEAD];
    head.extend_from_slice(&seg.to_le_bytes());
    head.extend_from_slice(&next_seq.to_le_bytes());
    head.extend_from_slice(&(msgs.len() as u64).to_le_bytes());
    let mut off = 0u64;
    let mut write = |p: format::Parts| -> io::Result<(u64, u32)> {
        let at = (off, p.len as u32);
        f.write_all(&format::header(format::CKPT_SEG, &p))?;
        for part in &p.parts {
            f.write_all(part)?;
        }
        off += (format::HEADER + p.len) as u64;
        Ok(at)
    };
    write(format::simple_payload(head))?;
    let mut moves = Vec::with_capacity(msgs.len());
    let pin = index.pin();
    for (seq, e) in msgs {
        let mut m = index.read_loc(*seq, e.loc).map_err(io::Error::other)?;
        if let Some(b) = e.backout {
            m.msg.md.backout_count = b;
        }
        let op = Op::Put {
            seq: *seq,
            queue: m.queue,
            expire_ms: m.expire_ms,
            msg: m.msg,
        };
        let (at, len) = write(format::commit_payload(std::slice::from_ref(&op)))?;
        let to = Loc {
            file: FileId::Ckpt(seg),
            off: at,
            len,
            op: 0,
        };
        moves.push((*seq, e.loc, to));
    }
    drop(pin);
    let mut end = vec![format::T_CKPT_END];
    end.extend_from_slice(&(msgs.len() as u64).to_le_bytes());
    write(format::simple_payload(end))?;
    f.sync_data()?;
    drop(f);
    fs.rename(&tmp, &path)?;
    fs.sync_dir(dir)?;
    Ok(moves)
}

/// After checkpoint `seg` is durable: recycle or delete older segments and checkpoints.
pub(super) fn release_before(
    fs: &dyn Filesystem,
    dir: &Path,
    seg: u64,
    free: &Mutex<Vec<PathBuf>>,
    keep: usize,
) {
    let names = match fs.list(dir) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!("cannot list {}: {e}", dir.display());
            return;
        }
    };
    for name in names {
        let path = dir.join(&name);
        let r = if let Some(n) = parse_num(&name, "seg-", ".wal").filter(|n| *n < seg) {
            let mut fr = free.lock();
            if fr.len() < keep {
                let to = dir.join(format!("free-{n:016x}.wal"));
                let r = fs.rename(&path, &to);
                if r.is_ok() {
                    fr.push(to);
                }
                r
            } else {
                fs.remove(&path)
            }
        } else if parse_num(&name, "ckpt-", ".ckpt").is_some_and(|n| n < seg) {
            fs.remove(&path)
        } else {
            Ok(())
        };
        if let Err(e) = r {
            tracing::warn!("cannot release {}: {e}", path.display());
        }
    }
    if let Err(e) = fs.sync_dir(dir) {
        tracing::warn!("cannot sync {}: {e}", dir.display());
    }
}

/// Recover the log in `dir` and build the writer positioned on a fresh segment.
pub(super) fn open(
    fs: Arc<dyn Filesystem>,
    dir: &Path,
    cfg: WalConfig,
    shared: Arc<Shared>,
) -> Result<(Writer, Recovered)> {
    let ioerr = |e| QmError::io(dir.display().to_string(), e);
    fs.create_dir_all(dir).map_err(ioerr)?;
    let (mut segs, mut ckpts, mut free) = (Vec::new(), Vec::new(), Vec::new());
    for name in fs.list(dir).map_err(ioerr)? {
        if let Some(n) = parse_num(&name, "seg-", ".wal") {
            segs.push(n);
        } else if let Some(n) = parse_num(&name, "ckpt-", ".ckpt") {
            ckpts.push(n);
        } else if name.starts_with("free-") && name.ends_with(".wal") {
            free.push(dir.join(&name));
        } else if name.ends_with(".tmp") {
            let _ = fs.remove(&dir.join(&name));
        }
    }
    segs.sort_unstable();
    ckpts.sort_unstable();
    let mut st = State {
        live: HashMap::new(),
        max_seq: 0,
        names: HashMap::new(),
    };
    let mut first = 0;
    if let Some(&n) = ckpts.last() {
        load_checkpoint(&*fs, &ckpt_path(dir, n), n, &mut st)?;
        first = n;
    }
    let free = Arc::new(Mutex::new(free));
    if segs.iter().any(|s| *s < first) {
        // A cleanup after the last checkpoint was interrupted; finish it.
        release_before(&*fs, dir, first, &free, cfg.free_segments);
    }
    let replay: Vec<u64> = segs.into_iter().filter(|s| *s >= first).collect();
    let mut since = 0u64;
    let mut last_end: Option<(u64, u64, bool)> = None; // (segment, valid end, closed)
    let mut dropped_tail = None;
    for (i, &n) in replay.iter().enumerate() {
        let path = seg_path(dir, n);
        let data = fs
            .read(&path)
            .map_err(|e| QmError::io(path.display().to_string(), e))?;
        let total = data.len();
        let mut recs = Records::new(Bytes::from(data), n);
        let mut closed = false;
        loop {
            let off = recs.pos as u64;
            let Some(payload) = recs.next() else { break };
            match payload.first() {
                Some(&format::T_COMMIT) => match format::decode_commit(payload.clone()) {
                    Ok(ops) => st.apply(ops, FileId::Seg(n), off, payload.len() as u32),
                    Err(e) => {
                        return Err(undecodable(&path, "checksummed record fails to decode", e));
                    }
                },
                Some(&format::T_END) => {
                    closed = true;
                    break;
                }
                _ => return Err(corrupt(&path, "unknown record type")),
            }
        }
        since += recs.pos as u64;
        let is_last = i + 1 == replay.len();
        // A segment cut at its valid end by an earlier recovery ends cleanly at EOF.
        let cut = recs.stop == Some(Stop::Clean) && recs.pos == total;
        if !closed && !cut && !is_last {
            tracing::error!(
                "log segment {n} has no close mark: records after offset {} were lost or corrupted",
                recs.pos
            );
        } else if is_last && recs.stop == Some(Stop::Bad) {
            tracing::warn!(
                "log segment {n}: torn or corrupt tail dropped at offset {} ({} bytes ignored)",
                recs.pos,
                total - recs.pos
            );
            dropped_tail = Some((total - recs.pos) as u64);
        }
        last_end = Some((n, recs.pos as u64, closed));
    }
    // Cut the last segment at its valid end, so a later recovery never looks past it (a
    // torn batch may hold complete records of an unacknowledged commit after a bad one).
    // Truncation needs no free space, so this works on a full disk too.
    if let Some((n, end, false)) = last_end {
        let r = (|| -> io::Result<()> {
            let mut f = fs.open_write(&seg_path(dir, n))?;
            f.set_len(end)?;
            f.sync_data()
        })();
        if let Err(e) = r {
            return Err(QmError::io(seg_path(dir, n).display().to_string(), e));
        }
    }
    let seg = last_end.map(|(n, _, _)| n + 1).unwrap_or(first);
    let (file, zeroed_to) = open_segment(&*fs, dir, seg, &free, cfg.segment_size)
        .map_err(|e| QmError::io(seg_path(dir, seg).display().to_string(), e))?;
    let index = Arc::new(LogIndex::new(fs.clone(), dir));
    index
        .live
        .lock()
        .extend(st.live.iter().map(|(k, v)| (*k, v.entry)));
    // Several segments survive (e.g. after restarts): the writer folds them into a checkpoint
    // as soon as it runs, so the log never grows with the number of restarts. In the
    // background: copying a deep backlog must not delay the queue manager's start.
    let fold_at_start = replay.len() > 1;
    let live_bytes = st.live.values().map(|v| u64::from(v.entry.size)).sum();
    let rec = Recovered {
        msgs: st.live.into_iter().map(|(k, v)| (k, v.summary)).collect(),
        next_seq: st.max_seq + 1,
        dropped_tail,
        index: index.clone(),
    };
    let w = Writer {
        fs,
        dir: dir.to_path_buf(),
        cfg,
        shared,
        seg,
        file,
        offset: 0,
        index,
        live_bytes,
        max_seq: st.max_seq,
        since_ckpt: since,
        ckpt_bytes: live_bytes,
        free,
        ckpt_busy: Arc::new(AtomicBool::new(false)),
        ckpt_thread: None,
        filling: Arc::new(AtomicBool::new(false)),
        poisoned: None,
        buf: Vec::with_capacity(64 * 1024),
        zeroed_to,
        fold_at_start,
    };
    Ok((w, rec))
}
