//! The flow loader on arbitrary text: it must report problems, never panic, and every
//! problem must point inside the file.

use sluice_flow::{Registry, load_flow};

/// Run one input against the node types of `registry`.
pub fn run(data: &[u8], registry: &Registry) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(problems) = load_flow("fuzz.yaml", src, registry) {
        assert!(
            !problems.is_empty(),
            "a failed load reports at least one problem"
        );
        // YAML breaks lines at LF, CR and CRLF. A problem at the end of input may sit on the
        // line after the last break, and the YAML reader reports the end of a file that does
        // not end with a break one line further still (as if the break were there).
        let lines = src.bytes().filter(|b| matches!(b, b'\n' | b'\r')).count() + 2;
        for p in &problems {
            let text = p.to_string();
            assert!(!text.is_empty(), "a problem has a message");
            assert!(
                (1..=lines).contains(&p.line) && p.col >= 1,
                "problem at {}:{} outside the file: {text}",
                p.line,
                p.col
            );
        }
    }
}
