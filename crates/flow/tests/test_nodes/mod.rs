//! Node types for loader tests: an input, a step with one property of every kind, and a node
//! with dynamic terminals. They build nodes that do nothing.

use std::sync::Arc;

use sluice_flow::Registry;
use sluice_node_api::{
    Ctx, InputNode, InstanceRunner, Message, Node, NodeError, NodeImpl, NodeSpec, PropKind,
    PropSpec, Terminal, TerminalSpec,
};

struct Nop;
impl Node for Nop {
    fn evaluate(&self, _: &mut Ctx<'_>, _: Terminal, _: &mut Message) -> Result<(), NodeError> {
        Ok(())
    }
}
impl InputNode for Nop {
    fn run_instance(&self, _: &mut dyn InstanceRunner) {}
}

const IN: TerminalSpec = TerminalSpec {
    name: "in",
    doc: "",
};
const OUT: TerminalSpec = TerminalSpec {
    name: "out",
    doc: "",
};

const fn prop(name: &'static str, kind: PropKind, default: Option<&'static str>) -> PropSpec {
    PropSpec {
        name,
        kind,
        default,
        required: default.is_none(),
        doc: "",
    }
}

static SOURCE: NodeSpec = NodeSpec {
    type_name: "Source",
    summary: "test input",
    inputs: &[],
    outputs: &[
        OUT,
        TerminalSpec {
            name: "catch",
            doc: "",
        },
    ],
    dynamic_outputs: false,
    properties: &[prop("path", PropKind::String, None)],
    examples: &[],
    build: |_, _| Ok(NodeImpl::Input(Arc::new(Nop))),
};

static STEP: NodeSpec = NodeSpec {
    type_name: "Step",
    summary: "test node",
    inputs: &[IN],
    outputs: &[OUT],
    dynamic_outputs: false,
    properties: &[
        prop("count", PropKind::Integer, Some("3")),
        prop("ratio", PropKind::Float, Some("0.5")),
        prop("on", PropKind::Boolean, Some("true")),
        prop("mode", PropKind::Enum(&["fast", "slow"]), Some("fast")),
        prop("names", PropKind::StringList, Some("[]")),
        prop("rules", PropKind::StringMap, Some("{}")),
    ],
    examples: &[],
    build: |_, _| Ok(NodeImpl::Process(Arc::new(Nop))),
};

static SWITCH: NodeSpec = NodeSpec {
    type_name: "Switch",
    summary: "dynamic terminals",
    inputs: &[IN],
    outputs: &[],
    dynamic_outputs: true,
    properties: &[],
    examples: &[],
    build: |_, _| Ok(NodeImpl::Process(Arc::new(Nop))),
};

/// A registry holding `Source`, `Step` and `Switch`.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&STEP);
    r.register(&SWITCH);
    r
}
