//! The flow loader on arbitrary text: it must report problems, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let mut registry = sluice_flow::Registry::new();
        sluice_nodes::register(&mut |spec| registry.register(spec));
        let _ = sluice_flow::load_flow("fuzz.yaml", src, &registry);
    }
});
