//! The node families this binary ships, registered in one place.

use sluice_flow::Registry;

/// A registry with every node type.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    sluice_nodes::register(&mut |s| r.register(s));
    r
}
