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

use std::sync::Arc;

use sluice_node_api::{BuildContext, ConfigError, NodeSpec};

/// What the server offers nodes while they are built.
pub struct Services {
    pub http: Arc<http::HttpRouter>,
    /// For nodes that call async clients from flow threads.
    pub runtime: tokio::runtime::Handle,
    /// The embedded queue manager.
    pub qm: Option<Arc<sluice_qm::QueueManager>>,
}

impl Services {
    /// The services a node is being built with.
    pub fn from_build<'a>(b: &'a BuildContext) -> Result<&'a Services, ConfigError> {
        b.services.downcast_ref::<Services>().ok_or_else(|| {
            ConfigError::node(
                "the server's services are not available (this is a bug, please report it)",
            )
        })
    }

    /// The queue manager, for queue nodes.
    pub fn queue_manager(&self) -> Result<Arc<sluice_qm::QueueManager>, ConfigError> {
        self.qm
            .clone()
            .ok_or_else(|| ConfigError::node("this server runs without a queue manager"))
    }
}

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
