//! What a node is: its declared spec (typed properties, named terminals), its runtime traits, the
//! invocation it runs in with its unit of work, the services it is built with, and the exceptions
//! it raises. Small and stable: every node family builds on it.

mod config;
mod example;
mod exception;
pub mod http_listener;
mod invocation;
mod services;
mod spec;
mod unit_of_work;

pub use config::{
    ConfigError, NodeConfig, PropKind, PropSpec, PropValue, Properties, PropertyType, StringMap,
    join_doc_lines,
};
#[doc(hidden)]
pub use config::{
    field_name as config_field_name, plain as config_plain, wrong_kind as config_wrong_kind,
};
pub use example::{ExampleInput, ExampleOutcome, NodeExample, Runs};
pub use exception::{Exception, ExceptionKind, NodeError};
pub use invocation::{Ctx, FlowRuntime, InputNode, InstanceRunner, Invocation, Node, StopSignal};
pub use services::{
    BrokerDef, BrokerTls, DatasourceDef, KafkaBroker, KafkaSasl, MqttBroker, Services,
};
pub use sluice_tree::{Message, NodeId, Tree, TreeError};
pub use spec::{
    BuildContext, BuildNode, NodeBuilder, NodeImpl, NodeSpec, Terminal, TerminalSpec, Terminals,
};
pub use unit_of_work::{Prepare, Prepared, Resource, ResourceError, Transaction, UnitOfWork};
