//! AggregateControl: starts an aggregation.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use std::sync::atomic::{AtomicU64, Ordering};

use sluice_node_api::{Resource, ResourceError};
use sluice_qm::{MsgId, PropertyValue, PutOptions, QueueManager};
use sluice_tree::{Text, Value, field_type};

use super::CONTROL_FOLDER;
use crate::state::{
    self, AGGR_CONTROL, AGGR_REPLY, AGGR_REQUEST, P_DEADLINE, P_EXPECTED, P_NAME, P_RECEIVED,
    Queues,
};

terminals! {
    /// AggregateControl's inputs.
    pub enum ControlInput {
        In = "in": "The message that starts an aggregation.",
    }
}

terminals! {
    /// AggregateControl's outputs.
    pub enum ControlOutput {
        Out = "out": "The input message, with `LocalEnvironment.ComIbmAggregateControlNode` saying which aggregation its requests belong to; wire it to the nodes that send the requests.",
    }
}

pub static AGGREGATE_CONTROL: NodeSpec = NodeSpec {
    type_name: "AggregateControl",
    summary: "Starts an aggregation (the fan-out of requests whose replies AggregateReply combines): records it, \
              with its timeout, in the queue manager and passes the message on to the requests.",
    inputs: ControlInput::SPECS,
    outputs: ControlOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A trip request starts aggregation TRIP, whose replies are awaited 30 seconds",
        properties: "aggregate_name: TRIP, timeout_secs: 30",
        esql: "",
        input: ExampleInput::xml("<trip><to>Paris</to></trip>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<trip><to>Paris</to></trip>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<AggregateControlProps>(),
};

properties! {
    /// AggregateControl's properties.
    pub struct AggregateControlProps {
        /// The aggregation's name: the AggregateReply node with the same `aggregate_name`
        /// combines its replies.
        aggregate_name: String,
        /// How long AggregateReply waits for the replies before it propagates what arrived to
        /// its `timeout` terminal; 0 waits for ever.
        timeout_secs: u64 = "0",
    }
}

impl BuildNode for AggregateControlProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if self.aggregate_name.trim().is_empty() {
            return Err(ConfigError::property("aggregate_name", "must not be empty"));
        }
        Ok(NodeImpl::Process(Arc::new(AggregateControl {
            qm: b.services.queue_manager()?,
            name: self.aggregate_name,
            timeout_secs: self.timeout_secs,
            queues: Queues::default(),
        })))
    }
}

struct AggregateControl {
    qm: Arc<QueueManager>,
    name: String,
    timeout_secs: u64,
    queues: Queues,
}

/// An aggregation's id: unique in this server and across its restarts (the time, a counter,
/// the process).
fn new_aggregation_id() -> MsgId {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut id = [0u8; 24];
    id[..4].copy_from_slice(b"AGGR");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    id[4..12].copy_from_slice(&nanos.to_be_bytes());
    id[12..20].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_be_bytes());
    id[20..24].copy_from_slice(&std::process::id().to_be_bytes());
    id
}

/// An aggregation being started by the invocation: its control message, put when the
/// invocation commits. It joins the unit of work after the input node's queue work and so
/// commits just before it: the control message is visible before any request is sent, and a
/// reply finds the number of requests to wait for in it, whatever order the commit makes the
/// requests' records visible in. A rollback records nothing; a failure of the queue commit
/// after it leaves an aggregation with no request, which its timeout ends.
pub(crate) struct ControlRecord {
    qm: Arc<QueueManager>,
    id: MsgId,
    name: String,
    deadline: u64,
    persistence: sluice_qm::Persistence,
    /// Requests the AggregateRequest nodes recorded.
    pub(crate) expected: i64,
}

impl ControlRecord {
    pub(crate) fn key(id: &MsgId) -> String {
        format!("aggregate {}", sluice_qm::id_to_hex(id))
    }
}

impl Resource for ControlRecord {
    fn commit(&mut self) -> Result<(), ResourceError> {
        if self.expected == 0 {
            return Ok(());
        }
        let mut control = sluice_qm::Message::new(bytes::Bytes::new());
        control.md.msg_id = self.id;
        control.md.persistence = self.persistence;
        control.set_property(P_NAME, PropertyValue::String(self.name.clone()));
        control.set_property(P_DEADLINE, PropertyValue::Int(self.deadline as i64));
        control.set_property(P_EXPECTED, PropertyValue::Int(self.expected));
        control.set_property(P_RECEIVED, PropertyValue::Int(0));
        self.qm
            .put(AGGR_CONTROL, control, &PutOptions::default())
            .map(|_| ())
            .map_err(|e| ResourceError::new("an aggregation's control message", e))
    }

    fn rollback(&mut self) {}
}

impl Node for AggregateControl {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.queues
            .ensure(&self.qm, &[AGGR_CONTROL, AGGR_REQUEST, AGGR_REPLY])?;
        let persistence = state::persistence_of(msg);
        let deadline = match self.timeout_secs {
            0 => 0,
            s => state::now_ms().saturating_add(s.saturating_mul(1000)),
        };
        let id = new_aggregation_id();
        // The control message is put when the invocation commits, with the number of requests
        // the AggregateRequest nodes recorded meanwhile.
        ctx.inv.unit_of_work.join(
            &ControlRecord::key(&id),
            ControlRecord {
                qm: Arc::clone(&self.qm),
                id,
                name: self.name.clone(),
                deadline,
                persistence,
                expected: 0,
            },
        );
        let mut out = msg.clone();
        let le = &mut out.local_environment;
        let r = le.root();
        if let Some(old) = le.child_named(r, None, CONTROL_FOLDER.as_bytes(), 0)? {
            le.delete(old)?;
        }
        let f = le.create_last_child(
            r,
            field_type::NAME,
            Text::from_static(CONTROL_FOLDER),
            Value::Null,
        )?;
        let name = le.alloc_text(self.name.as_bytes());
        let aggr = le.alloc_text(&id);
        let persistent = persistence == sluice_qm::Persistence::Persistent;
        for (n, v) in [
            ("AggregateName", Value::Character(name)),
            ("Timeout", Value::Integer(self.timeout_secs as i64)),
            ("AggregationId", Value::Blob(aggr)),
            ("Persistent", Value::Boolean(persistent)),
        ] {
            le.create_last_child(f, field_type::NAME_VALUE, Text::from_static(n), v)?;
        }
        ctx.propagate(ControlOutput::Out, &mut out)
    }
}
