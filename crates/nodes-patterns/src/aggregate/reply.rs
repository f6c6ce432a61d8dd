//! AggregateReply: files each reply under its request's folder and propagates the combined
//! reply when the last one arrived, or what arrived when the aggregation timed out.

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, InputNode,
    InstanceRunner, Invocation, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl,
    NodeSpec, Runs, Terminal, Terminals, properties, terminals,
};
use sluice_nodes_mq::{QueueWork, headers};
use sluice_qm::{
    BrowseCursor, GetOptions, ID_NONE, MsgId, PropertyValue, PutOptions, QueueManager, UnitOfWork,
};

use super::REPLY_BODY;
use crate::PatternError;
use crate::state::{
    self, AGGR_CONTROL, AGGR_REPLY, AGGR_REQUEST, P_DEADLINE, P_EXPECTED, P_FOLDER, P_NAME,
    P_RECEIVED, Queues,
};
use crate::stored::{folders_message, stored_form};

terminals! {
    /// AggregateReply's inputs.
    pub enum ReplyInput {
        In = "in": "A reply to one of an aggregation's requests (its CorrelId is the request's MsgId).",
    }
}

terminals! {
    /// AggregateReply's outputs.
    pub enum AggregateReplyOutput {
        Failure = "failure": "The node raised an exception.",
        Out = "out": "The combined reply, once every request of the aggregation was answered.",
        Unknown = "unknown": "A reply that matches no aggregation in flight (never sent, already complete or timed out), unchanged.",
        Timeout = "timeout": "The combined reply of what arrived, when the aggregation's timeout passed first.",
        Catch = "catch": "A timeout's combined reply, with the exception raised downstream of `timeout`.",
    }
}

pub static AGGREGATE_REPLY: NodeSpec = NodeSpec {
    type_name: "AggregateReply",
    summary: "Collects the replies to an aggregation's requests and propagates them as one message, \
              `Root.ComIbmAggregateReplyBody` with a folder per reply named by its request's `folder_name`.",
    inputs: ReplyInput::SPECS,
    outputs: AggregateReplyOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The last of the trip's replies completes it: one message holds them all",
            properties: "aggregate_name: TRIP",
            esql: "",
            input: ExampleInput::xml("<flight><seat>12A</seat></flight>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("out", "<flight><seat>12A</seat></flight>")]),
            runs: Runs::No(
                "it needs an aggregation in flight, which an AggregateControl and AggregateRequest node record before it.",
            ),
        },
        NodeExample {
            title: "A message that answers no request goes to `unknown`",
            properties: "aggregate_name: TRIP",
            esql: "",
            input: ExampleInput::xml("<flight><seat>12A</seat></flight>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "unknown",
                "<flight><seat>12A</seat></flight>",
            )]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<AggregateReplyProps>(),
};

properties! {
    /// AggregateReply's properties.
    pub struct AggregateReplyProps {
        /// The aggregation whose replies this node combines (AggregateControl's
        /// `aggregate_name`).
        aggregate_name: String,
    }
}

/// How long a reply waits for an aggregation that another invocation is changing.
const LOCK_WAIT: Duration = Duration::from_secs(30);
/// How long a reply that matches no request waits for one to become visible.
const UNKNOWN_GRACE: Duration = Duration::from_secs(1);
/// How often the timeout loop looks for aggregations that timed out.
const TICK: Duration = Duration::from_millis(250);
/// A timeout whose propagation failed this many times is dropped, with an error logged.
const TIMEOUT_ATTEMPTS: u32 = 3;

impl BuildNode for AggregateReplyProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if self.aggregate_name.trim().is_empty() {
            return Err(ConfigError::property("aggregate_name", "must not be empty"));
        }
        let node = Arc::new(AggregateReply {
            qm: b.services.queue_manager()?,
            name: self.aggregate_name,
            flow: b.flow.to_string(),
            queues: Queues::default(),
        });
        Ok(NodeImpl::ProcessAndInput(node.clone(), node))
    }
}

struct AggregateReply {
    qm: Arc<QueueManager>,
    name: String,
    flow: String,
    queues: Queues,
}

/// A reply as it is stored until its aggregation ends, or as it arrives.
struct StoredReply {
    folder: String,
    msg: sluice_qm::Message,
}

impl AggregateReply {
    fn ensure(&self) -> Result<(), PatternError> {
        self.queues
            .ensure(&self.qm, &[AGGR_CONTROL, AGGR_REQUEST, AGGR_REPLY])
    }

    /// The reply, filed; the combined message when it completed its aggregation. `None` when
    /// it belongs to no aggregation of this node.
    fn file_reply(
        &self,
        inv: &mut Invocation,
        msg: &mut Message,
    ) -> Result<Option<Option<Message>>, NodeError> {
        let Some(correl) = headers::md_id(msg, "CorrelId")?.filter(|c| *c != ID_NONE) else {
            return Ok(None);
        };
        let by_msg_id = GetOptions::new().msg_id(correl);
        let mut request = self
            .qm
            .browse(AGGR_REQUEST, &by_msg_id, &mut BrowseCursor::new())
            .map_err(state::queue_error(AGGR_REQUEST))?;
        if request.is_none() {
            // A commit makes its puts visible one queue after the other: a back-end can
            // answer a request before the same commit has made its record visible. A reply
            // is called unknown only once that moment has surely passed.
            request = self
                .qm
                .browse(
                    AGGR_REQUEST,
                    &by_msg_id.clone().wait(UNKNOWN_GRACE),
                    &mut BrowseCursor::new(),
                )
                .map_err(state::queue_error(AGGR_REQUEST))?;
        }
        let Some(request) = request else {
            return Ok(None);
        };
        let aggr = request.md.correl_id;
        let uow = state::work(inv, &self.qm)?;
        // The control message is the aggregation's lock: held from here to the end of the
        // unit of work.
        let control = uow
            .get(
                AGGR_CONTROL,
                &GetOptions::new().msg_id(aggr).wait(LOCK_WAIT),
            )
            .map_err(state::queue_error(AGGR_CONTROL))?;
        let Some(control) = control else {
            // Completed or timed out meanwhile, or held too long by another invocation.
            if self
                .qm
                .browse(AGGR_REQUEST, &by_msg_id, &mut BrowseCursor::new())
                .map_err(state::queue_error(AGGR_REQUEST))?
                .is_some()
            {
                return Err(PatternError::Busy {
                    id: sluice_qm::id_to_hex(&aggr),
                    secs: LOCK_WAIT.as_secs(),
                }
                .into());
            }
            return Ok(None);
        };
        if state::text_property(&control, P_NAME) != self.name {
            uow.release_last_get();
            return Ok(None);
        }
        let request = uow
            .get(AGGR_REQUEST, &by_msg_id.correl_id(aggr))
            .map_err(state::queue_error(AGGR_REQUEST))?;
        let Some(request) = request else {
            // A second reply to the same request.
            uow.release_last_get();
            return Ok(None);
        };
        let folder = state::text_property(&request, P_FOLDER);
        let mut stored = stored_form(msg, aggr)?;
        stored.set_property(P_FOLDER, PropertyValue::String(folder.clone()));
        let this = StoredReply {
            folder,
            msg: stored,
        };
        let received = state::int_property(&control, P_RECEIVED) + 1;
        if received < state::int_property(&control, P_EXPECTED) {
            let mut control = control;
            control.set_property(P_RECEIVED, PropertyValue::Int(received));
            uow.put(AGGR_REPLY, this.msg, &PutOptions::default())
                .map_err(state::queue_error(AGGR_REPLY))?;
            uow.put(AGGR_CONTROL, control, &PutOptions::default())
                .map_err(state::queue_error(AGGR_CONTROL))?;
            return Ok(Some(None));
        }
        let mut replies = take_replies(uow, aggr)?;
        replies.push(this);
        // The reply that completes the aggregation is combined from its stored form like the
        // others, so every folder is built the same way.
        Ok(Some(Some(combined(replies)?)))
    }

    /// Ends aggregation `aggr` if it timed out: its replies go to the timeout terminal.
    fn time_out(&self, runner: &mut dyn InstanceRunner, aggr: MsgId) {
        let mut uow = self.qm.begin();
        let control = match uow.get(AGGR_CONTROL, &GetOptions::new().msg_id(aggr)) {
            Ok(Some(c)) => c,
            // Completed (or being changed) meanwhile.
            Ok(None) => return,
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, "Failed to read an aggregation's state.");
                return;
            }
        };
        let attempts = control.md.backout_count;
        let combined = take_replies(&mut uow, aggr).and_then(|replies| {
            drop_requests(&mut uow, aggr)?;
            combined(replies)
        });
        let mut msg = match combined {
            Ok(m) => m,
            Err(error) => {
                tracing::error!(error = %error.exception.describe(), flow = %self.flow, "Failed to combine a timed-out aggregation's replies.");
                uow.rollback();
                return;
            }
        };
        if attempts >= TIMEOUT_ATTEMPTS {
            tracing::error!(
                flow = %self.flow, aggregation = %sluice_qm::id_to_hex(&aggr), attempts,
                "Dropped a timed-out aggregation whose propagation kept failing."
            );
            if let Err(error) = uow.commit() {
                tracing::error!(%error, flow = %self.flow, "Failed to drop a timed-out aggregation.");
            }
            return;
        }
        let mut inv = Invocation::new();
        inv.unit_of_work.join(QueueWork::KEY, QueueWork::new(uow));
        let timeout = AggregateReplyOutput::Timeout.into();
        let catch: Terminal = AggregateReplyOutput::Catch.into();
        let r = match runner.invoke(&mut inv, timeout, &mut msg) {
            Err(e) if runner.is_wired(catch) => e
                .exception
                .write_to(&mut msg.exception_list)
                .map_err(NodeError::from)
                .and_then(|_| runner.invoke(&mut inv, catch, &mut msg)),
            r => r,
        };
        match r
            .map_err(|e| e.exception.describe())
            .and_then(|_| inv.unit_of_work.commit().map_err(|e| e.to_string()))
        {
            Ok(()) => {}
            Err(error) => {
                tracing::warn!(%error, flow = %self.flow, "A timed-out aggregation's propagation failed; it is tried again.");
                inv.unit_of_work.rollback();
            }
        }
    }

    /// The aggregations of this node whose deadline passed.
    fn due(&self) -> Result<Vec<MsgId>, PatternError> {
        let now = state::now_ms() as i64;
        let mut cursor = BrowseCursor::new();
        let mut out = Vec::new();
        while let Some(c) = self
            .qm
            .browse(AGGR_CONTROL, &GetOptions::new(), &mut cursor)
            .map_err(state::queue_error(AGGR_CONTROL))?
        {
            let deadline = state::int_property(&c, P_DEADLINE);
            if deadline != 0 && deadline <= now && state::text_property(&c, P_NAME) == self.name {
                out.push(c.md.msg_id);
            }
        }
        Ok(out)
    }
}

impl Node for AggregateReply {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.ensure()?;
        match self.file_reply(ctx.inv, msg)? {
            None => ctx.propagate(AggregateReplyOutput::Unknown, msg),
            Some(None) => Ok(()),
            Some(Some(mut combined)) => ctx.propagate(AggregateReplyOutput::Out, &mut combined),
        }
    }
}

impl InputNode for AggregateReply {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().sleep(TICK) {
            if let Err(error) = self.ensure() {
                tracing::error!(%error, flow = %self.flow, "Cannot define the aggregation queues.");
                continue;
            }
            match self.due() {
                Ok(due) => {
                    for aggr in due {
                        self.time_out(runner, aggr);
                    }
                }
                Err(error) => {
                    tracing::error!(%error, flow = %self.flow, "Failed to look for timed-out aggregations.")
                }
            }
        }
    }
}

/// Every stored reply of aggregation `aggr`, taken under `uow`, in arrival order.
fn take_replies(uow: &mut UnitOfWork, aggr: MsgId) -> Result<Vec<StoredReply>, NodeError> {
    let mut out = Vec::new();
    let by_aggr = GetOptions::new().correl_id(aggr);
    while let Some(m) = uow
        .get(AGGR_REPLY, &by_aggr)
        .map_err(state::queue_error(AGGR_REPLY))?
    {
        out.push(StoredReply {
            folder: state::text_property(&m, P_FOLDER),
            msg: m,
        });
    }
    Ok(out)
}

/// The requests of aggregation `aggr` still unanswered, removed under `uow`.
fn drop_requests(uow: &mut UnitOfWork, aggr: MsgId) -> Result<(), NodeError> {
    let by_aggr = GetOptions::new().correl_id(aggr);
    while uow
        .get(AGGR_REQUEST, &by_aggr)
        .map_err(state::queue_error(AGGR_REQUEST))?
        .is_some()
    {}
    Ok(())
}

/// The combined reply: `Root.Properties` (the first reply's), then
/// `Root.ComIbmAggregateReplyBody` with one folder per reply, named by its request's folder
/// name, holding the reply's Root (Properties, MQMD, body in its domain).
fn combined(replies: Vec<StoredReply>) -> Result<Message, NodeError> {
    folders_message(
        REPLY_BODY,
        &[],
        replies.into_iter().map(|r| (r.folder, r.msg)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::P_DOMAIN;

    fn stored(folder: &str, body: &str) -> StoredReply {
        let mut m = sluice_qm::Message::new(body.to_string());
        m.set_property(P_DOMAIN, PropertyValue::String("XMLNSC".into()));
        m.set_property(P_FOLDER, PropertyValue::String(folder.into()));
        StoredReply {
            folder: folder.into(),
            msg: m,
        }
    }

    #[test]
    fn combined_holds_a_folder_per_reply_with_its_body_when_replies_were_stored() {
        let replies = vec![
            stored("A", "<r><item>1</item></r>"),
            stored("B", "<r><item>2</item></r>"),
            stored("C", "<r><item>3</item></r>"),
        ];
        let mut msg = combined(replies).unwrap();
        let text = sluice_flow_testing::dump_tree(&msg.root, &Default::default());
        for (f, v) in [("A", "1"), ("B", "2"), ("C", "3")] {
            assert!(text.contains(f), "{text}");
            assert!(text.contains(v), "{text}");
        }
        let r = msg.root.root();
        let b = msg
            .root
            .path(r, &["ComIbmAggregateReplyBody"])
            .unwrap()
            .unwrap();
        assert_eq!(msg.root.children(b).unwrap().len(), 3);
        let item = msg
            .root
            .path(b, &["B", "XMLNSC", "r", "item"])
            .unwrap()
            .expect("B's body navigates");
        assert_eq!(msg.root.value_bytes(item), Some(&b"2"[..]));
    }
}
