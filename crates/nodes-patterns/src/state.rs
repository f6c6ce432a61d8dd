//! Where the pattern nodes keep their state: messages on system queues of the embedded queue
//! manager, defined on first use (building a node touches nothing).
//!
//! | queue | one message per | MsgId | CorrelId | properties |
//! |---|---|---|---|---|
//! | `SYSTEM.SLUICE.AGGR.CONTROL` | aggregation in flight | aggregation id | — | `sluice.aggregateName`, `sluice.deadline` (ms since the epoch, 0 = none) |
//! | `SYSTEM.SLUICE.AGGR.REQUEST` | request not yet answered | the request's MsgId | aggregation id | `sluice.folder` |
//! | `SYSTEM.SLUICE.AGGR.REPLY` | reply stored until the aggregation completes | the reply's | aggregation id | `sluice.folder`, `sluice.domain`, `sluice.correlId`, `sluice.priority` |
//!
//! A state message is persistent when the message that caused it was (as the product keeps
//! an aggregation's state), so a persistent aggregation survives a restart. An aggregation's
//! control message is also its lock: whoever changes the aggregation gets it under its unit of
//! work first, and puts it back (or not, when the aggregation ends) in the same unit of work.

use std::sync::atomic::{AtomicBool, Ordering};

use sluice_node_api::{Invocation, Message, Resource, ResourceError};
use sluice_nodes_mq::QueueWork;
use sluice_nodes_mq::headers;
use sluice_qm::{Persistence, QmError, QueueDef, QueueManager};
use sluice_tree::Value;

use crate::PatternError;

pub const AGGR_CONTROL: &str = "SYSTEM.SLUICE.AGGR.CONTROL";
pub const AGGR_REQUEST: &str = "SYSTEM.SLUICE.AGGR.REQUEST";
pub const AGGR_REPLY: &str = "SYSTEM.SLUICE.AGGR.REPLY";

pub(crate) const P_NAME: &str = "sluice.aggregateName";
pub(crate) const P_DEADLINE: &str = "sluice.deadline";
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
