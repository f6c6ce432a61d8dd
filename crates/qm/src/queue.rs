//! One local queue: priority-then-FIFO order, indexes by MsgId and CorrelId, expiry, depth
//! accounting. Each queue has its own lock; nothing here is global. Within its memory
//! window a queue holds whole messages; past it, only small entries whose messages are on
//! disk (see `paging.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{QmError, Result};
use crate::model::{GetOptions, Message, MsgId, QueueDef};
use crate::paging::{Entry, Pager};

/// Order key: (9 - priority, sequence) so that BTreeMap order is delivery order.
pub(crate) type Key = (u8, u64);

/// A message as held by a queue.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub msg: Message,
    pub persistent: bool,
    /// Unix ms; 0 = never expires.
    pub expire_ms: u64,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(crate) struct QueueState {
    pub def: QueueDef,
    msgs: BTreeMap<Key, Entry>,
    /// Where messages past the window go; `None` keeps every message in memory.
    pager: Option<Arc<Pager>>,
    /// Messages held whole in memory, and their body bytes.
    mem: usize,
    mem_bytes: usize,
    /// Body bytes of every message, and of those on disk (persistent or spilled).
    bytes: usize,
    disk_bytes: usize,
    by_correl: HashMap<MsgId, Keys>,
    by_msgid: HashMap<MsgId, Keys>,
    /// Messages with an expiry (skip the clock when zero).
    expiring: usize,
    /// Puts accepted but not yet visible (uncommitted, or waiting for the log).
    pub reserved: usize,
    pub deleted: bool,
    /// Getters waiting with no match criteria (woken one per new message).
    plain_waiters: usize,
    /// Browsers and getters matching by MsgId/GroupId (woken all per new message).
    filtered_waiters: usize,
    /// Getters waiting for one CorrelId (the request/reply pattern): only a message with
    /// that CorrelId wakes them, so 64 requesters on one reply queue do not all wake.
    correl_waiters: HashMap<MsgId, (Arc<Condvar>, usize)>,
    /// Gets waiting without a thread, by the same three kinds as the parked getters.
    plain_hooks: VecDeque<Hook>,
    filtered_hooks: Vec<Hook>,
    correl_hooks: HashMap<MsgId, Vec<Hook>>,
}

/// A get that waits without parking a thread (the network server's waits). When a message
/// it may match arrives, or the queue changes, its hook is taken off the queue and
/// [`Waiter::wake`] runs on the thread that made the change, after the queue lock is
/// released; the waiter then tries again and hooks itself back on if it still waits.
pub(crate) trait Waiter: Send + Sync {
    /// A message this waiter may match arrived (or the queue changed): try again.
    fn wake(self: Arc<Self>);

    /// A put handed this waiter its message directly (see [`Queue::claim_waiter`]): answer
    /// with it.
    fn deliver(self: Arc<Self>, msg: Message);
}

/// A registered waiter and its id (to take it off again when it times out).
pub(crate) type Hook = (u64, Arc<dyn Waiter>);

/// Run the waiters taken off a queue; call without holding any queue lock.
pub(crate) fn fire(hooks: Vec<Hook>) {
    for (_, h) in hooks {
        h.wake();
    }
}

/// A local queue.
pub(crate) struct Queue {
    pub name: String,
    pub state: Mutex<QueueState>,
    /// Plain getters.
    cond: Condvar,
    /// Filtered getters and browsers.
    cond_all: Condvar,
    /// One reference per message taken off the queue whose removal is not final yet (got
    /// under syncpoint, or outside it with its removal still being logged): see [`Hold`].
    holds: Arc<()>,
}

/// A message taken off a queue and not yet gone for good: the queue counts it as held
/// until this is dropped (with the removal final, or the message put back). Counting by
/// drop cannot drift whichever way the get ends.
pub(crate) struct Hold(#[allow(dead_code)] Arc<()>);

/// How a waiting caller wants to be woken.
pub(crate) enum WaitKind {
    Plain,
    Filtered,
    Correl(MsgId),
}

impl WaitKind {
    pub fn of(o: &GetOptions, browse: bool) -> WaitKind {
        match (
            o.correl_id,
            browse || o.msg_id.is_some() || o.group_id.is_some(),
        ) {
            (Some(c), false) => WaitKind::Correl(c),
            (None, false) => WaitKind::Plain,
            _ => WaitKind::Filtered,
        }
    }
}

impl Queue {
    pub fn new(def: QueueDef, pager: Option<Arc<Pager>>) -> Queue {
        Queue {
            name: def.name.clone(),
            state: Mutex::new(QueueState {
                def,
                msgs: BTreeMap::new(),
                pager,
                mem: 0,
                mem_bytes: 0,
                bytes: 0,
                disk_bytes: 0,
                by_correl: HashMap::new(),
                by_msgid: HashMap::new(),
                expiring: 0,
                reserved: 0,
                deleted: false,
                plain_waiters: 0,
                filtered_waiters: 0,
                correl_waiters: HashMap::new(),
                plain_hooks: VecDeque::new(),
                filtered_hooks: Vec::new(),
                correl_hooks: HashMap::new(),
            }),
            cond: Condvar::new(),
            cond_all: Condvar::new(),
            holds: Arc::new(()),
        }
    }

    /// Count a message just taken off the queue as held; call with the queue's lock held,
    /// so that a delete or clear, which checks under the lock, sees it.
    pub fn hold(&self) -> Hold {
        Hold(self.holds.clone())
    }

    /// Messages taken and not yet gone for good (see [`Hold`]).
    pub fn held(&self) -> usize {
        Arc::strong_count(&self.holds) - 1
    }

    /// Refuse to delete or clear the queue while units of work have uncommitted puts or gets
    /// on it (or removals and puts are on their way to the log), as MQ does: dropping them
    /// would make a commit that then succeeds put nowhere, and a restart would bring back
    /// what the running queue manager had lost.
    pub fn check_no_uncommitted(&self, st: &QueueState) -> Result<()> {
        let (puts, gets) = (st.reserved, self.held());
        if puts + gets == 0 {
            return Ok(());
        }
        Err(QmError::InUse {
            queue: self.name.clone(),
            by: format!("uncommitted work ({puts} put(s), {gets} get(s) not yet committed)"),
        })
    }

    /// Block (releasing the lock) until woken for a new message or `deadline`.
    pub fn wait(&self, st: &mut MutexGuard<'_, QueueState>, kind: &WaitKind, deadline: Instant) {
        match kind {
            WaitKind::Plain => {
                st.plain_waiters += 1;
                self.cond.wait_until(st, deadline);
                st.plain_waiters -= 1;
            }
            WaitKind::Filtered => {
                st.filtered_waiters += 1;
                self.cond_all.wait_until(st, deadline);
                st.filtered_waiters -= 1;
            }
            WaitKind::Correl(c) => {
                let cv = {
                    let e = st
                        .correl_waiters
                        .entry(*c)
                        .or_insert_with(|| (Arc::new(Condvar::new()), 0));
                    e.1 += 1;
                    e.0.clone()
                };
                cv.wait_until(st, deadline);
                if let Some(e) = st.correl_waiters.get_mut(c) {
                    e.1 -= 1;
                    if e.1 == 0 {
                        st.correl_waiters.remove(c);
                    }
                }
            }
        }
    }

    /// Wake the waiters a new message with this CorrelId may satisfy (lock held); the
    /// hooked waiters among them are returned, to be [`fire`]d once the lock is released.
    fn wake_for(&self, st: &mut QueueState, correl: &MsgId) -> Vec<Hook> {
        if st.plain_waiters > 0 {
            self.cond.notify_one();
        }
        if st.filtered_waiters > 0 {
            self.cond_all.notify_all();
        }
        if let Some((cv, _)) = st.correl_waiters.get(correl) {
            cv.notify_all();
        }
        let mut fired = std::mem::take(&mut st.filtered_hooks);
        if let Some(h) = st.plain_hooks.pop_front() {
            fired.push(h);
        }
        if !st.correl_hooks.is_empty()
            && let Some(hs) = st.correl_hooks.remove(correl)
        {
            fired.extend(hs);
        }
        fired
    }

    /// Wake every waiter (delete, alter, shutdown): each re-checks the queue. The hooked
    /// waiters are returned, to be [`fire`]d once the lock is released.
    #[must_use]
    pub fn wake_all(&self, st: &mut QueueState) -> Vec<Hook> {
        self.cond.notify_all();
        self.cond_all.notify_all();
        for (cv, _) in st.correl_waiters.values() {
            cv.notify_all();
        }
        let mut fired = std::mem::take(&mut st.filtered_hooks);
        fired.extend(st.plain_hooks.drain(..));
        for (_, hs) in st.correl_hooks.drain() {
            fired.extend(hs);
        }
        fired
    }

    /// Wake one plain getter, parked or hooked, to look at the queue again.
    pub fn wake_one(&self) {
        let fired = {
            let mut st = self.state.lock();
            if st.plain_waiters > 0 {
                self.cond.notify_one();
            }
            st.plain_hooks.pop_front()
        };
        fire(fired.into_iter().collect());
    }

    /// Take off the queue a hooked waiter that a message with CorrelId `correl` satisfies
    /// (a get by that CorrelId, else a get without match options), for a put to give the
    /// message to directly, without making it visible: the put then logs the message's
    /// removal in its own record. A waiter is hooked only while no message it matches is
    /// on the queue (each arrival fires the hooks it may satisfy), so it is the one that
    /// would have got this message.
    pub fn claim_waiter(&self, correl: &MsgId) -> Option<Hook> {
        let mut st = self.state.lock();
        if st.deleted || st.def.get_inhibited {
            return None;
        }
        if let Some(hs) = st.correl_hooks.get_mut(correl) {
            let h = (!hs.is_empty()).then(|| hs.remove(0));
            if hs.is_empty() {
                st.correl_hooks.remove(correl);
            }
            if h.is_some() {
                return h;
            }
        }
        st.plain_hooks.pop_front()
    }

    /// Take the waiter `id` off the queue; false when it is not there (already woken).
    pub fn unhook(&self, kind: &WaitKind, id: u64) -> bool {
        let mut st = self.state.lock();
        match kind {
            WaitKind::Plain => {
                let at = st.plain_hooks.iter().position(|h| h.0 == id);
                at.and_then(|i| st.plain_hooks.remove(i)).is_some()
            }
            WaitKind::Filtered => {
                let at = st.filtered_hooks.iter().position(|h| h.0 == id);
                at.map(|i| st.filtered_hooks.swap_remove(i)).is_some()
            }
            WaitKind::Correl(c) => {
                let Some(hs) = st.correl_hooks.get_mut(c) else {
                    return false;
                };
                let Some(i) = hs.iter().position(|h| h.0 == id) else {
                    return false;
                };
                hs.swap_remove(i);
                if hs.is_empty() {
                    st.correl_hooks.remove(c);
                }
                true
            }
        }
    }

    /// Insert a message that had reserved a place, and wake getters.
    pub fn insert_reserved(&self, key: Key, slot: Slot) {
        let fired = {
            let mut st = self.state.lock();
            st.reserved = st.reserved.saturating_sub(1);
            if st.deleted {
                return;
            }
            let correl = slot.msg.md.correl_id;
            st.insert(key, slot);
            self.wake_for(&mut st, &correl)
        };
        fire(fired);
    }

    /// Put back a message taken by a get that did not complete.
    pub fn restore(&self, key: Key, slot: Slot) {
        let fired = {
            let mut st = self.state.lock();
            if st.deleted {
                return;
            }
            let correl = slot.msg.md.correl_id;
            st.insert(key, slot);
            self.wake_for(&mut st, &correl)
        };
        fire(fired);
    }

    pub fn unreserve(&self) {
        let mut st = self.state.lock();
        st.reserved = st.reserved.saturating_sub(1);
    }
}

/// The keys of the messages with one MsgId or CorrelId. Most ids belong to one message
/// (MsgIds are unique, a reply's CorrelId is its request's): held inline, a deep queue's
/// index costs no allocation per message.
#[derive(Debug)]
enum Keys {
    One(Key),
    Many(BTreeSet<Key>),
}

impl Keys {
    fn add(idx: &mut HashMap<MsgId, Keys>, id: MsgId, key: Key) {
        match idx.get_mut(&id) {
            None => {
                idx.insert(id, Keys::One(key));
            }
            Some(Keys::One(k)) => {
                let k = *k;
                idx.insert(id, Keys::Many(BTreeSet::from([k, key])));
            }
            Some(Keys::Many(set)) => {
                set.insert(key);
            }
        }
    }

    fn drop(idx: &mut HashMap<MsgId, Keys>, id: MsgId, key: &Key) {
        let empty = match idx.get_mut(&id) {
            None => false,
            Some(Keys::One(k)) => k == key,
            Some(Keys::Many(set)) => {
                set.remove(key);
                match set.len() {
                    0 => true,
                    1 => {
                        if let Some(k) = set.pop_first() {
                            idx.insert(id, Keys::One(k));
                        }
                        false
                    }
                    _ => false,
                }
            }
        };
        if empty {
            idx.remove(&id);
        }
    }

    fn range<'a>(
        &'a self,
        range: (std::ops::Bound<Key>, std::ops::Bound<Key>),
    ) -> Box<dyn Iterator<Item = &'a Key> + 'a> {
        match self {
            Keys::One(k) => Box::new(
                std::iter::once(k).filter(move |k| std::ops::RangeBounds::contains(&range, *k)),
            ),
            Keys::Many(set) => Box::new(set.range(range)),
        }
    }
}

fn ids_match(o: &GetOptions, e: &Entry) -> bool {
    let (msg_id, correl_id, group_id) = e.ids();
    o.msg_id.is_none_or(|id| *msg_id == id)
        && o.correl_id.is_none_or(|id| *correl_id == id)
        && o.group_id.is_none_or(|id| *group_id == id)
}

impl QueueState {
    /// Leave a waiter on the queue until a message it may match arrives.
    pub fn hook(&mut self, kind: &WaitKind, hook: Hook) {
        match kind {
            WaitKind::Plain => self.plain_hooks.push_back(hook),
            WaitKind::Filtered => self.filtered_hooks.push(hook),
            WaitKind::Correl(c) => self.correl_hooks.entry(*c).or_default().push(hook),
        }
    }

    pub fn depth(&self) -> usize {
        self.msgs.len()
    }

    /// Check a put is allowed and hold a place for it.
    pub fn reserve(&mut self, body_len: usize) -> Result<()> {
        if self.deleted {
            return Err(QmError::UnknownQueue(self.def.name.clone()));
        }
        if self.def.put_inhibited {
            return Err(QmError::PutInhibited(self.def.name.clone()));
        }
        if body_len > self.def.max_msg_length {
            return Err(QmError::MsgTooBig {
                queue: self.def.name.clone(),
                len: body_len,
                max: self.def.max_msg_length,
            });
        }
        if self.msgs.len() + self.reserved >= self.def.max_depth {
            return Err(QmError::QueueFull {
                queue: self.def.name.clone(),
                max_depth: self.def.max_depth,
            });
        }
        self.reserved += 1;
        Ok(())
    }

    /// Add a message: whole while the queue's memory window has room, else paged out (its
    /// message on disk, only its entry here).
    pub fn insert(&mut self, key: Key, slot: Slot) {
        let entry = match &self.pager {
            Some(p)
                if !p
                    .window
                    .has_room(self.mem, self.mem_bytes, slot.msg.body.len()) =>
            {
                p.page_out(key.1, slot)
            }
            _ => Entry::Mem(Box::new(slot)),
        };
        self.insert_entry(key, entry);
    }

    /// Add an entry as it is (recovery, and putting back what a failed clear removed).
    pub fn insert_entry(&mut self, key: Key, entry: Entry) {
        let (msg_id, correl_id, _) = entry.ids();
        let (msg_id, correl_id) = (*msg_id, *correl_id);
        Keys::add(&mut self.by_correl, correl_id, key);
        Keys::add(&mut self.by_msgid, msg_id, key);
        if entry.expire_ms() != 0 {
            self.expiring += 1;
        }
        self.count(&entry);
        if let Some(old) = self.msgs.insert(key, entry) {
            self.uncount(&old);
        }
    }

    fn count(&mut self, e: &Entry) {
        let len = e.body_len();
        self.bytes += len;
        if matches!(e, Entry::Paged(_)) || e.persistent() {
            self.disk_bytes += len;
        }
        if matches!(e, Entry::Mem(_)) {
            self.mem += 1;
            self.mem_bytes += len;
        }
    }

    fn uncount(&mut self, e: &Entry) {
        let len = e.body_len();
        self.bytes -= len;
        if matches!(e, Entry::Paged(_)) || e.persistent() {
            self.disk_bytes -= len;
        }
        if matches!(e, Entry::Mem(_)) {
            self.mem -= 1;
            self.mem_bytes -= len;
        }
    }

    fn remove(&mut self, key: &Key) -> Option<Entry> {
        let entry = self.msgs.remove(key)?;
        let (msg_id, correl_id, _) = entry.ids();
        let (msg_id, correl_id) = (*msg_id, *correl_id);
        Keys::drop(&mut self.by_correl, correl_id, key);
        Keys::drop(&mut self.by_msgid, msg_id, key);
        if entry.expire_ms() != 0 {
            self.expiring -= 1;
        }
        self.uncount(&entry);
        Some(entry)
    }

    /// Remove a message for good (expired, or cleared and logged): its paged-out copy, if
    /// any, is released. Returns whether it was persistent.
    fn discard(&mut self, key: &Key) -> Option<bool> {
        let entry = self.remove(key)?;
        let persistent = entry.persistent();
        self.release(entry);
        Some(persistent)
    }

    fn release(&self, entry: Entry) {
        if let (Some(p), Entry::Paged(pg)) = (&self.pager, entry) {
            p.release(&pg);
        }
    }

    /// First key after `after` matching `o`, discarding expired messages into `expired`
    /// (with whether each was persistent).
    fn find(
        &mut self,
        o: &GetOptions,
        after: Option<Key>,
        expired: &mut Vec<(Key, bool)>,
    ) -> Option<Key> {
        let now = if self.expiring > 0 { now_ms() } else { 0 };
        loop {
            let candidate = {
                let lower = match after {
                    Some(k) => std::ops::Bound::Excluded(k),
                    None => std::ops::Bound::Unbounded,
                };
                let range = (lower, std::ops::Bound::Unbounded);
                // Use the smaller index when matching by id, so a get by CorrelId on a deep
                // queue does not scan it.
                let keys: Box<dyn Iterator<Item = &Key>> = if let Some(id) = o.correl_id {
                    match self.by_correl.get(&id) {
                        Some(s) => s.range(range),
                        None => return None,
                    }
                } else if let Some(id) = o.msg_id {
                    match self.by_msgid.get(&id) {
                        Some(s) => s.range(range),
                        None => return None,
                    }
                } else {
                    Box::new(self.msgs.range(range).map(|(k, _)| k))
                };
                let mut found = None;
                for k in keys {
                    let e = &self.msgs[k];
                    let exp = e.expire_ms();
                    if exp != 0 && exp <= now {
                        found = Some((*k, true));
                        break;
                    }
                    if ids_match(o, e) {
                        found = Some((*k, false));
                        break;
                    }
                }
                found
            };
            match candidate {
                None => return None,
                Some((k, true)) => {
                    if let Some(p) = self.discard(&k) {
                        expired.push((k, p));
                    }
                }
                Some((k, false)) => return Some(k),
            }
        }
    }

    /// Remove and return the next matching message (expired ones go to `expired`). A
    /// paged-out message is read back; if that fails it stays on the queue.
    pub fn take(
        &mut self,
        o: &GetOptions,
        expired: &mut Vec<(Key, bool)>,
    ) -> Result<Option<(Key, Slot)>> {
        if self.deleted {
            return Err(QmError::UnknownQueue(self.def.name.clone()));
        }
        if self.def.get_inhibited {
            return Err(QmError::GetInhibited(self.def.name.clone()));
        }
        let Some(k) = self.find(o, None, expired) else {
            return Ok(None);
        };
        let Some(entry) = self.remove(&k) else {
            return Ok(None);
        };
        match entry {
            Entry::Mem(s) => Ok(Some((k, *s))),
            Entry::Paged(pg) => {
                let read = match &self.pager {
                    Some(p) => p.read(k.1, &pg),
                    None => Err(crate::paging::no_pager()),
                };
                match read {
                    Ok(slot) => {
                        self.release(Entry::Paged(pg));
                        Ok(Some((k, slot)))
                    }
                    Err(e) => {
                        self.insert_entry(k, Entry::Paged(pg));
                        Err(e)
                    }
                }
            }
        }
    }

    /// Copy of the next matching message after `after` (browse).
    pub fn peek(
        &mut self,
        o: &GetOptions,
        after: Option<Key>,
        expired: &mut Vec<(Key, bool)>,
    ) -> Result<Option<(Key, Message)>> {
        if self.deleted {
            return Err(QmError::UnknownQueue(self.def.name.clone()));
        }
        if self.def.get_inhibited {
            return Err(QmError::GetInhibited(self.def.name.clone()));
        }
        let Some(k) = self.find(o, after, expired) else {
            return Ok(None);
        };
        match &self.msgs[&k] {
            Entry::Mem(s) => Ok(Some((k, s.msg.clone()))),
            Entry::Paged(pg) => match &self.pager {
                Some(p) => Ok(Some((k, p.read(k.1, pg)?.msg))),
                None => Err(crate::paging::no_pager()),
            },
        }
    }

    /// Remove everything; returns the removed entries (hand them to [`QueueState::dispose`]
    /// once their removal is final, or back to [`QueueState::insert_entry`]).
    pub fn clear(&mut self) -> Vec<(Key, Entry)> {
        self.by_correl.clear();
        self.by_msgid.clear();
        self.expiring = 0;
        self.mem = 0;
        self.mem_bytes = 0;
        self.bytes = 0;
        self.disk_bytes = 0;
        std::mem::take(&mut self.msgs).into_iter().collect()
    }

    /// Release the paged-out copies of entries removed for good.
    pub fn dispose(&self, removed: Vec<(Key, Entry)>) {
        for (_, e) in removed {
            self.release(e);
        }
    }

    /// Read paged-out messages back into memory, front first, while the window has room
    /// (after recovery, so that a shallow queue's gets find their messages in memory).
    pub fn fill_window(&mut self) {
        let Some(p) = self.pager.clone() else {
            return;
        };
        let mut mem = self.mem;
        let mut bytes = self.mem_bytes;
        let mut keys = Vec::new();
        for (k, e) in &self.msgs {
            if matches!(e, Entry::Mem(_)) {
                continue;
            }
            let len = e.body_len();
            if !p.window.has_room(mem, bytes, len) {
                break;
            }
            mem += 1;
            bytes += len;
            keys.push(*k);
        }
        for k in keys {
            let slot = match &self.msgs[&k] {
                Entry::Paged(pg) => p.read(k.1, pg),
                Entry::Mem(_) => continue,
            };
            match slot {
                Ok(slot) => {
                    if let Some(Entry::Paged(pg)) = self.remove(&k) {
                        p.release(&pg);
                    }
                    self.insert_entry(k, Entry::Mem(Box::new(slot)));
                }
                Err(e) => {
                    tracing::warn!(
                        "queue {}: message {} stays paged out: {e}",
                        self.def.name,
                        k.1
                    );
                    break;
                }
            }
        }
    }

    /// What the operator sees of this queue (see [`crate::QueueStats`]).
    pub fn stats(&self) -> crate::stats::QueueStats {
        // Sequence numbers grow with every put, so the oldest message is the one with the
        // lowest, the first of one of the ten priorities.
        let oldest = (0..=9u8)
            .filter_map(|p| self.msgs.range((p, 0)..=(p, u64::MAX)).next())
            .min_by_key(|(k, _)| k.1);
        let oldest_put = oldest.and_then(|(k, e)| match e {
            Entry::Mem(s) => crate::stats::put_ms(&s.msg.md),
            Entry::Paged(pg) => {
                let p = self.pager.as_ref()?;
                crate::stats::put_ms(&p.read(k.1, pg).ok()?.msg.md)
            }
        });
        crate::stats::QueueStats {
            depth: self.msgs.len(),
            bytes: self.bytes as u64,
            bytes_on_disk: self.disk_bytes as u64,
            in_memory: self.mem,
            in_memory_bytes: self.mem_bytes as u64,
            oldest_age_ms: oldest_put.map(|t| now_ms().saturating_sub(t)),
        }
    }
}

/// Remaining expiry, in tenths of a second, to report on get (MQ decrements it).
pub(crate) fn remaining_expiry(slot: &Slot) -> i32 {
    if slot.expire_ms == 0 {
        return slot.msg.md.expiry;
    }
    let left = slot.expire_ms.saturating_sub(now_ms()) / 100;
    left.clamp(1, i32::MAX as u64) as i32
}
