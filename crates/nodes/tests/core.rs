//! The core and routing nodes in real flows: each test injects a message, runs the flow, and
//! looks at what reached the capture nodes.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::{
    Ctx, InputNode, InstanceRunner, Invocation, Message, Node, NodeError, NodeImpl, NodeSpec,
    PropKind, PropSpec, Terminal, TerminalSpec,
};
use sluice_nodes::domains::BodyParsing;
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
        let mut cfg = sluice_node_api::NodeConfig::default();
        cfg.insert(
            "domain",
            sluice_node_api::PropValue::String("XMLNSC".into()),
        );
        cfg.insert(
            "parse_timing",
            sluice_node_api::PropValue::String("on_demand".into()),
        );
        let parsing = BodyParsing::from_config(&cfg).expect("parsing");
        let mut msg = Message::new();
        parsing
            .attach(&mut msg.root, Bytes::from(self.body.clone()))
            .expect("attach");
        let mut inv = Invocation::new();
        let r = runner.invoke(&mut inv, Terminal(0), &mut msg);
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

static INJECT: NodeSpec = NodeSpec {
    type_name: "Inject",
    summary: "",
    inputs: &[],
    outputs: &[TerminalSpec {
        name: "out",
        doc: "",
    }],
    dynamic_outputs: false,
    properties: &[PropSpec {
        name: "body",
        kind: PropKind::String,
        default: None,
        required: true,
        doc: "",
    }],
    examples: &[],
    build: |c, _| {
        Ok(NodeImpl::Input(Arc::new(Inject {
            body: c.str("body").into(),
        })))
    },
};

static CAPTURE: NodeSpec = NodeSpec {
    type_name: "Capture",
    summary: "",
    inputs: &[TerminalSpec {
        name: "in",
        doc: "",
    }],
    outputs: &[],
    dynamic_outputs: false,
    properties: &[],
    examples: &[],
    build: |_, b| {
        Ok(NodeImpl::Process(Arc::new(Capture {
            label: b.label.into(),
        })))
    },
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
    let services = sluice_nodes::Services {
        http: Arc::new(sluice_nodes::http::HttpRouter::new()),
        runtime: rt.handle().clone(),
        qm: None,
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
        ctx.propagate(Terminal(0), msg)
    }
}

static SET_LABEL: NodeSpec = NodeSpec {
    type_name: "SetLabel",
    summary: "",
    inputs: &[TerminalSpec {
        name: "in",
        doc: "",
    }],
    outputs: &[TerminalSpec {
        name: "out",
        doc: "",
    }],
    dynamic_outputs: false,
    properties: &[],
    examples: &[],
    build: |_, _| Ok(NodeImpl::Process(Arc::new(SetLabel))),
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
