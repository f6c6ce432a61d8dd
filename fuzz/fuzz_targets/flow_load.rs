//! Fuzz the flow loader with every node type of the product registered; the body (and what
//! it checks) is in `bodies/flow_load.rs`, shared with the short-form test that runs it on
//! stable.
#![no_main]

use std::sync::OnceLock;

use sluice_flow::Registry;

#[path = "../bodies/flow_load.rs"]
mod body;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::new();
        sluice_nodes::register(&mut |spec| registry.register(spec));
        registry
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data, registry()));
