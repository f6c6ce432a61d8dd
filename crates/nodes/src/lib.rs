//! Node families: `core` (control), `routing` (Filter, Route), `http`, `mq` (queues). Each
//! family registers its node types.

pub mod core;
pub mod domains;
pub mod esql;
pub mod http;
pub mod mq;
pub mod routing;
mod terminals;
mod time;

use sluice_node_api::NodeSpec;

/// Register every node type of these families.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    core::register(r);
    routing::register(r);
    esql::register(r);
    mq::register(r);
    for s in [&http::HTTP_INPUT, &http::HTTP_REPLY, &http::HTTP_REQUEST] {
        r(s);
    }
}
