//! Files, modules, routines and declarations.

use super::{Expr, Ident, QualifiedName, Stmt, TypeSpec};
use crate::syntax::span::Span;

/// One ESQL source file.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// `BROKER SCHEMA a.b.c`, when present.
    pub schema: Option<QualifiedName>,
    /// `PATH x.y, z` schemas searched for unqualified routine names.
    pub path: Vec<QualifiedName>,
    pub items: Vec<Item>,
    pub span: Span,
}

/// A schema-level or module-level item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Module(Module),
    Routine(Routine),
    Declare(Declare),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKind {
    Compute,
    Filter,
    Database,
}

/// `CREATE COMPUTE|FILTER|DATABASE MODULE name … END MODULE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub kind: ModuleKind,
    pub name: Ident,
    /// Module-level DECLAREs and routines, in source order.
    pub items: Vec<Item>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutineKind {
    Function,
    Procedure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamMode {
    In,
    Out,
    InOut,
}

/// A routine parameter: `IN name TYPE`, `INOUT ref REFERENCE`, `OUT n NAMESPACE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// `None` when the mode is omitted (IN for functions).
    pub mode: Option<ParamMode>,
    pub name: Ident,
    pub ty: TypeSpec,
    /// `CONSTANT` written after the type.
    pub constant: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Language {
    Esql,
    Database,
    Java,
    /// `LANGUAGE .NET` and other non-ESQL languages, as written.
    Other(String),
}

/// What runs when the routine is called.
#[derive(Debug, Clone, PartialEq)]
pub enum RoutineBody {
    /// An ESQL statement, usually `BEGIN … END`.
    Esql(Box<Stmt>),
    /// `EXTERNAL NAME "…"` for database, Java or .NET routines.
    External(String),
}

/// `CREATE FUNCTION|PROCEDURE name(params) [RETURNS type] [LANGUAGE …] body`.
#[derive(Debug, Clone, PartialEq)]
pub struct Routine {
    pub kind: RoutineKind,
    pub name: Ident,
    pub params: Vec<Param>,
    pub returns: Option<TypeSpec>,
    pub language: Option<Language>,
    /// `DYNAMIC RESULT SETS n` of database procedures.
    pub result_sets: Option<u32>,
    pub body: RoutineBody,
    pub span: Span,
}

/// The modifier between the names and the type of a DECLARE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclareModifier {
    Constant,
    Shared,
    External,
}

/// `DECLARE a, b [CONSTANT|SHARED|EXTERNAL] type [initial]`, `DECLARE r REFERENCE TO ref`,
/// `DECLARE ns NAMESPACE 'uri'`.
#[derive(Debug, Clone, PartialEq)]
pub struct Declare {
    pub names: Vec<Ident>,
    pub modifier: Option<DeclareModifier>,
    pub ty: TypeSpec,
    /// The initial value; for `REFERENCE TO target`, the target.
    pub init: Option<Expr>,
    pub span: Span,
}
