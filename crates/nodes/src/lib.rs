//! Every node family, for the server and the binary: each family is a crate of its own
//! (`sluice-nodes-core`, `-esql`, `-file`, `-http`, `-kafka`, `-mq`, `-mqtt`, `-patterns`,
//! `-soap`, `-tcpip`, `-xslt`), so that a change
//! to one rebuilds only it and what bundles it; this crate registers them all. The Kafka family
//! is behind the default feature `kafka`, since its client library takes minutes to build.

pub use sluice_nodes_core::{core, domains, routing, terminals, validate, validation};
pub use sluice_nodes_esql as esql;
pub use sluice_nodes_file as file;
pub use sluice_nodes_http as http;
#[cfg(feature = "kafka")]
pub use sluice_nodes_kafka as kafka;
pub use sluice_nodes_mq as mq;
pub use sluice_nodes_mqtt as mqtt;
pub use sluice_nodes_patterns as patterns;
pub use sluice_nodes_soap as soap;
pub use sluice_nodes_tcpip as tcpip;
pub use sluice_nodes_xslt as xslt;

use sluice_node_api::NodeSpec;

/// Register every node type of every family.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    sluice_nodes_core::register(r);
    esql::register(r);
    file::register(r);
    http::register(r);
    #[cfg(feature = "kafka")]
    kafka::register(r);
    mq::register(r);
    mqtt::register(r);
    tcpip::register(r);
    patterns::register(r);
    xslt::register(r);
    soap::register(r);
}
