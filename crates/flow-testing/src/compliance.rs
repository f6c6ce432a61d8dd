//! The checks every node type passes (in the spirit of Vector's `assert_transform_compliance`):
//!
//! * its declaration is complete: a summary, documented terminals and properties, unique names;
//! * it builds from its minimal valid properties (given by a [`ComplianceCase`], or its defaults);
//! * evaluated with a recording runtime, it propagates only to terminals it declares (or that its
//!   properties name, for dynamic terminals), and an exception from downstream is passed back to
//!   the caller or handled on its `catch` terminal, never dropped;
//! * run in a real flow, an exception it raises itself goes to its `failure` terminal when that is
//!   wired, otherwise back to the caller — the input node's `catch` terminal or the input node —
//!   with an ExceptionList entry naming the node;
//! * input nodes start and stop inside a flow;
//! * it has examples, and every one that can run gives what it promises ([`super::examples`]).

use std::path::Path;
use std::sync::Arc;

use sluice_node_api::{
    BuildContext, Ctx, ExceptionKind, FlowRuntime, Invocation, Message, NodeError, NodeImpl,
    NodeSpec, Terminal,
};
use sluice_tree::Tree;

use crate::harness::Harness;
use sluice_flow::Registry;
use sluice_flow::load_flow;

/// How to exercise one node type.
#[derive(Clone, Copy, Debug)]
pub struct ComplianceCase {
    pub type_name: &'static str,
    /// Minimal valid properties, as the entries of a YAML flow mapping (`queue: IN, wait_ms: 0`).
    pub properties: &'static str,
    /// The dynamic output terminals to wire (Route's rule names).
    pub dynamic_outputs: &'static [&'static str],
    /// The message the node is given: its domain and body.
    pub domain: &'static str,
    pub body: &'static str,
    /// How the node raises an exception itself.
    pub failing: Failing,
}

/// Whether and how a node type raises exceptions of its own.
#[derive(Clone, Copy, Debug)]
pub enum Failing {
    /// Nothing says: a node type without a case gets this, and then must not declare a
    /// `failure` terminal.
    Unknown,
    /// These properties and this message make it fail.
    With(FailingCase),
    /// It cannot fail on its own; the text says why (its `failure` terminal, if any, is kept for
    /// the product's flows).
    Never(&'static str),
}

/// Properties and a message that make a node raise an exception itself.
#[derive(Clone, Copy, Debug)]
pub struct FailingCase {
    pub properties: &'static str,
    pub domain: &'static str,
    pub body: &'static str,
}

/// What the checks build flows with.
pub struct ComplianceEnv<'a> {
    /// Every node type, plus the harness's `Inject` and `Capture` ([`Harness::register`]).
    pub registry: &'a Registry,
    /// The services node builders look for (HTTP router, queue manager …).
    pub services: &'a sluice_node_api::Services,
    pub project_dir: &'a Path,
    /// A message with `body` parsed on demand in `domain`.
    pub make_message: &'a MakeMessage,
    /// The message body serialised in its domain, as an output node would send it.
    pub serialize_body: &'a SerializeBody,
}

/// Why a test message could not be built or shown: the parser's or the tree's error.
pub type MessageError = Box<dyn std::error::Error + Send + Sync>;

/// Builds a message from a domain name and body bytes (the node families own the parsers).
pub type MakeMessage = dyn Fn(&str, &[u8]) -> Result<Message, MessageError>;

/// Serialises a message's body in its domain, as text.
pub type SerializeBody = dyn Fn(&mut Message) -> Result<String, MessageError>;

/// The label of the node under test in every flow the checks build.
pub(crate) const NODE: &str = "n";

/// What the Inject node is wired to: the node under test, by its first declared input terminal
/// when the node type has dynamic inputs (a wire to it must name a terminal).
pub(crate) fn target(spec: &NodeSpec) -> String {
    match spec.inputs.first() {
        Some(t) if spec.dynamic_inputs => format!("{NODE}.{}", t.name),
        _ => NODE.to_string(),
    }
}

/// Run every check on `spec`; the problems found, each naming the node type and the check.
pub fn check_node(
    spec: &'static NodeSpec,
    case: Option<&ComplianceCase>,
    env: &ComplianceEnv,
) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let mut problem = |what: String| problems.push(format!("{}: {what}", spec.type_name));
    for p in check_declaration(spec) {
        problem(p);
    }
    let default_case = ComplianceCase {
        type_name: spec.type_name,
        properties: "",
        dynamic_outputs: &[],
        domain: "XMLNSC",
        body: "<a>1</a>",
        failing: Failing::Unknown,
    };
    let case = case.unwrap_or(&default_case);
    if matches!(case.failing, Failing::Unknown) && spec.output("failure").is_some() {
        problem(
            "declares a `failure` terminal but its compliance case gives no way to make it fail"
                .into(),
        );
    }
    let is_process = match build_alone(spec, case, env) {
        Ok((imp, outputs)) => match imp {
            NodeImpl::Process(node) | NodeImpl::ProcessAndInput(node, _) => {
                for p in check_propagation(&*node, &outputs, case, env) {
                    problem(p);
                }
                true
            }
            NodeImpl::Input(_) => false,
        },
        Err(e) => {
            problem(e);
            return Err(problems);
        }
    };
    if is_process && !spec.inputs.is_empty() {
        if let Failing::With(f) = &case.failing {
            for p in check_failures(spec, case, f, env) {
                problem(p);
            }
        }
    } else if !is_process {
        // Input nodes: they must start, and stop when asked, inside a flow.
        let src = flow_source(spec, case, case.properties, false, false);
        match build_flow(&src, env) {
            Ok((_, flow)) => flow.start().stop(),
            Err(e) => problem(e),
        }
    }
    for p in super::examples::check_examples(spec, env) {
        problem(p);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn check_declaration(spec: &NodeSpec) -> Vec<String> {
    let mut out = Vec::new();
    if spec.summary.trim().is_empty() {
        out.push("has no summary".into());
    }
    if spec.examples.is_empty() {
        out.push("has no example of its use".into());
    }
    let mut names = Vec::new();
    for t in spec.inputs.iter().chain(spec.outputs) {
        if t.doc.trim().is_empty() {
            out.push(format!("terminal `{}` is not documented", t.name));
        }
    }
    for t in spec.outputs {
        if names.contains(&t.name) {
            out.push(format!("output terminal `{}` is declared twice", t.name));
        }
        names.push(t.name);
    }
    let mut props = Vec::new();
    for p in spec.properties() {
        if p.doc.trim().is_empty() {
            out.push(format!("property `{}` is not documented", p.name));
        }
        if props.contains(&p.name) {
            out.push(format!("property `{}` is declared twice", p.name));
        }
        props.push(p.name);
    }
    out
}

/// The YAML of a flow holding the node under test, every output terminal wired to a Capture
/// named `to_<terminal>`, fed by an Inject node when the node has an input terminal.
fn flow_source(
    spec: &NodeSpec,
    case: &ComplianceCase,
    properties: &str,
    wire_failure: bool,
    wire_catch: bool,
) -> String {
    let mut terminals: Vec<&str> = spec.outputs.iter().map(|t| t.name).collect();
    terminals.extend(case.dynamic_outputs);
    if !wire_failure {
        terminals.retain(|t| *t != "failure");
    }
    let wires: Vec<String> = terminals
        .iter()
        .map(|t| format!("'{t}': [to_{t}]"))
        .collect();
    let props = if properties.trim().is_empty() {
        String::new()
    } else {
        format!("{properties}, ")
    };
    let mut src = String::from("flow: compliance\nnodes:\n");
    if !spec.inputs.is_empty() {
        let catch = if wire_catch { ", catch: [caught]" } else { "" };
        src.push_str(&format!(
            "  src: {{ type: Inject, wires: {{ out: [{}]{catch} }} }}\n  caught: {{ type: Capture }}\n",
            target(spec)
        ));
    }
    src.push_str(&format!(
        "  {NODE}: {{ type: {}, {props}wires: {{ {} }} }}\n",
        spec.type_name,
        wires.join(", ")
    ));
    for t in &terminals {
        src.push_str(&format!("  'to_{t}': {{ type: Capture }}\n"));
    }
    src
}

fn build_flow(
    src: &str,
    env: &ComplianceEnv,
) -> Result<(Arc<Harness>, Arc<sluice_flow::Flow>), String> {
    build_flow_in("compliance.yaml", src, env, env.project_dir).map_err(render)
}

/// Build a flow from its source, with `project_dir` as the project folder.
pub(crate) fn build_flow_in(
    file: &str,
    src: &str,
    env: &ComplianceEnv,
    project_dir: &Path,
) -> Result<(Arc<Harness>, Arc<sluice_flow::Flow>), Vec<sluice_flow::Diagnostic>> {
    let def = load_flow(file, src, env.registry)?;
    let harness = Harness::new();
    let flow = harness.build(&def, project_dir, env.services)?;
    Ok((harness, flow))
}

fn render(d: Vec<sluice_flow::Diagnostic>) -> String {
    let text: Vec<String> = d.iter().map(|d| d.to_string()).collect();
    format!(
        "does not build from its compliance case:\n{}",
        text.join("\n")
    )
}

/// Build the node on its own, as the loader configured it; with its output names by index.
fn build_alone(
    spec: &NodeSpec,
    case: &ComplianceCase,
    env: &ComplianceEnv,
) -> Result<(NodeImpl, Vec<String>), String> {
    let src = flow_source(spec, case, case.properties, true, true);
    let def = load_flow("compliance.yaml", &src, env.registry).map_err(render)?;
    let node = def
        .nodes
        .iter()
        .find(|n| n.label == NODE)
        .ok_or_else(|| "the node under test is missing from its flow".to_string())?;
    let bc = BuildContext {
        flow: &def.name,
        label: NODE,
        project_dir: env.project_dir,
        inputs: &node.inputs,
        outputs: &node.outputs,
        services: env.services,
        transaction: def.transaction,
    };
    let imp = node.spec.build(&node.config, &bc).map_err(|e| {
        format!(
            "does not build from its compliance case: {}{}",
            e.property
                .map(|p| format!("property `{p}`: "))
                .unwrap_or_default(),
            e.message
        )
    })?;
    Ok((imp, node.outputs.clone()))
}

/// A runtime that records where the node propagates, and can fail the first propagation as if a
/// downstream node had raised an exception.
struct Recorder {
    outputs: Vec<String>,
    fail_downstream: bool,
    seen: std::sync::Mutex<Vec<Result<String, usize>>>,
}

impl FlowRuntime for Recorder {
    fn propagate(
        &self,
        _: &mut Invocation,
        _: u32,
        terminal: Terminal,
        _: &mut Message,
    ) -> Result<(), NodeError> {
        let name = self.outputs.get(terminal.index()).cloned();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let first = seen.is_empty();
        seen.push(name.clone().ok_or(terminal.index()));
        if self.fail_downstream && first && name.as_deref() != Some("catch") {
            let mut e = NodeError::new(ExceptionKind::User, 3001, "raised downstream");
            e.exception.label = "downstream".into();
            e.passed_up = true;
            return Err(e);
        }
        Ok(())
    }

    fn is_wired(&self, _: u32, terminal: Terminal) -> bool {
        terminal.index() < self.outputs.len()
    }

    fn terminal_named(&self, _: u32, name: &str) -> Option<Terminal> {
        self.outputs
            .iter()
            .position(|o| o == name)
            .map(|i| Terminal::at(i as u16))
    }

    fn propagate_to_label(
        &self,
        _: &mut Invocation,
        _: &str,
        _: &mut Message,
    ) -> Result<(), NodeError> {
        Ok(())
    }
}

fn check_propagation(
    node: &dyn sluice_node_api::Node,
    outputs: &[String],
    case: &ComplianceCase,
    env: &ComplianceEnv,
) -> Vec<String> {
    let mut out = Vec::new();
    for fail_downstream in [false, true] {
        let mut msg = match (env.make_message)(case.domain, case.body.as_bytes()) {
            Ok(m) => m,
            Err(e) => {
                out.push(format!("its compliance message does not build: {e}"));
                return out;
            }
        };
        let recorder = Recorder {
            outputs: outputs.to_vec(),
            fail_downstream,
            seen: std::sync::Mutex::new(Vec::new()),
        };
        let mut inv = Invocation::new();
        let mut ctx = Ctx {
            inv: &mut inv,
            flow: &recorder,
            node: 0,
        };
        let result = node.evaluate(&mut ctx, Terminal::at(0), &mut msg);
        let seen = recorder
            .seen
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        for s in &seen {
            if let Err(index) = s {
                out.push(format!(
                    "propagated to terminal #{index}, which it does not declare (it has {})",
                    outputs.join(", ")
                ));
            }
        }
        if fail_downstream && !seen.is_empty() {
            let passed_back = result
                .as_ref()
                .is_err_and(|e| e.exception.label == "downstream" || e.exception.cause.is_some());
            let caught = seen.iter().skip(1).any(|s| s.as_deref() == Ok("catch"));
            if !passed_back && !caught {
                out.push(format!(
                    "dropped an exception raised downstream of its `{}` terminal (returned {:?})",
                    seen[0].as_deref().unwrap_or("?"),
                    result.map_err(|e| e.exception.describe())
                ));
            }
        }
    }
    out
}

fn check_failures(
    spec: &NodeSpec,
    case: &ComplianceCase,
    failing: &FailingCase,
    env: &ComplianceEnv,
) -> Vec<String> {
    let mut out = Vec::new();
    let has_failure = spec.output("failure").is_some();
    // (failure wired, catch wired): where the exception must end up.
    let variants: &[(bool, bool)] = if has_failure {
        &[(true, false), (false, true), (false, false)]
    } else {
        &[(false, true), (false, false)]
    };
    for &(wire_failure, wire_catch) in variants {
        let src = flow_source(spec, case, failing.properties, wire_failure, wire_catch);
        let (harness, flow) = match build_flow(&src, env) {
            Ok(x) => x,
            Err(e) => {
                out.push(format!("failing case: {e}"));
                continue;
            }
        };
        match (env.make_message)(failing.domain, failing.body.as_bytes()) {
            Ok(m) => harness.inject(m),
            Err(e) => {
                out.push(format!("its failing message does not build: {e}"));
                continue;
            }
        }
        harness.run(&flow);
        let outcome = harness.take_outcomes().pop();
        let captured = harness.take_captured();
        let at = |label: &str| captured.iter().find(|c| c.label == label);
        let place = if wire_failure {
            "with `failure` wired"
        } else if wire_catch {
            "with `failure` unwired and the input's `catch` wired"
        } else {
            "with nothing wired to handle it"
        };
        let names_node = |t: &Tree| exception_labels(t).iter().any(|l| l == NODE);
        match (wire_failure, wire_catch) {
            (true, _) => match at("to_failure") {
                Some(c) if names_node(&c.message.exception_list) => {}
                Some(c) => out.push(format!(
                    "{place}: the failure terminal's ExceptionList does not name the node (labels {:?})",
                    exception_labels(&c.message.exception_list)
                )),
                None => out.push(format!(
                    "{place}: nothing reached the failure terminal (outcome {:?}, captured at {:?})",
                    outcome.map(|r| r.map_err(|e| e.exception.describe())),
                    captured.iter().map(|c| &c.label).collect::<Vec<_>>()
                )),
            },
            (false, true) => match at("caught") {
                Some(c) if names_node(&c.message.exception_list) => {}
                Some(c) => out.push(format!(
                    "{place}: the catch terminal's ExceptionList does not name the node (labels {:?})",
                    exception_labels(&c.message.exception_list)
                )),
                None => out.push(format!(
                    "{place}: the exception did not reach the input node's catch terminal (outcome {:?})",
                    outcome.map(|r| r.map_err(|e| e.exception.describe()))
                )),
            },
            (false, false) => match outcome {
                Some(Err(e)) if e.exception.label == NODE => {}
                other => out.push(format!(
                    "{place}: the input node did not get the node's exception back (outcome {:?})",
                    other.map(|r| r.map_err(|e| e.exception.describe()))
                )),
            },
        }
    }
    out
}

/// The `Label` of every exception level of an ExceptionList, outermost first.
pub fn exception_labels(list: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = list.peek_first_child(list.root());
    while let Some(level) = at {
        let mut next = None;
        let mut child = list.peek_first_child(level);
        while let Some(c) = child {
            if list.name_bytes(c) == b"Label" {
                let v = list.value_bytes(c).unwrap_or_default();
                out.push(String::from_utf8_lossy(v).into_owned());
            }
            if list.name_bytes(c).ends_with(b"Exception") {
                next = Some(c);
            }
            child = list.peek_next_sibling(c);
        }
        at = next;
    }
    out
}
