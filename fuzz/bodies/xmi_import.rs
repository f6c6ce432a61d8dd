//! `sluice import`'s readers on arbitrary bytes (read as lossy UTF-8). Byte 0 picks the reader:
//! even, a message flow file (XMI) converted on its own as a flow and as a subflow; odd, a
//! policy file. Neither may panic; an error names a line inside the file, and every part of a
//! flow reported as not mapped points at a line inside it.

/// Run one input.
pub fn run(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let check_error = |e: sluice_import::ImportError| {
        if let sluice_import::ImportError::Xmi { line, .. } = e {
            assert!(
                (1..=lines).contains(&line),
                "error at line {line} of {lines}"
            );
        }
    };
    if pick % 2 == 0 {
        for subflow in [false, true] {
            match sluice_import::convert_flow("fuzz", "fuzz.msgflow", &text, subflow) {
                Ok(c) => {
                    assert!(c.nodes_mapped <= c.nodes);
                    for u in &c.unmapped {
                        assert!((1..=lines).contains(&u.line), "{u:?} outside {lines} lines");
                    }
                }
                Err(e) => check_error(e),
            }
        }
    } else {
        match sluice_import::read_policies("Policies", "fuzz.policyxml", &text) {
            Ok(ps) => {
                for p in &ps {
                    assert!((1..=lines).contains(&p.line));
                    let _ = sluice_import::policy_outcome(p);
                }
            }
            Err(e) => check_error(e),
        }
    }
}
