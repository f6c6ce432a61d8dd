//! A Collector node's collections as the queue manager keeps them, and as an invocation changes
//! them.
//!
//! | queue | one message per | MsgId | CorrelId | properties |
//! |---|---|---|---|---|
//! | `SYSTEM.SLUICE.COLLECTOR.COLLECTIONS` | collection in flight | collection id | node id | `sluice.collectorName`, `sluice.seq` (its order), `sluice.correlation`, `sluice.collectionName`, `sluice.created` (ms since the epoch), `sluice.terminals` (names, one a line), `sluice.counts` (comma-separated, same order), `sluice.complete` (0/1) |
//! | same queue | Collector node waiting for a collection | node id | node id | `sluice.pending` (1: a control message asked for the next collection to complete) |
//! | `SYSTEM.SLUICE.COLLECTOR.EVENTS` | message collected | the queue manager's | collection id | `sluice.folder` (its input terminal), the message's own |
//!
//! An invocation that reaches a Collector holds the node (see [`HELD`]) until its unit of work
//! ends and changes a copy of its state in memory ([`CollectorWork`]): a message that comes back
//! to the node in the same invocation sees what the first one did. The changes are written in
//! one queue unit of work when the invocation commits, and forgotten when it rolls back.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use sluice_node_api::{Invocation, Resource, ResourceError};
use sluice_qm::{BrowseCursor, GetOptions, MsgId, Persistence, PropertyValue, PutOptions};
use sluice_qm::{QueueManager, UnitOfWork};

use crate::PatternError;
use crate::state::{self, HELD, P_FOLDER, key_id};

pub const COLLECTIONS_QUEUE: &str = "SYSTEM.SLUICE.COLLECTOR.COLLECTIONS";
pub const EVENTS_QUEUE: &str = "SYSTEM.SLUICE.COLLECTOR.EVENTS";

const P_COLLECTOR: &str = "sluice.collectorName";
const P_SEQ: &str = "sluice.seq";
const P_CORRELATION: &str = "sluice.correlation";
const P_COLLECTION_NAME: &str = "sluice.collectionName";
const P_CREATED: &str = "sluice.created";
const P_TERMINALS: &str = "sluice.terminals";
const P_COUNTS: &str = "sluice.counts";
const P_COMPLETE: &str = "sluice.complete";
const P_PENDING: &str = "sluice.pending";

/// One collection in flight.
pub(crate) struct Collection {
    pub id: MsgId,
    /// Its number among the node's collections: the order they were started in.
    pub seq: i64,
    pub correlation: String,
    pub name: String,
    pub created_ms: i64,
    /// Messages accepted per input terminal, in the order of the node's terminals.
    pub counts: Vec<u64>,
    pub complete: bool,
    pub persistent: bool,
    /// Whether its record is on the queue (committed before this invocation).
    on_queue: bool,
    /// Whether its record must be written again.
    changed: bool,
    /// Messages accepted in this invocation, in their stored form.
    added: Vec<sluice_qm::Message>,
}

/// A Collector node's state: its collections in the order they were started.
#[derive(Default)]
pub(crate) struct NodeState {
    pub collections: Vec<Collection>,
    /// A control message asked (with `first_complete`) for the next collection to complete.
    pub pending_first: bool,
    node_on_queue: bool,
    node_changed: bool,
}

impl NodeState {
    /// Read node `name`'s state from the queue manager (what is committed).
    pub(crate) fn load(
        qm: &QueueManager,
        name: &str,
        terminals: &[String],
    ) -> Result<NodeState, PatternError> {
        let node = node_id(name);
        let mut out = NodeState::default();
        let mut cursor = BrowseCursor::new();
        while let Some(m) = qm
            .browse(
                COLLECTIONS_QUEUE,
                &GetOptions::new().correl_id(node),
                &mut cursor,
            )
            .map_err(state::queue_error(COLLECTIONS_QUEUE))?
        {
            if state::text_property(&m, P_COLLECTOR) != name {
                continue;
            }
            if m.md.msg_id == node {
                out.pending_first = state::int_property(&m, P_PENDING) != 0;
                out.node_on_queue = true;
                continue;
            }
            out.collections.push(collection_of(&m, terminals));
        }
        out.collections.sort_by_key(|c| c.seq);
        Ok(out)
    }

    /// Start a collection for correlation string `correlation`.
    pub(crate) fn start(
        &mut self,
        node_name: &str,
        correlation: String,
        name: String,
        terminals: usize,
        now: i64,
    ) -> usize {
        let seq = next_seq();
        self.collections.push(Collection {
            id: key_id(&format!("collector\n{node_name}\n#{seq}")),
            seq,
            correlation,
            name,
            created_ms: now,
            counts: vec![0; terminals],
            complete: false,
            persistent: false,
            on_queue: false,
            changed: true,
            added: Vec::new(),
        });
        self.collections.len() - 1
    }

    pub(crate) fn set_pending(&mut self, pending: bool) {
        if self.pending_first != pending {
            self.pending_first = pending;
            self.node_changed = true;
        }
    }
}

impl Collection {
    /// Accept `stored` (a message in its stored form) on terminal `t`.
    pub(crate) fn add(&mut self, t: usize, mut stored: sluice_qm::Message, folder: &str) {
        stored.md.correl_id = self.id;
        stored.set_property(P_FOLDER, PropertyValue::String(folder.to_string()));
        if stored.md.persistence == Persistence::Persistent {
            self.persistent = true;
        }
        self.counts[t] += 1;
        self.changed = true;
        self.added.push(stored);
    }

    pub(crate) fn mark_complete(&mut self) {
        self.complete = true;
        self.changed = true;
    }
}

/// A new collection's number: microseconds since the epoch, made unique and increasing in this
/// process, so collections keep their order across restarts without a counter in the queue
/// manager to write for each one.
fn next_seq() -> i64 {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = (state::now_ms() as i64).saturating_mul(1000);
    let mut last = LAST.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}

fn node_id(name: &str) -> MsgId {
    key_id(&format!("collector\n{name}"))
}

fn collection_of(m: &sluice_qm::Message, terminals: &[String]) -> Collection {
    let names = state::text_property(m, P_TERMINALS);
    let counts_text = state::text_property(m, P_COUNTS);
    let stored: Vec<(&str, u64)> = names
        .split('\n')
        .zip(counts_text.split(','))
        .map(|(n, c)| (n, c.parse().unwrap_or(0)))
        .collect();
    // Counted by terminal name, so that a flow redeployed with its terminals in another order
    // keeps its collections.
    let counts = terminals
        .iter()
        .map(|t| stored.iter().find(|(n, _)| *n == t).map_or(0, |(_, c)| *c))
        .collect();
    Collection {
        id: m.md.msg_id,
        seq: state::int_property(m, P_SEQ),
        correlation: state::text_property(m, P_CORRELATION),
        name: state::text_property(m, P_COLLECTION_NAME),
        created_ms: state::int_property(m, P_CREATED),
        counts,
        complete: state::int_property(m, P_COMPLETE) != 0,
        persistent: m.md.persistence == Persistence::Persistent,
        on_queue: true,
        changed: false,
        added: Vec::new(),
    }
}

/// The node's state an invocation holds, written when it commits.
pub(crate) struct CollectorWork {
    qm: Arc<QueueManager>,
    name: String,
    node: MsgId,
    terminals: Vec<String>,
    pub state: NodeState,
    /// Collection records to remove (collections that ended).
    removed: Vec<MsgId>,
    /// Stored messages to remove (of collections that ended).
    consumed: Vec<MsgId>,
    held: bool,
}

impl CollectorWork {
    fn key(name: &str) -> String {
        format!("collector {name}")
    }

    /// The node's state for `inv`: held and read on the invocation's first visit.
    pub(crate) fn open<'a>(
        inv: &'a mut Invocation,
        qm: &Arc<QueueManager>,
        name: &str,
        terminals: &[String],
    ) -> Result<&'a mut CollectorWork, PatternError> {
        let key = Self::key(name);
        if inv.unit_of_work.get_mut::<CollectorWork>(&key).is_none() {
            let node = node_id(name);
            HELD.acquire(node)?;
            let mut work = CollectorWork {
                qm: Arc::clone(qm),
                name: name.to_string(),
                node,
                terminals: terminals.to_vec(),
                state: NodeState::default(),
                removed: Vec::new(),
                consumed: Vec::new(),
                held: true,
            };
            // Dropped on failure, which releases the node.
            work.state = NodeState::load(qm, name, terminals)?;
            inv.unit_of_work.join(&key, work);
        }
        inv.unit_of_work
            .get_mut::<CollectorWork>(&key)
            .ok_or(PatternError::WorkEnded)
    }

    /// Take collection `i` out of the state: its messages in arrival order, each with the
    /// input terminal it came on.
    pub(crate) fn take(
        &mut self,
        i: usize,
    ) -> Result<(Collection, Vec<(String, sluice_qm::Message)>), PatternError> {
        let mut c = self.state.collections.remove(i);
        let mut out = Vec::new();
        if c.on_queue {
            self.removed.push(c.id);
            let mut cursor = BrowseCursor::new();
            while let Some(m) = self
                .qm
                .browse(
                    EVENTS_QUEUE,
                    &GetOptions::new().correl_id(c.id),
                    &mut cursor,
                )
                .map_err(state::queue_error(EVENTS_QUEUE))?
            {
                self.consumed.push(m.md.msg_id);
                out.push(as_collected(m));
            }
        }
        for m in std::mem::take(&mut c.added) {
            out.push(as_collected(m));
        }
        Ok((c, out))
    }

    fn write(&mut self) -> Result<(), PatternError> {
        let mut uow = self.qm.begin();
        for id in &self.removed {
            uow.get(COLLECTIONS_QUEUE, &GetOptions::new().msg_id(*id))
                .map_err(state::queue_error(COLLECTIONS_QUEUE))?;
        }
        for id in &self.consumed {
            uow.get(EVENTS_QUEUE, &GetOptions::new().msg_id(*id))
                .map_err(state::queue_error(EVENTS_QUEUE))?;
        }
        let names = self.terminals.join("\n");
        for c in &mut self.state.collections {
            for m in std::mem::take(&mut c.added) {
                uow.put(EVENTS_QUEUE, m, &PutOptions::default())
                    .map_err(state::queue_error(EVENTS_QUEUE))?;
            }
            if !c.changed {
                continue;
            }
            if c.on_queue {
                uow.get(COLLECTIONS_QUEUE, &GetOptions::new().msg_id(c.id))
                    .map_err(state::queue_error(COLLECTIONS_QUEUE))?;
            }
            let mut rec = record(self.node, c.id, &self.name, c.persistent);
            rec.set_property(P_SEQ, PropertyValue::Int(c.seq));
            rec.set_property(P_CORRELATION, PropertyValue::String(c.correlation.clone()));
            rec.set_property(P_COLLECTION_NAME, PropertyValue::String(c.name.clone()));
            rec.set_property(P_CREATED, PropertyValue::Int(c.created_ms));
            rec.set_property(P_TERMINALS, PropertyValue::String(names.clone()));
            let counts: Vec<String> = c.counts.iter().map(u64::to_string).collect();
            rec.set_property(P_COUNTS, PropertyValue::String(counts.join(",")));
            rec.set_property(P_COMPLETE, PropertyValue::Int(i64::from(c.complete)));
            uow.put(COLLECTIONS_QUEUE, rec, &PutOptions::default())
                .map_err(state::queue_error(COLLECTIONS_QUEUE))?;
        }
        if self.state.node_changed {
            if self.state.node_on_queue {
                uow.get(COLLECTIONS_QUEUE, &GetOptions::new().msg_id(self.node))
                    .map_err(state::queue_error(COLLECTIONS_QUEUE))?;
            }
            if self.state.pending_first {
                let mut rec = record(self.node, self.node, &self.name, true);
                rec.set_property(P_PENDING, PropertyValue::Int(1));
                uow.put(COLLECTIONS_QUEUE, rec, &PutOptions::default())
                    .map_err(state::queue_error(COLLECTIONS_QUEUE))?;
            }
        }
        commit(uow)
    }

    fn release(&mut self) {
        if std::mem::take(&mut self.held) {
            HELD.release(&self.node);
        }
    }
}

/// A stored message with the input terminal it was collected on.
fn as_collected(m: sluice_qm::Message) -> (String, sluice_qm::Message) {
    (state::text_property(&m, P_FOLDER), m)
}

fn record(node: MsgId, id: MsgId, name: &str, persistent: bool) -> sluice_qm::Message {
    let mut rec = sluice_qm::Message::new(bytes::Bytes::new());
    rec.md.msg_id = id;
    rec.md.correl_id = node;
    rec.md.persistence = if persistent {
        Persistence::Persistent
    } else {
        Persistence::NotPersistent
    };
    rec.set_property(P_COLLECTOR, PropertyValue::String(name.to_string()));
    rec
}

fn commit(uow: UnitOfWork) -> Result<(), PatternError> {
    uow.commit().map_err(state::queue_error(COLLECTIONS_QUEUE))
}

impl Resource for CollectorWork {
    fn commit(&mut self) -> Result<(), ResourceError> {
        let r = self
            .write()
            .map_err(|e| ResourceError::new("a Collector's collections", e));
        self.release();
        r
    }

    fn rollback(&mut self) {
        self.release();
    }
}

impl Drop for CollectorWork {
    fn drop(&mut self) {
        self.release();
    }
}

/// Whether node `name` has a collection that is not complete (for the timer loop, without
/// holding the node).
pub(crate) fn any_incomplete(
    qm: &QueueManager,
    name: &str,
    terminals: &[String],
    mut due: impl FnMut(&Collection) -> bool,
) -> Result<bool, PatternError> {
    Ok(NodeState::load(qm, name, terminals)?
        .collections
        .iter()
        .any(|c| !c.complete && due(c)))
}
