//! The ESQL abstract syntax tree.
//!
//! Identifiers are kept as written (case and quoting preserved) so that names can be
//! resolved when a flow is deployed; keywords become enums. Every node carries a
//! [`Span`](super::span::Span).

mod expr;
mod item;
mod path;
mod stmt;
mod types;

pub use expr::*;
pub use item::*;
pub use path::*;
pub use stmt::*;
pub use types::*;

use super::span::Span;

/// An identifier as written. `quoted` is true for `"quoted identifiers"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub quoted: bool,
    pub span: Span,
}

/// A dotted name such as a broker schema `com.example.orders` or a qualified routine.
#[derive(Debug, Clone, PartialEq)]
pub struct QualifiedName {
    pub parts: Vec<Ident>,
    pub span: Span,
}

impl QualifiedName {
    /// The parts joined with dots, as written.
    pub fn dotted(&self) -> String {
        self.parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(".")
    }
}
