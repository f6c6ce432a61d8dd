//! Message operations outside a unit of work: put, get, browse, dead-letter.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{
    BrowseCursor, GetOptions, ID_NONE, Message, MsgId, Persistence, PropertyValue, PutOptions,
};
use crate::queue::{Hold, Hook, Key, Queue, Slot, WaitKind, now_ms, remaining_expiry};
use crate::wal::Op;

/// A put that passed every check and holds a place on its queue, not yet visible.
pub(crate) struct Staged {
    pub queue: Arc<Queue>,
    pub key: Key,
    pub slot: Slot,
}

impl Staged {
    /// The staged message handed to a getter directly instead of being put on its queue
    /// (its place given back), with its remaining expiry as a get reports it.
    pub fn into_delivered(self) -> Message {
        self.queue.unreserve();
        let expiry = remaining_expiry(&self.slot);
        let mut msg = self.slot.msg;
        msg.md.expiry = expiry;
        msg
    }

    pub fn log_op(&self) -> Op {
        Op::Put {
            seq: self.key.1,
            queue: self.queue.name.clone(),
            expire_ms: self.slot.expire_ms,
            msg: self.slot.msg.clone(),
        }
    }
}

/// A message taken off its queue by [`QueueManager::take_or_hook`] whose removal is not yet
/// logged: [`Taken::finish`] logs it (waiting for the disk when it is persistent).
pub(crate) struct Taken {
    queue: Arc<Queue>,
    key: Key,
    slot: Slot,
    _hold: Hold,
}

impl Taken {
    /// The log operation that makes the removal durable (`None`: nothing to log).
    pub fn log_op(&self, qm: &QueueManager) -> Option<Op> {
        (self.slot.persistent && qm.wal.is_some()).then_some(Op::Remove { seq: self.key.1 })
    }

    /// Hand out the message once its removal is logged (or needs no logging).
    pub fn into_message(self) -> Message {
        let expiry = remaining_expiry(&self.slot);
        let mut msg = self.slot.msg;
        msg.md.expiry = expiry;
        msg
    }

    /// Put the message back where it was (its removal was not logged).
    pub fn restore(self) {
        self.queue.restore(self.key, self.slot);
    }

    /// Log the removal without waiting for the disk: `then` gets the message (or the log's
    /// error, the message then back on its queue) on the log writer thread once the removal
    /// is synced, or at once on this thread when there is nothing to log. `then` must not
    /// block (see [`crate::wal::Wal::commit_then`]).
    pub fn finish_then(
        self,
        qm: &QueueManager,
        then: impl FnOnce(Result<Message>) + Send + 'static,
    ) {
        match (self.log_op(qm), &qm.wal) {
            (Some(op), Some(w)) => w.commit_then(
                vec![op],
                Box::new(move |r| match r {
                    Ok(()) => then(Ok(self.into_message())),
                    Err(e) => {
                        self.restore();
                        then(Err(e))
                    }
                }),
            ),
            _ => then(Ok(self.into_message())),
        }
    }
}

/// "YYYYMMDD" and "HHMMSSTH" (UTC) for a unix-millisecond time.
pub fn put_date_time(ms: u64) -> (String, String) {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let hs = (ms % 1000) / 10;
    (
        format!("{y:04}{m:02}{d:02}"),
        format!(
            "{:02}{:02}{:02}{hs:02}",
            sod / 3600,
            (sod / 60) % 60,
            sod % 60
        ),
    )
}

impl QueueManager {
    pub(crate) fn new_msg_id(&self, seq: u64) -> MsgId {
        let mut id = ID_NONE;
        id[..4].copy_from_slice(b"AMQ ");
        let mut name = [b' '; 8];
        for (d, s) in name.iter_mut().zip(self.cfg.name.bytes()) {
            *d = s;
        }
        id[4..12].copy_from_slice(&name);
        id[12..16].copy_from_slice(&self.boot.to_be_bytes());
        id[16..].copy_from_slice(&seq.to_be_bytes());
        id
    }

    /// Resolve, check and reserve a put; fills in MsgId, put date/time, persistence, expiry.
    pub(crate) fn stage_put(
        &self,
        queue: &str,
        mut msg: Message,
        opts: &PutOptions,
    ) -> Result<Staged> {
        self.check_open()?;
        if msg.md.priority > 9 {
            return Err(QmError::BadField {
                reason: 2050,
                text: format!("priority {} is not 0-9", msg.md.priority),
            });
        }
        if msg.md.expiry == 0 || msg.md.expiry < -1 {
            return Err(QmError::BadField {
                reason: 2013,
                text: format!(
                    "expiry {} is neither a positive number of tenths of a second nor -1 (unlimited)",
                    msg.md.expiry
                ),
            });
        }
        let q = self.resolve(queue, true)?;
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let persistent = {
            let mut st = q.state.lock();
            st.reserve(msg.body.len())?;
            let p = match msg.md.persistence {
                Persistence::AsQueueDef => st.def.default_persistence == Persistence::Persistent,
                p => p == Persistence::Persistent,
            };
            if p && st.def.temporary_dynamic {
                st.reserved -= 1;
                return Err(QmError::PersistentNotAllowed(q.name.clone()));
            }
            p
        };
        msg.md.persistence = if persistent {
            Persistence::Persistent
        } else {
            Persistence::NotPersistent
        };
        if msg.md.msg_id == ID_NONE || opts.new_msg_id {
            msg.md.msg_id = self.new_msg_id(seq);
        }
        // BackoutCount counts the backouts of this message on this queue: a put starts it at 0
        // whatever the descriptor said (MQ ignores it on MQPUT), so a re-put descriptor or a
        // move to the backout queue does not arrive as poison.
        msg.md.backout_count = 0;
        // A reply-to queue without a queue manager is one of this queue manager's, as MQ
        // fills it in.
        if !msg.md.reply_to_q.is_empty() && msg.md.reply_to_qmgr.trim().is_empty() {
            msg.md.reply_to_qmgr = self.name().to_string();
        }
        let now = now_ms();
        if !opts.set_all_context || msg.md.put_date.is_empty() {
            let (d, t) = put_date_time(now);
            msg.md.put_date = d;
            msg.md.put_time = t;
        }
        let expire_ms = if msg.md.expiry > 0 {
            now + msg.md.expiry as u64 * 100
        } else {
            0
        };
        let key = (9 - msg.md.priority, seq);
        Ok(Staged {
            queue: q,
            key,
            slot: Slot {
                msg,
                persistent,
                expire_ms,
            },
        })
    }

    /// Put a message (implicit syncpoint: a persistent message is on disk when this returns).
    /// Returns the MsgId, generated when the message had none.
    pub fn put(&self, queue: &str, msg: Message, opts: &PutOptions) -> Result<MsgId> {
        let s = self.stage_put(queue, msg, opts)?;
        if s.slot.persistent
            && let Some(w) = &self.wal
            && let Err(e) = w.commit(vec![s.log_op()])
        {
            s.queue.unreserve();
            return Err(e);
        }
        let id = s.slot.msg.md.msg_id;
        s.queue.insert_reserved(s.key, s.slot);
        Ok(id)
    }

    /// Log removal of expired persistent messages, without waiting.
    pub(crate) fn drop_expired(&self, expired: Vec<(Key, bool)>) {
        if let Some(w) = &self.wal {
            let ops: Vec<Op> = expired
                .iter()
                .filter(|(_, persistent)| *persistent)
                .map(|(k, _)| Op::Remove { seq: k.1 })
                .collect();
            if !ops.is_empty() {
                w.submit(ops);
            }
        }
    }

    /// Take the next matching message off `q`, waiting as the options say. The caller owns
    /// the message from then on (logging its removal or holding it in a unit of work).
    pub(crate) fn take(&self, q: &Queue, opts: &GetOptions) -> Result<Option<(Key, Slot, Hold)>> {
        let deadline = opts.wait.map(|d| Instant::now() + d);
        let kind = WaitKind::of(opts, false);
        let mut st = q.state.lock();
        loop {
            self.check_open()?;
            let mut expired = Vec::new();
            let r = st.take(opts, &mut expired);
            if !expired.is_empty() {
                self.drop_expired(expired);
            }
            if let Some((key, slot)) = r? {
                return Ok(Some((key, slot, q.hold())));
            }
            match deadline {
                Some(d) if Instant::now() < d => q.wait(&mut st, &kind, d),
                _ => return Ok(None),
            }
        }
    }

    /// Get (destructively) the next message matching `opts`; `Ok(None)` when there is none
    /// (MQRC_NO_MSG_AVAILABLE). A persistent message's removal is on disk when this returns.
    pub fn get(&self, queue: &str, opts: &GetOptions) -> Result<Option<Message>> {
        let q = self.resolve(queue, false)?;
        let Some((key, slot, _hold)) = self.take(&q, opts)? else {
            return Ok(None);
        };
        self.finish_get(&q, key, slot).map(Some)
    }

    /// A get outside syncpoint that does not wait: when nothing matches, `hook` is left on
    /// the queue (in the same critical section as the attempt, so no message slips past)
    /// and woken when a message it may match arrives. `Ok(None)` means it is hooked; a
    /// message found is returned [`Taken`], its removal not yet logged.
    pub(crate) fn take_or_hook(
        &self,
        queue: &str,
        opts: &GetOptions,
        hook: Hook,
    ) -> Result<Option<Taken>> {
        let q = self.resolve(queue, false)?;
        let mut st = q.state.lock();
        self.check_open()?;
        let mut expired = Vec::new();
        let r = st.take(opts, &mut expired);
        if !expired.is_empty() {
            self.drop_expired(expired);
        }
        let found = r?.map(|(key, slot)| (key, slot, q.hold()));
        if found.is_none() {
            st.hook(&WaitKind::of(opts, false), hook);
        }
        drop(st);
        Ok(found.map(|(key, slot, hold)| Taken {
            queue: q,
            key,
            slot,
            _hold: hold,
        }))
    }

    /// A get outside syncpoint that neither waits nor logs: the next matching message taken
    /// off the queue ([`Taken`], its removal not yet logged), or `None`.
    pub(crate) fn take_now(&self, queue: &str, opts: &GetOptions) -> Result<Option<Taken>> {
        let q = self.resolve(queue, false)?;
        let mut st = q.state.lock();
        self.check_open()?;
        let mut expired = Vec::new();
        let r = st.take(opts, &mut expired);
        let found = r.map(|f| f.map(|(key, slot)| (key, slot, q.hold())));
        drop(st);
        if !expired.is_empty() {
            self.drop_expired(expired);
        }
        Ok(found?.map(|(key, slot, hold)| Taken {
            queue: q,
            key,
            slot,
            _hold: hold,
        }))
    }

    /// Take a waiter left by [`QueueManager::take_or_hook`] off its queue; false when it is
    /// not there (woken, or the queue is gone).
    pub(crate) fn unhook(&self, queue: &str, opts: &GetOptions, id: u64) -> bool {
        self.resolve(queue, false)
            .is_ok_and(|q| q.unhook(&WaitKind::of(opts, false), id))
    }

    /// A hooked waiter woken for a message it will not take: wake the next plain waiter
    /// (the others of its kind were all woken anyway).
    pub(crate) fn pass_wake(&self, queue: &str, opts: &GetOptions) {
        if let (WaitKind::Plain, Ok(q)) = (WaitKind::of(opts, false), self.resolve(queue, false)) {
            q.wake_one();
        }
    }

    /// Log the removal of a message taken outside syncpoint and hand it out.
    pub(crate) fn finish_get(&self, q: &Queue, key: Key, slot: Slot) -> Result<Message> {
        if slot.persistent
            && let Some(w) = &self.wal
            && let Err(e) = w.commit(vec![Op::Remove { seq: key.1 }])
        {
            q.restore(key, slot);
            return Err(e);
        }
        let expiry = remaining_expiry(&slot);
        let mut msg = slot.msg;
        msg.md.expiry = expiry;
        Ok(msg)
    }

    /// Browse: copy of the next matching message after `cursor`, which then points at it.
    /// Start a fresh cursor to browse from the first message.
    pub fn browse(
        &self,
        queue: &str,
        opts: &GetOptions,
        cursor: &mut BrowseCursor,
    ) -> Result<Option<Message>> {
        let q = self.resolve(queue, false)?;
        let deadline = opts.wait.map(|d| Instant::now() + d);
        let mut st = q.state.lock();
        loop {
            self.check_open()?;
            let mut expired = Vec::new();
            let r = st.peek(opts, cursor.last, &mut expired);
            if !expired.is_empty() {
                self.drop_expired(expired);
            }
            if let Some((k, m)) = r? {
                cursor.last = Some(k);
                return Ok(Some(m));
            }
            match deadline {
                Some(d) if Instant::now() < d => q.wait(&mut st, &WaitKind::Filtered, d),
                _ => return Ok(None),
            }
        }
    }

    /// Put a message on the dead-letter queue with a dead-letter header held as properties:
    /// `dlh.reason` (Int, MQRC/MQFB code), `dlh.text` (String), `dlh.dest_q` (String, original
    /// destination; kept if the caller set it), `dlh.dest_qmgr`, `dlh.put_date`, `dlh.put_time`.
    pub fn put_dead_letter(&self, msg: Message, reason: u32, text: &str) -> Result<MsgId> {
        let dest = match msg.property("dlh.dest_q") {
            Some(PropertyValue::String(s)) => s.clone(),
            _ => String::new(),
        };
        self.put_dead_letter_from(msg, &dest, reason, text)
    }

    /// [`QueueManager::put_dead_letter`] naming the original destination queue.
    pub fn put_dead_letter_from(
        &self,
        msg: Message,
        dest_q: &str,
        reason: u32,
        text: &str,
    ) -> Result<MsgId> {
        let (dlq, msg) = self.dead_letter(msg, dest_q, reason, text)?;
        self.put(
            &dlq,
            msg,
            &PutOptions {
                set_all_context: true,
                ..PutOptions::default()
            },
        )
    }

    /// The dead-letter queue's name and `msg` with the dead-letter header properties set.
    pub(crate) fn dead_letter(
        &self,
        mut msg: Message,
        dest_q: &str,
        reason: u32,
        text: &str,
    ) -> Result<(String, Message)> {
        let dlq = self.cfg.dead_letter_queue.clone();
        if dlq.is_empty() {
            return Err(QmError::UnknownQueue(
                "(no dead-letter queue configured)".into(),
            ));
        }
        let (d, t) = put_date_time(now_ms());
        msg.set_property("dlh.reason", PropertyValue::Int(i64::from(reason)));
        msg.set_property("dlh.text", PropertyValue::String(text.into()));
        msg.set_property("dlh.dest_q", PropertyValue::String(dest_q.into()));
        msg.set_property(
            "dlh.dest_qmgr",
            PropertyValue::String(self.cfg.name.clone()),
        );
        msg.set_property("dlh.put_date", PropertyValue::String(d));
        msg.set_property("dlh.put_time", PropertyValue::String(t));
        Ok((dlq, msg))
    }

    /// True when `msg`, got from `queue`, has reached that queue's backout threshold
    /// (BOTHRESH > 0 and BackoutCount >= BOTHRESH); an alias uses its target's attributes.
    pub fn backout_threshold_reached(&self, queue: &str, msg: &Message) -> Result<bool> {
        let q = self.resolve(queue, false)?;
        let t = q.state.lock().def.backout_threshold;
        Ok(t > 0 && msg.md.backout_count >= t)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn put_date_time_formats_utc() {
        // 2024-02-29 13:45:07.89
        let (d, t) = super::put_date_time(1_709_214_307_890);
        assert_eq!(d, "20240229");
        assert_eq!(t, "13450789");
    }
}
