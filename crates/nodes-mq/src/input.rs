//! MQInput: takes messages from a queue of the embedded queue manager and starts an invocation for
//! each, under a unit of work when the transaction mode says so.
//!
//! Transaction modes, as the product defines them: `yes` — the get and every queue operation of
//! the invocation commit together, and a failure rolls them back (the message returns to the
//! queue with its backout count raised); `no` — the message is removed when it is read;
//! `automatic` — transactional when the message is persistent. A message whose backout count has
//! reached the queue's backout threshold (1 when the queue sets none) is not processed again: it
//! goes to the `failure` terminal when that is wired, else to the queue's backout requeue queue,
//! else to the dead-letter queue. A body that does not parse (parse timing `immediate` or
//! `complete`) is this node's failure: the message, its body as BLOB, goes to the `failure`
//! terminal with the parser's exception when that is wired, else it is backed out like any
//! failed message, and so reaches the backout queue at the threshold.
//!
//! `commit_count` > 1 takes several messages under one unit of work, committed when that many
//! were processed, when the queue has no message ready (or none came within
//! `commit_interval_ms`), or when an invocation used another transactional resource (a
//! database, committed with it); one sync of the log then serves the whole batch. A failure
//! backs the whole batch out; a message that was backed out before (BackoutCount > 0) is then
//! processed in a unit of work of its own, so that one bad message cannot push the others to
//! the backout queue.
//!
//! In a flow with `transaction: coordinated`, an invocation's databases and its queue work
//! commit in two phases, the queue manager coordinating (`coordinated.rs`, docs/databases.md).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminals,
    Transaction, properties, property_enum,
};
use sluice_qm::{GetOptions, InputHandle, QueueManager, UnitOfWork};

use super::QueueWork;
use super::coordinated;
use super::headers;
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{InputOutputs, own_failure, propagate_out};

pub static MQ_INPUT: NodeSpec = NodeSpec {
    type_name: "MQInput",
    summary: "Takes each message from a queue, with `Root.MQMD` (and `Root.MQRFH2` for properties) and the \
              body parsed in the chosen domain, and propagates it; commits or backs out per the transaction mode.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each message put on `ORDERS.IN` starts the flow",
        properties: "queue: ORDERS.IN, domain: XMLNSC",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::No("only a message arriving on its queue starts it."),
    }],
    builder: NodeBuilder::of::<MqInputProps>(),
};

property_enum! {
    /// MQInput's transaction mode.
    pub enum Mode { Yes = "yes", No = "no", Automatic = "automatic" }
}

properties! {
    /// MQInput's properties.
    pub struct MqInputProps {
        /// The input queue.
        queue: String,
        /// `yes`: the get and the flow's queue work commit together; `no`: the message is
        /// removed on read; `automatic`: transactional for persistent messages.
        transaction_mode: Mode = "yes",
        /// Messages processed under one unit of work before it is committed (the product's
        /// Commit count). It is committed sooner when the queue has no message ready or an
        /// invocation used a database; a failure backs out the whole batch.
        commit_count: u32 = "1",
        /// With `commit_count` above 1, how long a batch waits for more messages before it is
        /// committed (the product's Commit interval); 0 commits as soon as the queue has no
        /// message ready.
        commit_interval_ms: u64 = "0",
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

struct MqInput {
    flow: String,
    label: String,
    queue: String,
    mode: Mode,
    qm: Arc<QueueManager>,
    parsing: BodyParsing,
    commit_count: u32,
    commit_interval: Duration,
    /// The flow's `transaction`: coordinated commits in two phases.
    transaction: Transaction,
    /// The input queue held open while the flow runs, so that it cannot be deleted under it.
    open: std::sync::Mutex<Option<InputHandle>>,
    /// Why recent messages were backed out, by MsgId, so that the one that reaches the
    /// backout threshold goes to the backout or dead-letter queue saying what failed.
    failures: std::sync::Mutex<HashMap<sluice_qm::MsgId, String>>,
}

/// Backout reasons remembered at most: the map is emptied when full (a reason forgotten only
/// shortens a backout text).
const FAILURES_KEPT: usize = 1024;

/// The unit of work an instance keeps open across messages (`commit_count` > 1).
struct Batch {
    uow: UnitOfWork,
    /// Messages processed under it.
    count: u32,
    /// When its first message was got.
    started: Instant,
}

impl BuildNode for MqInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        build_mq_input(self, b)
    }
}

fn build_mq_input(c: MqInputProps, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let qm = b.services.queue_manager()?;
    let queue = c.queue;
    qm.queue_def(&queue).map_err(|e| {
        ConfigError::property("queue", e.to_string())
            .with_hint("define the queue in sluice.yaml under `queues`")
    })?;
    if c.commit_count == 0 {
        return Err(ConfigError::property(
            "commit_count",
            "must be a whole number from 1",
        ));
    }
    Ok(NodeImpl::Input(Arc::new(MqInput {
        flow: b.flow.to_string(),
        label: b.label.to_string(),
        queue,
        mode: c.transaction_mode,
        qm,
        parsing: BodyParsing::with_model(&c.parsing, &c.model, b.project_dir)?,
        commit_count: c.commit_count,
        commit_interval: Duration::from_millis(c.commit_interval_ms),
        transaction: b.transaction,
        open: std::sync::Mutex::new(None),
        failures: std::sync::Mutex::new(HashMap::new()),
    })))
}

const POLL: Duration = Duration::from_millis(200);

impl MqInput {
    fn backout_threshold(&self) -> (u32, String) {
        match self.qm.queue_def(&self.queue) {
            Ok(d) => (d.backout_threshold.max(1), d.backout_requeue_queue),
            Err(_) => (1, String::new()),
        }
    }

    /// One message; returns false when there was none. `open` is the batch this instance
    /// has open, taken and left as the message requires.
    fn once(&self, runner: &mut dyn InstanceRunner, open: &mut Option<Batch>) -> bool {
        // An open batch waits for its next message only as long as its interval allows (and
        // a wait is cut into polls, to notice a stop).
        let left = open
            .as_ref()
            .map(|b| self.commit_interval.saturating_sub(b.started.elapsed()));
        let opts = match left {
            Some(left) if left.is_zero() => GetOptions::new(),
            Some(left) => GetOptions::new().wait(left.min(POLL)),
            None => GetOptions::new().wait(POLL),
        };
        // The unit's gets before this message's (earlier messages of the batch).
        let mut mark = 0;
        let (got, batch) = if self.mode == Mode::No {
            (self.qm.get(&self.queue, &opts), None)
        } else {
            let mut b = open.take().unwrap_or_else(|| Batch {
                uow: self.qm.begin(),
                count: 0,
                started: Instant::now(),
            });
            mark = b.uow.gets_len();
            let g = b.uow.get(&self.queue, &opts);
            (g, Some(b))
        };
        let m = match got {
            Ok(Some(m)) => m,
            Ok(None) => {
                // The queue has nothing ready: what was processed is committed, unless its
                // interval has still some way to go.
                match batch {
                    Some(b) if left.is_some_and(|l| l > POLL) => *open = Some(b),
                    Some(b) => self.commit_batch(b),
                    None => {}
                }
                return false;
            }
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, queue = %self.queue, "Failed to get a message.");
                if let Some(b) = batch {
                    self.commit_batch(b);
                }
                runner.stop().sleep(Duration::from_secs(1));
                return false;
            }
        };
        let non_persistent = m.md.persistence != sluice_qm::Persistence::Persistent;
        let (mut uow, count, started) = match batch {
            // A message backed out before, or one the automatic mode takes outside syncpoint,
            // is not added to a batch: the batch is committed without it first.
            Some(mut b)
                if b.count > 0
                    && (m.md.backout_count > 0
                        || (self.mode == Mode::Automatic && non_persistent)) =>
            {
                b.uow.release_last_get();
                self.commit_batch(b);
                return true;
            }
            Some(b) => (Some(b.uow), b.count, b.started),
            None => (None, 0, Instant::now()),
        };
        if self.mode == Mode::Automatic
            && non_persistent
            && let Some(u) = uow.take()
            && let Err(error) = u.commit()
        {
            tracing::error!(%error, queue = %self.queue, "Failed to commit a non-persistent get.");
        }
        runner.record_input_bytes(m.body.len() as u64);
        let (threshold, boq) = self.backout_threshold();
        let backed_out = uow.is_some() && m.md.backout_count >= threshold;
        let alone = m.md.backout_count > 0;
        let msg_id = m.md.msg_id;
        let mut inv = Invocation::new();
        if let Some(u) = uow {
            inv.unit_of_work.join(QueueWork::KEY, QueueWork::new(u));
        }
        // A body that does not parse (parse timing immediate or complete) is this node's
        // failure: the message, its body as BLOB, goes to the failure terminal, or is backed
        // out, and so reaches the backout threshold like any other (never retried for ever).
        let (mut msg, parse_error) = match headers::to_tree(&m, &self.parsing) {
            Ok(msg) => (msg, None),
            Err(e) => match headers::to_tree(&m, &BodyParsing::blob()) {
                Ok(msg) => (msg, Some(e)),
                Err(_) => {
                    let end = End {
                        backed_out: backed_out.then(|| m.clone()),
                        boq: &boq,
                        mark,
                        msg_id,
                    };
                    self.finish(runner, &mut inv, Err(e), end);
                    return true;
                }
            },
        };
        let original = backed_out.then_some(m);
        let result = if backed_out {
            let mut text = format!(
                "the message was backed out {} times (threshold {threshold})",
                msg_backouts(&mut msg)
            );
            if let Some(e) = &parse_error {
                text.push_str(&format!(
                    "; its body does not parse: {}",
                    e.exception.describe()
                ));
            } else if let Some(last) = self.forget_failure(&msg_id) {
                text.push_str(&format!("; it failed last with: {last}"));
            }
            self.fail(runner, &mut inv, &mut msg, NodeError::recoverable(text))
        } else if let Some(e) = parse_error {
            self.fail(runner, &mut inv, &mut msg, e)
        } else {
            propagate_out(runner, &mut inv, &mut msg)
        };
        // Another resource's transaction is not held open across messages: the batch is
        // committed with it.
        let with_others = inv.unit_of_work.len()
            > usize::from(
                inv.unit_of_work
                    .get_mut::<QueueWork>(QueueWork::KEY)
                    .is_some(),
            );
        let end = End {
            backed_out: original,
            boq: &boq,
            mark,
            msg_id,
        };
        if let Some(uow) = self.finish(runner, &mut inv, result, end) {
            let b = Batch {
                uow,
                count: count + 1,
                started,
            };
            let due = !self.commit_interval.is_zero() && started.elapsed() >= self.commit_interval;
            // Without syncpoint for its gets (`no`), the unit of work holds only what the flow
            // put under syncpoint itself, which is not carried over to the next message.
            if alone || with_others || due || self.mode == Mode::No || b.count >= self.commit_count
            {
                self.commit_batch(b);
            } else {
                *open = Some(b);
            }
        }
        true
    }

    /// This node's own failure: to the failure terminal with `e` in the ExceptionList when
    /// that is wired, else the error (backing the message out).
    fn fail(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut sluice_node_api::Message,
        e: NodeError,
    ) -> Result<(), NodeError> {
        own_failure(runner, inv, msg, e, &self.label, "MQInput")
    }

    fn remember_failure(&self, msg_id: sluice_qm::MsgId, why: String) {
        if let Ok(mut f) = self.failures.lock() {
            if f.len() >= FAILURES_KEPT {
                f.clear();
            }
            f.insert(msg_id, why);
        }
    }

    fn forget_failure(&self, msg_id: &sluice_qm::MsgId) -> Option<String> {
        self.failures.lock().ok()?.remove(msg_id)
    }

    fn commit_batch(&self, b: Batch) {
        if b.count == 0 {
            return;
        }
        if let Err(error) = b.uow.commit() {
            tracing::error!(%error, flow = %self.flow, messages = b.count, "Failed to commit the unit of work.");
        }
    }

    /// End an invocation: after a success its other resources are committed and its unit of
    /// work (if any) returned, for the caller to commit; after a failure everything is backed
    /// out (counted against this message only), or a poison message moved off the queue.
    fn finish(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        result: Result<(), NodeError>,
        end: End<'_>,
    ) -> Option<UnitOfWork> {
        // The queue work is this node's to end (it may go on with the next message of a batch):
        // the invocation's other resources are ended here.
        let mut uow = inv
            .unit_of_work
            .leave::<QueueWork>(QueueWork::KEY)
            .and_then(QueueWork::into_inner);
        let e = match result {
            Ok(()) if self.transaction == Transaction::Coordinated => {
                match coordinated::commit(&self.qm, uow.take(), &mut inv.unit_of_work, &self.flow) {
                    Ok(coordinated::Committed::Decided) => return None,
                    Ok(coordinated::Committed::Undecided(u)) => return u,
                    Err(coordinated::Failed::Undecided { queue_work, error }) => {
                        tracing::error!(%error, flow = %self.flow, "Failed to prepare the invocation's resources.");
                        uow = queue_work;
                        NodeError::recoverable(error.to_string())
                    }
                    Err(coordinated::Failed::Decision(error)) => {
                        tracing::error!(%error, flow = %self.flow, "Failed to commit the queue work with the commit decision; everything was rolled back.");
                        return None;
                    }
                }
            }
            Ok(()) => {
                match inv.unit_of_work.commit() {
                    Ok(()) => return uow,
                    Err(e) => {
                        // What the flow did elsewhere did not commit: the message is backed
                        // out and comes again.
                        tracing::error!(error = %e, flow = %self.flow, "Failed to commit the invocation's resources.");
                        NodeError::recoverable(e.to_string())
                    }
                }
            }
            Err(e) => e,
        };
        inv.unit_of_work.rollback();
        match (uow, end.backed_out) {
            // A poison message: to the backout queue in the same unit of work, else (none, or
            // it refuses) to the dead-letter queue; then its removal is committed.
            (Some(mut u), Some(original)) => {
                let text = e.exception.describe();
                match u
                    .requeue_backout(&self.queue, original, &text)
                    .and_then(|to| u.commit().map(|_| to))
                {
                    Ok(to) => tracing::warn!(
                        flow = %self.flow, node = %self.label, reason = %text, queue = %to,
                        "Moved a backed-out message off the input queue."
                    ),
                    Err(error) => {
                        tracing::error!(
                            %error, flow = %self.flow, queue = %self.queue, backout_queue = %end.boq,
                            "Cannot move a backed-out message to the backout or dead-letter queue; it stays on the input queue, tried again in a second."
                        );
                        runner.stop().sleep(Duration::from_secs(1));
                    }
                }
            }
            (Some(u), None) => {
                tracing::warn!(error = %e, flow = %self.flow, "Message processing failed; backing out.");
                self.remember_failure(end.msg_id, e.exception.describe());
                u.rollback_charging_from(end.mark);
            }
            (None, _) => {
                tracing::error!(error = %e, flow = %self.flow, "Message processing failed outside a unit of work; the message is discarded.");
            }
        }
        None
    }
}

/// How an invocation ends, besides its result.
struct End<'a> {
    /// The message as got, when it had reached the backout threshold.
    backed_out: Option<sluice_qm::Message>,
    /// The input queue's backout queue (for the log).
    boq: &'a str,
    /// The unit of work's gets before this message's.
    mark: usize,
    /// The message's MsgId (to remember why it was backed out).
    msg_id: sluice_qm::MsgId,
}

fn msg_backouts(msg: &mut sluice_node_api::Message) -> i64 {
    match headers::md_field(msg, "BackoutCount") {
        Ok(Some(sluice_tree::Value::Integer(i))) => i,
        _ => 0,
    }
}

impl InputNode for MqInput {
    fn start(&self) {
        let by = format!("flow {} node {}", self.flow, self.label);
        match self.qm.open_input(&self.queue, &by) {
            Ok(h) => {
                if let Ok(mut open) = self.open.lock() {
                    *open = Some(h);
                }
            }
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, queue = %self.queue, "Cannot open the input queue.")
            }
        }
    }

    fn stopped(&self) {
        if let Ok(mut open) = self.open.lock() {
            open.take();
        }
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        let mut open = None;
        while !runner.stop().is_stopped() {
            self.once(runner, &mut open);
        }
        if let Some(b) = open {
            self.commit_batch(b);
        }
    }
}
