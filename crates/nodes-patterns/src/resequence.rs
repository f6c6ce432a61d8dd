//! Resequence: propagates the messages of each sequence group in the order of their sequence
//! numbers, holding a message that comes early until the ones before it arrived, as the
//! product's Resequence node does. A group's state (the next number expected, how many messages
//! are held, since when the first gap is open) is a message on `SYSTEM.SLUICE.RESEQUENCE`; held
//! messages wait on `SYSTEM.SLUICE.RESEQUENCE.HELD`. Both change in the group's unit of work
//! (see [`GroupWork`]), so a rollback leaves the group as it was.

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, InputNode,
    InstanceRunner, Invocation, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl,
    NodeSpec, Runs, Terminal, Terminals, properties, property_enum, terminals,
};
use sluice_qm::{BrowseCursor, GetOptions, MsgId, PropertyValue, PutOptions, QueueManager};
use sluice_tree::xpath::{XPath, XPathContext};

use crate::PatternError;
use crate::state::{self, GroupWork, HELD, Queues, key_id};
use crate::stored::{restore_message, stored_form};

pub const RESEQUENCE_QUEUE: &str = "SYSTEM.SLUICE.RESEQUENCE";
pub const HELD_QUEUE: &str = "SYSTEM.SLUICE.RESEQUENCE.HELD";
const P_NAME: &str = "sluice.resequenceName";
const P_KEY: &str = "sluice.sequenceKey";
const P_NEXT: &str = "sluice.next";
const P_HELD: &str = "sluice.held";
const P_GAP_SINCE: &str = "sluice.gapSince";
const P_NUMBER: &str = "sluice.number";
const TICK: Duration = Duration::from_millis(250);

terminals! {
    /// Resequence's inputs.
    pub enum ResequenceInput {
        In = "in": "A message of a sequence.",
    }
}

terminals! {
    /// Resequence's outputs.
    pub enum ResequenceOutput {
        Failure = "failure": "The node raised an exception: the number does not evaluate, or is a duplicate or before the group's next.",
        Out = "out": "The messages of each group, in the order of their numbers.",
        Missing = "missing": "The first held message after a gap that stayed open `missing_message_timeout_secs`; the sequence then continues from it.",
    }
}

pub static RESEQUENCE: NodeSpec = NodeSpec {
    type_name: "Resequence",
    summary: "Propagates each sequence group's messages in the order of their sequence numbers, holding early \
              ones in the queue manager until the gap before them is filled (or stayed open too long).",
    inputs: ResequenceInput::SPECS,
    outputs: ResequenceOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The first message of a sequence goes straight on",
        properties: "sequence_number_path: '$Body/part/@n'",
        esql: "",
        input: ExampleInput::xml("<part n=\"1\"/>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<part n=\"1\"/>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<ResequenceProps>(),
};

property_enum! {
    /// Where a group's sequence starts.
    pub enum StartAt { Literal = "literal", FirstMessage = "first_message" }
}

properties! {
    /// Resequence's properties.
    pub struct ResequenceProps {
        /// An XPath expression whose number value is the message's sequence number
        /// (`$Root/MQMD/MsgSeqNumber`, `$Body/part/@n`).
        sequence_number_path: String,
        /// An XPath expression whose string value is the message's sequence group; empty puts
        /// every message in one group.
        sequence_group_path: String = "",
        /// `literal`: each group starts at `start_number`; `first_message`: at the number of
        /// the first message that arrives for it.
        start_at: StartAt = "literal",
        /// The first number of each group, with `start_at: literal`.
        start_number: i64 = "1",
        /// How long a gap may stay open while later messages are held, before the first held
        /// message goes to `missing` and the sequence continues from it; 0 waits for ever.
        missing_message_timeout_secs: u64 = "0",
        /// The name the groups are kept under; empty uses the flow's name and the node's label.
        sequence_name: String = "",
    }
}

impl BuildNode for ResequenceProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let compile = |prop: &str, src: &str| {
            XPath::compile(src).map_err(|e| ConfigError::property(prop, format!("{e} in `{src}`")))
        };
        let number = compile("sequence_number_path", self.sequence_number_path.trim())?;
        let group = match self.sequence_group_path.trim() {
            "" => None,
            src => Some(compile("sequence_group_path", src)?),
        };
        let name = match self.sequence_name.trim() {
            "" => format!("{}/{}", b.flow, b.label),
            n => n.to_string(),
        };
        let node = Arc::new(Resequence {
            qm: b.services.queue_manager()?,
            number,
            group,
            start: match self.start_at {
                StartAt::Literal => Some(self.start_number),
                StartAt::FirstMessage => None,
            },
            timeout_ms: self.missing_message_timeout_secs.saturating_mul(1000),
            name,
            flow: b.flow.to_string(),
            queues: Queues::default(),
        });
        Ok(NodeImpl::ProcessAndInput(node.clone(), node))
    }
}

struct Resequence {
    qm: Arc<QueueManager>,
    number: XPath,
    group: Option<XPath>,
    /// The first number of a group; None: the first message's.
    start: Option<i64>,
    timeout_ms: u64,
    name: String,
    flow: String,
    queues: Queues,
}

/// A group's state while an invocation holds it.
struct Group {
    key: String,
    id: MsgId,
    rec: Option<sluice_qm::Message>,
    next: Option<i64>,
    held: i64,
    gap_since: i64,
}

fn held_id(key: &str, n: i64) -> MsgId {
    key_id(&format!("{key}\n#{n}"))
}

impl Resequence {
    fn ensure(&self) -> Result<(), PatternError> {
        self.queues
            .ensure(&self.qm, &[RESEQUENCE_QUEUE, HELD_QUEUE])
    }

    /// Hold group `key` for `inv` and read its state.
    fn open(&self, inv: &mut Invocation, key: String) -> Result<Group, NodeError> {
        let id = key_id(&key);
        let res_key = format!("resequence {}", sluice_qm::id_to_hex(&id));
        if inv.unit_of_work.get_mut::<GroupWork>(&res_key).is_none() {
            HELD.acquire(id)?;
            inv.unit_of_work.join(
                &res_key,
                GroupWork {
                    uow: Some(self.qm.begin()),
                    key: id,
                },
            );
        }
        let rec = group_uow(inv, &res_key)?
            .get(RESEQUENCE_QUEUE, &GetOptions::new().msg_id(id))
            .map_err(state::queue_error(RESEQUENCE_QUEUE))?;
        let (next, held, gap_since) = match &rec {
            Some(r) => (
                Some(state::int_property(r, P_NEXT)),
                state::int_property(r, P_HELD),
                state::int_property(r, P_GAP_SINCE),
            ),
            None => (self.start, 0, 0),
        };
        Ok(Group {
            key,
            id,
            rec,
            next,
            held,
            gap_since,
        })
    }

    /// Put the group's state back (or drop it when nothing is held and it is at its start).
    fn save(&self, inv: &mut Invocation, g: Group) -> Result<(), NodeError> {
        let res_key = format!("resequence {}", sluice_qm::id_to_hex(&g.id));
        let mut rec = g
            .rec
            .unwrap_or_else(|| sluice_qm::Message::new(bytes::Bytes::new()));
        rec.md.msg_id = g.id;
        rec.md.persistence = sluice_qm::Persistence::Persistent;
        rec.set_property(P_NAME, PropertyValue::String(self.name.clone()));
        rec.set_property(P_KEY, PropertyValue::String(g.key));
        rec.set_property(P_NEXT, PropertyValue::Int(g.next.unwrap_or(0)));
        rec.set_property(P_HELD, PropertyValue::Int(g.held));
        rec.set_property(P_GAP_SINCE, PropertyValue::Int(g.gap_since));
        group_uow(inv, &res_key)?
            .put(RESEQUENCE_QUEUE, rec, &PutOptions::default())
            .map_err(state::queue_error(RESEQUENCE_QUEUE))?;
        Ok(())
    }

    /// Take the held message numbered `n`, if there is one.
    fn take_held(
        &self,
        inv: &mut Invocation,
        g: &Group,
        n: i64,
    ) -> Result<Option<Message>, NodeError> {
        let res_key = format!("resequence {}", sluice_qm::id_to_hex(&g.id));
        let m = group_uow(inv, &res_key)?
            .get(HELD_QUEUE, &GetOptions::new().msg_id(held_id(&g.key, n)))
            .map_err(state::queue_error(HELD_QUEUE))?;
        m.map(restore_message).transpose()
    }

    /// Propagate the held messages that follow on from the group's next number.
    fn release_following(
        &self,
        inv: &mut Invocation,
        g: &mut Group,
        mut propagate: impl FnMut(&mut Invocation, &mut Message) -> Result<(), NodeError>,
    ) -> Result<(), NodeError> {
        while g.held > 0
            && let Some(n) = g.next
            && let Some(mut m) = self.take_held(inv, g, n)?
        {
            g.held -= 1;
            g.next = Some(n + 1);
            propagate(inv, &mut m)?;
        }
        g.gap_since = if g.held > 0 {
            state::now_ms() as i64
        } else {
            0
        };
        Ok(())
    }

    /// The lowest number held for group `g` (after a gap that timed out).
    fn lowest_held(&self, g: &Group) -> Result<Option<i64>, NodeError> {
        let mut cursor = BrowseCursor::new();
        let mut low: Option<i64> = None;
        while let Some(m) = self
            .qm
            .browse(HELD_QUEUE, &GetOptions::new().correl_id(g.id), &mut cursor)
            .map_err(state::queue_error(HELD_QUEUE))?
        {
            let n = state::int_property(&m, P_NUMBER);
            low = Some(low.map_or(n, |l| l.min(n)));
        }
        Ok(low)
    }

    fn time_out(&self, runner: &mut dyn InstanceRunner, key: String) -> Result<(), NodeError> {
        let mut inv = Invocation::new();
        let r = (|| {
            let mut g = self.open(&mut inv, key)?;
            let due = g.held > 0
                && g.gap_since != 0
                && g.gap_since.saturating_add(self.timeout_ms as i64) <= state::now_ms() as i64;
            if due && let Some(low) = self.lowest_held(&g)? {
                if let Some(mut m) = self.take_held(&mut inv, &g, low)? {
                    g.held -= 1;
                    g.next = Some(low + 1);
                    runner.invoke(&mut inv, ResequenceOutput::Missing.into(), &mut m)?;
                }
                self.release_following(&mut inv, &mut g, |inv, m| {
                    runner.invoke(inv, ResequenceOutput::Out.into(), m)
                })?;
            }
            self.save(&mut inv, g)
        })();
        match r {
            Ok(()) => inv
                .unit_of_work
                .commit()
                .map_err(|e| NodeError::recoverable(e.to_string())),
            Err(e) => {
                inv.unit_of_work.rollback();
                Err(e)
            }
        }
    }

    /// The groups of this node whose gap may have timed out.
    fn gaps(&self) -> Result<Vec<String>, PatternError> {
        let now = state::now_ms() as i64;
        let mut cursor = BrowseCursor::new();
        let mut out = Vec::new();
        while let Some(m) = self
            .qm
            .browse(RESEQUENCE_QUEUE, &GetOptions::new(), &mut cursor)
            .map_err(state::queue_error(RESEQUENCE_QUEUE))?
        {
            let since = state::int_property(&m, P_GAP_SINCE);
            if state::text_property(&m, P_NAME) == self.name
                && state::int_property(&m, P_HELD) > 0
                && since != 0
                && since.saturating_add(self.timeout_ms as i64) <= now
            {
                out.push(state::text_property(&m, P_KEY));
            }
        }
        Ok(out)
    }
}

fn group_uow<'a>(
    inv: &'a mut Invocation,
    res_key: &str,
) -> Result<&'a mut sluice_qm::UnitOfWork, PatternError> {
    inv.unit_of_work
        .get_mut::<GroupWork>(res_key)
        .and_then(|w| w.uow.as_mut())
        .ok_or(PatternError::WorkEnded)
}

impl Node for Resequence {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.ensure()?;
        let (n, group) = {
            let mut xc = XPathContext::new(msg, &mut ctx.inv.environment);
            let n = self
                .number
                .evaluate_number(&mut xc)
                .map_err(|e| NodeError::recoverable(format!("sequence_number_path: {e}")))?;
            let group = match &self.group {
                Some(g) => g
                    .evaluate_string(&mut xc)
                    .map_err(|e| NodeError::recoverable(format!("sequence_group_path: {e}")))?,
                None => String::new(),
            };
            (n, group)
        };
        if !n.is_finite() || n.fract() != 0.0 {
            return Err(NodeError::recoverable(format!(
                "the sequence number {n} is not a whole number"
            )));
        }
        let n = n as i64;
        let key = format!("{}\n{group}", self.name);
        let mut g = self.open(ctx.inv, key)?;
        let next = *g.next.get_or_insert(n);
        if n < next {
            return Err(NodeError::recoverable(format!(
                "sequence number {n} of group '{group}' comes after {} was propagated (a duplicate or a message too late)",
                next - 1
            )));
        }
        if n > next {
            let id = held_id(&g.key, n);
            let mut stored = stored_form(msg, g.id)?;
            stored.md.msg_id = id;
            stored.set_property(P_NUMBER, PropertyValue::Int(n));
            let res_key = format!("resequence {}", sluice_qm::id_to_hex(&g.id));
            let uow = group_uow(ctx.inv, &res_key)?;
            if self
                .qm
                .browse(
                    HELD_QUEUE,
                    &GetOptions::new().msg_id(id),
                    &mut BrowseCursor::new(),
                )
                .map_err(state::queue_error(HELD_QUEUE))?
                .is_some()
            {
                return Err(NodeError::recoverable(format!(
                    "sequence number {n} of group '{group}' is already held (a duplicate)"
                )));
            }
            uow.put(HELD_QUEUE, stored, &PutOptions::default())
                .map_err(state::queue_error(HELD_QUEUE))?;
            g.held += 1;
            if g.gap_since == 0 {
                g.gap_since = state::now_ms() as i64;
            }
            return self.save(ctx.inv, g);
        }
        g.next = Some(n + 1);
        ctx.propagate(ResequenceOutput::Out, msg)?;
        let this = ctx.node;
        let flow = ctx.flow;
        self.release_following(ctx.inv, &mut g, |inv, m| {
            let mut c = Ctx {
                inv,
                flow,
                node: this,
            };
            c.propagate(ResequenceOutput::Out, m)
        })?;
        self.save(ctx.inv, g)
    }
}

impl InputNode for Resequence {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        if self.timeout_ms == 0 {
            return;
        }
        while !runner.stop().sleep(TICK) {
            let gaps = match self.ensure().and_then(|_| self.gaps()) {
                Ok(g) => g,
                Err(error) => {
                    tracing::error!(%error, flow = %self.flow, "Failed to look for sequence gaps that timed out.");
                    continue;
                }
            };
            for key in gaps {
                if let Err(e) = self.time_out(runner, key) {
                    tracing::warn!(error = %e.exception.describe(), flow = %self.flow, "Releasing the messages after a sequence gap failed; it is tried again.");
                }
            }
        }
    }
}
