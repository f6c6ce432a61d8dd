//! Sequence: gives each message the next number of its sequence group, as the product's
//! Sequence node does. A group's last number is a message on `SYSTEM.SLUICE.SEQUENCE`, taken
//! and put back with the next number in a unit of work the invocation's ends: the next message
//! of the group waits until this one's invocation commits (its number is then used) or rolls
//! back (it is given again), so numbers stay in order across instances and restarts.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use sluice_qm::{GetOptions, Persistence, PropertyValue, PutOptions, QueueManager};
use sluice_tree::xpath::{XPath, XPathContext};
use sluice_tree::{Text, Value, field_type};

use crate::PatternError;
use crate::state::{self, GroupWork, HELD, Queues, key_id};

pub const SEQUENCE_QUEUE: &str = "SYSTEM.SLUICE.SEQUENCE";
const P_KEY: &str = "sluice.sequenceKey";
const P_NUMBER: &str = "sluice.number";

terminals! {
    /// Sequence's inputs.
    pub enum SequenceInput {
        In = "in": "The message to number.",
    }
}

terminals! {
    /// Sequence's outputs.
    pub enum SequenceOutput {
        Failure = "failure": "The node raised an exception (the group path does not evaluate, the state is unavailable).",
        Out = "out": "The message, with `LocalEnvironment.Sequence.Number` and `.Group`.",
    }
}

pub static SEQUENCE: NodeSpec = NodeSpec {
    type_name: "Sequence",
    summary: "Gives each message the next number of its sequence group (1, 2, 3 …) in `LocalEnvironment.Sequence.Number`; \
              the numbers are kept in the queue manager, so they continue after a restart.",
    inputs: SequenceInput::SPECS,
    outputs: SequenceOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Orders are numbered per customer",
        properties: "sequence_group_path: '$Body/order/customer'",
        esql: "",
        input: ExampleInput::xml("<order><customer>C7</customer></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><customer>C7</customer></order>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SequenceProps>(),
};

properties! {
    /// Sequence's properties.
    pub struct SequenceProps {
        /// An XPath expression whose string value is the message's sequence group
        /// (`$Body/order/customer`, `$Root/MQMD/GroupId`); empty puts every message in one
        /// group.
        sequence_group_path: String = "",
        /// The name the groups' numbers are kept under; empty uses the flow's name and the
        /// node's label. Sequence nodes with the same name share their groups' numbers.
        sequence_name: String = "",
    }
}

impl BuildNode for SequenceProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let group = match self.sequence_group_path.trim() {
            "" => None,
            src => Some(XPath::compile(src).map_err(|e| {
                ConfigError::property("sequence_group_path", format!("{e} in `{src}`"))
            })?),
        };
        let name = match self.sequence_name.trim() {
            "" => format!("{}/{}", b.flow, b.label),
            n => n.to_string(),
        };
        Ok(NodeImpl::Process(Arc::new(Sequence {
            qm: b.services.queue_manager()?,
            group,
            name,
            queues: Queues::default(),
        })))
    }
}

struct Sequence {
    qm: Arc<QueueManager>,
    group: Option<XPath>,
    name: String,
    queues: Queues,
}

impl Sequence {
    fn group_of(&self, ctx: &mut Ctx<'_>, msg: &mut Message) -> Result<String, NodeError> {
        let Some(x) = &self.group else {
            return Ok(String::new());
        };
        let mut xc = XPathContext::new(msg, &mut ctx.inv.environment);
        x.evaluate_string(&mut xc)
            .map_err(|e| NodeError::recoverable(format!("sequence_group_path: {e}")))
    }

    /// The group's next number, its state changed in the group's unit of work.
    fn next_number(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        persistence: Persistence,
    ) -> Result<i64, NodeError> {
        let id = key_id(key);
        let res_key = format!("sequence {}", sluice_qm::id_to_hex(&id));
        // A message numbered twice in one invocation (PROPAGATE in a loop) already holds it.
        if ctx
            .inv
            .unit_of_work
            .get_mut::<GroupWork>(&res_key)
            .is_none()
        {
            HELD.acquire(id)?;
            ctx.inv.unit_of_work.join(
                &res_key,
                GroupWork {
                    uow: Some(self.qm.begin()),
                    key: id,
                },
            );
        }
        let uow = ctx
            .inv
            .unit_of_work
            .get_mut::<GroupWork>(&res_key)
            .and_then(|w| w.uow.as_mut())
            .ok_or(PatternError::WorkEnded)?;
        let current = uow
            .get(SEQUENCE_QUEUE, &GetOptions::new().msg_id(id))
            .map_err(state::queue_error(SEQUENCE_QUEUE))?;
        let (mut rec, last) = match current {
            Some(rec) if state::text_property(&rec, P_KEY) != key => {
                return Err(NodeError::recoverable(format!(
                    "sequence group '{key}' has the same key as '{}': rename the sequence",
                    state::text_property(&rec, P_KEY)
                )));
            }
            Some(rec) => {
                let last = state::int_property(&rec, P_NUMBER);
                (rec, last)
            }
            None => {
                let mut rec = sluice_qm::Message::new(bytes::Bytes::new());
                rec.md.msg_id = id;
                rec.set_property(P_KEY, PropertyValue::String(key.to_string()));
                (rec, 0)
            }
        };
        let next = last + 1;
        rec.set_property(P_NUMBER, PropertyValue::Int(next));
        rec.md.persistence = persistence;
        uow.put(SEQUENCE_QUEUE, rec, &PutOptions::default())
            .map_err(state::queue_error(SEQUENCE_QUEUE))?;
        Ok(next)
    }
}

impl Node for Sequence {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.queues.ensure(&self.qm, &[SEQUENCE_QUEUE])?;
        let group = self.group_of(ctx, msg)?;
        let key = format!("{}\n{group}", self.name);
        let persistence = state::persistence_of(msg);
        let number = self.next_number(ctx, &key, persistence)?;
        let mut out = msg.clone();
        let le = &mut out.local_environment;
        let r = le.root();
        if let Some(old) = le.child_named(r, None, b"Sequence", 0)? {
            le.delete(old)?;
        }
        let f = le.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("Sequence"),
            Value::Null,
        )?;
        le.create_last_child(
            f,
            field_type::NAME_VALUE,
            Text::from_static("Number"),
            Value::Integer(number),
        )?;
        let g = le.alloc_text(group.as_bytes());
        le.create_last_child(
            f,
            field_type::NAME_VALUE,
            Text::from_static("Group"),
            Value::Character(g),
        )?;
        ctx.propagate(SequenceOutput::Out, &mut out)
    }
}
