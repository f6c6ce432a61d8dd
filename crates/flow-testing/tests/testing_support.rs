//! The test support in `sluice_flow_testing`: the Inject/Capture harness, the tree dump and the
//! expected-output files.

use std::collections::BTreeMap;
use std::sync::Arc;

use sluice_flow::{Flow, Registry, load_flow};
use sluice_flow_testing::{DumpOptions, ExpectedError, Harness, check_outputs, dump_message};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, Message, Node, NodeBuilder, NodeError, NodeImpl,
    NodeSpec, Terminal, Terminals,
};
use sluice_tree::{Text, Value, field_type};

/// Fails every message, so that the catch path can be checked.
struct Fail;
impl Node for Fail {
    fn evaluate(&self, _: &mut Ctx<'_>, _: Terminal, _: &mut Message) -> Result<(), NodeError> {
        Err(NodeError::recoverable("always fails"))
    }
}

sluice_node_api::terminals! {
    enum FailInput {
        In = "in": "Input.",
    }
}

sluice_node_api::properties! {
    struct FailProps {}
}

impl BuildNode for FailProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Fail)))
    }
}

static FAIL: NodeSpec = NodeSpec {
    type_name: "Fail",
    summary: "Fails.",
    inputs: FailInput::SPECS,
    outputs: &[],
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<FailProps>(),
};

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(&FAIL);
    Harness::register(&mut r);
    r
}

fn build(harness: &Arc<Harness>, src: &str) -> Arc<Flow> {
    let def = load_flow("t.yaml", src, &registry()).unwrap_or_else(|d| panic!("{}", d[0]));
    harness
        .build(
            &def,
            std::path::Path::new("."),
            &sluice_node_api::Services::none(),
        )
        .unwrap_or_else(|d| panic!("{}", d[0]))
}

fn message(value: &str) -> Message {
    let mut m = Message::new();
    let r = m.root.root();
    let body = m
        .root
        .create_last_child(r, field_type::NAME, Text::from_static("BLOB"), Value::Null)
        .expect("body");
    let t = m.root.alloc_text(value.as_bytes());
    m.root
        .create_last_child(
            body,
            field_type::NAME_VALUE,
            Text::from_static("Id"),
            Value::Character(t),
        )
        .expect("field");
    m
}

#[test]
fn harness_captures_injected_messages_in_order() {
    let h = Harness::new();
    let flow = build(
        &h,
        "instances: 3\nnodes:\n  in: { type: Inject, wires: { out: [a, b] } }\n  a: { type: Capture }\n  b: { type: Capture }\n",
    );
    h.inject(message("1"));
    h.inject(message("2"));
    h.run(&flow);
    let got: Vec<String> = h
        .take_captured()
        .iter()
        .map(|c| {
            let d = dump_message(&c.message, None, &DumpOptions::default());
            format!("{}:{}", c.label, d.contains("Id = '2'"))
        })
        .collect();
    assert_eq!(got, ["a:false", "b:false", "a:true", "b:true"]);
    assert!(h.take_outcomes().iter().all(Result::is_ok));
}

#[test]
fn harness_sends_an_exception_to_catch_with_the_exception_list() {
    let h = Harness::new();
    let flow = build(
        &h,
        "nodes:\n  in: { type: Inject, wires: { out: [f], catch: [caught] } }\n  f: { type: Fail }\n  caught: { type: Capture }\n",
    );
    h.inject(message("1"));
    h.run(&flow);
    let got = h.take_captured();
    assert_eq!(got.len(), 1);
    let list = dump_message(&got[0].message, None, &DumpOptions::default());
    assert!(list.contains("RecoverableException"), "{list}");
    assert!(list.contains("Label = 'f' : CHARACTER"), "{list}");
}

#[test]
fn harness_reports_an_unhandled_exception_as_the_outcome() {
    let h = Harness::new();
    let flow = build(
        &h,
        "nodes:\n  in: { type: Inject, wires: { out: [f] } }\n  f: { type: Fail }\n",
    );
    h.inject(message("1"));
    h.run(&flow);
    let outcomes = h.take_outcomes();
    assert_eq!(outcomes.len(), 1);
    let e = outcomes[0].as_ref().expect_err("the node failed");
    assert_eq!(e.exception.label, "f");
}

#[test]
fn capture_refuses_to_build_outside_the_harness() {
    let def = load_flow(
        "t.yaml",
        "nodes:\n  in: { type: Inject, wires: { out: [c] } }\n  c: { type: Capture }\n",
        &registry(),
    )
    .unwrap_or_else(|d| panic!("{}", d[0]));
    let err = Flow::build(
        &def,
        std::path::Path::new("."),
        &sluice_node_api::Services::none(),
    )
    .err()
    .expect("no harness");
    assert!(
        err[0].message.contains("only inside the test harness"),
        "{}",
        err[0]
    );
}

#[test]
fn dump_masks_named_fields_and_shows_types() {
    let m = message("abc");
    let opts = DumpOptions {
        masked_fields: vec!["Id".into()],
    };
    let d = dump_message(&m, None, &opts);
    assert_eq!(
        d,
        "Root\n  Properties\n  BLOB\n    Id = <masked>\nLocalEnvironment\nExceptionList\n"
    );
    let d = dump_message(&m, None, &DumpOptions::default());
    assert!(d.contains("    Id = 'abc' : CHARACTER\n"), "{d}");
}

#[test]
fn expected_outputs_bless_then_match_then_report_differences() {
    let dir = std::env::temp_dir().join(format!("sluice-expected-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut outputs = BTreeMap::new();
    outputs.insert("reply".to_string(), "one\ntwo\n".to_string());
    outputs.insert("stale".to_string(), "x\n".to_string());
    check_outputs(&dir, &outputs, true).expect("bless");
    outputs.remove("stale");
    check_outputs(&dir, &outputs, true).expect("bless removes stale files");
    assert!(!dir.join("stale.txt").exists());
    check_outputs(&dir, &outputs, false).expect("matches what was blessed");

    outputs.insert("reply".to_string(), "one\nTWO\n".to_string());
    outputs.insert("new".to_string(), "n\n".to_string());
    let err = check_outputs(&dir, &outputs, false).expect_err("differs");
    let _ = std::fs::remove_dir_all(&dir);
    let ExpectedError::Mismatch(text) = err else {
        panic!("not a mismatch: {err}");
    };
    assert!(text.contains("- two\n+ TWO\n"), "{text}");
    assert!(text.contains("new.txt: no expected file"), "{text}");
}
