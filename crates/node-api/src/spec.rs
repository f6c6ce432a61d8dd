//! A node type's declaration: everything the loader validates and the docs describe.

use std::sync::Arc;

use crate::Node;
use crate::config::{ConfigError, NodeConfig};
use crate::example::NodeExample;
use crate::invocation::InputNode;

/// An output or input terminal, resolved to its index when a flow is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Terminal(pub u16);

/// A named terminal of a node type.
#[derive(Clone, Copy, Debug)]
pub struct TerminalSpec {
    pub name: &'static str,
    pub doc: &'static str,
}

/// The kind of a node property's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropKind {
    String,
    Integer,
    Boolean,
    Float,
    /// One of the listed words.
    Enum(&'static [&'static str]),
    /// A list of strings.
    StringList,
    /// A map from names to strings (for example Route rules).
    StringMap,
}

impl PropKind {
    /// How the docs name the kind.
    pub fn describe(&self) -> String {
        match self {
            PropKind::String => "string".into(),
            PropKind::Integer => "integer".into(),
            PropKind::Boolean => "boolean".into(),
            PropKind::Float => "number".into(),
            PropKind::Enum(words) => format!("one of {}", words.join(", ")),
            PropKind::StringList => "list of strings".into(),
            PropKind::StringMap => "map of name to string".into(),
        }
    }
}

/// A node property: its name (snake_case, with unit suffixes), kind, default and doc.
#[derive(Clone, Copy, Debug)]
pub struct PropSpec {
    pub name: &'static str,
    pub kind: PropKind,
    /// The default as YAML text; `None` means required when `required`, else absent.
    pub default: Option<&'static str>,
    pub required: bool,
    pub doc: &'static str,
}

/// What a node's builder learns about the flow it is built into.
pub struct BuildContext<'a> {
    /// The flow's name.
    pub flow: &'a str,
    /// The node's label (its key in the flow file).
    pub label: &'a str,
    /// The project folder (for files the node reads, such as ESQL).
    pub project_dir: &'a std::path::Path,
    /// Names of this node's output terminals that are wired, by index (dynamic terminals included).
    pub outputs: &'a [String],
    /// Services the server offers nodes (HTTP listener, queue manager …), looked up by type.
    pub services: &'a dyn std::any::Any,
}

/// The built, running form of a node.
pub enum NodeImpl {
    /// A node that starts flow invocations (HTTPInput, MQInput …).
    Input(Arc<dyn InputNode>),
    /// A node that is invoked with a message.
    Process(Arc<dyn Node>),
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
    pub properties: &'static [PropSpec],
    /// Typical uses, shown in the node reference and run by the compliance check.
    pub examples: &'static [NodeExample],
    /// Builds the runtime node from validated properties.
    pub build: fn(&NodeConfig, &BuildContext) -> Result<NodeImpl, ConfigError>,
}

impl NodeSpec {
    /// The index of a declared output terminal.
    pub fn output(&self, name: &str) -> Option<Terminal> {
        self.outputs
            .iter()
            .position(|t| t.name == name)
            .map(|i| Terminal(i as u16))
    }
}
