//! Units of work (syncpoint): puts invisible until commit, gets restored on rollback with
//! BackoutCount + 1, one log record (one group-commit sync) per commit.

use std::sync::Arc;

use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{GetOptions, Message, MsgId, PutOptions};
use crate::ops::Staged;
use crate::queue::{Hold, Key, Queue, Slot, remaining_expiry};
use crate::wal::Op;

struct Held {
    queue: Arc<Queue>,
    key: Key,
    slot: Slot,
    _hold: Hold,
}

/// A unit of work spanning any number of queues. Dropping it without `commit` rolls it back.
pub struct UnitOfWork {
    pub(crate) qm: Arc<QueueManager>,
    puts: Vec<Staged>,
    gets: Vec<Held>,
}

impl QueueManager {
    /// Start a unit of work.
    pub fn begin(self: &Arc<Self>) -> UnitOfWork {
        UnitOfWork {
            qm: self.clone(),
            puts: Vec::new(),
            gets: Vec::new(),
        }
    }
}

impl UnitOfWork {
    /// Put under syncpoint: checked (depth, length, inhibit) now, visible at commit.
    pub fn put(&mut self, queue: &str, msg: Message, opts: &PutOptions) -> Result<MsgId> {
        let s = self.qm.stage_put(queue, msg, opts)?;
        let id = s.slot.msg.md.msg_id;
        self.puts.push(s);
        Ok(id)
    }

    /// Get under syncpoint: the message leaves the queue now; rollback puts it back.
    pub fn get(&mut self, queue: &str, opts: &GetOptions) -> Result<Option<Message>> {
        let q = self.qm.resolve(queue, false)?;
        let Some((key, slot, hold)) = self.qm.take(&q, opts)? else {
            return Ok(None);
        };
        if slot.persistent
            && let Some(w) = &self.qm.wal
            && q.state.lock().def.harden_get_backout
        {
            // HARDENBO: make the raised count durable before the message is processed, so a
            // message whose processing kills the process still counts as backed out.
            let op = Op::Backout {
                seq: key.1,
                count: slot.msg.md.backout_count.saturating_add(1),
            };
            if let Err(e) = w.commit(vec![op]) {
                q.restore(key, slot);
                return Err(e);
            }
        }
        let mut msg = slot.msg.clone();
        msg.md.expiry = remaining_expiry(&slot);
        self.gets.push(Held {
            queue: q,
            key,
            slot,
            _hold: hold,
        });
        Ok(Some(msg))
    }

    /// Return the message of the last get to its queue untouched, as if it had not been got
    /// (its BackoutCount as it was): a batch of several inputs under one unit of work hands
    /// back a message it must process in a unit of its own.
    pub fn release_last_get(&mut self) {
        if let Some(h) = self.gets.pop() {
            self.release(h);
        }
    }

    fn release(&self, h: Held) {
        if h.slot.persistent
            && let Some(w) = &self.qm.wal
            && h.queue.state.lock().def.harden_get_backout
        {
            // The get hardened the raised count: the log takes it back.
            w.submit(vec![Op::Backout {
                seq: h.key.1,
                count: h.slot.msg.md.backout_count,
            }]);
        }
        h.queue.restore(h.key, h.slot);
    }

    /// Number of gets in the unit so far (a mark for [`UnitOfWork::rollback_charging_from`]).
    pub fn gets_len(&self) -> usize {
        self.gets.len()
    }

    /// Undo everything, counting the backout only against the gets from `mark` on (those of
    /// the work that failed): the messages got before it return as they were. A batch of
    /// several inputs under one unit of work is undone whole when one of them fails, but the
    /// ones processed before it did nothing wrong.
    pub fn rollback_charging_from(mut self, mark: usize) {
        let innocent: Vec<Held> = self.gets.drain(..mark.min(self.gets.len())).collect();
        for h in innocent {
            self.release(h);
        }
        self.undo();
    }

    /// Move a message that reached its queue's backout threshold, under this unit of work:
    /// to the queue's backout requeue queue (BOQNAME), or, when it has none or that put
    /// fails, to the dead-letter queue with reason 2362 (MQRC_BACKOUT_THRESHOLD_REACHED) in
    /// the dead-letter header, whose text says why, then `detail` (what failed, when known).
    /// Returns the name of the queue the message went to.
    pub fn requeue_backout(
        &mut self,
        source_queue: &str,
        msg: Message,
        detail: &str,
    ) -> Result<String> {
        let source = self.qm.resolve(source_queue, false)?;
        let boq = source.state.lock().def.backout_requeue_queue.clone();
        // A backout or dead-letter queue that is the input queue itself (or an alias of it)
        // would hand the message straight back: it refuses, as if it were full.
        let qm = self.qm.clone();
        let is_source = |name: &str| {
            qm.resolve(name, true)
                .is_ok_and(|q| Arc::ptr_eq(&q, &source))
        };
        let keep = PutOptions {
            set_all_context: true,
            ..PutOptions::default()
        };
        let why = if boq.is_empty() {
            "backout threshold reached; the queue has no backout requeue queue".to_string()
        } else if is_source(&boq) {
            format!("backout threshold reached; backout queue '{boq}' is the input queue itself")
        } else {
            match self.put(&boq, msg.clone(), &keep) {
                Ok(_) => return Ok(boq),
                Err(e) => format!("backout threshold reached; backout queue '{boq}' refused: {e}"),
            }
        };
        let why = if detail.is_empty() {
            why
        } else {
            format!("{why}; {detail}")
        };
        let (dlq, m) = self.qm.dead_letter(msg, source_queue, 2362, &why)?;
        if is_source(&dlq) {
            return Err(QmError::Invalid(format!(
                "{why}; the dead-letter queue '{dlq}' is the input queue itself, so the message stays where it is"
            )));
        }
        self.put(&dlq, m, &keep)?;
        Ok(dlq)
    }

    /// Number of puts and gets in the unit.
    pub fn len(&self) -> usize {
        self.puts.len() + self.gets.len()
    }

    /// True when nothing was done under this unit yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Make every put visible and every get final, atomically; persistent parts are on disk
    /// when this returns. If the log fails, the unit is rolled back and the error returned.
    pub fn commit(mut self) -> Result<()> {
        let ops: Vec<Op> = self
            .puts
            .iter()
            .filter(|s| s.slot.persistent)
            .map(Staged::log_op)
            .chain(
                self.gets
                    .iter()
                    .filter(|h| h.slot.persistent)
                    .map(|h| Op::Remove { seq: h.key.1 }),
            )
            .collect();
        if let (false, Some(w)) = (ops.is_empty(), &self.qm.wal)
            && let Err(e) = w.commit(ops)
        {
            self.undo();
            return Err(match e {
                e @ QmError::DiskFull { .. } => e,
                e => QmError::BackedOut {
                    why: "the log did not record the commit".into(),
                    source: Some(Box::new(e)),
                },
            });
        }
        for s in std::mem::take(&mut self.puts) {
            s.queue.insert_reserved(s.key, s.slot);
        }
        self.gets.clear();
        Ok(())
    }

    /// Undo everything: puts are discarded, got messages return with BackoutCount + 1.
    pub fn rollback(mut self) {
        self.undo();
    }

    fn undo(&mut self) {
        for s in self.puts.drain(..) {
            s.queue.unreserve();
        }
        for mut h in self.gets.drain(..) {
            h.slot.msg.md.backout_count = h.slot.msg.md.backout_count.saturating_add(1);
            h.queue.restore(h.key, h.slot);
        }
    }
}

impl Drop for UnitOfWork {
    fn drop(&mut self) {
        self.undo();
    }
}
