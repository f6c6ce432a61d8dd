//! Where the pattern nodes keep their state: messages on system queues of the embedded queue
//! manager, defined on first use (building a node touches nothing).
//!
//! | queue | one message per | MsgId | CorrelId | properties |
//! |---|---|---|---|---|
//! | `SYSTEM.SLUICE.AGGR.CONTROL` | aggregation in flight | aggregation id | — | `sluice.aggregateName`, `sluice.deadline` (ms since the epoch, 0 = none), `sluice.expected` (requests sent), `sluice.received` (replies filed) |
//! | `SYSTEM.SLUICE.AGGR.REQUEST` | request not yet answered | the request's MsgId | aggregation id | `sluice.folder` |
//! | `SYSTEM.SLUICE.AGGR.REPLY` | reply stored until the aggregation completes | the reply's | aggregation id | `sluice.folder`, `sluice.domain`, `sluice.correlId`, `sluice.priority` |
//!
//! A state message is persistent when the message that caused it was (as the product keeps
//! an aggregation's state), so a persistent aggregation survives a restart. An aggregation's
//! control message is also its lock: whoever changes the aggregation gets it under its unit of
//! work first, and puts it back (or not, when the aggregation ends) in the same unit of work.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use sluice_node_api::{Invocation, Message, Resource, ResourceError};
use sluice_nodes_mq::QueueWork;
use sluice_nodes_mq::headers;
use sluice_qm::{MsgId, Persistence, QmError, QueueDef, QueueManager};
use sluice_tree::Value;

use crate::PatternError;

pub const AGGR_CONTROL: &str = "SYSTEM.SLUICE.AGGR.CONTROL";
pub const AGGR_REQUEST: &str = "SYSTEM.SLUICE.AGGR.REQUEST";
pub const AGGR_REPLY: &str = "SYSTEM.SLUICE.AGGR.REPLY";

pub(crate) const P_NAME: &str = "sluice.aggregateName";
pub(crate) const P_DEADLINE: &str = "sluice.deadline";
pub(crate) const P_EXPECTED: &str = "sluice.expected";
pub(crate) const P_RECEIVED: &str = "sluice.received";
pub(crate) const P_FOLDER: &str = "sluice.folder";
pub(crate) const P_DOMAIN: &str = "sluice.domain";
pub(crate) const P_CORREL: &str = "sluice.correlId";
pub(crate) const P_PRIORITY: &str = "sluice.priority";

/// Defines the state queues once per node.
#[derive(Default)]
pub(crate) struct Queues {
    ready: AtomicBool,
}

impl Queues {
    pub(crate) fn ensure(
        &self,
        qm: &QueueManager,
        names: &[&'static str],
    ) -> Result<(), PatternError> {
        if self.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        for &name in names {
            if qm.queue_def(name).is_ok() {
                continue;
            }
            let def = QueueDef {
                max_depth: 999_999_999,
                default_persistence: Persistence::Persistent,
                ..QueueDef::local(name)
            };
            match qm.define(def) {
                // Another node defined it meanwhile.
                Ok(()) | Err(QmError::QueueExists(_)) => {}
                Err(source) => {
                    return Err(PatternError::Queue {
                        queue: name,
                        source,
                    });
                }
            }
        }
        self.ready.store(true, Ordering::Release);
        Ok(())
    }
}

/// Keeps an input node's batch to this one message: MQInput with `commit_count` above 1
/// commits its batch when an invocation used another resource, and an aggregation's lock must
/// not stay held by an open batch that could wait for it next.
pub(crate) struct StateTouched;

impl StateTouched {
    pub(crate) const KEY: &str = "patterns";
}

impl Resource for StateTouched {
    fn commit(&mut self) -> Result<(), ResourceError> {
        Ok(())
    }

    fn rollback(&mut self) {}
}

/// The queue manager's unit of work of the invocation, joined now when the flow has none.
pub(crate) fn work<'a>(
    inv: &'a mut Invocation,
    qm: &std::sync::Arc<QueueManager>,
) -> Result<&'a mut sluice_qm::UnitOfWork, PatternError> {
    inv.unit_of_work
        .get_or_join(StateTouched::KEY, || Ok::<_, PatternError>(StateTouched))?;
    inv.unit_of_work
        .get_or_join(QueueWork::KEY, || {
            Ok::<_, PatternError>(QueueWork::new(qm.begin()))
        })?
        .uow()
        .ok_or(PatternError::WorkEnded)
}

/// Persistent unless the message's MQMD says it is not (a message from HTTP has none: its
/// state is kept like a persistent one's).
pub(crate) fn persistence_of(msg: &mut Message) -> Persistence {
    match headers::md_field(msg, "Persistence") {
        Ok(Some(Value::Boolean(false))) => Persistence::NotPersistent,
        Ok(Some(Value::Integer(0))) => Persistence::NotPersistent,
        _ => Persistence::Persistent,
    }
}

pub(crate) fn queue_error(queue: &'static str) -> impl FnOnce(QmError) -> PatternError {
    move |source| PatternError::Queue { queue, source }
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(crate) fn text_property(m: &sluice_qm::Message, name: &str) -> String {
    match m.property(name) {
        Some(sluice_qm::PropertyValue::String(s)) => s.clone(),
        _ => String::new(),
    }
}

pub(crate) fn int_property(m: &sluice_qm::Message, name: &str) -> i64 {
    match m.property(name) {
        Some(sluice_qm::PropertyValue::Int(i)) => *i,
        _ => 0,
    }
}

/// How long a message waits for a group another invocation holds.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(30);

/// The groups (Sequence's, Resequence's) an invocation of this server holds. A group's state message is out of
/// its queue while an invocation holds it, so "not on the queue" cannot tell a new group from a
/// held one: the holder is recorded here instead, from its get until its commit or rollback
/// ended (one server per queue manager, so this process sees every holder).
#[derive(Default)]
pub(crate) struct Held {
    keys: Mutex<HashSet<MsgId>>,
    released: Condvar,
}

pub(crate) static HELD: std::sync::LazyLock<Held> = std::sync::LazyLock::new(Held::default);

impl Held {
    /// Wait until no invocation holds `key`, then hold it.
    pub(crate) fn acquire(&self, key: MsgId) -> Result<(), PatternError> {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let start = std::time::Instant::now();
        while keys.contains(&key) {
            if start.elapsed() >= LOCK_WAIT {
                return Err(PatternError::Busy {
                    id: sluice_qm::id_to_hex(&key),
                    secs: LOCK_WAIT.as_secs(),
                });
            }
            keys = self
                .released
                .wait_timeout(keys, LOCK_WAIT)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        keys.insert(key);
        Ok(())
    }

    pub(crate) fn release(&self, key: &MsgId) {
        self.keys
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
        self.released.notify_all();
    }
}

/// A group's number, changed in a queue unit of work of its own that the invocation's unit of
/// work ends: committed (then the group released) when the invocation commits. It commits
/// before the input node's get: should that commit fail, the message comes again and takes
/// the next number, leaving a gap, never a duplicate.
pub(crate) struct GroupWork {
    pub(crate) uow: Option<sluice_qm::UnitOfWork>,
    pub(crate) key: MsgId,
}

impl Resource for GroupWork {
    fn commit(&mut self) -> Result<(), ResourceError> {
        let r = match self.uow.take() {
            Some(u) => u
                .commit()
                .map_err(|e| ResourceError::new("a sequence group's state", e)),
            None => Ok(()),
        };
        HELD.release(&self.key);
        r
    }

    fn rollback(&mut self) {
        if let Some(u) = self.uow.take() {
            u.rollback();
        }
        HELD.release(&self.key);
    }
}

impl Drop for GroupWork {
    fn drop(&mut self) {
        if let Some(u) = self.uow.take() {
            u.rollback();
            HELD.release(&self.key);
        }
    }
}

/// A group's key as a 24-byte id: three FNV-1a hashes of the name and group (the full key is
/// kept beside it and checked, so a collision is reported, never merged).
pub(crate) fn key_id(key: &str) -> MsgId {
    let mut id = [0u8; 24];
    for (i, chunk) in id.chunks_mut(8).enumerate() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in key.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        chunk.copy_from_slice(&h.to_be_bytes());
    }
    id
}
