//! The engine: depth-first propagation in wiring order, failure terminals, exceptions passed up to
//! the input node, Label jumps, and statistics.

use std::sync::{Arc, Mutex};

use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, InputNode, InstanceRunner, Invocation, Message,
    Node, NodeBuilder, NodeError, NodeImpl, NodeSpec, Services, Terminal, Terminals,
};

static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());
static OUTCOMES: Mutex<Vec<Result<(), String>>> = Mutex::new(Vec::new());
/// The scheduling policy each instance thread ran under.
static POLICIES: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn log(s: String) {
    LOG.lock().unwrap().push(s);
}

/// Sends `count` messages, records how each invocation ended.
struct Source {
    count: i64,
}
impl InputNode for Source {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        // SAFETY: no arguments; 0 means the calling thread.
        POLICIES
            .lock()
            .unwrap()
            .push(unsafe { libc::sched_getscheduler(0) });
        for _ in 0..self.count {
            let mut inv = Invocation::new();
            let mut msg = Message::new();
            runner.record_input_bytes(10);
            let r = runner.invoke(&mut inv, SourceOutput::Out.into(), &mut msg);
            OUTCOMES
                .lock()
                .unwrap()
                .push(r.map_err(|e| e.exception.describe()));
        }
    }
}

/// Logs its name, then propagates to `out` (or fails when told to).
struct Step {
    name: String,
    fail: bool,
    jump: String,
    /// The name jumps reach it by, for a Label.
    label: Option<String>,
}
impl Node for Step {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let has_exc = msg
            .exception_list
            .peek_first_child(msg.exception_list.root())
            .is_some();
        log(format!(
            "{}{}",
            self.name,
            if has_exc { "(exc)" } else { "" }
        ));
        if self.fail {
            return Err(NodeError::recoverable(format!("{} failed", self.name)));
        }
        if !self.jump.is_empty() {
            return ctx.propagate_to_label(&self.jump.clone(), msg);
        }
        ctx.propagate(StepOutput::Out, msg)
    }

    fn label_name(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

sluice_node_api::terminals! {
    enum SourceOutput {
        Out = "out": "",
    }
}

sluice_node_api::terminals! {
    enum StepInput {
        In = "in": "",
    }
}

sluice_node_api::terminals! {
    enum StepOutput {
        Out = "out": "",
        Failure = "failure": "",
    }
}

sluice_node_api::properties! {
    struct SourceProps {
        count: i64 = "1",
    }
}

sluice_node_api::properties! {
    struct StepProps {
        fail: bool = "false",
        jump: String = "",
    }
}

sluice_node_api::properties! {
    struct LabelProps {
        label_name: String,
    }
}

impl BuildNode for SourceProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Source { count: self.count })))
    }
}

impl BuildNode for StepProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Step {
            name: b.label.to_string(),
            fail: self.fail,
            jump: self.jump,
            label: None,
        })))
    }
}

impl BuildNode for LabelProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Step {
            name: b.label.to_string(),
            fail: false,
            jump: String::new(),
            label: Some(self.label_name),
        })))
    }
}

static SOURCE: NodeSpec = NodeSpec {
    type_name: "Source",
    summary: "",
    inputs: &[],
    outputs: SourceOutput::SPECS,
    dynamic_outputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SourceProps>(),
};

static STEP: NodeSpec = NodeSpec {
    type_name: "Step",
    summary: "",
    inputs: StepInput::SPECS,
    outputs: StepOutput::SPECS,
    dynamic_outputs: false,
    examples: &[],
    builder: NodeBuilder::of::<StepProps>(),
};

static LABEL: NodeSpec = NodeSpec {
    type_name: "Label",
    summary: "",
    inputs: &[],
    outputs: SourceOutput::SPECS,
    dynamic_outputs: false,
    examples: &[],
    builder: NodeBuilder::of::<LabelProps>(),
};

static SERIAL: Mutex<()> = Mutex::new(());

/// Run a flow to completion and return the log and the outcomes.
fn run(src: &str) -> (Vec<String>, Vec<Result<(), String>>, Arc<Flow>) {
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&STEP);
    r.register(&LABEL);
    let def = load_flow("t.yaml", src, &r).unwrap_or_else(|e| panic!("{}", e[0]));
    let flow = Arc::new(
        Flow::build(&def, std::path::Path::new("."), &Services::none())
            .unwrap_or_else(|e| panic!("{}", e[0])),
    );
    LOG.lock().unwrap().clear();
    OUTCOMES.lock().unwrap().clear();
    POLICIES.lock().unwrap().clear();
    flow.start().stop();
    (
        LOG.lock().unwrap().clone(),
        OUTCOMES.lock().unwrap().clone(),
        flow,
    )
}

#[test]
fn propagate_runs_depth_first_in_wiring_order() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (log, out, _) = run(
        "nodes:\n  s: { type: Source, wires: { out: [a, d] } }\n  a: { type: Step, wires: { out: [b, c] } }\n  b: { type: Step }\n  c: { type: Step }\n  d: { type: Step }\n",
    );
    assert_eq!(log, ["a", "b", "c", "d"]);
    assert_eq!(out, [Ok(())]);
}

#[test]
fn node_exception_goes_to_its_failure_terminal_with_exception_list() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (log, out, flow) = run(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: Step, fail: true, wires: { failure: [f] } }\n  f: { type: Step }\n",
    );
    assert_eq!(log, ["a", "f(exc)"]);
    assert_eq!(out, [Ok(())]);
    assert_eq!(flow.stats.nodes[1].snapshot().errors, 1);
    assert_eq!(flow.stats.flow.snapshot().errors, 0);
}

#[test]
fn downstream_exception_skips_upstream_failure_terminals() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (log, out, flow) = run(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: Step, wires: { out: [b], failure: [f] } }\n  b: { type: Step, fail: true }\n  f: { type: Step }\n",
    );
    assert_eq!(
        log,
        ["a", "b"],
        "a's failure terminal is for a's own errors"
    );
    assert_eq!(out.len(), 1);
    let err = out[0].clone().unwrap_err();
    assert!(
        err.contains("node 'b'") && err.contains("b failed"),
        "{err}"
    );
    assert_eq!(flow.stats.flow.snapshot().errors, 1);
}

#[test]
fn label_jump_continues_at_the_label_node() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (log, _, _) = run(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: Step, jump: there }\n  l: { type: Label, label_name: there, wires: { out: [z] } }\n  z: { type: Step }\n",
    );
    assert_eq!(log, ["a", "l", "z"]);
}

#[test]
fn statistics_count_invocations_and_bytes_per_flow_and_node() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_, out, flow) =
        run("nodes:\n  s: { type: Source, count: 40, wires: { out: [a] } }\n  a: { type: Step }\n");
    assert_eq!(out.len(), 40);
    let f = flow.stats.flow.snapshot();
    assert_eq!(f.invocations, 40);
    assert_eq!(f.input_bytes, 400);
    assert!(f.elapsed_ns > 0);
    assert_eq!(flow.stats.nodes[1].snapshot().invocations, 40);
    assert!(f.cpu_ns > 0, "sampled CPU time is scaled up to an estimate");
}

#[test]
#[cfg(target_os = "linux")]
fn instance_threads_do_not_preempt_the_io_threads() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    run("nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: Step }\n");
    assert_eq!(*POLICIES.lock().unwrap(), [libc::SCHED_BATCH]);
    // SAFETY: as above.
    let this = unsafe { libc::sched_getscheduler(0) };
    assert_eq!(
        this,
        libc::SCHED_OTHER,
        "only the instance threads change policy"
    );
}
