//! Flows: the YAML model and its validation, subflows expanded inline, the node registry, the
//! engine that runs flow instances, and their statistics.

mod body;
mod context;
pub mod diag;
pub mod engine;
mod expand;
pub mod load;
pub mod registry;
pub mod stats;
pub mod subflow;
pub mod yaml;

pub use diag::Diagnostic;
pub use engine::{EnterError, Flow, NodeInfo, RunningFlow, WireInfo};
pub use load::{
    FlowDef, NodeDef, Place, SourceText, conflicting_claims, load_flow, load_flow_with,
};
pub use registry::Registry;
pub use subflow::{PromotedProperty, SubflowDef, Subflows};
