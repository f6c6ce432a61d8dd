//! The node family that needs no transport — Passthrough, Trace, Label, RouteToLabel, Throw,
//! TryCatch, FlowOrder, Route — and what the other families share: message domains as input
//! and output nodes use them, and the terminal sets that recur.

pub mod core;
pub mod domains;
pub mod fields;
pub mod record_scan;
pub mod reset;
pub mod routing;
pub mod terminals;
mod time;
pub mod validate;
pub mod validation;

use sluice_node_api::NodeSpec;

/// Register this family's node types.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    core::register(r);
    routing::register(r);
    reset::register(r);
    validate::register(r);
}
