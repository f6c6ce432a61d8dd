//! The core and routing nodes in real flows: each test injects a message, runs the flow, and
//! looks at what reached the capture nodes.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, InputNode, InstanceRunner, Invocation, Message,
    Node, NodeBuilder, NodeError, NodeImpl, NodeSpec, Terminal, Terminals, properties, terminals,
};
use sluice_nodes::domains::{BodyParsing, BodyParsingProps, Domain, ParseTiming};
use sluice_tree::{Text, Value, field_type};

type Captured = Vec<(String, String)>;
static CAPTURED: Mutex<Captured> = Mutex::new(Vec::new());
static OUTCOME: Mutex<Option<Result<(), String>>> = Mutex::new(None);
static SERIAL: Mutex<()> = Mutex::new(());

struct Inject {
    body: String,
}

impl InputNode for Inject {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        let parsing = BodyParsing::from_props(&BodyParsingProps {
            domain: Domain::Xmlnsc,
            parse_timing: ParseTiming::OnDemand,
            opaque_elements: Vec::new(),
        })
        .expect("parsing");
        let mut msg = Message::new();
        parsing
            .attach(&mut msg.root, Bytes::from(self.body.clone()))
            .expect("attach");
        let mut inv = Invocation::new();
        let r = runner.invoke(&mut inv, Out::Out.into(), &mut msg);
        *OUTCOME.lock().unwrap() = Some(r.map_err(|e| e.exception.describe()));
    }
}

/// Records its label and the ExceptionList's first Text (if any).
struct Capture {
    label: String,
}

impl Node for Capture {
    fn evaluate(&self, _: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let el = &mut msg.exception_list;
        let r = el.root();
        let mut text = String::new();
        if let Some(first) = el.first_child(r)?
            && let Some(t) = el.child_named(first, None, b"Text", 0)?
        {
            text = String::from_utf8_lossy(el.value_bytes(t).unwrap_or_default()).into_owned();
        }
        CAPTURED.lock().unwrap().push((self.label.clone(), text));
        Ok(())
    }
}

terminals! {
    enum In {
        In = "in": "",
    }
}

terminals! {
    enum Out {
        Out = "out": "",
    }
}

properties! {
    struct InjectProps {
        body: String,
    }
}

properties! {
    struct CaptureProps {}
}

properties! {
    struct SetLabelProps {}
}

impl BuildNode for InjectProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Inject { body: self.body })))
    }
}

impl BuildNode for CaptureProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Capture {
            label: b.label.into(),
        })))
    }
}

impl BuildNode for SetLabelProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(SetLabel)))
    }
}

static INJECT: NodeSpec = NodeSpec {
    type_name: "Inject",
    summary: "",
    inputs: &[],
    outputs: Out::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<InjectProps>(),
};

static CAPTURE: NodeSpec = NodeSpec {
    type_name: "Capture",
    summary: "",
    inputs: In::SPECS,
    outputs: &[],
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<CaptureProps>(),
};

/// Build a flow of the core nodes and this file's test nodes.
fn build(src: &str) -> Result<Arc<Flow>, Vec<sluice_flow::Diagnostic>> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let rt = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    });
    let mut r = Registry::new();
    sluice_nodes::register(&mut |s| r.register(s));
    for s in [&INJECT, &CAPTURE, &SET_LABEL] {
        r.register(s);
    }
    let def = load_flow("t.yaml", src, &r)?;
    let services = sluice_node_api::Services {
        http: Arc::new(sluice_node_api::http_listener::HttpRouter::new()),
        runtime: Some(rt.handle().clone()),
        queues: None,
        ..sluice_node_api::Services::none()
    };
    Flow::build(&def, std::path::Path::new("."), &services).map(Arc::new)
}

fn run(flow: &str) -> (Captured, Result<(), String>) {
    let flow = build(flow).unwrap_or_else(|e| panic!("{}", e[0]));
    CAPTURED.lock().unwrap().clear();
    flow.start().stop();
    let captured = CAPTURED.lock().unwrap().clone();
    let outcome = OUTCOME.lock().unwrap().take().expect("the flow ran");
    (captured, outcome)
}

const MSG: &str =
    "<Parent><First>1</First><SaleList><Invoice/></SaleList><Last>Test</Last></Parent>";

fn flow(nodes: &str) -> String {
    format!("nodes:\n  in: {{ type: Inject, body: '{MSG}', wires: {{ out: [n] }} }}\n{nodes}")
}

fn labels(c: &Captured) -> Vec<&str> {
    c.iter().map(|(l, _)| l.as_str()).collect()
}

#[test]
fn filter_routes_true_and_false() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (c, _) = run(&flow(
        "  n: { type: Filter, expression: \"$Body/Parent/Last = 'Test'\", wires: { 'true': [yes], 'false': [no] } }\n  yes: { type: Capture }\n  no: { type: Capture }\n",
    ));
    assert_eq!(labels(&c), ["yes"]);
    let (c, _) = run(&flow(
        "  n: { type: Filter, expression: \"count($Body/Parent/SaleList) > 1\", wires: { 'true': [yes], 'false': [no] } }\n  yes: { type: Capture }\n  no: { type: Capture }\n",
    ));
    assert_eq!(labels(&c), ["no"]);
}

#[test]
fn filter_rejects_a_bad_expression_at_deploy() {
    let err = build(&flow(
        "  n: { type: Filter, expression: \"$Body/Parent[\" }\n",
    ))
    .err()
    .expect("invalid");
    assert!(err[0].message.contains("XPath syntax error"), "{}", err[0]);
    assert_eq!(err[0].line, 3);
}

#[test]
fn route_propagates_to_every_match_or_default() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let nodes = "  n:\n    type: Route\n    rules: { a: \"$Body/Parent/First = '1'\", b: \"$Body/Parent/Last = 'Test'\", c: \"$Body/Parent/First = '2'\" }\n    wires: { a: [ca], b: [cb], c: [cc], default: [cd] }\n  ca: { type: Capture }\n  cb: { type: Capture }\n  cc: { type: Capture }\n  cd: { type: Capture }\n";
    let (c, _) = run(&flow(nodes));
    assert_eq!(labels(&c), ["ca", "cb"]);
    let (c, _) = run(&flow(&nodes.replace(
        "type: Route\n",
        "type: Route\n    distribution_mode: first\n",
    )));
    assert_eq!(labels(&c), ["ca"]);
    let (c, _) = run(&flow(
        &nodes
            .replace("First = '1'", "First = '9'")
            .replace("'Test'", "'x'"),
    ));
    assert_eq!(labels(&c), ["cd"]);
}

#[test]
fn route_rejects_a_wired_terminal_without_a_rule() {
    let err = build(&flow("  n: { type: Route, rules: { a: 'true()' }, wires: { a: [x], b: [x] } }\n  x: { type: Capture }\n"))
        .err()
        .expect("invalid");
    assert!(
        err[0]
            .message
            .contains("terminal `b` is wired but has no rule"),
        "{}",
        err[0]
    );
}

#[test]
fn throw_goes_to_try_catch_with_the_exception_list() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (c, out) = run(&flow(
        "  n: { type: TryCatch, wires: { try: [t], catch: [caught] } }\n  t: { type: Throw, message_text: 'stop here' }\n  caught: { type: Capture }\n",
    ));
    assert_eq!(c, [("caught".to_string(), "stop here".to_string())]);
    assert_eq!(out, Ok(()));
}

#[test]
fn unhandled_throw_reaches_the_input_node() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (c, out) = run(&flow(
        "  n: { type: Passthrough, wires: { out: [t] } }\n  t: { type: Throw, message_text: 'no handler' }\n",
    ));
    assert!(c.is_empty());
    let e = out.unwrap_err();
    assert!(e.contains("node 't'") && e.contains("no handler"), "{e}");
}

#[test]
fn flow_order_runs_first_then_second() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (c, _) = run(&flow(
        "  n: { type: FlowOrder, wires: { second: [b], first: [a] } }\n  a: { type: Capture }\n  b: { type: Capture }\n",
    ));
    assert_eq!(labels(&c), ["a", "b"]);
}

/// Sets LocalEnvironment.Destination.RouterList.DestinationData.labelName for RouteToLabel.
struct SetLabel;
impl Node for SetLabel {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let le = &mut msg.local_environment;
        let r = le.root();
        let d = le.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("Destination"),
            Value::Null,
        )?;
        let rl = le.create_last_child(
            d,
            field_type::NAME,
            Text::from_static("RouterList"),
            Value::Null,
        )?;
        let dd = le.create_last_child(
            rl,
            field_type::NAME,
            Text::from_static("DestinationData"),
            Value::Null,
        )?;
        let v = le.alloc_text(b"second");
        le.create_last_child(
            dd,
            field_type::NAME_VALUE,
            Text::from_static("labelName"),
            Value::Character(v),
        )?;
        ctx.propagate(Out::Out, msg)
    }
}

static SET_LABEL: NodeSpec = NodeSpec {
    type_name: "SetLabel",
    summary: "",
    inputs: In::SPECS,
    outputs: Out::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SetLabelProps>(),
};

#[test]
fn route_to_label_jumps_to_the_named_label() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let src = flow(
        "  n: { type: SetLabel, wires: { out: [rtl] } }\n  rtl: { type: RouteToLabel }\n  l1: { type: Label, label_name: first, wires: { out: [a] } }\n  l2: { type: Label, label_name: second, wires: { out: [b] } }\n  a: { type: Capture }\n  b: { type: Capture }\n",
    );
    let (c, _) = run(&src);
    assert_eq!(labels(&c), ["b"]);
}

#[test]
fn trace_writes_the_pattern_to_a_file() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let path = std::env::temp_dir().join(format!("sluice-trace-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let (c, _) = run(&flow(&format!(
        "  n: {{ type: Trace, destination: file, file_path: '{}', pattern: 'seen: ${{Body}}', wires: {{ out: [a] }} }}\n  a: {{ type: Capture }}\n",
        path.display()
    )));
    assert_eq!(labels(&c), ["a"]);
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(text.starts_with("seen: "), "{text}");
    assert!(text.contains("Last") && text.contains("'Test'"), "{text}");
}
