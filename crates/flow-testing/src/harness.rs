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
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExceptionKind, InputNode, InstanceRunner,
    Invocation, Message, Node, NodeBuilder, NodeError, NodeImpl, NodeSpec, Terminal, Terminals,
};
use sluice_tree::Tree;

use sluice_flow::Diagnostic;
use sluice_flow::Flow;
use sluice_flow::FlowDef;
use sluice_flow::Registry;

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
        services: &sluice_node_api::Services,
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

sluice_node_api::terminals! {
    /// Inject's outputs.
    pub enum InjectOutput {
        Out = "out": "Each injected message.",
        Catch = "catch": "An injected message with the ExceptionList, when the flow raised an exception.",
    }
}

sluice_node_api::terminals! {
    /// Capture's input.
    pub enum CaptureInput {
        In = "in": "Messages to record.",
    }
}

sluice_node_api::properties! {
    /// Inject's properties.
    pub struct InjectProps {
        /// Keep waiting for messages injected later, until the flow stops (for flows started
        /// in the background); otherwise the node delivers what is queued when it starts.
        until_stopped: bool = "false",
    }
}

sluice_node_api::properties! {
    /// Capture's properties.
    pub struct CaptureProps {
        /// After recording, raise a user exception with this text, as a failing downstream node
        /// would.
        raise: Option<String>,
    }
}

/// Test input node: propagates the harness's queued messages, like a transport's input node.
pub static INJECT: NodeSpec = NodeSpec {
    type_name: "Inject",
    summary: "Test input: propagates the messages queued in the test harness, one invocation each.",
    inputs: &[],
    outputs: InjectOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<InjectProps>(),
};

impl BuildNode for InjectProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Inject {
            harness: Harness::current("Inject")?,
            claimed: AtomicBool::new(false),
            until_stopped: self.until_stopped,
        })))
    }
}

struct Inject {
    harness: Arc<Harness>,
    /// Only one instance delivers, so that messages are processed in the order queued.
    claimed: AtomicBool,
    until_stopped: bool,
}

impl InputNode for Inject {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return;
        }
        loop {
            let Some(mut msg) = lock(&self.harness.pending).pop_front() else {
                if self.until_stopped && !runner.stop().sleep(Duration::from_millis(10)) {
                    continue;
                }
                break;
            };
            let mut inv = Invocation::new();
            let copy = msg.clone();
            let outcome = match runner.invoke(&mut inv, InjectOutput::Out.into(), &mut msg) {
                Err(e) if runner.is_wired(InjectOutput::Catch.into()) => {
                    // The catch path gets the message as it was injected, as input nodes do.
                    let mut caught = copy;
                    match e.exception.write_to(&mut caught.exception_list) {
                        Ok(()) => runner.invoke(&mut inv, InjectOutput::Catch.into(), &mut caught),
                        Err(te) => Err(NodeError::from(te)),
                    }
                }
                r => r,
            };
            match &outcome {
                Ok(()) => {
                    if let Err(e) = inv.unit_of_work.commit() {
                        lock(&self.harness.outcomes)
                            .push(Err(NodeError::recoverable(format!("commit failed: {e}"))));
                        continue;
                    }
                }
                Err(_) => inv.unit_of_work.rollback(),
            }
            lock(&self.harness.outcomes).push(outcome);
        }
    }
}

/// Test output node: records every message that reaches it.
pub static CAPTURE: NodeSpec = NodeSpec {
    type_name: "Capture",
    summary: "Test output: records each message that reaches it, with the Environment.",
    inputs: CaptureInput::SPECS,
    outputs: &[],
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<CaptureProps>(),
};

impl BuildNode for CaptureProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Capture {
            harness: Harness::current("Capture")?,
            label: b.label.to_string(),
            raise: self.raise,
        })))
    }
}

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
