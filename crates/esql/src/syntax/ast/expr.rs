//! Expressions, including the built-in functions that have their own syntax.

use super::{DatetimeField, FieldRef, Ident, IntervalQualifier, NameSpec, QualifiedName, TypeSpec};
use crate::syntax::span::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Unknown,
    Boolean(bool),
    /// Digits as written; the compiler decides the width.
    Integer(String),
    Decimal(String),
    Float(String),
    Character(String),
    /// `X'…'`: the hex digits.
    Blob(String),
    /// `B'…'`: the binary digits.
    Bit(String),
    Date(String),
    Time(String),
    GmtTime(String),
    Timestamp(String),
    GmtTimestamp(String),
    Interval {
        text: String,
        qualifier: IntervalQualifier,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Concat,
    Add,
    Sub,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BetweenMode {
    /// Plain BETWEEN or `BETWEEN ASYMMETRIC`: `low <= x <= high`.
    Asymmetric,
    /// `BETWEEN SYMMETRIC`: the bounds in either order.
    Symmetric,
}

/// What `IS [NOT]` tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsTest {
    Null,
    True,
    False,
    Unknown,
    /// `IS INF`, `IS +INF`, `IS -INF`, `IS NAN`, `IS NUM` for FLOAT values.
    Inf,
    PlusInf,
    MinusInf,
    NaN,
    Num,
}

/// Functions that take no argument list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Niladic {
    CurrentDate,
    CurrentTime,
    CurrentTimestamp,
    CurrentGmtDate,
    CurrentGmtTime,
    CurrentGmtTimestamp,
    LocalTimezone,
    SqlCode,
    SqlState,
    SqlNativeError,
    SqlErrorText,
    UuidAsChar,
    UuidAsBlob,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseExpr {
    /// The operand of a simple CASE; `None` for a searched CASE.
    pub operand: Option<Box<Expr>>,
    pub whens: Vec<(Expr, Expr)>,
    pub otherwise: Option<Box<Expr>>,
}

/// `CAST(a [, b…] AS type [CCSID c] [ENCODING e] [FORMAT f] [DEFAULT d])`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    pub sources: Vec<Expr>,
    pub ty: TypeSpec,
    pub ccsid: Option<Box<Expr>>,
    pub encoding: Option<Box<Expr>>,
    pub format: Option<Box<Expr>>,
    pub default: Option<Box<Expr>>,
}

/// The options of ASBITSTREAM and CREATE … PARSE, in any order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BitstreamOptions {
    pub options: Option<Box<Expr>>,
    pub encoding: Option<Box<Expr>>,
    pub ccsid: Option<Box<Expr>>,
    pub set: Option<Box<Expr>>,
    pub ty: Option<Box<Expr>>,
    pub format: Option<Box<Expr>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    Count,
    Sum,
    Max,
    Min,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SelectList {
    /// `SELECT *`.
    Star,
    /// `SELECT a AS x, b, …`: the result is a tree of fields.
    Fields(Vec<SelectItem>),
    /// `SELECT ITEM expr`: the result is a list of values.
    Item(Box<Expr>),
}

/// One entry of a select list, with its `AS` path.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectItem {
    pub expr: Expr,
    pub alias: Option<FieldRef>,
    pub span: Span,
}

/// One entry of the FROM clause: a field reference (message tree or `Database.table`).
#[derive(Debug, Clone, PartialEq)]
pub struct FromItem {
    pub source: FieldRef,
    pub alias: Option<Ident>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub list: SelectList,
    pub from: Vec<FromItem>,
    pub filter: Option<Box<Expr>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSpec {
    Leading,
    Trailing,
    Both,
}

/// The part EXTRACT takes from a date-time value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractField {
    Unit(DatetimeField),
    DayOfYear,
    DayOfWeek,
    MonthOfYear,
    QuarterOfYear,
    WeekOfMonth,
    WeekOfYear,
    Quarter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    All,
    Any,
    Some,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A field reference or a variable (a one-step reference).
    Field(FieldRef),
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Between {
        expr: Box<Expr>,
        negated: bool,
        mode: BetweenMode,
        low: Box<Expr>,
        high: Box<Expr>,
    },
    In {
        expr: Box<Expr>,
        negated: bool,
        list: Vec<Expr>,
    },
    Like {
        expr: Box<Expr>,
        negated: bool,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
    },
    Is {
        expr: Box<Expr>,
        negated: bool,
        test: IsTest,
    },
    Case(CaseExpr),
    Cast(Cast),
    Select(Box<Select>),
    /// `THE(expr)`: the first item of a list.
    The(Box<Expr>),
    /// `ROW(expr [AS name], …)`.
    Row(Vec<(Expr, Option<NameSpec>)>),
    /// `LIST{a, b, …}`.
    List(Vec<Expr>),
    /// `EXISTS(list)`.
    Exists(Box<Expr>),
    /// `FOR ALL|ANY|SOME list AS alias (predicate)`.
    Quantified {
        quantifier: Quantifier,
        source: FieldRef,
        alias: Ident,
        predicate: Box<Expr>,
    },
    /// `(expr)[n]`: the n-th item (from 1) of a list such as a SELECT's result.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `(expr) unit [TO unit]`: a date-time difference as an interval.
    IntervalOf {
        expr: Box<Expr>,
        qualifier: IntervalQualifier,
    },
    /// `COUNT(*)`, `SUM(x)` … inside a SELECT; `arg` is `None` for `COUNT(*)`.
    Aggregate {
        func: Aggregate,
        arg: Option<Box<Expr>>,
    },
    Niladic(Niladic),
    /// Any other function call, built-in or user-defined: `name(args)`.
    Call {
        name: QualifiedName,
        args: Vec<Expr>,
    },
    /// `SUBSTRING(x FROM a [FOR b])`.
    Substring {
        source: Box<Expr>,
        from: Box<Expr>,
        len: Option<Box<Expr>>,
    },
    /// `SUBSTRING(x BEFORE y)` / `SUBSTRING(x AFTER y)`.
    SubstringAround {
        source: Box<Expr>,
        after: bool,
        marker: Box<Expr>,
    },
    /// `POSITION(needle IN haystack [FROM n] [REPEAT m])`.
    Position {
        needle: Box<Expr>,
        haystack: Box<Expr>,
        from: Option<Box<Expr>>,
        repeat: Option<Box<Expr>>,
    },
    /// `TRIM([LEADING|TRAILING|BOTH] [chars] FROM x)` or `TRIM(x)`.
    Trim {
        spec: Option<TrimSpec>,
        chars: Option<Box<Expr>>,
        source: Box<Expr>,
    },
    /// `OVERLAY(x PLACING y FROM a [FOR b])`.
    Overlay {
        source: Box<Expr>,
        placing: Box<Expr>,
        from: Box<Expr>,
        len: Option<Box<Expr>>,
    },
    /// `EXTRACT(field FROM x)`.
    Extract {
        field: ExtractField,
        source: Box<Expr>,
    },
    /// `ROUND(x, n [MODE mode])`; the mode name as written (`ROUND_HALF_EVEN`).
    Round {
        value: Box<Expr>,
        places: Box<Expr>,
        mode: Option<Ident>,
    },
    /// `ASBITSTREAM(x [OPTIONS …] [ENCODING …] [CCSID …] [SET …] [TYPE …] [FORMAT …])`.
    AsBitstream {
        source: Box<Expr>,
        options: BitstreamOptions,
    },
    /// `PASSTHRU(sql [TO Database.source] [VALUES(…)])` or `PASSTHRU(sql, a, b)`.
    Passthru {
        sql: Box<Expr>,
        to: Option<FieldRef>,
        values: Vec<Expr>,
    },
}
