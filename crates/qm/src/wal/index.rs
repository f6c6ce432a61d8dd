//! Where every live persistent message is on disk: the record (in a log segment or a
//! checkpoint file) that holds its PUT. The log writer keeps this index instead of copies of
//! the messages, a queue reads a message it has paged out back from there, and a checkpoint
//! copies each live message from its record and moves its entry to the new copy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::{Mutex, RwLock, RwLockReadGuard};

use super::LiveMsg;
use super::format::{self, Op};
use super::recover::{ckpt_path, seg_path};
use crate::error::{QmError, Result};
use crate::fs::{Filesystem, ReadAt};

/// A file of the log directory that holds records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FileId {
    /// `seg-N.wal`.
    Seg(u64),
    /// `ckpt-N.ckpt`.
    Ckpt(u64),
}

impl FileId {
    /// The number a record's checksum is salted with in this file.
    fn salt(self) -> u64 {
        match self {
            FileId::Seg(n) => n,
            FileId::Ckpt(_) => format::CKPT_SEG,
        }
    }

    fn path(self, dir: &Path) -> PathBuf {
        match self {
            FileId::Seg(n) => seg_path(dir, n),
            FileId::Ckpt(n) => ckpt_path(dir, n),
        }
    }
}

/// A message's PUT: the record starting at `off` (its header) with a payload of `len`
/// bytes, and the PUT's position among the record's ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loc {
    pub file: FileId,
    pub off: u64,
    pub len: u32,
    pub op: u32,
}

/// One live persistent message in the index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveEntry {
    pub loc: Loc,
    /// What it weighs in a checkpoint (body plus an allowance for the descriptor).
    pub size: u32,
    /// A BackoutCount logged after the PUT (a hardened backout), to apply on reading.
    pub backout: Option<u32>,
}

/// The live persistent messages by sequence number, and the open record files.
pub(crate) struct LogIndex {
    fs: Arc<dyn Filesystem>,
    dir: PathBuf,
    pub(crate) live: Mutex<HashMap<u64, LiveEntry>>,
    /// Held shared while a record is read, exclusively while files are released (deleted or
    /// recycled), so that a reader never reads a file that was reused under its name.
    files: RwLock<()>,
    open: Mutex<HashMap<FileId, Arc<dyn ReadAt>>>,
}

/// Proof that no file is being released meanwhile; see [`LogIndex::pin`].
pub(crate) struct Pinned<'a>(#[allow(dead_code)] RwLockReadGuard<'a, ()>);

impl LogIndex {
    pub(super) fn new(fs: Arc<dyn Filesystem>, dir: &Path) -> LogIndex {
        LogIndex {
            fs,
            dir: dir.to_path_buf(),
            live: Mutex::new(HashMap::new()),
            files: RwLock::new(()),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Keep the files as they are while held.
    pub(crate) fn pin(&self) -> Pinned<'_> {
        Pinned(self.files.read())
    }

    /// Run `release` (which deletes or recycles files) with no reader in a file; open
    /// handles are dropped, as the files behind them may be reused.
    pub(super) fn releasing(&self, release: impl FnOnce()) {
        let _g = self.files.write();
        self.open.lock().clear();
        release();
    }

    /// Is the message with sequence number `seq` live in the log?
    pub(crate) fn contains(&self, seq: u64) -> bool {
        self.live.lock().contains_key(&seq)
    }

    /// Read back the live persistent message `seq` (with its latest hardened BackoutCount).
    pub(crate) fn read(&self, seq: u64) -> Result<LiveMsg> {
        let _pin = self.pin();
        let entry = self.live.lock().get(&seq).copied();
        let entry = entry.ok_or_else(|| QmError::Corrupt {
            path: self.dir.display().to_string(),
            detail: format!("message {seq} is not in the log index"),
            source: None,
        })?;
        let mut m = self.read_loc(seq, entry.loc)?;
        if let Some(b) = entry.backout {
            m.msg.md.backout_count = b;
        }
        Ok(m)
    }

    /// Read the PUT of `seq` at `loc`; the caller keeps the files pinned.
    pub(super) fn read_loc(&self, seq: u64, loc: Loc) -> Result<LiveMsg> {
        let path = loc.file.path(&self.dir);
        let bad = |detail: String| QmError::Corrupt {
            path: path.display().to_string(),
            detail,
            source: None,
        };
        let reader = {
            let cached = self.open.lock().get(&loc.file).cloned();
            match cached {
                Some(r) => r,
                None => {
                    let r = self
                        .fs
                        .open_read(&path)
                        .map_err(|e| QmError::io(path.display().to_string(), e))?;
                    self.open.lock().insert(loc.file, r.clone());
                    r
                }
            }
        };
        let want = format::HEADER + loc.len as usize;
        let data = reader
            .read_at(loc.off, want)
            .map_err(|e| QmError::io(path.display().to_string(), e))?;
        if data.len() != want {
            return Err(bad(format!(
                "record of message {seq} at {} is cut short",
                loc.off
            )));
        }
        let mut recs = format::Records::new(Bytes::from(data), loc.file.salt());
        let payload = recs
            .next()
            .ok_or_else(|| bad(format!("record of message {seq} at {} is invalid", loc.off)))?;
        if payload.first() != Some(&format::T_COMMIT) {
            return Err(bad(format!("record at {} is not a commit", loc.off)));
        }
        let ops = format::decode_commit(payload).map_err(|e| QmError::Corrupt {
            path: path.display().to_string(),
            detail: "checksummed record fails to decode".into(),
            source: Some(Box::new(e)),
        })?;
        match ops.into_iter().nth(loc.op as usize) {
            Some(Op::Put {
                seq: s,
                queue,
                expire_ms,
                msg,
            }) if s == seq => Ok(LiveMsg {
                queue,
                expire_ms,
                msg,
            }),
            _ => Err(bad(format!(
                "record at {} does not hold message {seq}",
                loc.off
            ))),
        }
    }

    /// After a checkpoint is durable: entries still where the checkpoint copied them from now
    /// point at the copy (the others were removed or changed meanwhile).
    pub(super) fn relocate(&self, moves: &[(u64, Loc, Loc)]) {
        let mut live = self.live.lock();
        for (seq, from, to) in moves {
            if let Some(e) = live.get_mut(seq)
                && e.loc == *from
            {
                e.loc = *to;
            }
        }
    }
}
