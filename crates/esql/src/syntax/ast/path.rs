//! Field references: `InputRoot.XMLNSC.ns:Order.(XMLNSC.Attribute)id[<2]`.

use super::{Expr, Ident};
use crate::syntax::span::Span;

/// A field reference. The first step names a correlation name, a variable or a
/// reference; the compiler resolves which at deploy time.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldRef {
    pub steps: Vec<PathStep>,
    pub span: Span,
}

impl FieldRef {
    /// The first step's name when it is a plain identifier.
    pub fn head(&self) -> Option<&Ident> {
        match self.steps.first().map(|s| &s.name) {
            Some(NameSpec::Ident(id)) => Some(id),
            _ => None,
        }
    }

    /// `Database.DSN` (or `Database.a.b`) naming a data source: the names after `Database`.
    pub fn database_name(&self) -> Option<String> {
        if self.head()?.name != "Database" || self.steps.len() < 2 {
            return None;
        }
        let mut parts = Vec::new();
        for s in &self.steps[1..] {
            match (&s.name, &s.type_qualifier, &s.namespace, &s.index) {
                (NameSpec::Ident(id), None, None, None) => parts.push(id.name.as_str()),
                _ => return None,
            }
        }
        Some(parts.join("."))
    }
}

/// One step of a field reference.
#[derive(Debug, Clone, PartialEq)]
pub struct PathStep {
    /// `(XMLNSC.Attribute)` or `(expr)` before the name.
    pub type_qualifier: Option<TypeQualifier>,
    /// `ns:` before the name.
    pub namespace: Option<NamespaceSpec>,
    pub name: NameSpec,
    pub index: Option<Index>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeQualifier {
    /// `(Domain.Type)`, the usual form, with the names as written.
    Named(Vec<Ident>),
    /// `(expr)`, any other expression yielding a field type.
    Expr(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum NamespaceSpec {
    /// `*:` — any namespace.
    Any,
    /// `prefix:` — a NAMESPACE constant or variable.
    Ident(Ident),
    /// `{expr}:`
    Dynamic(Box<Expr>),
    /// `:name` — the empty namespace.
    Empty,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NameSpec {
    Ident(Ident),
    /// `*` — any name.
    Any,
    /// `{expr}` — the name computed at run time.
    Dynamic(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Index {
    /// `[n]`, counting from 1.
    Nth(Box<Expr>),
    /// `[<]` or `[<n]`: `None` is the last, `Some(n)` the n-th from the end.
    FromLast(Option<Box<Expr>>),
    /// `[>]` or `[>n]`: `None` is the first, `Some(n)` the n-th from the start.
    FromFirst(Option<Box<Expr>>),
    /// `[]` — every instance (a list).
    All,
}
