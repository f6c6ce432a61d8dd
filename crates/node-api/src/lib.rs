//! What a node is: its declared spec (properties, terminals), its runtime traits, the invocation
//! it runs in, and the exceptions it raises. Small and stable: every node family builds on it.

mod config;
mod example;
mod exception;
mod invocation;
mod spec;

pub use config::{ConfigError, NodeConfig, PropValue};
pub use example::{ExampleInput, ExampleOutcome, NodeExample, Runs};
pub use exception::{Exception, ExceptionKind, NodeError};
pub use invocation::{
    Ctx, FlowRuntime, InputNode, InstanceRunner, Invocation, Node, Participant, StopSignal,
};
pub use sluice_tree::{Message, NodeId, Tree, TreeError};
pub use spec::{BuildContext, NodeImpl, NodeSpec, PropKind, PropSpec, Terminal, TerminalSpec};
