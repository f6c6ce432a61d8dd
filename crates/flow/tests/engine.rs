//! The engine: depth-first propagation in wiring order, failure terminals, exceptions passed up to
//! the input node, Label jumps, and statistics; and all of these through subflows.

use std::sync::{Arc, Mutex};

use sluice_flow::{Diagnostic, Flow, Registry, Subflows, load_flow_with};
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
        if self.jump == "!" {
            return Err(ConfigError::property("jump", "`!` is not a label name"));
        }
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
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SourceProps>(),
};

static STEP: NodeSpec = NodeSpec {
    type_name: "Step",
    summary: "",
    inputs: StepInput::SPECS,
    outputs: StepOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<StepProps>(),
};

static LABEL: NodeSpec = NodeSpec {
    type_name: "Label",
    summary: "",
    inputs: &[],
    outputs: SourceOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<LabelProps>(),
};

static SERIAL: Mutex<()> = Mutex::new(());

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&STEP);
    r.register(&LABEL);
    r
}

/// Load and build a flow using the subflows `subs` (file, text).
fn build(src: &str, subs: &[(&str, &str)]) -> Result<Flow, Vec<Diagnostic>> {
    let r = registry();
    let (set, problems) = Subflows::load(subs.iter().copied(), &r);
    if let Some(p) = problems.first() {
        panic!("{p}");
    }
    let def = load_flow_with("t.yaml", src, &r, &set).unwrap_or_else(|e| panic!("{}", e[0]));
    Flow::build(&def, std::path::Path::new("."), &Services::none())
}

/// Run a flow to completion and return the log and the outcomes.
fn run(src: &str) -> (Vec<String>, Vec<Result<(), String>>, Arc<Flow>) {
    run_with(src, &[])
}

/// Run a flow using the subflows `subs` (file, text) to completion.
fn run_with(src: &str, subs: &[(&str, &str)]) -> (Vec<String>, Vec<Result<(), String>>, Arc<Flow>) {
    let flow = Arc::new(build(src, subs).unwrap_or_else(|e| panic!("{}", e[0])));
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

/// The statistics index of the node labelled `label`.
fn node_index(flow: &Flow, label: &str) -> usize {
    flow.node_info()
        .position(|n| n.label == label)
        .unwrap_or_else(|| panic!("no node `{label}`"))
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

/// Two steps in a row; `fail` makes the first raise.
const PAIR: &str = "properties:
  fail: { default: false, targets: [x.fail] }
nodes:
  in: { type: Input, wires: { out: [x] } }
  x:  { type: Step, wires: { out: [y] } }
  y:  { type: Step, wires: { out: [ok] } }
  ok: { type: Output }
";

#[test]
fn subflow_runs_inline_depth_first_with_hierarchical_labels() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (log, out, _) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [p, z] } }\n  p: { type: pair, wires: { ok: [after] } }\n  after: { type: Step }\n  z: { type: Step }\n",
        &[("subflows/pair.yaml", PAIR)],
    );
    assert_eq!(log, ["p.x", "p.y", "after", "z"]);
    assert_eq!(out, [Ok(())]);
}

#[test]
fn nested_subflow_nodes_run_as_a_b_c() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let outer = "properties:\n  fail: { default: false, targets: [b.fail] }\nnodes:\n  i: { type: Input, wires: { out: [b] } }\n  b: { type: pair, wires: { ok: [o] } }\n  o: { type: Output }\n";
    let subs = [("subflows/pair.yaml", PAIR), ("subflows/outer.yaml", outer)];
    let (log, out, _) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: outer, wires: { o: [z] } }\n  z: { type: Step }\n",
        &subs,
    );
    assert_eq!(log, ["a.b.x", "a.b.y", "z"]);
    assert_eq!(out, [Ok(())]);
    // The promoted property reaches two levels down, and the ExceptionList names the node there.
    let (log, out, _) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: outer, fail: true }\n",
        &subs,
    );
    assert_eq!(log, ["a.b.x"]);
    let err = out[0].clone().unwrap_err();
    assert!(
        err.contains("node 'a.b.x'") && err.contains("a.b.x failed"),
        "{err}"
    );
}

#[test]
fn exception_inside_a_subflow_goes_to_its_failure_terminal_wired_inside() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let guarded = "nodes:\n  in: { type: Input, wires: { out: [x] } }\n  x: { type: Step, fail: true, wires: { out: [o], failure: [f] } }\n  f: { type: Step }\n  o: { type: Output }\n";
    let (log, out, flow) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [g] } }\n  g: { type: guarded }\n",
        &[("subflows/guarded.yaml", guarded)],
    );
    assert_eq!(log, ["g.x", "g.f(exc)"]);
    assert_eq!(out, [Ok(())]);
    assert_eq!(
        flow.stats.nodes[node_index(&flow, "g.x")].snapshot().errors,
        1
    );
    assert_eq!(flow.stats.flow.snapshot().errors, 0);
}

#[test]
fn exception_inside_a_subflow_leaves_by_an_output_wired_to_its_failure_terminal() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out_on_failure = "nodes:\n  in: { type: Input, wires: { out: [x] } }\n  x: { type: Step, fail: true, wires: { failure: [failed] } }\n  failed: { type: Output }\n";
    let (log, out, _) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [u] } }\n  u: { type: sub, wires: { failed: [h] } }\n  h: { type: Step }\n",
        &[("subflows/sub.yaml", out_on_failure)],
    );
    assert_eq!(log, ["u.x", "h(exc)"]);
    assert_eq!(out, [Ok(())]);
}

#[test]
fn unwired_exception_inside_a_subflow_goes_up_to_the_input_node_with_its_label() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The flow's own node upstream has a failure terminal: it is for its own errors only.
    let (log, out, flow) = run_with(
        "nodes:\n  s: { type: Source, wires: { out: [a] } }\n  a: { type: Step, wires: { out: [p], failure: [f] } }\n  p: { type: pair, fail: true, wires: { ok: [z] } }\n  f: { type: Step }\n  z: { type: Step }\n",
        &[("subflows/pair.yaml", PAIR)],
    );
    assert_eq!(log, ["a", "p.x"]);
    let err = out[0].clone().unwrap_err();
    assert!(
        err.contains("node 'p.x'") && err.contains("p.x failed"),
        "{err}"
    );
    assert_eq!(
        flow.stats.nodes[node_index(&flow, "p.x")].snapshot().errors,
        1
    );
    assert_eq!(flow.stats.flow.snapshot().errors, 1);
}

#[test]
fn statistics_count_each_node_inside_a_subflow_under_its_label() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (_, _, flow) = run_with(
        "nodes:\n  s: { type: Source, count: 5, wires: { out: [p, q] } }\n  p: { type: pair }\n  q: { type: pair, wires: { ok: [p] } }\n",
        &[("subflows/pair.yaml", PAIR)],
    );
    let labels: Vec<&str> = flow.node_info().map(|n| n.label).collect();
    assert_eq!(labels, ["s", "p.x", "p.y", "q.x", "q.y"]);
    let count = |l: &str| {
        flow.stats.nodes[node_index(&flow, l)]
            .snapshot()
            .invocations
    };
    assert_eq!(count("q.y"), 5);
    assert_eq!(count("p.x"), 10, "once from s, once after q");
    assert_eq!(count("p.y"), 10);
}

#[test]
fn build_error_of_a_promoted_property_points_at_the_use() {
    let pass_jump = "properties:\n  to: { targets: [x.jump] }\nnodes:\n  in: { type: Input, wires: { out: [x] } }\n  x: { type: Step }\n";
    let problems = build(
        "nodes:\n  s: { type: Source, wires: { out: [u] } }\n  u: { type: jumper,\n       to: \"!\" }\n",
        &[("subflows/jumper.yaml", pass_jump)],
    )
    .err()
    .expect("does not build");
    let p = &problems[0];
    assert_eq!((p.file.as_str(), p.line, p.col), ("t.yaml", 4, 12), "{p}");
    assert!(
        p.message.contains("node `u.x`: `!` is not a label name"),
        "{p}"
    );
}

#[test]
fn wire_info_lists_each_wire_with_its_terminals_when_asked() {
    let flow = build(
        "nodes:\n  s: { type: Source, wires: { out: [a, b] } }\n  a: { type: Step, wires: { failure: [b] } }\n  b: { type: Step }\n",
        &[],
    )
    .unwrap_or_else(|e| panic!("{}", e[0]));
    let labels: Vec<&str> = flow.node_info().map(|n| n.label).collect();
    let wires: Vec<(&str, &str, &str, &str)> = flow
        .wire_info()
        .map(|w| (labels[w.from], w.terminal, labels[w.to], w.input))
        .collect();
    assert_eq!(
        wires,
        [
            ("s", "out", "a", "in"),
            ("s", "out", "b", "in"),
            ("a", "failure", "b", "in"),
        ]
    );
    let a = flow.node_info().find(|n| n.label == "a").expect("node a");
    assert_eq!(
        (a.inputs, a.outputs),
        (
            &["in".to_string()][..],
            &["out".to_string(), "failure".to_string()][..]
        )
    );
}
