//! A flow built from YAML with every node registered, served by an in-process HTTP router and a
//! given queue manager, for tests that drive input nodes.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::sync::Arc;

use sluice_flow::{Flow, Registry, load_flow};
use sluice_flow_testing::Harness;
use sluice_node_api::Services;
use sluice_node_api::http_listener::HttpRouter;

pub struct Bench {
    pub harness: Arc<Harness>,
    pub flow: Arc<Flow>,
    pub router: Arc<HttpRouter>,
    pub qm: Arc<sluice_qm::QueueManager>,
    _runtime: tokio::runtime::Runtime,
}

impl Bench {
    /// Build the flow in `src` (it is not started).
    pub fn new(src: &str, qm: Arc<sluice_qm::QueueManager>) -> Bench {
        let mut registry = Registry::new();
        sluice_nodes::register(&mut |s| registry.register(s));
        Harness::register(&mut registry);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let router = Arc::new(HttpRouter::new());
        let services = Services {
            http: Arc::clone(&router),
            runtime: Some(runtime.handle().clone()),
            queues: Some(Arc::clone(&qm)),
            ..Services::none()
        };
        let def = load_flow("input.yaml", src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
        let harness = Harness::new();
        let flow = harness
            .build(&def, std::path::Path::new("."), &services)
            .unwrap_or_else(|d| panic!("{}", d[0]));
        Bench {
            harness,
            flow,
            router,
            qm,
            _runtime: runtime,
        }
    }
}
