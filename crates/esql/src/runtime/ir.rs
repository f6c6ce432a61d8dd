//! The executable form of ESQL: names resolved to variable slots, tree roots and routine
//! indices; field names interned as bytes; constants folded. Statements carry their file
//! and line so that runtime errors can name them.

use sluice_esql_scalar::{DataType, Value};

use crate::syntax::ast::{
    Aggregate, BetweenMode, BinaryOp, HandlerKind, IsTest, LogKind, Niladic, PropagateControl,
    Quantifier, Relation, UnaryOp,
};

/// The fixed trees of an execution, by index.
pub mod trees {
    pub const IN_ROOT: u32 = 0;
    pub const IN_LOCAL_ENV: u32 = 1;
    pub const IN_EXCEPTION: u32 = 2;
    pub const OUT_ROOT: u32 = 3;
    pub const OUT_LOCAL_ENV: u32 = 4;
    pub const OUT_EXCEPTION: u32 = 5;
    pub const ENVIRONMENT: u32 = 6;
    /// The invocation's context tree (ACE 12), read-only; empty unless the flow captures it.
    pub const CONTEXT: u32 = 7;
    /// Trees of ROW variables and intermediate results start here.
    pub const FIRST_VAR: u32 = 8;
}

/// Where a variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarAddr {
    /// In the current routine's frame.
    Local(u32),
    /// A module- or schema-level variable, fresh for each message.
    Global(u32),
    /// A SHARED variable, kept across messages and instances.
    Shared(u32),
}

/// What a declared variable holds.
#[derive(Debug, Clone, PartialEq)]
pub enum VarKind {
    Scalar(Option<DataType>),
    Reference,
    Row,
}

/// The start of a field reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Head {
    /// The root element of a fixed tree.
    Root(u32),
    /// The last child of a tree's root (`InputBody`, `Body`).
    Body(u32),
    /// The first child of a tree's root with this name (`InputProperties`, `DestinationList`).
    Child(u32, &'static [u8]),
    /// A REFERENCE or ROW variable.
    Var(VarAddr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum NameMatch {
    Lit(Box<[u8]>),
    Any,
    Dyn(Ex),
}

#[derive(Debug, Clone, PartialEq)]
pub enum NsMatch {
    /// No namespace written: the empty namespace.
    Unspecified,
    Any,
    Lit(Box<[u8]>),
    Dyn(Ex),
}

#[derive(Debug, Clone, PartialEq)]
pub enum IndexIr {
    /// No index: the first match.
    First,
    /// `[n]`, 1-based.
    Nth(Ex),
    /// `[<]`.
    Last,
    /// `[<n]`, 1-based from the end.
    FromLast(Ex),
    /// `[]`: every match.
    All,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeMatch {
    Const(u32),
    Dyn(Ex),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub ty: Option<TypeMatch>,
    pub ns: NsMatch,
    pub name: NameMatch,
    pub index: IndexIr,
}

/// A compiled field reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    pub head: Head,
    pub steps: Vec<Step>,
}

/// The name given by `AS` in ROW and SELECT lists.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectItem {
    pub expr: Ex,
    /// The path of names the value is stored under; empty for none (the value itself).
    pub name: Vec<Box<[u8]>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SelectListIr {
    Star,
    Fields(Vec<SelectItem>),
    Item(Ex),
    /// Only aggregates: the result is one row (or one value when `scalar`).
    Aggregates {
        items: Vec<SelectItem>,
        scalar: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum FromSource {
    /// A list of fields of a message tree; the alias is a reference variable.
    Tree(Path),
    /// A database table.
    Table {
        schema: Option<String>,
        table: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct FromIr {
    pub source: FromSource,
    pub alias: VarAddr,
    /// The alias as written (for database column references).
    pub alias_name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectIr {
    pub list: SelectListIr,
    pub from: Vec<FromIr>,
    pub filter: Option<Ex>,
}

/// Functions the runtime implements because they look at trees, not values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeFn {
    FieldName,
    FieldNamespace,
    FieldType,
    FieldValue,
    Cardinality,
    Singular,
    SameField,
    LastMove,
    BitStream,
}

/// The global cache's functions (`CACHE_GET` …), after the product's `MbGlobalMap` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheFn {
    Get,
    Put,
    Update,
    Remove,
    Contains,
    Clear,
    Size,
}

impl CacheFn {
    /// The function of an upper-case name.
    pub fn of(name: &str) -> Option<CacheFn> {
        Some(match name {
            "CACHE_GET" => CacheFn::Get,
            "CACHE_PUT" => CacheFn::Put,
            "CACHE_UPDATE" => CacheFn::Update,
            "CACHE_REMOVE" => CacheFn::Remove,
            "CACHE_CONTAINS" => CacheFn::Contains,
            "CACHE_CLEAR" => CacheFn::Clear,
            "CACHE_SIZE" => CacheFn::Size,
            _ => return None,
        })
    }

    /// The fewest and most arguments it takes.
    pub fn arity(self) -> (usize, usize) {
        match self {
            CacheFn::Get | CacheFn::Remove | CacheFn::Contains => (2, 2),
            CacheFn::Put | CacheFn::Update => (3, 4),
            CacheFn::Clear | CacheFn::Size => (1, 1),
        }
    }
}

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Ex {
    Const(Value),
    Var(VarAddr),
    Path(Box<Path>),
    Unary(UnaryOp, Box<Ex>),
    Binary(BinaryOp, Box<Ex>, Box<Ex>),
    Between {
        expr: Box<Ex>,
        negated: bool,
        mode: BetweenMode,
        low: Box<Ex>,
        high: Box<Ex>,
    },
    In {
        expr: Box<Ex>,
        negated: bool,
        list: Vec<Ex>,
    },
    Like {
        expr: Box<Ex>,
        negated: bool,
        pattern: Box<Ex>,
        escape: Option<Box<Ex>>,
    },
    Is {
        expr: Box<Ex>,
        negated: bool,
        test: IsTest,
    },
    Case {
        operand: Option<Box<Ex>>,
        whens: Vec<(Ex, Ex)>,
        otherwise: Option<Box<Ex>>,
    },
    Cast {
        sources: Vec<Ex>,
        ty: DataType,
        ccsid: Option<Box<Ex>>,
        encoding: Option<Box<Ex>>,
        format: Option<Box<Ex>>,
        default: Option<Box<Ex>>,
    },
    Select(Box<SelectIr>),
    The(Box<Ex>),
    Row(Vec<SelectItem>),
    List(Vec<Ex>),
    Exists(Box<Ex>),
    Quantified {
        quantifier: Quantifier,
        source: Box<Path>,
        alias: VarAddr,
        predicate: Box<Ex>,
    },
    /// `(list)[n]`, from 1.
    Index(Box<Ex>, Box<Ex>),
    /// `(a - b) DAY TO SECOND`.
    IntervalOf {
        expr: Box<Ex>,
        qualifier: sluice_esql_scalar::IntervalQualifier,
    },
    Aggregate {
        func: Aggregate,
        arg: Option<Box<Ex>>,
    },
    Niladic(Niladic),
    /// A scalar built-in, by its upper-case name in the scalar layer's convention.
    Builtin(&'static str, Vec<Ex>),
    /// A built-in resolved to a direct call.
    Fast(super::fast::FastFn, Vec<Ex>),
    /// A scalar built-in named at run time (`name` as written, upper-cased).
    BuiltinNamed(Box<str>, Vec<Ex>),
    TreeFn(TreeFn, Vec<Ex>),
    /// A global cache function.
    Cache(CacheFn, Vec<Ex>),
    /// A user-defined function, by routine index.
    Call(usize, Vec<Ex>),
    AsBitstream {
        source: Box<Ex>,
        options: Box<BitstreamIr>,
    },
    Passthru {
        sql: Box<Ex>,
        values: Vec<Ex>,
    },
    /// A column of the database table being queried or changed.
    Column(String),
    /// A broker attribute whose value the node running the module gives.
    Broker(super::broker::BrokerAttr),
    /// `EVAL(text)`: the text compiles as an expression in the scope of EVAL site `.0`.
    Eval(u32, Box<Ex>),
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct BitstreamIr {
    pub options: Option<Ex>,
    pub encoding: Option<Ex>,
    pub ccsid: Option<Ex>,
    pub set: Option<Ex>,
    pub ty: Option<Ex>,
    pub format: Option<Ex>,
}

/// `TYPE`, `NAMESPACE`, `NAME`, `VALUE` and `IDENTITY` of CREATE, MOVE and DELETE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clauses {
    pub ty: Option<Ex>,
    pub namespace: Option<Ex>,
    pub name: Option<Ex>,
    pub value: Option<Ex>,
    pub identity: Option<Step>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CreateSourceIr {
    Values(Clauses),
    Repeat(Option<Ex>),
    From(Ex),
    Parse { source: Ex, options: BitstreamIr },
}

#[derive(Debug, Clone, PartialEq)]
pub enum MoveIr {
    To(Path),
    Parent,
    Relative {
        relation: Relation,
        clauses: Box<Clauses>,
        repeat_type: bool,
        repeat_name: bool,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetTarget {
    /// A scalar variable and its declared type (values are cast to it).
    Var(VarAddr, Option<DataType>),
    Path(Path),
}

#[derive(Debug, Clone, PartialEq)]
pub struct HandlerIr {
    pub kind: HandlerKind,
    /// `(pattern, like, escape)`.
    pub states: Vec<(String, bool, Option<char>)>,
    pub body: Box<St>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PropTarget {
    Terminal(Ex),
    Label(Ex),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropagateIr {
    pub target: Option<PropTarget>,
    pub environment: Option<Path>,
    pub message: Option<Path>,
    pub exception: Option<Path>,
    pub finalize: PropagateControl,
    pub delete: PropagateControl,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EventIr {
    pub severity: Option<Ex>,
    pub catalog: Option<Ex>,
    pub message: Option<Ex>,
    pub values: Vec<Ex>,
}

/// Loop and block labels, resolved to numbers.
pub type Label = u32;

#[derive(Debug, Clone, PartialEq)]
pub struct St {
    pub file: u32,
    pub line: u32,
    pub kind: Sk,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Sk {
    Declare {
        slots: Vec<VarAddr>,
        kind: VarKind,
        init: Option<Ex>,
    },
    Set {
        target: SetTarget,
        part: Option<crate::syntax::ast::FieldPart>,
        value: Ex,
        /// The last step of the target is `[]`.
        all: bool,
    },
    Create {
        relative: Option<Relation>,
        target: SetTarget,
        as_ref: Option<VarAddr>,
        domain: Option<Ex>,
        source: CreateSourceIr,
    },
    Move {
        var: VarAddr,
        target: MoveIr,
    },
    Detach(SetTarget),
    Attach {
        source: SetTarget,
        target: SetTarget,
        relation: Relation,
    },
    Delete {
        relation: Option<Relation>,
        target: SetTarget,
        clauses: Clauses,
    },
    If {
        branches: Vec<(Ex, Vec<St>)>,
        otherwise: Option<Vec<St>>,
    },
    Case {
        operand: Option<Ex>,
        whens: Vec<(Ex, Vec<St>)>,
        otherwise: Option<Vec<St>>,
    },
    While {
        label: Option<Label>,
        cond: Ex,
        body: Vec<St>,
    },
    Repeat {
        label: Option<Label>,
        body: Vec<St>,
        until: Ex,
    },
    Loop {
        label: Option<Label>,
        body: Vec<St>,
    },
    For {
        label: Option<Label>,
        var: VarAddr,
        source: Path,
        body: Vec<St>,
    },
    Begin {
        label: Option<Label>,
        /// The index of this block's mutex, for BEGIN ATOMIC.
        atomic: Option<usize>,
        handlers: Vec<HandlerIr>,
        body: Vec<St>,
    },
    Leave(Label),
    Iterate(Label),
    Return(Option<Ex>),
    Propagate(Box<PropagateIr>),
    Throw(Box<EventIr>),
    Resignal,
    /// `COMMIT` (`commit`) or `ROLLBACK` of the node's database work so far; `datasource` is
    /// the data source the statement names, checked against the node's.
    EndWork {
        commit: bool,
        datasource: Option<Ex>,
    },
    Call {
        routine: usize,
        args: Vec<Ex>,
        into: Option<SetTarget>,
    },
    /// `EVAL(text);`: the text compiles as statements in the scope of EVAL site `.0`.
    Eval(u32, Ex),
    Log {
        kind: LogKind,
        event: Box<EventIr>,
    },
    Expr(Ex),
    Insert {
        table: String,
        columns: Vec<String>,
        values: Vec<Ex>,
    },
    Update {
        table: String,
        alias: String,
        sets: Vec<(String, Ex)>,
        filter: Option<Ex>,
    },
    DeleteFrom {
        table: String,
        alias: String,
        filter: Option<Ex>,
    },
    /// A handler declaration already attached to its block.
    Nothing,
}

/// How a routine parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    In,
    Out,
    InOut,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamIr {
    pub mode: Mode,
    pub kind: VarKind,
    pub slot: u32,
}

/// A compiled routine.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutineIr {
    pub name: String,
    pub file: u32,
    pub params: Vec<ParamIr>,
    pub returns: Option<Option<DataType>>,
    pub frame_size: u32,
    pub body: Vec<St>,
    /// An external (Java, .NET, database) routine: calling it is an error, except for a
    /// database one, which runs on the node's datasource.
    pub external: Option<String>,
    /// `LANGUAGE DATABASE`.
    pub database: bool,
}
