//! The engine: depth-first propagation in wiring order, failure terminals, exceptions passed up to
//! the input node, Label jumps, and statistics.

use std::sync::{Arc, Mutex};

use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::{
    Ctx, InputNode, InstanceRunner, Invocation, Message, Node, NodeError, NodeImpl, NodeSpec,
    PropKind, PropSpec, Terminal, TerminalSpec,
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
            let r = runner.invoke(&mut inv, Terminal(0), &mut msg);
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
        ctx.propagate(Terminal(0), msg)
    }
}

const IN: TerminalSpec = TerminalSpec {
    name: "in",
    doc: "",
};
const OUT: TerminalSpec = TerminalSpec {
    name: "out",
    doc: "",
};
const FAILURE: TerminalSpec = TerminalSpec {
    name: "failure",
    doc: "",
};

static SOURCE: NodeSpec = NodeSpec {
    type_name: "Source",
    summary: "",
    inputs: &[],
    outputs: &[OUT],
    dynamic_outputs: false,
    properties: &[PropSpec {
        name: "count",
        kind: PropKind::Integer,
        default: Some("1"),
        required: false,
        doc: "",
    }],
    examples: &[],
    build: |c, _| {
        Ok(NodeImpl::Input(Arc::new(Source {
            count: c.int("count"),
        })))
    },
};

static STEP: NodeSpec = NodeSpec {
    type_name: "Step",
    summary: "",
    inputs: &[IN],
    outputs: &[OUT, FAILURE],
    dynamic_outputs: false,
    properties: &[
        PropSpec {
            name: "fail",
            kind: PropKind::Boolean,
            default: Some("false"),
            required: false,
            doc: "",
        },
        PropSpec {
            name: "jump",
            kind: PropKind::String,
            default: Some(""),
            required: false,
            doc: "",
        },
    ],
    examples: &[],
    build: |c, b| {
        Ok(NodeImpl::Process(Arc::new(Step {
            name: b.label.to_string(),
            fail: c.bool("fail"),
            jump: c.str("jump").into(),
        })))
    },
};

static LABEL: NodeSpec = NodeSpec {
    type_name: "Label",
    summary: "",
    inputs: &[],
    outputs: &[OUT],
    dynamic_outputs: false,
    properties: &[PropSpec {
        name: "label_name",
        kind: PropKind::String,
        default: None,
        required: true,
        doc: "",
    }],
    examples: &[],
    build: |_, b| {
        Ok(NodeImpl::Process(Arc::new(Step {
            name: b.label.to_string(),
            fail: false,
            jump: String::new(),
        })))
    },
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
        Flow::build(&def, std::path::Path::new("."), &()).unwrap_or_else(|e| panic!("{}", e[0])),
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
