//! MQInput: takes messages from a queue of the embedded queue manager and starts an invocation for
//! each, under a unit of work when the transaction mode says so.
//!
//! Transaction modes, as the product defines them: `yes` — the get and every queue operation of
//! the invocation commit together, and a failure rolls them back (the message returns to the
//! queue with its backout count raised); `no` — the message is removed when it is read;
//! `automatic` — transactional when the message is persistent. A message whose backout count has
//! reached the queue's backout threshold (1 when the queue sets none) is not processed again: it
//! goes to the `failure` terminal when that is wired, else to the queue's backout requeue queue,
//! else to the dead-letter queue.

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{
    BuildContext, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner, Invocation,
    NodeConfig, NodeError, NodeExample, NodeImpl, NodeSpec, PropKind, PropSpec, Runs, Terminal,
};
use sluice_qm::{GetOptions, QueueManager};

use super::MqTransaction;
use super::headers;
use crate::Services;
use crate::domains::{self, BodyParsing};
use crate::terminals::{CATCH, FAILURE, OUT};

pub static MQ_INPUT: NodeSpec = NodeSpec {
    type_name: "MQInput",
    summary: "Takes each message from a queue, with `Root.MQMD` (and `Root.MQRFH2` for properties) and the \
              body parsed in the chosen domain, and propagates it; commits or backs out per the transaction mode.",
    inputs: &[],
    outputs: &[FAILURE, OUT, CATCH],
    dynamic_outputs: false,
    properties: &[
        PropSpec {
            name: "queue",
            kind: PropKind::String,
            default: None,
            required: true,
            doc: "The input queue.",
        },
        PropSpec {
            name: "transaction_mode",
            kind: PropKind::Enum(&["yes", "no", "automatic"]),
            default: Some("yes"),
            required: false,
            doc: "`yes`: the get and the flow's queue work commit together; `no`: the message is removed on \
                  read; `automatic`: transactional for persistent messages.",
        },
        domains::DOMAIN,
        domains::PARSE_TIMING,
        domains::OPAQUE_ELEMENTS,
    ],
    examples: &[NodeExample {
        title: "Each message put on `ORDERS.IN` starts the flow",
        properties: "queue: ORDERS.IN, domain: XMLNSC",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::No("only a message arriving on its queue starts it."),
    }],
    build: build_mq_input,
};

const T_FAILURE: Terminal = Terminal(0);
const T_OUT: Terminal = Terminal(1);
const T_CATCH: Terminal = Terminal(2);

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Yes,
    No,
    Automatic,
}

struct MqInput {
    flow: String,
    label: String,
    queue: String,
    mode: Mode,
    qm: Arc<QueueManager>,
    parsing: BodyParsing,
}

fn build_mq_input(c: &NodeConfig, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let qm = Services::from_build(b)?.queue_manager()?;
    let queue = c.str("queue").to_string();
    qm.queue_def(&queue).map_err(|e| {
        ConfigError::property("queue", e.to_string())
            .with_hint("define the queue in sluice.yaml under `queues`")
    })?;
    let mode = match c.str("transaction_mode") {
        "no" => Mode::No,
        "automatic" => Mode::Automatic,
        _ => Mode::Yes,
    };
    Ok(NodeImpl::Input(Arc::new(MqInput {
        flow: b.flow.to_string(),
        label: b.label.to_string(),
        queue,
        mode,
        qm,
        parsing: BodyParsing::from_config(c)?,
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

    /// One message; returns false when there was none.
    fn once(&self, runner: &mut dyn InstanceRunner) -> bool {
        let opts = GetOptions::new().wait(POLL);
        let (got, uow) = if self.mode == Mode::No {
            (self.qm.get(&self.queue, &opts), None)
        } else {
            let mut uow = self.qm.begin();
            let g = uow.get(&self.queue, &opts);
            (g, Some(uow))
        };
        let m = match got {
            Ok(Some(m)) => m,
            Ok(None) => return false,
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, queue = %self.queue, "Failed to get a message.");
                runner.stop().sleep(Duration::from_secs(1));
                return false;
            }
        };
        let mut uow = uow;
        if self.mode == Mode::Automatic
            && m.md.persistence != sluice_qm::Persistence::Persistent
            && let Some(u) = uow.take()
            && let Err(error) = u.commit()
        {
            tracing::error!(%error, queue = %self.queue, "Failed to commit a non-persistent get.");
        }
        runner.record_input_bytes(m.body.len() as u64);
        let (threshold, boq) = self.backout_threshold();
        let backed_out = uow.is_some() && m.md.backout_count >= threshold;
        let original = backed_out.then(|| m.clone());
        let mut inv = Invocation::new();
        if let Some(u) = uow {
            inv.insert(MqTransaction(u));
        }
        let mut msg = match headers::to_tree(m, &self.parsing) {
            Ok(msg) => msg,
            Err(e) => {
                self.finish(runner, &mut inv, Err(e), None, &boq);
                return true;
            }
        };
        let result = if backed_out {
            let mut e = NodeError::recoverable(format!(
                "the message was backed out {} times (threshold {threshold})",
                msg_backouts(&mut msg)
            ));
            e.exception.label.clone_from(&self.label);
            e.exception.node_type = "MQInput".into();
            if runner.is_wired(T_FAILURE) {
                e.exception
                    .write_to(&mut msg.exception_list)
                    .map_err(NodeError::from)
                    .and_then(|_| runner.invoke(&mut inv, T_FAILURE, &mut msg))
            } else {
                Err(e)
            }
        } else {
            match runner.invoke(&mut inv, T_OUT, &mut msg) {
                Err(e) if runner.is_wired(T_CATCH) => e
                    .exception
                    .write_to(&mut msg.exception_list)
                    .map_err(NodeError::from)
                    .and_then(|_| runner.invoke(&mut inv, T_CATCH, &mut msg)),
                r => r,
            }
        };
        self.finish(runner, &mut inv, result, original, &boq);
        true
    }

    fn finish(
        &self,
        _runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        result: Result<(), NodeError>,
        backed_out: Option<sluice_qm::Message>,
        boq: &str,
    ) {
        let uow = inv.take::<MqTransaction>().map(|t| t.0);
        match result {
            Ok(()) => {
                if let Err(e) = inv.commit() {
                    tracing::error!(error = %e, flow = %self.flow, "Failed to commit the invocation's resources.");
                }
                if let Some(u) = uow
                    && let Err(error) = u.commit()
                {
                    tracing::error!(%error, flow = %self.flow, "Failed to commit the unit of work.");
                }
            }
            Err(e) => {
                inv.rollback();
                match (uow, backed_out) {
                    // A poison message: move it to the backout queue in the same unit of work,
                    // or to the dead-letter queue, then commit its removal from the input queue.
                    (Some(mut u), Some(original)) => {
                        let text = e.exception.describe();
                        let moved = if boq.is_empty() {
                            self.qm
                                .put_dead_letter_from(original, &self.queue, 2362, &text)
                                .map(|_| ())
                        } else {
                            let keep = sluice_qm::PutOptions {
                                set_all_context: true,
                                ..Default::default()
                            };
                            u.put(boq, original, &keep).map(|_| ())
                        };
                        match moved.and_then(|_| u.commit()) {
                            Ok(()) => tracing::warn!(
                                flow = %self.flow, node = %self.label, reason = %text,
                                "Moved a backed-out message off the input queue."
                            ),
                            Err(error) => tracing::error!(
                                %error, flow = %self.flow, queue = %self.queue,
                                "Failed to move a backed-out message; it stays on the queue."
                            ),
                        }
                    }
                    (Some(u), None) => {
                        tracing::warn!(error = %e, flow = %self.flow, "Message processing failed; backing out.");
                        u.rollback();
                    }
                    (None, _) => {
                        tracing::error!(error = %e, flow = %self.flow, "Message processing failed outside a unit of work; the message is discarded.");
                    }
                }
            }
        }
    }
}

fn msg_backouts(msg: &mut sluice_node_api::Message) -> i64 {
    match headers::md_field(msg, "BackoutCount") {
        Ok(Some(sluice_tree::Value::Integer(i))) => i,
        _ => 0,
    }
}

impl InputNode for MqInput {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().is_stopped() {
            self.once(runner);
        }
    }
}
