//! Node types for loader tests: an input, a step with one property of every kind, a node
//! with dynamic terminals, and an output node with a required property. They build nodes that do
//! nothing.

use std::sync::Arc;

use sluice_flow::Registry;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, InputNode, InstanceRunner, Message, Node,
    NodeBuilder, NodeError, NodeImpl, NodeSpec, StringMap, Terminal, Terminals,
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

sluice_node_api::terminals! {
    enum StepInput {
        In = "in": "",
    }
}

sluice_node_api::terminals! {
    enum StepOutput {
        Out = "out": "",
    }
}

sluice_node_api::terminals! {
    enum SourceOutput {
        Out = "out": "",
        Catch = "catch": "",
    }
}

sluice_node_api::property_enum! {
    enum Mode { Fast = "fast", Slow = "slow" }
}

sluice_node_api::properties! {
    struct SourceProps {
        path: String,
    }
}

sluice_node_api::properties! {
    struct StepProps {
        count: i64 = "3",
        ratio: f64 = "0.5",
        on: bool = "true",
        mode: Mode = "fast",
        names: Vec<String> = "[]",
        rules: StringMap = "{}",
    }
}

sluice_node_api::properties! {
    struct SwitchProps {}
}

sluice_node_api::terminals! {
    enum PutOutput {
        Out = "out": "",
        Failure = "failure": "",
    }
}

sluice_node_api::properties! {
    struct PutProps {
        /// The queue to put to.
        queue: String,
        retries: i64 = "0",
    }
}

impl BuildNode for PutProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Nop)))
    }
}

static PUT: NodeSpec = NodeSpec {
    type_name: "Put",
    summary: "test output node",
    inputs: StepInput::SPECS,
    outputs: PutOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<PutProps>(),
};

impl BuildNode for SourceProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Input(Arc::new(Nop)))
    }
}

impl BuildNode for StepProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Nop)))
    }
}

impl BuildNode for SwitchProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Nop)))
    }
}

static SOURCE: NodeSpec = NodeSpec {
    type_name: "Source",
    summary: "test input",
    inputs: &[],
    outputs: SourceOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SourceProps>(),
};

static STEP: NodeSpec = NodeSpec {
    type_name: "Step",
    summary: "test node",
    inputs: StepInput::SPECS,
    outputs: StepOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<StepProps>(),
};

static SWITCH: NodeSpec = NodeSpec {
    type_name: "Switch",
    summary: "dynamic terminals",
    inputs: StepInput::SPECS,
    outputs: &[],
    dynamic_outputs: true,
    dynamic_inputs: false,
    examples: &[],
    builder: NodeBuilder::of::<SwitchProps>(),
};

/// Input terminals named by wires, after a declared `in`.
static GATHER: NodeSpec = NodeSpec {
    type_name: "Gather",
    summary: "dynamic input terminals",
    inputs: StepInput::SPECS,
    outputs: StepOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: true,
    examples: &[],
    builder: NodeBuilder::of::<StepProps>(),
};

/// A registry holding `Source`, `Step`, `Switch`, `Gather` and `Put`.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&STEP);
    r.register(&SWITCH);
    r.register(&GATHER);
    r.register(&PUT);
    r
}
