//! Integration pattern nodes whose state lives in the embedded queue manager, so that it
//! survives a restart and is shared by every instance of a flow (and by the flows of a server):
//! AggregateControl, AggregateRequest and AggregateReply (fan-out and fan-in of requests),
//! Collector (collections of messages from several terminals), Sequence (numbers per sequence
//! group) and Resequence (release in sequence order), and TimeoutControl and
//! TimeoutNotification (timers that propagate a stored message when they fall due).
//!
//! The state is kept as messages on system queues the nodes define on first use (see
//! [`state`]); every change joins the invocation's unit of work, so a flow that rolls back
//! leaves no half-recorded state behind.

pub mod aggregate;
pub mod collector;
pub mod resequence;
pub mod sequence;
pub mod state;
mod stored;
pub mod timeout;

use sluice_node_api::NodeSpec;

pub use aggregate::{AGGREGATE_CONTROL, AGGREGATE_REPLY, AGGREGATE_REQUEST};
pub use collector::COLLECTOR;
pub use resequence::RESEQUENCE;
pub use sequence::SEQUENCE;
pub use timeout::{TIMEOUT_CONTROL, TIMEOUT_NOTIFICATION};

/// What goes wrong with the state the pattern nodes keep in the queue manager.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// The queue manager refused an operation on a state queue.
    #[error("the queue manager refused an operation on {queue}: {source}")]
    Queue {
        queue: &'static str,
        #[source]
        source: sluice_qm::QmError,
    },
    /// The invocation's queue unit of work ended before a pattern node could use it.
    #[error("the invocation's unit of work has already ended (this is a bug, please report it)")]
    WorkEnded,
    /// Another invocation held an aggregation's state longer than a pattern node waits for it.
    #[error("aggregation {id} is held by another invocation for longer than {secs} s")]
    Busy { id: String, secs: u64 },
}

impl From<PatternError> for sluice_node_api::NodeError {
    fn from(e: PatternError) -> Self {
        sluice_node_api::NodeError::recoverable(e.to_string())
    }
}

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &AGGREGATE_CONTROL,
        &AGGREGATE_REQUEST,
        &AGGREGATE_REPLY,
        &COLLECTOR,
        &RESEQUENCE,
        &SEQUENCE,
        &TIMEOUT_CONTROL,
        &TIMEOUT_NOTIFICATION,
    ] {
        r(s);
    }
}
