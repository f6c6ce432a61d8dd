//! ResetContentDescriptor: the body's bytes given to another domain's parser, as the product's
//! node does — no conversion, only a new reading of the same bit stream.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
};

use crate::domains::{BodyParsing, BodyParsingProps, serialize_body};
use crate::terminals::{FailureOut, In};

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    r(&RESET_CONTENT_DESCRIPTOR);
}

pub static RESET_CONTENT_DESCRIPTOR: NodeSpec = NodeSpec {
    type_name: "ResetContentDescriptor",
    summary: "Gives the body's bytes to another domain's parser: the same bit stream, read anew \
              (an XML body reset to BLOB goes on as its bytes; BLOB bytes reset to XMLNSC or JSON \
              are parsed when a later node reads them, or here with `parse_timing: immediate`). \
              A body a flow changed is first written in its own domain.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "An XML body goes on as BLOB bytes, unchanged",
            properties: "domain: BLOB",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "Bytes that are not JSON fail here when parsed at once",
            properties: "domain: JSON, parse_timing: immediate",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("JSON parser: unexpected '<'"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<ResetContentDescriptorProps>(),
};

properties! {
    /// The domain the body is read in from here on.
    pub struct ResetContentDescriptorProps {
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for ResetContentDescriptorProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Reset {
            parsing: BodyParsing::from_props(&self.parsing)?,
        })))
    }
}

struct Reset {
    parsing: BodyParsing,
}

impl Node for Reset {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut out = msg.clone();
        let (bytes, _) = serialize_body(&mut out)?;
        if let Some(body) = out.body()? {
            out.root.delete(body)?;
        }
        self.parsing.attach(&mut out.root, bytes)?;
        ctx.propagate(FailureOut::Out, &mut out)
    }
}
