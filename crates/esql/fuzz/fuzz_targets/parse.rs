//! Fuzzes the ESQL front end: any bytes, read as (lossy) UTF-8, must parse and check
//! without panicking, and every diagnostic must point inside the source.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    if let Err(diags) = sluice_esql::syntax::check_source(&src) {
        for d in diags {
            assert!(d.span.start <= src.len() && d.span.end <= src.len());
            assert!(d.line >= 1 && d.col >= 1);
            let _ = d.render("fuzz.esql");
        }
    }
});
