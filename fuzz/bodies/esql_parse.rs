//! The ESQL front end on arbitrary bytes (read as lossy UTF-8): it must parse and check
//! without panicking, and every diagnostic must point inside the source.

/// Run one input.
pub fn run(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    if let Err(diags) = sluice_esql::syntax::check_source(&src) {
        assert!(
            !diags.is_empty(),
            "a failed check reports at least one problem"
        );
        for d in diags {
            assert!(
                d.span.start <= d.span.end && d.span.end <= src.len(),
                "span {:?} outside a {}-byte source",
                d.span,
                src.len()
            );
            assert!(d.line >= 1 && d.col >= 1, "line {} col {}", d.line, d.col);
            let _ = d.render("fuzz.esql");
        }
    }
}
