//! The engine: a deployed flow's nodes and wires, depth-first propagation, failure handling, and
//! the instance threads that run it.
//!
//! Propagation runs every node wired to a terminal, in wiring order, on the calling thread, and
//! returns when they are done. An exception raised by a node goes to that node's `failure`
//! terminal when it is wired (with the ExceptionList filled in); otherwise, and for exceptions
//! from downstream, it goes back up to the nearest TryCatch or input node.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use sluice_node_api::{
    BuildContext, Ctx, FlowRuntime, InputNode, InstanceRunner, Invocation, Message, NodeError,
    NodeImpl, Services, StopSignal, Terminal,
};

use crate::context;
use crate::diag::Diagnostic;
use crate::load::FlowDef;
use crate::stats::{self, FlowStats};

struct RuntimeNode {
    label: String,
    type_name: &'static str,
    config: sluice_node_api::NodeConfig,
    imp: NodeImpl,
    inputs: Vec<String>,
    outputs: Vec<String>,
    wires: Vec<Vec<(u32, Terminal)>>,
    failure: Option<Terminal>,
}

/// A flow built and ready to run.
pub struct Flow {
    pub name: String,
    pub instances: usize,
    pub file: String,
    nodes: Vec<RuntimeNode>,
    labels: HashMap<String, u32>,
    pub stats: Arc<FlowStats>,
    /// What the context tree's Flow section says, when a node reads that tree; None when no
    /// node does, and then no invocation captures one.
    context: Option<context::FlowDetails>,
}

/// Why [`Flow::enter`] did not complete.
#[derive(Debug, thiserror::Error)]
pub enum EnterError {
    /// The flow has no node with that label.
    #[error("there is no node labelled '{label}' in flow '{flow}'")]
    NoSuchNode { flow: String, label: String },
    /// The node is an input node, which only its transport drives.
    #[error("node '{label}' is an input node: only its transport gives it messages")]
    InputNode { label: String },
    /// The node (or one downstream) raised an exception.
    #[error(transparent)]
    Raised(#[from] NodeError),
}

/// A node's label and type, for statistics and the admin API.
pub struct NodeInfo<'a> {
    pub label: &'a str,
    pub type_name: &'a str,
    pub properties: &'a sluice_node_api::NodeConfig,
    /// Input terminal names, declared then dynamic.
    pub inputs: &'a [String],
    /// Output terminal names, declared then dynamic.
    pub outputs: &'a [String],
}

/// One wire of a built flow, for drawing it: nodes by their index in [`Flow::node_info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireInfo<'a> {
    pub from: usize,
    /// The output terminal it leaves.
    pub terminal: &'a str,
    pub to: usize,
    /// The input terminal it reaches.
    pub input: &'a str,
}

impl Flow {
    /// Build every node of a validated flow. Problems a node's builder finds are reported at the
    /// property they concern.
    pub fn build(
        def: &FlowDef,
        project_dir: &Path,
        services: &Services,
    ) -> Result<Flow, Vec<Diagnostic>> {
        let mut problems = Vec::new();
        let mut nodes = Vec::new();
        let mut labels = HashMap::new();
        for (i, n) in def.nodes.iter().enumerate() {
            let bc = BuildContext {
                flow: &def.name,
                label: &n.label,
                project_dir,
                inputs: &n.inputs,
                outputs: &n.outputs,
                services,
                transaction: def.transaction,
            };
            match n.spec.build(&n.config, &bc) {
                Ok(imp) => {
                    if let Some(p) = imp.process()
                        && let Some(name) = p.label_name()
                    {
                        labels.insert(name.to_string(), i as u32);
                    }
                    let failure = n
                        .spec
                        .output("failure")
                        .filter(|t| !n.wires[t.index()].is_empty());
                    nodes.push(RuntimeNode {
                        label: n.label.clone(),
                        type_name: n.spec.type_name,
                        config: n.config.clone(),
                        imp,
                        inputs: n.inputs.clone(),
                        outputs: n.outputs.clone(),
                        wires: n
                            .wires
                            .iter()
                            .map(|ts| {
                                ts.iter()
                                    .map(|&(t, inp)| (t as u32, Terminal::at(inp)))
                                    .collect()
                            })
                            .collect(),
                        failure,
                    })
                }
                Err(e) => {
                    // Reported where the node (or the property) was written: inside a
                    // subflow's file, or at the use that set a promoted property.
                    problems.push(
                        n.place_of(e.property.as_deref())
                            .diagnostic(format!("node `{}`: {}", n.label, e.message))
                            .with_hint_opt(e.hint),
                    );
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let stats = Arc::new(FlowStats::new(nodes.len()));
        let reads_context = nodes
            .iter()
            .any(|n| n.imp.process().is_some_and(|p| p.reads_context()));
        let context = reads_context.then(|| {
            let application = project_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            context::FlowDetails::new(&def.name, application)
        });
        Ok(Flow {
            name: def.name.clone(),
            instances: def.instances,
            file: def.file.clone(),
            nodes,
            labels,
            stats,
            context,
        })
    }

    /// Add the statistics of `old`, the flow this one replaces, to this one's: the flow's totals
    /// go on, and so do those of every node whose label, type and properties are unchanged; a
    /// changed or new node starts from zero. Call it once `old` has stopped, so that nothing it
    /// counts afterwards is lost.
    pub fn carry_statistics_from(&self, old: &Flow) {
        self.stats.flow.absorb(&old.stats.flow);
        let before: HashMap<&str, usize> = old
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.label.as_str(), i))
            .collect();
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(&j) = before.get(n.label.as_str()) {
                let o = &old.nodes[j];
                if o.type_name == n.type_name && o.config == n.config {
                    self.stats.nodes[i].absorb(&old.stats.nodes[j]);
                }
            }
        }
    }

    pub fn node_info(&self) -> impl Iterator<Item = NodeInfo<'_>> {
        self.nodes.iter().map(|n| NodeInfo {
            label: &n.label,
            type_name: n.type_name,
            properties: &n.config,
            inputs: &n.inputs,
            outputs: &n.outputs,
        })
    }

    /// Every wire, by source node and terminal in propagation order.
    pub fn wire_info(&self) -> impl Iterator<Item = WireInfo<'_>> {
        self.nodes.iter().enumerate().flat_map(move |(from, n)| {
            n.wires.iter().enumerate().flat_map(move |(t, targets)| {
                targets.iter().map(move |&(to, input)| WireInfo {
                    from,
                    terminal: n.outputs.get(t).map_or("", String::as_str),
                    to: to as usize,
                    input: self
                        .nodes
                        .get(to as usize)
                        .and_then(|t| t.inputs.get(input.index()))
                        .map_or("", String::as_str),
                })
            })
        })
    }

    fn call(
        &self,
        inv: &mut Invocation,
        target: u32,
        input: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let node = &self.nodes[target as usize];
        let Some(imp) = node.imp.process() else {
            return Err(NodeError::recoverable(format!(
                "node '{}' is an input node and cannot be wired to (this is a bug, please report it)",
                node.label
            )));
        };
        let prev = stats::enter_node(&self.stats, target);
        let r = {
            let mut ctx = Ctx {
                inv: &mut *inv,
                flow: self,
                node: target,
            };
            imp.evaluate(&mut ctx, input, msg)
        };
        stats::leave_node(
            &self.stats,
            target,
            prev,
            r.as_ref().is_err_and(|e| !e.passed_up),
        );
        match r {
            Err(e) if !e.passed_up => self.node_failed(inv, target, e, msg),
            r => r,
        }
    }

    /// Give `msg` to the node labelled `label` on the calling thread, as a jump to a Label node
    /// does: the way to run a node that has no input terminal and is not an input node.
    pub fn enter(
        &self,
        inv: &mut Invocation,
        label: &str,
        msg: &mut Message,
    ) -> Result<(), EnterError> {
        let Some(n) = self.nodes.iter().position(|n| n.label == label) else {
            return Err(EnterError::NoSuchNode {
                flow: self.name.clone(),
                label: label.to_string(),
            });
        };
        if let NodeImpl::Input(_) = self.nodes[n].imp {
            return Err(EnterError::InputNode {
                label: label.to_string(),
            });
        }
        Ok(self.call(inv, n as u32, Terminal::at(0), msg)?)
    }

    /// An exception raised by node `n` itself: its failure terminal, else back up the stack.
    fn node_failed(
        &self,
        inv: &mut Invocation,
        n: u32,
        mut e: NodeError,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let node = &self.nodes[n as usize];
        if e.exception.label.is_empty() {
            e.exception.label = node.label.clone();
            e.exception.node_type = node.type_name.to_string();
        }
        e.passed_up = true;
        let Some(failure) = node.failure else {
            return Err(e);
        };
        let mut fmsg = msg.clone();
        e.exception.write_to(&mut fmsg.exception_list)?;
        self.propagate(inv, n, failure, &mut fmsg).map_err(|mut e| {
            e.passed_up = true;
            e
        })
    }

    /// Start the flow's instance threads.
    pub fn start(self: &Arc<Flow>) -> RunningFlow {
        let stop = Arc::new(StopSignal::default());
        let mut threads = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let Some(input) = n.imp.input() else {
                continue;
            };
            input.start();
            // A node that is also invoked with messages runs one loop of its own (its
            // timeouts), not one per instance.
            let loops = match n.imp {
                NodeImpl::Input(_) => self.instances,
                _ => 1,
            };
            for k in 0..loops {
                let flow = Arc::clone(self);
                let input = Arc::clone(input);
                let stop = Arc::clone(&stop);
                let name = format!("{}#{}", self.name, k);
                let spawned = std::thread::Builder::new().name(name).spawn(move || {
                    yield_to_io();
                    let mut runner = Runner {
                        flow: &flow,
                        node: i as u32,
                        stop: &stop,
                    };
                    input.run_instance(&mut runner);
                });
                match spawned {
                    Ok(h) => threads.push(h),
                    Err(error) => {
                        tracing::error!(%error, flow = %self.name, "Failed to start a flow instance.")
                    }
                }
            }
        }
        RunningFlow {
            flow: Arc::clone(self),
            stop,
            threads,
        }
    }
}

/// Mark the calling instance thread as batch work for the Linux scheduler: a flow instance
/// woken by its input then no longer preempts the I/O thread that woke it, which goes on
/// reading the other ready connections, and the instance takes the requests queued
/// meanwhile in one go. With the server on one core, 8 HTTP clients: about 12 % less CPU per
/// 2 kB transform and 20 % less per BLOB echo (docs/performance.md); an idle server answers
/// one client a few µs later. The I/O threads stay normal, so a reply still wakes them at once.
fn yield_to_io() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for the call; 0 means the calling thread.
        // Failing leaves the thread's policy as it was, which is only slower.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    }
}

impl FlowRuntime for Flow {
    fn propagate(
        &self,
        inv: &mut Invocation,
        from: u32,
        terminal: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        if let Some(c) = inv.context.as_mut() {
            context::capture(c, &self.nodes[from as usize].label, msg)?;
        }
        let Some(targets) = self.nodes[from as usize].wires.get(terminal.index()) else {
            return Ok(());
        };
        for &(target, input) in targets {
            self.call(inv, target, input, msg)?;
        }
        Ok(())
    }

    fn is_wired(&self, from: u32, terminal: Terminal) -> bool {
        self.nodes[from as usize]
            .wires
            .get(terminal.index())
            .is_some_and(|w| !w.is_empty())
    }

    fn terminal_named(&self, from: u32, name: &str) -> Option<Terminal> {
        self.nodes[from as usize]
            .outputs
            .iter()
            .position(|o| o == name)
            .map(|i| Terminal::at(i as u16))
    }

    fn propagate_to_label(
        &self,
        inv: &mut Invocation,
        label: &str,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        match self.labels.get(label) {
            Some(&n) => self.call(inv, n, Terminal::at(0), msg),
            None => Err(NodeError::recoverable(format!(
                "there is no Label node named '{label}' in flow '{}'",
                self.name
            ))),
        }
    }
}

struct Runner<'a> {
    flow: &'a Arc<Flow>,
    node: u32,
    stop: &'a StopSignal,
}

impl InstanceRunner for Runner<'_> {
    fn stop(&self) -> &StopSignal {
        self.stop
    }

    fn invoke(
        &mut self,
        inv: &mut Invocation,
        terminal: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let flow: &Flow = self.flow;
        if let Some(details) = &flow.context {
            let input = &flow.nodes[self.node as usize].label;
            inv.context = Some(context::begin(details, input)?);
        }
        let timer = stats::begin_invocation(&flow.stats, self.node);
        let r = flow.propagate(inv, self.node, terminal, msg);
        stats::end_invocation(&flow.stats, timer, r.is_err());
        r.map_err(|mut e| {
            if e.exception.label.is_empty() {
                let n = &flow.nodes[self.node as usize];
                e.exception.label = n.label.clone();
                e.exception.node_type = n.type_name.to_string();
            }
            e
        })
    }

    fn is_wired(&self, terminal: Terminal) -> bool {
        self.flow.is_wired(self.node, terminal)
    }

    fn record_input_bytes(&mut self, n: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.flow.stats.flow.input_bytes.fetch_add(n, Relaxed);
        self.flow.stats.nodes[self.node as usize]
            .input_bytes
            .fetch_add(n, Relaxed);
    }
}

/// A flow whose instances are running.
pub struct RunningFlow {
    pub flow: Arc<Flow>,
    stop: Arc<StopSignal>,
    threads: Vec<JoinHandle<()>>,
}

impl RunningFlow {
    /// Ask every instance to stop after its current message, without waiting for them (see
    /// [`RunningFlow::stop`]): stopping many flows, ask them all first.
    pub fn ask_to_stop(&self) {
        self.stop.stop();
    }

    /// Ask every instance to stop after its current message, wait for them, and tell the input
    /// nodes.
    pub fn stop(self) {
        self.stop.stop();
        for t in self.threads {
            let _ = t.join();
        }
        for n in &self.flow.nodes {
            if let Some(i) = n.imp.input() {
                i.stopped();
            }
        }
    }

    /// The input nodes (to wake them when stopping, for example).
    pub fn inputs(&self) -> Vec<Arc<dyn InputNode>> {
        self.flow
            .nodes
            .iter()
            .filter_map(|n| n.imp.input().map(Arc::clone))
            .collect()
    }
}
