//! An XPath 1.0 subset over the message tree, as the Route and Filter nodes use it.
//!
//! Expressions are compiled once ([`XPath::compile`]) and evaluated per message against an
//! [`XPathContext`] that borrows the message assembly. The variables are the product's: `$Root`,
//! `$Body` (the last child of Root, the body's domain element such as `XMLNSC`),
//! `$LocalEnvironment`, `$Environment` and `$ExceptionList`. The context node is Root, and `/` is
//! the root element of the tree the context node is in, so `/XMLNSC/Parent` equals
//! `$Root/XMLNSC/Parent`.
//!
//! Evaluation follows the tree's on-demand parsing: paths are walked with `first_child` and
//! `next_sibling`, existential tests (`$Body/a/b = 'x'`, `boolean(...)`, predicates) stop at the
//! first node that settles them, and a step with `[1]` stops at its first match, so
//! `$Body/Parent[1]/First[1]` parses only the start of a message. Results that must be whole
//! node-sets (`count`, `sum`, a node-set result, `//`) walk as far as they need.
//!
//! XML nodes are mapped onto tree elements by field type, using XMLNSC's constants (see
//! [`node`]): attributes are `XMLNSC.Attribute` (0x03000100) and `XMLNSC.SingleAttribute`
//! (0x03000101); namespace declarations, the XML declaration, the DOCTYPE and entity
//! definitions are not XPath nodes; value-only elements (`XMLNSC.Value`, field type class
//! 0x02000000) are text nodes; an element's own value is its first text child.

// The evaluator reaches the tree API through this one alias, keeping its dependency in one place.
use crate as tree_api;

mod ast;
mod context;
mod error;
mod eval;
mod functions;
mod lexer;
pub mod node;
mod order;
mod parser;
mod path;
mod value;

#[cfg(test)]
mod tests;

pub use context::XPathContext;
pub use error::XPathError;
pub use node::{NodeKind, TreeSlot, XNode};
pub use value::XValue;

use crate::xpath::ast::Expr;
use crate::xpath::eval::Evaluator;

/// A compiled XPath expression.
#[derive(Clone, Debug)]
pub struct XPath {
    source: String,
    expr: Expr,
    /// Prefix to namespace URI, as given at compile time (used again by `name()`).
    namespaces: Vec<(String, String)>,
}

impl XPath {
    /// Compile an expression that uses no namespace prefixes.
    pub fn compile(src: &str) -> Result<XPath, XPathError> {
        XPath::compile_with_namespaces(src, &[])
    }

    /// Compile an expression whose names may use the prefixes in `namespaces` (prefix, URI).
    pub fn compile_with_namespaces(
        src: &str,
        namespaces: &[(&str, &str)],
    ) -> Result<XPath, XPathError> {
        let namespaces: Vec<(String, String)> = namespaces
            .iter()
            .map(|(p, u)| ((*p).to_owned(), (*u).to_owned()))
            .collect();
        let expr = parser::parse(src, &namespaces)?;
        Ok(XPath {
            source: src.to_owned(),
            expr,
            namespaces,
        })
    }

    /// The text the expression was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluate to a value; a node-set result is in document order without duplicates.
    pub fn evaluate(&self, ctx: &mut XPathContext<'_>) -> Result<XValue, XPathError> {
        let mut ev = Evaluator::new(ctx, &self.namespaces);
        let focus = ev.initial_focus();
        ev.eval(&self.expr, &focus)
    }

    /// Evaluate and convert with `boolean()`; a node-set stops at its first node.
    pub fn evaluate_bool(&self, ctx: &mut XPathContext<'_>) -> Result<bool, XPathError> {
        let mut ev = Evaluator::new(ctx, &self.namespaces);
        let focus = ev.initial_focus();
        ev.eval_bool(&self.expr, &focus)
    }

    /// Evaluate and convert with `string()`.
    pub fn evaluate_string(&self, ctx: &mut XPathContext<'_>) -> Result<String, XPathError> {
        let mut ev = Evaluator::new(ctx, &self.namespaces);
        let focus = ev.initial_focus();
        ev.eval_string(&self.expr, &focus)
    }

    /// Evaluate and convert with `number()`.
    pub fn evaluate_number(&self, ctx: &mut XPathContext<'_>) -> Result<f64, XPathError> {
        let mut ev = Evaluator::new(ctx, &self.namespaces);
        let focus = ev.initial_focus();
        ev.eval_number(&self.expr, &focus)
    }
}
