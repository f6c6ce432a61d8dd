//! Data types as written in DECLARE, CAST and routine signatures.

pub use sluice_tree::{DatetimeField, IntervalQualifier};

use crate::syntax::span::Span;

/// A data type with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeSpec {
    pub ty: DataType,
    pub span: Span,
}

/// A declared type: a scalar data type, or one of the kinds of variable that hold no scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DataType {
    /// `INTEGER`, `DECIMAL(10, 2)`, `INTERVAL DAY TO SECOND`, …
    Scalar(sluice_tree::DataType),
    /// `REFERENCE` (the `TO` target is the declaration's initial value).
    Reference,
    Row,
    /// `NAMESPACE` constant (also spelt `NAMESPACE` in DECLARE ... NAMESPACE 'uri').
    Namespace,
    /// `NAME` constant.
    Name,
}
