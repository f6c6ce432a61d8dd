//! AggregateRequest: records the requests an aggregation sent.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use sluice_qm::{MsgId, Persistence, PropertyValue, PutOptions, QueueManager};
use sluice_tree::{Tree, Value};

use super::CONTROL_FOLDER;
use super::control::ControlRecord;
use crate::state::{self, AGGR_CONTROL, AGGR_REPLY, AGGR_REQUEST, P_FOLDER, Queues};

terminals! {
    /// AggregateRequest's inputs.
    pub enum RequestInput {
        In = "in": "The message an MQOutput node propagated after sending a request.",
    }
}

terminals! {
    /// AggregateRequest's outputs.
    pub enum RequestOutput {
        Out = "out": "The input message, once its requests are recorded.",
    }
}

pub static AGGREGATE_REQUEST: NodeSpec = NodeSpec {
    type_name: "AggregateRequest",
    summary: "Records the requests an MQOutput node just sent for an aggregation (their MsgIds from \
              `LocalEnvironment.WrittenDestination`), so that AggregateReply files each reply under `folder_name`.",
    inputs: RequestInput::SPECS,
    outputs: RequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The hotel request just sent is recorded; its reply will be filed under `Hotel`",
            properties: "folder_name: Hotel",
            esql: "",
            input: ExampleInput::xml("<hotel><city>Paris</city></hotel>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("out", "<hotel><city>Paris</city></hotel>")]),
            runs: Runs::No(
                "it needs the LocalEnvironment an AggregateControl and an MQOutput node write before it.",
            ),
        },
        NodeExample {
            title: "A message that did not pass an AggregateControl node belongs to no aggregation",
            properties: "folder_name: Hotel",
            esql: "",
            input: ExampleInput::xml("<hotel><city>Paris</city></hotel>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises(
                "the message has no LocalEnvironment.ComIbmAggregateControlNode",
            ),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<AggregateRequestProps>(),
};

properties! {
    /// AggregateRequest's properties.
    pub struct AggregateRequestProps {
        /// The folder of `Root.ComIbmAggregateReplyBody` that the reply to this request is
        /// filed under in the combined reply.
        folder_name: String,
    }
}

impl BuildNode for AggregateRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if self.folder_name.trim().is_empty() {
            return Err(ConfigError::property("folder_name", "must not be empty"));
        }
        Ok(NodeImpl::Process(Arc::new(AggregateRequest {
            qm: b.services.queue_manager()?,
            folder: self.folder_name,
            queues: Queues::default(),
        })))
    }
}

struct AggregateRequest {
    qm: Arc<QueueManager>,
    folder: String,
    queues: Queues,
}

/// The aggregation a message belongs to, from AggregateControl's LocalEnvironment folder.
fn aggregation_of(le: &mut Tree) -> Result<(MsgId, Persistence), NodeError> {
    let r = le.root();
    let no_control = || {
        NodeError::recoverable(format!(
            "the message has no LocalEnvironment.{CONTROL_FOLDER}: only messages from an AggregateControl node can be recorded as requests"
        ))
    };
    let f = le
        .child_named(r, None, CONTROL_FOLDER.as_bytes(), 0)?
        .ok_or_else(no_control)?;
    let id = le
        .child_named(f, None, b"AggregationId", 0)?
        .and_then(|i| le.value_bytes(i))
        .filter(|b| b.len() == 24)
        .ok_or_else(no_control)?;
    let mut aggr = [0u8; 24];
    aggr.copy_from_slice(id);
    let persistent = match le.child_named(f, None, b"Persistent", 0)? {
        Some(p) => le.value(p) != Value::Boolean(false),
        None => true,
    };
    let p = if persistent {
        Persistence::Persistent
    } else {
        Persistence::NotPersistent
    };
    Ok((aggr, p))
}

/// The MsgIds of the messages the last MQOutput node wrote.
fn written_msg_ids(le: &mut Tree) -> Result<Vec<MsgId>, NodeError> {
    let r = le.root();
    let mut last = None;
    for c in le.children(r)? {
        if le.name_bytes(c) == b"WrittenDestination" {
            last = Some(c);
        }
    }
    let mut out = Vec::new();
    let Some(wd) = last else { return Ok(out) };
    let Some(mq) = le.child_named(wd, None, b"MQ", 0)? else {
        return Ok(out);
    };
    for d in le.children(mq)? {
        if le.name_bytes(d) != b"DestinationData" {
            continue;
        }
        if let Some(i) = le.child_named(d, None, b"msgId", 0)?
            && let Some(b) = le.value_bytes(i)
            && b.len() == 24
        {
            let mut id = [0u8; 24];
            id.copy_from_slice(b);
            out.push(id);
        }
    }
    Ok(out)
}

impl Node for AggregateRequest {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (aggr, persistence) = aggregation_of(&mut msg.local_environment)?;
        let ids = written_msg_ids(&mut msg.local_environment)?;
        let count = ids.len() as i64;
        if ids.is_empty() {
            return Err(NodeError::recoverable(
                "the message has no LocalEnvironment.WrittenDestination.MQ.DestinationData with a msgId: wire AggregateRequest after the MQOutput node that sends the request",
            ));
        }
        self.queues
            .ensure(&self.qm, &[AGGR_CONTROL, AGGR_REQUEST, AGGR_REPLY])?;
        let uow = state::work(ctx.inv, &self.qm)?;
        let keep_id = PutOptions {
            new_msg_id: false,
            ..PutOptions::default()
        };
        for id in ids {
            let mut rec = sluice_qm::Message::new(bytes::Bytes::new());
            rec.md.msg_id = id;
            rec.md.correl_id = aggr;
            rec.md.persistence = persistence;
            rec.set_property(P_FOLDER, PropertyValue::String(self.folder.clone()));
            uow.put(AGGR_REQUEST, rec, &keep_id)
                .map_err(state::queue_error(AGGR_REQUEST))?;
        }
        let record = ctx
            .inv
            .unit_of_work
            .get_mut::<ControlRecord>(&ControlRecord::key(&aggr))
            .ok_or_else(|| {
                NodeError::recoverable(
                    "the aggregation was started by another invocation: AggregateRequest must follow its AggregateControl node in the same flow invocation",
                )
            })?;
        record.expected += count;
        ctx.propagate(RequestOutput::Out, msg)
    }
}
