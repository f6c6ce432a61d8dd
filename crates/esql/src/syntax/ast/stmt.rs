//! Statements.

use super::{BitstreamOptions, Declare, Expr, FieldRef, Ident, PathStep, QualifiedName};
use crate::syntax::span::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// Which part of a field SET assigns: `SET x TYPE = …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldPart {
    Type,
    Namespace,
    Name,
    Value,
}

/// A position relative to a field: CREATE … OF, DELETE … OF, ATTACH … AS, MOVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    FirstChild,
    LastChild,
    PreviousSibling,
    NextSibling,
}

/// `TYPE`, `NAMESPACE`, `NAME` and `IDENTITY` clauses narrowing a CREATE, MOVE or DELETE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldClauses {
    pub ty: Option<Box<Expr>>,
    pub namespace: Option<Box<Expr>>,
    pub name: Option<Box<Expr>>,
    pub value: Option<Box<Expr>>,
    pub identity: Option<Box<PathStep>>,
}

/// Where CREATE makes the new field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreatePosition {
    /// `CREATE FIELD path` — the path itself, creating missing ancestors.
    Field,
    /// `CREATE FIRSTCHILD OF x` and friends.
    Relative(Relation),
}

/// What fills the new field.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateSource {
    /// `TYPE/NAMESPACE/NAME/VALUE/IDENTITY` clauses (possibly none).
    Values(FieldClauses),
    /// `REPEAT [VALUE expr]`: copy the previous sibling's name and type.
    Repeat(Option<Expr>),
    /// `FROM source`: a copy of a tree.
    From(Expr),
    /// `PARSE(bitstream …)`.
    Parse {
        source: Expr,
        options: BitstreamOptions,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Create {
    pub position: CreatePosition,
    pub target: FieldRef,
    /// `AS ref`: a reference variable left pointing at the new field.
    pub as_ref: Option<FieldRef>,
    pub domain: Option<Expr>,
    pub source: CreateSource,
}

/// What MOVE moves a reference to.
#[derive(Debug, Clone, PartialEq)]
pub enum MoveTarget {
    To(FieldRef),
    Parent,
    Relative {
        relation: Relation,
        clauses: FieldClauses,
        repeat: Option<RepeatBy>,
    },
}

/// `REPEAT TYPE`, `REPEAT NAME` or `REPEAT TYPE NAME` of MOVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepeatBy {
    pub ty: bool,
    pub name: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PropagateTarget {
    Terminal(Expr),
    Label(Expr),
}

/// `DEFAULT` or `NONE` of PROPAGATE's FINALIZE and DELETE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagateControl {
    Default,
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Propagate {
    pub target: Option<PropagateTarget>,
    pub environment: Option<FieldRef>,
    pub message: Option<FieldRef>,
    pub exception: Option<FieldRef>,
    pub finalize: Option<PropagateControl>,
    pub delete: Option<PropagateControl>,
}

/// The CATALOG/MESSAGE/SEVERITY/VALUES clauses shared by THROW and LOG.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventClauses {
    pub severity: Option<Expr>,
    pub catalog: Option<Expr>,
    pub message: Option<Expr>,
    pub values: Vec<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Event,
    UserTrace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerKind {
    Continue,
    Exit,
}

/// One `SQLSTATE 'x'`, `SQLSTATE VALUE 'x'` or `SQLSTATE LIKE 'x' [ESCAPE 'e']`.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlStateCondition {
    pub like: bool,
    pub pattern: Expr,
    pub escape: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    pub kind: HandlerKind,
    pub conditions: Vec<SqlStateCondition>,
    pub body: Box<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: QualifiedName,
    pub args: Vec<Expr>,
    /// `IN Database.{schema}` for database procedures.
    pub schema: Option<FieldRef>,
    /// `INTO target` receives the return value.
    pub into: Option<FieldRef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IfStmt {
    /// The IF and every ELSEIF, in order.
    pub branches: Vec<(Expr, Vec<Stmt>)>,
    pub otherwise: Option<Vec<Stmt>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseStmt {
    pub operand: Option<Expr>,
    pub whens: Vec<(Expr, Vec<Stmt>)>,
    pub otherwise: Option<Vec<Stmt>>,
}

/// `UPDATE Database.t [AS a] SET col = v, … [WHERE …]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub table: FieldRef,
    pub alias: Option<Ident>,
    pub sets: Vec<(FieldRef, Expr)>,
    pub filter: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    Declare(Declare),
    DeclareHandler(Handler),
    Set {
        target: FieldRef,
        part: Option<FieldPart>,
        value: Expr,
    },
    Create(Create),
    Move {
        reference: FieldRef,
        target: MoveTarget,
    },
    Detach(FieldRef),
    Attach {
        source: FieldRef,
        target: FieldRef,
        relation: Relation,
    },
    /// `DELETE FIELD x` (`relation` None) or `DELETE FIRSTCHILD OF x …`.
    DeleteField {
        relation: Option<Relation>,
        target: FieldRef,
        clauses: FieldClauses,
    },
    If(IfStmt),
    Case(CaseStmt),
    While {
        label: Option<Ident>,
        cond: Expr,
        body: Vec<Stmt>,
    },
    Repeat {
        label: Option<Ident>,
        body: Vec<Stmt>,
        until: Expr,
    },
    Loop {
        label: Option<Ident>,
        body: Vec<Stmt>,
    },
    For {
        label: Option<Ident>,
        var: Ident,
        source: FieldRef,
        body: Vec<Stmt>,
    },
    Begin {
        label: Option<Ident>,
        atomic: bool,
        body: Vec<Stmt>,
    },
    Leave(Ident),
    Iterate(Ident),
    Return(Option<Expr>),
    Propagate(Propagate),
    Throw(EventClauses),
    Resignal,
    Call(Call),
    Eval(Expr),
    Log {
        kind: LogKind,
        exception: bool,
        clauses: EventClauses,
    },
    /// PASSTHRU as a statement; the expression is an [`ExprKind::Passthru`](super::ExprKind).
    Passthru(Expr),
    Insert {
        table: FieldRef,
        columns: Vec<Ident>,
        values: Vec<Expr>,
    },
    Update(Update),
    /// `COMMIT` or `ROLLBACK`, optionally naming the data source.
    EndWork {
        commit: bool,
        datasource: Option<Expr>,
    },
    DeleteFrom {
        table: FieldRef,
        alias: Option<Ident>,
        filter: Option<Expr>,
    },
}
