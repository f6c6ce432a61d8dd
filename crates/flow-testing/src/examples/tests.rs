//! The example check on its own: a node type whose examples hold passes, and one whose example
//! promises something else is reported with both texts.

use std::path::Path;
use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, InputNode,
    InstanceRunner, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs,
    Services, Terminal, Terminals,
};
use sluice_tree::{Value, field_type};

use crate::{ComplianceEnv, Harness, MessageError, check_node};
use sluice_flow::Registry;

/// Upper-cases a one-value body and propagates it; a body reading `fail` raises an exception.
struct Shout;

impl Node for Shout {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let body = msg
            .body()?
            .ok_or_else(|| NodeError::recoverable("no body"))?;
        let text =
            String::from_utf8_lossy(msg.root.value_bytes(body).unwrap_or_default()).to_uppercase();
        if text == "FAIL" {
            return Err(NodeError::recoverable("asked to fail"));
        }
        let t = msg.root.alloc_text(text.as_bytes());
        msg.root.set_value(body, Value::Character(t));
        ctx.propagate(ShoutOutput::Out, msg)
    }
}

sluice_node_api::terminals! {
    enum ShoutInput {
        In = "in": "Input.",
    }
}

sluice_node_api::terminals! {
    enum ShoutOutput {
        Out = "out": "The upper-cased message.",
    }
}

sluice_node_api::properties! {
    struct ShoutProps {}
}

impl BuildNode for ShoutProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Shout)))
    }
}

const fn blob(body: &'static str) -> ExampleInput {
    ExampleInput {
        domain: "BLOB",
        body,
        local_environment: &[],
    }
}

const UPPER_CASES: NodeExample = NodeExample {
    title: "The body is upper-cased",
    properties: "",
    esql: "",
    input: blob("hello"),
    raising_downstream: &[],
    outcome: ExampleOutcome::Propagates(&[("out", "HELLO")]),
    runs: Runs::Yes,
};

const FAILS: NodeExample = NodeExample {
    title: "A body reading fail raises",
    input: blob("fail"),
    outcome: ExampleOutcome::Raises("asked to fail"),
    ..UPPER_CASES
};

const fn shout_spec(type_name: &'static str, examples: &'static [NodeExample]) -> NodeSpec {
    NodeSpec {
        type_name,
        summary: "Upper-cases the body.",
        inputs: ShoutInput::SPECS,
        outputs: ShoutOutput::SPECS,
        dynamic_outputs: false,
        dynamic_inputs: false,
        examples,
        builder: NodeBuilder::of::<ShoutProps>(),
    }
}

static SHOUT: NodeSpec = shout_spec("Shout", &[UPPER_CASES, FAILS]);

static MISDOCUMENTED: NodeSpec = shout_spec(
    "Misdocumented",
    &[
        NodeExample {
            title: "The body is left as it is",
            outcome: ExampleOutcome::Propagates(&[("out", "hello")]),
            ..UPPER_CASES
        },
        NodeExample {
            title: "Nothing goes wrong",
            outcome: ExampleOutcome::Raises("asked to fail"),
            ..UPPER_CASES
        },
        NodeExample {
            title: "A property it does not have",
            properties: "volume: 11",
            runs: Runs::No("shown only"),
            ..UPPER_CASES
        },
    ],
);

static UNEXAMPLED: NodeSpec = shout_spec("Unexampled", &[]);

/// A body of one character value named after its domain.
fn make_message(domain: &str, body: &[u8]) -> Result<Message, MessageError> {
    let mut m = Message::new();
    let r = m.root.root();
    let name = m.root.alloc_text(domain.as_bytes());
    let value = m.root.alloc_text(body);
    m.root
        .create_last_child(r, field_type::NAME_VALUE, name, Value::Character(value))?;
    Ok(m)
}

fn serialize_body(m: &mut Message) -> Result<String, MessageError> {
    let body = m.body()?.ok_or("no body")?;
    Ok(String::from_utf8_lossy(m.root.value_bytes(body).unwrap_or_default()).into_owned())
}

fn check(spec: &'static NodeSpec) -> Result<(), Vec<String>> {
    let mut registry = Registry::new();
    registry.register(spec);
    Harness::register(&mut registry);
    let env = ComplianceEnv {
        registry: &registry,
        services: &Services::none(),
        project_dir: Path::new("."),
        make_message: &make_message,
        serialize_body: &serialize_body,
    };
    check_node(spec, None, &env)
}

#[test]
fn examples_pass_when_the_node_does_what_they_show() {
    assert_eq!(check(&SHOUT), Ok(()));
}

#[test]
fn examples_report_the_title_and_both_bodies_when_the_output_differs() {
    let problems = check(&MISDOCUMENTED).expect_err("a wrong example is reported");
    assert!(
        problems.contains(
            &"Misdocumented: example `The body is left as it is`: expected on `out`: hello; \
              got on `out`: HELLO"
                .to_string()
        ),
        "{problems:#?}"
    );
}

#[test]
fn examples_report_a_missing_exception_when_the_node_propagates() {
    let problems = check(&MISDOCUMENTED).expect_err("a wrong example is reported");
    assert!(
        problems.contains(
            &"Misdocumented: example `Nothing goes wrong`: expected an exception containing \
              `asked to fail`; got on `out`: HELLO"
                .to_string()
        ),
        "{problems:#?}"
    );
}

#[test]
fn examples_are_loaded_when_they_do_not_run() {
    let problems = check(&MISDOCUMENTED).expect_err("a wrong example is reported");
    let text = problems.join("\n");
    assert!(
        text.contains("example `A property it does not have`:") && text.contains("volume"),
        "{text}"
    );
}

#[test]
fn check_node_reports_a_node_type_when_it_has_no_examples() {
    let problems = check(&UNEXAMPLED).expect_err("a node type without examples is reported");
    assert_eq!(problems, ["Unexampled: has no example of its use"]);
}

/// An input node that never receives anything.
struct Idle;

impl InputNode for Idle {
    fn run_instance(&self, _: &mut dyn InstanceRunner) {}
}

sluice_node_api::properties! {
    struct IdleProps {}
}

impl BuildNode for IdleProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Idle)))
    }
}

sluice_node_api::terminals! {
    enum IdleOutput {
        Out = "out": "Never used.",
    }
}

static IDLE: NodeSpec = NodeSpec {
    type_name: "Idle",
    summary: "Receives nothing.",
    inputs: &[],
    outputs: IdleOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "Run as if it could be",
            ..UPPER_CASES
        },
        NodeExample {
            title: "Shown only",
            runs: Runs::No("only its transport drives it."),
            ..UPPER_CASES
        },
    ],
    builder: NodeBuilder::of::<IdleProps>(),
};

#[test]
fn examples_of_an_input_node_are_reported_when_marked_runnable() {
    let problems = check(&IDLE).expect_err("a runnable input-node example is reported");
    assert_eq!(
        problems,
        [
            "Idle: example `Run as if it could be`: it cannot run (node 'n' is an input node: only \
             its transport gives it messages): mark it `Runs::No` and say what drives the node"
        ]
    );
}
