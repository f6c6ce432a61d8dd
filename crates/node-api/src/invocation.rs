//! The runtime side of a node: how it is invoked, how it propagates, and the per-invocation state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use sluice_tree::{Message, Tree};

use crate::exception::NodeError;
use crate::spec::Terminal;
use crate::unit_of_work::UnitOfWork;

/// A node that is invoked with a message on one of its input terminals.
pub trait Node: Send + Sync {
    /// Process `msg`, propagating to output terminals through `ctx`. Nodes treat `msg` as their
    /// input: they may parse it further (navigation) but build a new message to change it.
    fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        input: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError>;

    /// The name RouteToLabel and `PROPAGATE TO LABEL` jump to this node by (Label's
    /// `label_name`); `None` for every other node.
    fn label_name(&self) -> Option<&str> {
        None
    }

    /// Whether the node reads the invocation's context tree ([`Invocation::context`]): a flow
    /// captures that tree only when one of its nodes does, as the product does.
    fn reads_context(&self) -> bool {
        false
    }
}

/// The engine, as nodes see it.
pub trait FlowRuntime: Send + Sync {
    /// Run everything wired to `terminal` of node `from`, depth-first, and return when done.
    fn propagate(
        &self,
        inv: &mut Invocation,
        from: u32,
        terminal: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError>;

    /// Whether `terminal` of node `from` is wired to anything.
    fn is_wired(&self, from: u32, terminal: Terminal) -> bool;

    /// The output terminal of node `from` with this name (dynamic terminals included).
    fn terminal_named(&self, from: u32, name: &str) -> Option<Terminal>;

    /// Propagate to the Label node with this label name (RouteToLabel, ESQL PROPAGATE TO LABEL).
    fn propagate_to_label(
        &self,
        inv: &mut Invocation,
        label: &str,
        msg: &mut Message,
    ) -> Result<(), NodeError>;
}

/// What a node sees while it runs: the invocation and a way to propagate.
pub struct Ctx<'a> {
    pub inv: &'a mut Invocation,
    pub flow: &'a dyn FlowRuntime,
    pub node: u32,
}

impl Ctx<'_> {
    /// Propagate `msg` to every node wired to `terminal`, in wiring order.
    pub fn propagate(
        &mut self,
        terminal: impl Into<Terminal>,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        self.flow
            .propagate(self.inv, self.node, terminal.into(), msg)
    }

    pub fn is_wired(&self, terminal: impl Into<Terminal>) -> bool {
        self.flow.is_wired(self.node, terminal.into())
    }

    pub fn terminal_named(&self, name: &str) -> Option<Terminal> {
        self.flow.terminal_named(self.node, name)
    }

    pub fn propagate_to_label(&mut self, label: &str, msg: &mut Message) -> Result<(), NodeError> {
        self.flow.propagate_to_label(self.inv, label, msg)
    }
}

/// The state of one flow invocation: the Environment tree, the context tree when the flow
/// captures one, and the unit of work that holds every resource the invocation uses (see
/// [`UnitOfWork`]).
pub struct Invocation {
    pub environment: Tree,
    /// The context tree (ACE 12's `Context`): the flow, the invocation and what each node
    /// propagated so far. None unless a node of the flow reads it ([`Node::reads_context`]).
    pub context: Option<Tree>,
    pub unit_of_work: UnitOfWork,
}

impl Default for Invocation {
    fn default() -> Self {
        Invocation::new()
    }
}

impl Invocation {
    pub fn new() -> Invocation {
        Invocation {
            environment: Tree::new("Environment"),
            context: None,
            unit_of_work: UnitOfWork::default(),
        }
    }
}

/// A node that starts invocations; it runs one loop per flow instance.
pub trait InputNode: Send + Sync {
    /// Called once before the instances start (to begin receiving, for example).
    fn start(&self) {}

    /// Wait for input and invoke the flow for each message until the runner says stop.
    fn run_instance(&self, runner: &mut dyn InstanceRunner);

    /// Called once when the flow stops, after every instance loop returned.
    fn stopped(&self) {}
}

/// The engine's side of an instance loop.
pub trait InstanceRunner {
    fn stop(&self) -> &StopSignal;

    /// Propagate `msg` from `terminal` of this input node. The error, if any, is the exception
    /// that reached the input node; the input node decides (catch, failure, rollback).
    fn invoke(
        &mut self,
        inv: &mut Invocation,
        terminal: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError>;

    /// Whether `terminal` of this input node is wired.
    fn is_wired(&self, terminal: Terminal) -> bool;

    /// Record input bytes for statistics.
    fn record_input_bytes(&mut self, n: u64);
}

/// Tells instance loops to stop; sleeping loops wake at once.
#[derive(Default)]
pub struct StopSignal {
    stopped: AtomicBool,
    lock: Mutex<()>,
    cond: Condvar,
}

impl StopSignal {
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        let _g = self.lock.lock();
        self.cond.notify_all();
    }

    /// Sleep up to `d`, or less when stopped. Returns whether stopped.
    pub fn sleep(&self, d: Duration) -> bool {
        let g = match self.lock.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if self.is_stopped() {
            return true;
        }
        let _ = self.cond.wait_timeout(g, d);
        self.is_stopped()
    }
}
