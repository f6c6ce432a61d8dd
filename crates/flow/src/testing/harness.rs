//! A harness that runs flows without transports: an `Inject` input node that propagates queued
//! messages, and `Capture` nodes that record every message reaching them.
//!
//! Node builders are plain functions, so the two test node types find their harness through a
//! thread-local set while [`Harness::build`] builds the flow; the built nodes then hold it and
//! run on any thread.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use sluice_node_api::{
    BuildContext, ConfigError, Ctx, ExceptionKind, InputNode, InstanceRunner, Invocation, Message,
    Node, NodeError, NodeImpl, NodeSpec, PropKind, PropSpec, Terminal, TerminalSpec,
};
use sluice_tree::Tree;

use crate::diag::Diagnostic;
use crate::engine::Flow;
use crate::load::FlowDef;
use crate::registry::Registry;

/// One message as it reached a `Capture` node.
#[derive(Clone, Debug)]
pub struct Captured {
    /// The Capture node's label.
    pub label: String,
    pub message: Message,
    /// The invocation's Environment at that moment.
    pub environment: Tree,
}

/// Messages to inject, what was captured, and how each injected message ended.
#[derive(Default)]
pub struct Harness {
    pending: Mutex<VecDeque<Message>>,
    captured: Mutex<Vec<Captured>>,
    outcomes: Mutex<Vec<Result<(), NodeError>>>,
}

thread_local! {
    static BUILDING: RefCell<Option<Arc<Harness>>> = const { RefCell::new(None) };
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Harness {
    pub fn new() -> Arc<Harness> {
        Arc::new(Harness::default())
    }

    /// Add the `Inject` and `Capture` node types to a registry.
    pub fn register(registry: &mut Registry) {
        registry.register(&INJECT);
        registry.register(&CAPTURE);
    }

    /// Build `def` with its `Inject` and `Capture` nodes bound to this harness.
    pub fn build(
        self: &Arc<Self>,
        def: &FlowDef,
        project_dir: &Path,
        services: &dyn std::any::Any,
    ) -> Result<Arc<Flow>, Vec<Diagnostic>> {
        BUILDING.with(|b| *b.borrow_mut() = Some(Arc::clone(self)));
        let built = Flow::build(def, project_dir, services);
        BUILDING.with(|b| *b.borrow_mut() = None);
        built.map(Arc::new)
    }

    /// Queue a message for the flow's `Inject` node.
    pub fn inject(&self, msg: Message) {
        lock(&self.pending).push_back(msg);
    }

    /// Start the flow, let its input nodes deliver what they have, and stop it. Returns when every
    /// injected message has been processed.
    pub fn run(&self, flow: &Arc<Flow>) {
        flow.start().stop();
    }

    /// Everything captured so far, in arrival order; the harness forgets it.
    pub fn take_captured(&self) -> Vec<Captured> {
        std::mem::take(&mut *lock(&self.captured))
    }

    /// How each injected message ended (the error that reached the `Inject` node, if any).
    pub fn take_outcomes(&self) -> Vec<Result<(), NodeError>> {
        std::mem::take(&mut *lock(&self.outcomes))
    }

    fn current(type_name: &str) -> Result<Arc<Harness>, ConfigError> {
        BUILDING.with(|b| b.borrow().clone()).ok_or_else(|| {
            ConfigError::node(format!(
                "`{type_name}` nodes run only inside the test harness"
            ))
        })
    }
}

const T_OUT: Terminal = Terminal(0);
const T_CATCH: Terminal = Terminal(1);

/// Test input node: propagates the harness's queued messages, like a transport's input node.
pub static INJECT: NodeSpec = NodeSpec {
    type_name: "Inject",
    summary: "Test input: propagates the messages queued in the test harness, one invocation each.",
    inputs: &[],
    outputs: &[
        TerminalSpec {
            name: "out",
            doc: "Each injected message.",
        },
        TerminalSpec {
            name: "catch",
            doc: "An injected message with the ExceptionList, when the flow raised an exception.",
        },
    ],
    dynamic_outputs: false,
    properties: &[],
    examples: &[],
    build: |_, _| {
        Ok(NodeImpl::Input(Arc::new(Inject {
            harness: Harness::current("Inject")?,
            claimed: AtomicBool::new(false),
        })))
    },
};

struct Inject {
    harness: Arc<Harness>,
    /// Only one instance delivers, so that messages are processed in the order queued.
    claimed: AtomicBool,
}

impl InputNode for Inject {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return;
        }
        loop {
            let Some(mut msg) = lock(&self.harness.pending).pop_front() else {
                break;
            };
            let mut inv = Invocation::new();
            let copy = msg.clone();
            let outcome = match runner.invoke(&mut inv, T_OUT, &mut msg) {
                Err(e) if runner.is_wired(T_CATCH) => {
                    // The catch path gets the message as it was injected, as input nodes do.
                    let mut caught = copy;
                    match e.exception.write_to(&mut caught.exception_list) {
                        Ok(()) => runner.invoke(&mut inv, T_CATCH, &mut caught),
                        Err(te) => Err(NodeError::from(te)),
                    }
                }
                r => r,
            };
            match &outcome {
                Ok(()) => {
                    if let Err(e) = inv.commit() {
                        lock(&self.harness.outcomes)
                            .push(Err(NodeError::recoverable(format!("commit failed: {e}"))));
                        continue;
                    }
                }
                Err(_) => inv.rollback(),
            }
            lock(&self.harness.outcomes).push(outcome);
        }
    }
}

/// Test output node: records every message that reaches it.
pub static CAPTURE: NodeSpec = NodeSpec {
    type_name: "Capture",
    summary: "Test output: records each message that reaches it, with the Environment.",
    inputs: &[TerminalSpec {
        name: "in",
        doc: "Messages to record.",
    }],
    outputs: &[],
    dynamic_outputs: false,
    properties: &[PropSpec {
        name: "raise",
        kind: PropKind::String,
        default: None,
        required: false,
        doc: "After recording, raise a user exception with this text, as a failing downstream node would.",
    }],
    examples: &[],
    build: |c, b: &BuildContext| {
        Ok(NodeImpl::Process(Arc::new(Capture {
            harness: Harness::current("Capture")?,
            label: b.label.to_string(),
            raise: c.opt_str("raise").map(str::to_string),
        })))
    },
};

struct Capture {
    harness: Arc<Harness>,
    label: String,
    raise: Option<String>,
}

impl Node for Capture {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        lock(&self.harness.captured).push(Captured {
            label: self.label.clone(),
            message: msg.clone(),
            environment: ctx.inv.environment.clone(),
        });
        match &self.raise {
            Some(text) => Err(NodeError::new(ExceptionKind::User, 3001, text.clone())),
            None => Ok(()),
        }
    }
}
