//! What the pattern nodes' flow tests share: the registry, XML messages, services with a queue
//! manager.

use std::sync::Arc;

use sluice_flow::Registry;
use sluice_flow_testing::Harness;
use sluice_node_api::{Message, Services};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, Domain, ParseTiming};
use sluice_qm::QueueManager;

/// The test harness's nodes and the pattern nodes.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    Harness::register(&mut r);
    let mut add = |s| r.register(s);
    sluice_nodes_patterns::register(&mut add);
    r
}

/// A message whose body is `xml`, parsed on demand in XMLNSC.
pub fn xml_message(xml: String) -> Message {
    let mut msg = Message::new();
    let parsing = BodyParsing::from_props(&BodyParsingProps {
        domain: Domain::Xmlnsc,
        parse_timing: ParseTiming::OnDemand,
        opaque_elements: Vec::new(),
    })
    .unwrap();
    parsing
        .attach(&mut msg.root, bytes::Bytes::from(xml))
        .unwrap();
    msg
}

/// Services with `qm` and nothing else.
pub fn services(qm: &Arc<QueueManager>) -> Services {
    Services {
        queues: Some(Arc::clone(qm)),
        ..Services::none()
    }
}
