//! Paging: a queue keeps whole messages in memory only within its window; past it a message
//! is a small [`Paged`] entry and its content is on disk. A persistent message is read back
//! from its record in the log (it is there already, see [`crate::wal::LogIndex`]); a
//! non-persistent one is written to the queue manager's spill file, which is not recovered:
//! it is emptied at open, as a non-persistent message does not survive a restart.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::codec::{self, Reader};
use crate::error::{QmError, Result};
use crate::fs::{Filesystem, LogFile, ReadAt};
use crate::model::MsgId;
use crate::queue::Slot;
use crate::wal::LogIndex;

/// How much of each queue is held whole in memory; past either limit, further messages are
/// paged out to disk until gets make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryWindow {
    /// Messages per queue.
    pub msgs: usize,
    /// Body bytes per queue.
    pub bytes: usize,
}

impl Default for MemoryWindow {
    fn default() -> Self {
        MemoryWindow {
            msgs: 1000,
            bytes: 8 << 20,
        }
    }
}

impl MemoryWindow {
    /// May a message of `len` body bytes join `mem` messages of `bytes` bytes? The first one
    /// always may, however large, so a queue holding one message never pages.
    pub(crate) fn has_room(&self, mem: usize, bytes: usize, len: usize) -> bool {
        mem == 0 || (mem < self.msgs && bytes.saturating_add(len) <= self.bytes)
    }
}

/// A message held by a queue: whole, or paged out.
#[derive(Debug)]
pub(crate) enum Entry {
    Mem(Box<Slot>),
    Paged(Paged),
}

/// What a queue keeps of a paged-out message: what its indexes, match options and expiry
/// need, and where the rest is.
#[derive(Debug)]
pub(crate) struct Paged {
    pub msg_id: MsgId,
    pub correl_id: MsgId,
    pub group_id: MsgId,
    /// Unix ms; 0 = never expires.
    pub expire_ms: u64,
    /// In memory, authoritative: raised by rollbacks that are not logged (NOHARDENBO).
    pub backout_count: u32,
    pub body_len: u32,
    /// `None`: persistent, in the log under the message's sequence number; else the offset
    /// and length of its copy in the spill file.
    pub spill: Option<(u64, u32)>,
}

impl Entry {
    pub fn ids(&self) -> (&MsgId, &MsgId, &MsgId) {
        match self {
            Entry::Mem(s) => (&s.msg.md.msg_id, &s.msg.md.correl_id, &s.msg.md.group_id),
            Entry::Paged(p) => (&p.msg_id, &p.correl_id, &p.group_id),
        }
    }

    pub fn expire_ms(&self) -> u64 {
        match self {
            Entry::Mem(s) => s.expire_ms,
            Entry::Paged(p) => p.expire_ms,
        }
    }

    pub fn persistent(&self) -> bool {
        match self {
            Entry::Mem(s) => s.persistent,
            Entry::Paged(p) => p.spill.is_none(),
        }
    }

    pub fn body_len(&self) -> usize {
        match self {
            Entry::Mem(s) => s.msg.body.len(),
            Entry::Paged(p) => p.body_len as usize,
        }
    }
}

/// The error for a paged-out entry on a queue without a pager (never made that way).
pub(crate) fn no_pager() -> QmError {
    QmError::Corrupt {
        path: "(memory)".into(),
        detail: "a paged-out message on a queue that does not page".into(),
        source: None,
    }
}

struct Spill {
    /// Opened at the first page-out.
    file: Option<(Box<dyn LogFile>, Arc<dyn ReadAt>)>,
    /// Where the next copy goes.
    end: u64,
    /// Copies not yet released: at zero the file is emptied.
    live: usize,
}

/// Pages messages out and back in for every queue of a queue manager.
pub(crate) struct Pager {
    pub window: MemoryWindow,
    log: Arc<LogIndex>,
    fs: Arc<dyn Filesystem>,
    spill_path: PathBuf,
    spill: Mutex<Spill>,
}

impl Pager {
    /// A pager spilling to `spill_path`, which is emptied now (what it held did not survive).
    pub fn open(
        window: MemoryWindow,
        log: Arc<LogIndex>,
        fs: Arc<dyn Filesystem>,
        spill_path: PathBuf,
    ) -> Pager {
        if fs.exists(&spill_path)
            && let Err(e) = fs.remove(&spill_path)
        {
            tracing::warn!("cannot remove {}: {e}", spill_path.display());
        }
        Pager {
            window,
            log,
            fs,
            spill_path,
            spill: Mutex::new(Spill {
                file: None,
                end: 0,
                live: 0,
            }),
        }
    }

    /// The entry for `slot` (sequence number `seq`) with its message on disk; the message
    /// stays whole in memory when it cannot be paged out (a persistent message not in the
    /// log, a spill write that fails, e.g. on a full disk).
    pub fn page_out(&self, seq: u64, slot: Slot) -> Entry {
        let spill = if slot.persistent {
            if !self.log.contains(seq) {
                return Entry::Mem(Box::new(slot));
            }
            None
        } else {
            match self.spill_write(&codec::encode(&slot.msg)) {
                Ok(at) => Some(at),
                Err(e) => {
                    tracing::debug!("message kept in memory, spill failed: {e}");
                    return Entry::Mem(Box::new(slot));
                }
            }
        };
        let md = &slot.msg.md;
        Entry::Paged(Paged {
            msg_id: md.msg_id,
            correl_id: md.correl_id,
            group_id: md.group_id,
            expire_ms: slot.expire_ms,
            backout_count: md.backout_count,
            body_len: u32::try_from(slot.msg.body.len()).unwrap_or(u32::MAX),
            spill,
        })
    }

    fn spill_write(&self, data: &[u8]) -> std::io::Result<(u64, u32)> {
        let len = u32::try_from(data.len()).map_err(std::io::Error::other)?;
        let mut sp = self.spill.lock();
        if sp.file.is_none() {
            let w = self.fs.open_write(&self.spill_path)?;
            let r = self.fs.open_read(&self.spill_path)?;
            sp.file = Some((w, r));
        }
        let at = sp.end;
        if let Some((w, _)) = sp.file.as_mut() {
            w.seek(at)?;
            w.write_all(data)?;
        }
        sp.end += u64::from(len);
        sp.live += 1;
        Ok((at, len))
    }

    /// Read a paged-out message back (the entry stays as it is).
    pub fn read(&self, seq: u64, p: &Paged) -> Result<Slot> {
        let mut msg = match p.spill {
            None => {
                let m = self.log.read(seq)?;
                m.msg
            }
            Some((off, len)) => {
                let path = || self.spill_path.display().to_string();
                let reader = match &self.spill.lock().file {
                    Some((_, r)) => r.clone(),
                    None => return Err(no_pager()),
                };
                let data = reader
                    .read_at(off, len as usize)
                    .map_err(|e| QmError::io(path(), e))?;
                if data.len() != len as usize {
                    return Err(QmError::Corrupt {
                        path: path(),
                        detail: format!("message at {off} is cut short"),
                        source: None,
                    });
                }
                Reader::new(Bytes::from(data))
                    .message()
                    .map_err(|e| QmError::Corrupt {
                        path: path(),
                        detail: format!("message at {off} does not decode"),
                        source: Some(Box::new(e)),
                    })?
            }
        };
        msg.md.backout_count = p.backout_count;
        Ok(Slot {
            msg,
            persistent: p.spill.is_none(),
            expire_ms: p.expire_ms,
        })
    }

    /// A paged-out message left its queue for good: its spill copy is no longer needed.
    pub fn release(&self, p: &Paged) {
        if p.spill.is_none() {
            return;
        }
        let mut sp = self.spill.lock();
        sp.live = sp.live.saturating_sub(1);
        if sp.live == 0 {
            // Nothing in the spill file is needed any more: start it again from empty.
            if let Some((w, _)) = sp.file.as_mut()
                && let Err(e) = w.set_len(0)
            {
                tracing::warn!("cannot empty {}: {e}", self.spill_path.display());
            }
            sp.end = 0;
        }
    }

    /// Persistent messages live in the log.
    pub fn log_live(&self) -> usize {
        self.log.live.lock().len()
    }

    /// Bytes in the spill file.
    pub fn spill_bytes(&self) -> u64 {
        self.spill.lock().end
    }
}

#[cfg(test)]
#[path = "paging_tests.rs"]
mod tests;
