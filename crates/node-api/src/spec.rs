//! A node type's declaration: everything the loader validates and the docs describe.

use std::sync::Arc;

use crate::Node;
use crate::config::{ConfigError, NodeConfig, PropSpec, Properties};
use crate::example::NodeExample;
use crate::invocation::InputNode;
use crate::services::Services;

/// A terminal of a node in a built flow: its position among the node's terminals. The engine
/// numbers terminals; node code names them, through the enum [`terminals!`](crate::terminals)
/// declares or [`BuildContext::output`] for terminals named in properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Terminal(u16);

impl Terminal {
    /// The terminal at this position (for the engine, which numbers them).
    pub const fn at(index: u16) -> Terminal {
        Terminal(index)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A named terminal of a node type.
#[derive(Clone, Copy, Debug)]
pub struct TerminalSpec {
    pub name: &'static str,
    pub doc: &'static str,
}

/// A node type's input or output terminals, declared as an enum by
/// [`terminals!`](crate::terminals): the enum's order is the declaration's, so naming a variant
/// always means the same terminal.
pub trait Terminals: Copy + Into<Terminal> {
    const SPECS: &'static [TerminalSpec];

    /// The terminal a built flow numbered `t`, when it is one of these.
    fn from_terminal(t: Terminal) -> Option<Self>;
}

/// Declares a set of terminals: each variant with its name in flow files and its doc.
///
/// ```
/// sluice_node_api::terminals! {
///     /// Filter's outputs.
///     pub enum FilterOutput {
///         Failure = "failure": "The node raised an exception.",
///         True = "true": "The expression is true.",
///     }
/// }
/// ```
#[macro_export]
macro_rules! terminals {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $variant:ident = $tname:literal : $doc:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $( $variant, )*
        }

        impl $crate::Terminals for $name {
            const SPECS: &'static [$crate::TerminalSpec] =
                &[$( $crate::TerminalSpec { name: $tname, doc: $doc }, )*];

            fn from_terminal(t: $crate::Terminal) -> ::std::option::Option<Self> {
                [$( $name::$variant, )*].get(t.index()).copied()
            }
        }

        impl ::std::convert::From<$name> for $crate::Terminal {
            fn from(t: $name) -> $crate::Terminal {
                $crate::Terminal::at(t as u16)
            }
        }
    };
}

/// What a node's builder learns about the flow it is built into.
pub struct BuildContext<'a> {
    /// The flow's name.
    pub flow: &'a str,
    /// The node's label (its key in the flow file).
    pub label: &'a str,
    /// The project folder (for files the node reads, such as ESQL).
    pub project_dir: &'a std::path::Path,
    /// Names of this node's input terminals, declared then named in wires, by position.
    pub inputs: &'a [String],
    /// Names of this node's output terminals, declared then named in wires, by position.
    pub outputs: &'a [String],
    /// What the server offers nodes: its HTTP listener, the queue manager, …
    pub services: &'a Services,
    /// How the flow's units of work commit (its `transaction` setting): an input node that
    /// starts units of work honours it.
    pub transaction: crate::Transaction,
}

impl BuildContext<'_> {
    /// The output terminal with this name (a declared one, or one the flow file named in wires).
    pub fn output(&self, name: &str) -> Option<Terminal> {
        self.outputs
            .iter()
            .position(|o| o == name)
            .map(|i| Terminal(i as u16))
    }

    /// The input terminal with this name (a declared one, or one a wire named).
    pub fn input(&self, name: &str) -> Option<Terminal> {
        self.inputs
            .iter()
            .position(|o| o == name)
            .map(|i| Terminal(i as u16))
    }

    /// The output terminals named in wires beyond the `declared` ones.
    pub fn named_outputs(&self, declared: usize) -> impl Iterator<Item = &str> {
        self.outputs.iter().skip(declared).map(String::as_str)
    }
}

/// The built, running form of a node.
pub enum NodeImpl {
    /// A node that starts flow invocations (HTTPInput, MQInput …).
    Input(Arc<dyn InputNode>),
    /// A node that is invoked with a message.
    Process(Arc<dyn Node>),
    /// A node that is invoked with a message and also starts invocations of its own when no
    /// message arrives (AggregateReply's timeouts, Resequence's missing-number timeouts): the
    /// engine wires it as a `Process` node and runs one loop of its `InputNode` beside the
    /// flow's instances, whose invocations propagate from this node's terminals.
    ProcessAndInput(Arc<dyn Node>, Arc<dyn InputNode>),
}

impl NodeImpl {
    /// The node messages are given to, unless it is an input node only.
    pub fn process(&self) -> Option<&Arc<dyn Node>> {
        match self {
            NodeImpl::Process(p) | NodeImpl::ProcessAndInput(p, _) => Some(p),
            NodeImpl::Input(_) => None,
        }
    }

    /// The loop that starts invocations, if the node has one.
    pub fn input(&self) -> Option<&Arc<dyn InputNode>> {
        match self {
            NodeImpl::Input(i) | NodeImpl::ProcessAndInput(_, i) => Some(i),
            NodeImpl::Process(_) => None,
        }
    }
}

/// A node type's property set that builds the node: implemented once per node type.
pub trait BuildNode: Properties {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError>;

    /// What the node serves exclusively within a server — an HTTP path, a TCP port, a watched
    /// folder — as text naming it (`HTTP path /orders`). Two nodes with the same claim fail the
    /// deployment, naming both.
    fn claims(&self) -> Vec<String> {
        Vec::new()
    }
}

/// How a node type's properties are declared and its node built, from its [`BuildNode`] type.
#[derive(Clone, Copy)]
pub struct NodeBuilder {
    declare: fn(&mut Vec<PropSpec>),
    build: fn(&NodeConfig, &BuildContext) -> Result<NodeImpl, ConfigError>,
    claims: fn(&NodeConfig) -> Vec<String>,
}

impl NodeBuilder {
    /// The builder of node type whose properties are `P`.
    pub const fn of<P: BuildNode>() -> NodeBuilder {
        NodeBuilder {
            declare: P::declare,
            build: read_and_build::<P>,
            claims: read_claims::<P>,
        }
    }
}

fn read_and_build<P: BuildNode>(c: &NodeConfig, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    P::read(c)?.build(b)
}

/// Properties that do not read have no claims: building the node reports them.
fn read_claims<P: BuildNode>(c: &NodeConfig) -> Vec<String> {
    P::read(c).map(|p| p.claims()).unwrap_or_default()
}

/// The declaration of a node type, registered by name.
pub struct NodeSpec {
    /// The product's type name, for example `HTTPInput`.
    pub type_name: &'static str,
    /// One line for the docs.
    pub summary: &'static str,
    pub inputs: &'static [TerminalSpec],
    pub outputs: &'static [TerminalSpec],
    /// Whether wires may name further output terminals (Route's rule names, Label names).
    pub dynamic_outputs: bool,
    /// Whether wires may name further input terminals (`collect.orders`: Collector's
    /// terminals): the node learns their names, by position after the declared ones, from
    /// [`BuildContext::inputs`].
    pub dynamic_inputs: bool,
    /// Typical uses, shown in the node reference and run by the compliance check.
    pub examples: &'static [NodeExample],
    /// Its properties and how its node is built: `NodeBuilder::of::<ItsProperties>()`.
    pub builder: NodeBuilder,
}

impl NodeSpec {
    /// The declared properties, in order.
    pub fn properties(&self) -> Vec<PropSpec> {
        let mut out = Vec::new();
        (self.builder.declare)(&mut out);
        out
    }

    /// Build the node from validated properties.
    pub fn build(&self, c: &NodeConfig, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        (self.builder.build)(c, b)
    }

    /// What a node of this type with these properties serves exclusively ([`BuildNode::claims`]).
    pub fn claims(&self, c: &NodeConfig) -> Vec<String> {
        (self.builder.claims)(c)
    }

    /// The position of a declared output terminal.
    pub fn output(&self, name: &str) -> Option<Terminal> {
        self.outputs
            .iter()
            .position(|t| t.name == name)
            .map(|i| Terminal(i as u16))
    }
}
