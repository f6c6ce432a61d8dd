//! AggregateControl: starts an aggregation.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use sluice_qm::{PropertyValue, PutOptions, QueueManager};
use sluice_tree::{Text, Value, field_type};

use super::CONTROL_FOLDER;
use crate::state::{self, AGGR_CONTROL, AGGR_REPLY, AGGR_REQUEST, P_DEADLINE, P_NAME, Queues};

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

impl Node for AggregateControl {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.queues
            .ensure(&self.qm, &[AGGR_CONTROL, AGGR_REQUEST, AGGR_REPLY])?;
        let persistence = state::persistence_of(msg);
        let deadline = match self.timeout_secs {
            0 => 0,
            s => state::now_ms().saturating_add(s.saturating_mul(1000)),
        };
        let mut control = sluice_qm::Message::new(bytes::Bytes::new());
        control.md.persistence = persistence;
        control.set_property(P_NAME, PropertyValue::String(self.name.clone()));
        control.set_property(P_DEADLINE, PropertyValue::Int(deadline as i64));
        let id = state::work(ctx.inv, &self.qm)?
            .put(AGGR_CONTROL, control, &PutOptions::default())
            .map_err(state::queue_error(AGGR_CONTROL))?;
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
