//! The one error type of the ESQL crate, for everything that is not a runtime exception.
//!
//! Errors raised while a module runs are the product's exceptions: they become the node's
//! `NodeError` and ExceptionList entries (text, numbers and inserts, by the product's
//! design), so they are not variants here. What is here happens before a message is
//! involved (reading and compiling files) or is an EVAL text that does not compile, which
//! the runtime then raises as exception 2402.

use std::io;

use crate::syntax::Diagnostic;

/// An ESQL file that cannot be read or compiled, or EVAL text that does not compile.
#[derive(Debug, thiserror::Error)]
pub enum EsqlError {
    /// An ESQL file could not be read.
    #[error("{path}:1:1: error: cannot read file: {source}")]
    Read {
        /// The file, as given.
        path: String,
        /// The filesystem's error.
        #[source]
        source: io::Error,
    },
    /// One problem (syntax, semantic or compile) at a line and column of a file.
    #[error("{}", diagnostic.render(path))]
    Compile {
        /// The file, as given.
        path: String,
        /// The problem, with its source line and caret.
        diagnostic: Diagnostic,
    },
    /// A file has syntax or semantic errors; each is rendered on its own line.
    #[error("{}", render_all(path, diagnostics))]
    Invalid {
        /// The file, as given.
        path: String,
        /// Every problem found in it.
        diagnostics: Vec<Diagnostic>,
    },
    /// EVAL text has syntax, semantic or compile errors; lines and columns count in the
    /// text, not in the file that holds the EVAL.
    #[error("{}", eval_problems(diagnostics))]
    EvalText {
        /// Every problem found in the text, positioned in the text.
        diagnostics: Vec<Diagnostic>,
    },
    /// EVAL text parses, but not as what the EVAL needs: one expression for the EVAL
    /// function, statements for the EVAL statement.
    #[error("{}", if *expression {
        "the text of the EVAL function must be one expression"
    } else {
        "the text of an EVAL statement must be ESQL statements"
    })]
    EvalShape {
        /// The text was given to the EVAL function (else to the EVAL statement).
        expression: bool,
    },
    /// EVAL text holds BEGIN ATOMIC, whose lock is made at deploy time.
    #[error("BEGIN ATOMIC is not allowed in EVAL text")]
    EvalAtomic,
    /// A broken invariant of the compiler or runtime.
    #[error("{0} (this is a bug, please report it)")]
    Internal(&'static str),
}

impl EsqlError {
    /// `PATH:LINE:COL: error: MESSAGE`, then the source line and a caret (for file errors;
    /// the message alone for the others).
    pub fn render(&self) -> String {
        self.to_string()
    }

    /// The file the error is in, when it is about a file.
    pub fn path(&self) -> Option<&str> {
        match self {
            EsqlError::Read { path, .. }
            | EsqlError::Compile { path, .. }
            | EsqlError::Invalid { path, .. } => Some(path),
            EsqlError::EvalText { .. }
            | EsqlError::EvalShape { .. }
            | EsqlError::EvalAtomic
            | EsqlError::Internal(_) => None,
        }
    }
}

fn render_all(path: &str, diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| d.render(path))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each problem as `line L, column C: message`. The text sits on the second line of the
/// wrapper it is compiled in, so its lines are the wrapper's minus one.
fn eval_problems(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            format!(
                "line {}, column {}: {}",
                d.line.saturating_sub(1).max(1),
                d.col,
                d.message
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::syntax::Span;

    fn diag(line: u32, col: u32, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            col,
            message: message.into(),
            excerpt_with_caret: String::new(),
            span: Span {
                start: 0,
                end: 0,
                line,
                col,
            },
        }
    }

    #[test]
    fn read_keeps_the_io_error_as_source() {
        let e = EsqlError::Read {
            path: "a.esql".into(),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert!(
            e.to_string()
                .starts_with("a.esql:1:1: error: cannot read file: ")
        );
        let io = e.source().and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(
            io.map(io::Error::kind),
            Some(io::ErrorKind::PermissionDenied)
        );
    }

    #[test]
    fn eval_text_counts_lines_in_the_text_when_rendered() {
        let e = EsqlError::EvalText {
            diagnostics: vec![diag(2, 5, "expected `;`"), diag(3, 1, "unknown name")],
        };
        assert_eq!(
            e.to_string(),
            "line 1, column 5: expected `;`; line 2, column 1: unknown name"
        );
        assert_eq!(e.path(), None);
    }

    #[test]
    fn invalid_renders_every_diagnostic_on_its_own_line() {
        let e = EsqlError::Invalid {
            path: "f.esql".into(),
            diagnostics: vec![diag(1, 2, "one"), diag(3, 4, "two")],
        };
        assert_eq!(
            e.to_string(),
            "f.esql:1:2: error: one\nf.esql:3:4: error: two"
        );
        assert_eq!(e.path(), Some("f.esql"));
    }
}
