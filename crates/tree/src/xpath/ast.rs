//! The compiled form of an expression: names resolved, functions checked, predicates analysed.

/// An expression and the character position it starts at (for run-time errors).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub pos: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExprKind {
    Number(f64),
    Literal(String),
    Var(Variable),
    Path(Box<PathExpr>),
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Union(Box<Expr>, Box<Expr>),
    Call(Function, Vec<Expr>),
}

impl Expr {
    /// Whether the expression yields a node-set. In this subset that is known when compiling:
    /// no function returns a node-set.
    pub fn is_node_set(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Var(_) | ExprKind::Path(_) | ExprKind::Union(..)
        )
    }

    /// Whether streaming this node-set expression yields nodes in document order without
    /// duplicates: true for child, attribute and self steps from a single starting node.
    pub fn streams_in_order(&self) -> bool {
        match &self.kind {
            ExprKind::Var(_) => true,
            ExprKind::Path(p) => {
                let single_start = match &p.start {
                    PathStart::Context | PathStart::DocumentRoot => true,
                    PathStart::Primary(e) => {
                        matches!(e.kind, ExprKind::Var(_)) && p.predicates.is_empty()
                    }
                };
                single_start
                    && p.steps
                        .iter()
                        .all(|s| matches!(s.axis, Axis::Child | Axis::Attribute | Axis::Itself))
            }
            _ => false,
        }
    }

    /// The direct sub-expressions, for checks that walk the whole expression.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Number(_) | ExprKind::Literal(_) | ExprKind::Var(_) => Vec::new(),
            ExprKind::Path(p) => {
                let mut v: Vec<&Expr> = Vec::new();
                if let PathStart::Primary(e) = &p.start {
                    v.push(e);
                }
                v.extend(p.predicates.iter().map(|p| &p.expr));
                for s in &p.steps {
                    v.extend(s.predicates.iter().map(|p| &p.expr));
                }
                v
            }
            ExprKind::Or(a, b)
            | ExprKind::And(a, b)
            | ExprKind::Compare(_, a, b)
            | ExprKind::Arith(_, a, b)
            | ExprKind::Union(a, b) => vec![a, b],
            ExprKind::Neg(a) => vec![a],
            ExprKind::Call(_, args) => args.iter().collect(),
        }
    }
}

/// The variables the product defines for Route and Filter expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variable {
    Root,
    Body,
    LocalEnvironment,
    Environment,
    ExceptionList,
}

impl Variable {
    pub fn from_name(name: &str) -> Option<Variable> {
        Some(match name {
            "Root" => Variable::Root,
            "Body" => Variable::Body,
            "LocalEnvironment" => Variable::LocalEnvironment,
            "Environment" => Variable::Environment,
            "ExceptionList" => Variable::ExceptionList,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ne => CmpOp::Ne,
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
        }
    }

    pub fn is_equality(self) -> bool {
        matches!(self, CmpOp::Eq | CmpOp::Ne)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A path: a start, predicates on the start (for a filter expression such as `(a|b)[1]`), and
/// location steps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PathExpr {
    pub start: PathStart,
    pub predicates: Vec<Predicate>,
    pub steps: Vec<Step>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PathStart {
    /// A relative location path: starts at the context node.
    Context,
    /// `/`: the root element of the context node's tree.
    DocumentRoot,
    /// A filter expression (variable, parenthesised expression, …).
    Primary(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Step {
    pub axis: Axis,
    pub test: NodeTest,
    pub predicates: Vec<Predicate>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Axis {
    Child,
    Descendant,
    DescendantOrSelf,
    Itself,
    Parent,
    Ancestor,
    AncestorOrSelf,
    Attribute,
    FollowingSibling,
    PrecedingSibling,
}

impl Axis {
    pub fn from_name(name: &str) -> Option<Axis> {
        Some(match name {
            "child" => Axis::Child,
            "descendant" => Axis::Descendant,
            "descendant-or-self" => Axis::DescendantOrSelf,
            "self" => Axis::Itself,
            "parent" => Axis::Parent,
            "ancestor" => Axis::Ancestor,
            "ancestor-or-self" => Axis::AncestorOrSelf,
            "attribute" => Axis::Attribute,
            "following-sibling" => Axis::FollowingSibling,
            "preceding-sibling" => Axis::PrecedingSibling,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NodeTest {
    /// A name in a namespace (empty URI: no namespace).
    Name { ns: String, local: String },
    /// `*`
    Any,
    /// `prefix:*`
    AnyInNamespace(String),
    /// `text()`
    Text,
    /// `node()`
    Node,
    /// `comment()`
    Comment,
    /// `processing-instruction()` with an optional target.
    ProcessingInstruction(Option<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Predicate {
    pub expr: Expr,
    /// Whether the predicate calls `last()`, so the step's nodes must be counted first.
    pub uses_last: bool,
    /// No node past this proximity position can satisfy the predicate, so the step may stop
    /// there (`[1]`, `[position() < 3]`).
    pub max_position: Option<usize>,
}

/// The core function library (XPath 1.0 §4), resolved when compiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Function {
    Last,
    Position,
    Count,
    LocalName,
    NamespaceUri,
    Name,
    String,
    Concat,
    StartsWith,
    Contains,
    SubstringBefore,
    SubstringAfter,
    Substring,
    StringLength,
    NormalizeSpace,
    Translate,
    Boolean,
    Not,
    True,
    False,
    Number,
    Sum,
    Floor,
    Ceiling,
    Round,
}

impl Function {
    /// The function for a name, its minimum and maximum argument counts (None: no limit), and
    /// which arguments must be node-sets.
    pub fn lookup(name: &str) -> Option<(Function, usize, Option<usize>, bool)> {
        use Function::*;
        // (function, min, max, first argument must be a node-set)
        Some(match name {
            "last" => (Last, 0, Some(0), false),
            "position" => (Position, 0, Some(0), false),
            "count" => (Count, 1, Some(1), true),
            "local-name" => (LocalName, 0, Some(1), true),
            "namespace-uri" => (NamespaceUri, 0, Some(1), true),
            "name" => (Name, 0, Some(1), true),
            "string" => (String, 0, Some(1), false),
            "concat" => (Concat, 2, None, false),
            "starts-with" => (StartsWith, 2, Some(2), false),
            "contains" => (Contains, 2, Some(2), false),
            "substring-before" => (SubstringBefore, 2, Some(2), false),
            "substring-after" => (SubstringAfter, 2, Some(2), false),
            "substring" => (Substring, 2, Some(3), false),
            "string-length" => (StringLength, 0, Some(1), false),
            "normalize-space" => (NormalizeSpace, 0, Some(1), false),
            "translate" => (Translate, 3, Some(3), false),
            "boolean" => (Boolean, 1, Some(1), false),
            "not" => (Not, 1, Some(1), false),
            "true" => (True, 0, Some(0), false),
            "false" => (False, 0, Some(0), false),
            "number" => (Number, 0, Some(1), false),
            "sum" => (Sum, 1, Some(1), true),
            "floor" => (Floor, 1, Some(1), false),
            "ceiling" => (Ceiling, 1, Some(1), false),
            "round" => (Round, 1, Some(1), false),
            _ => return None,
        })
    }
}
