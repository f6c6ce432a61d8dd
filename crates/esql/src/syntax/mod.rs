//! The ESQL front end: lexer, parser, AST, diagnostics and the semantic checks that need
//! no runtime.
//!
//! [`parse`] turns source text into an [`ast::File`] or every problem found; [`check_source`]
//! and [`check_file`] also run the [`check`] pass.

pub mod ast;
pub mod check;
pub mod diag;
pub mod lexer;
pub mod parser;
pub mod span;
pub mod token;

use std::path::Path;

pub use crate::error::EsqlError;
pub use diag::Diagnostic;
pub use span::Span;

/// Stack for parsing and checking. Both recurse once per nesting level; nesting is
/// bounded (100 levels) but unoptimised builds use several kilobytes per level, so the
/// front end runs on a thread of its own rather than risk a caller's small stack. Only
/// touched pages of the reservation use memory.
const FRONT_END_STACK_BYTES: usize = 64 << 20;

fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut job = Some(f);
    let spawned = std::thread::scope(|scope| {
        let slot = &mut job;
        let handle = std::thread::Builder::new()
            .name("esql-front-end".to_string())
            .stack_size(FRONT_END_STACK_BYTES)
            .spawn_scoped(scope, move || slot.take().map(|f| f()));
        match handle {
            Ok(handle) => match handle.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => None,
        }
    });
    match (spawned, job) {
        (Some(result), _) => result,
        // No thread could be started (the process is out of resources): run here.
        (None, Some(f)) => f(),
        (None, None) => {
            unreachable!("this is a bug, please report it: the ESQL front-end job ran nowhere")
        }
    }
}

/// Parses ESQL source into a file AST, or returns every lexical and syntax error.
pub fn parse(src: &str) -> Result<ast::File, Vec<Diagnostic>> {
    with_big_stack(|| parser::parse_file(src))
}

/// Parses and checks ESQL source: syntax errors first, then semantic errors.
pub fn check_source(src: &str) -> Result<ast::File, Vec<Diagnostic>> {
    with_big_stack(|| {
        let file = parser::parse_file(src)?;
        let problems = check::check(&file);
        if problems.is_empty() {
            Ok(file)
        } else {
            Err(problems
                .into_iter()
                .map(|(span, msg)| Diagnostic::new(src, span, msg))
                .collect())
        }
    })
}

/// Reads, parses and checks one ESQL file. A file that cannot be read gives a single
/// diagnostic at line 1, column 1 with no excerpt (use [`check_path`] to keep the
/// filesystem's error).
pub fn check_file(path: impl AsRef<Path>) -> Result<(), Vec<Diagnostic>> {
    let bytes = std::fs::read(path.as_ref()).map_err(|e| {
        vec![Diagnostic {
            line: 1,
            col: 1,
            message: format!("cannot read file: {e}"),
            excerpt_with_caret: String::new(),
            span: Span {
                start: 0,
                end: 0,
                line: 1,
                col: 1,
            },
        }]
    })?;
    check_bytes(&bytes)
}

/// Like [`check_file`], with the failure as an [`EsqlError`] (`Invalid` renders every
/// diagnostic as `PATH:LINE:COL: error: MESSAGE` plus excerpt).
pub fn check_path(path: &Path) -> Result<(), EsqlError> {
    let bytes = std::fs::read(path).map_err(|source| EsqlError::Read {
        path: path.display().to_string(),
        source,
    })?;
    check_bytes(&bytes).map_err(|diagnostics| EsqlError::Invalid {
        path: path.display().to_string(),
        diagnostics,
    })
}

fn check_bytes(bytes: &[u8]) -> Result<(), Vec<Diagnostic>> {
    // ESQL files from Windows toolkits are sometimes not UTF-8; keep going with
    // replacement characters rather than refusing the file.
    check_source(&String::from_utf8_lossy(bytes)).map(|_| ())
}
