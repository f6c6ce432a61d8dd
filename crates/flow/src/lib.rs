//! Flows: the YAML model and its validation, the node registry, the engine that runs flow
//! instances, and their statistics.

pub mod diag;
pub mod engine;
pub mod load;
pub mod registry;
pub mod stats;
pub mod yaml;

pub use diag::Diagnostic;
pub use engine::{EnterError, Flow, NodeInfo, RunningFlow};
pub use load::{FlowDef, NodeDef, load_flow};
pub use registry::Registry;
