//! Recursive-descent parser from tokens to the compiled expression (XPath 1.0 §3 grammar).
//!
//! Everything that can be checked without a message is checked here, so that a Route rule fails
//! when the flow is deployed rather than on the first message: function names and argument
//! counts, variable names, namespace prefixes, and node-set operands of `|`, paths, `count()`
//! and friends.

use crate::xpath::ast::{
    ArithOp, Axis, CmpOp, Expr, ExprKind, Function, NodeTest, PathExpr, PathStart, Predicate, Step,
    Variable,
};
use crate::xpath::error::XPathError;
use crate::xpath::lexer::{Tok, Token, tokenize};

/// How deeply parentheses, predicates and arguments may nest; bounds the parser's recursion.
const MAX_NESTING: usize = 32;
/// How deep the compiled expression may be; bounds the evaluator's recursion.
const MAX_DEPTH: usize = 100;

pub(crate) fn parse(src: &str, namespaces: &[(String, String)]) -> Result<Expr, XPathError> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        tokens,
        i: 0,
        namespaces,
        nesting: 0,
        end: src.chars().count(),
    };
    let e = p.expr()?;
    if let Some(t) = p.tokens.get(p.i) {
        return Err(XPathError::syntax(
            t.pos,
            format!("unexpected {} after the expression", describe(&t.tok)),
        ));
    }
    check_depth(&e)?;
    Ok(e)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    i: usize,
    namespaces: &'a [(String, String)],
    nesting: usize,
    /// The position reported for "unexpected end".
    end: usize,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::LBracket => "`[`".into(),
        Tok::RBracket => "`]`".into(),
        Tok::Dot => "`.`".into(),
        Tok::DotDot => "`..`".into(),
        Tok::At => "`@`".into(),
        Tok::Comma => "`,`".into(),
        Tok::ColonColon => "`::`".into(),
        Tok::Slash => "`/`".into(),
        Tok::DoubleSlash => "`//`".into(),
        Tok::Pipe => "`|`".into(),
        Tok::Plus => "`+`".into(),
        Tok::Minus => "`-`".into(),
        Tok::Eq => "`=`".into(),
        Tok::Ne => "`!=`".into(),
        Tok::Lt => "`<`".into(),
        Tok::Le => "`<=`".into(),
        Tok::Gt => "`>`".into(),
        Tok::Ge => "`>=`".into(),
        Tok::Multiply => "`*`".into(),
        Tok::And => "`and`".into(),
        Tok::Or => "`or`".into(),
        Tok::Mod => "`mod`".into(),
        Tok::Div => "`div`".into(),
        Tok::NameTest { prefix, local } => {
            let l = local.as_deref().unwrap_or("*");
            match prefix {
                Some(p) => format!("name `{p}:{l}`"),
                None => format!("name `{l}`"),
            }
        }
        Tok::NodeType(n) => format!("`{n}()`"),
        Tok::Function(n) => format!("function `{n}`"),
        Tok::Axis(n) => format!("axis `{n}`"),
        Tok::Literal(s) => format!("string '{s}'"),
        Tok::Number(n) => format!("number {n}"),
        Tok::Variable(v) => format!("variable `${v}`"),
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.i).map(|t| &t.tok)
    }

    fn pos(&self) -> usize {
        self.tokens.get(self.i).map_or(self.end, |t| t.pos)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<(), XPathError> {
        if self.eat(t) {
            return Ok(());
        }
        Err(self.unexpected(what))
    }

    fn unexpected(&self, what: &str) -> XPathError {
        match self.peek() {
            Some(t) => XPathError::syntax(
                self.pos(),
                format!("expected {what}, found {}", describe(t)),
            ),
            None => XPathError::syntax(self.end, format!("expected {what}, found the end")),
        }
    }

    fn expr(&mut self) -> Result<Expr, XPathError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(XPathError::syntax(
                self.pos(),
                format!("the expression nests more than {MAX_NESTING} levels deep"),
            ));
        }
        let e = self.or_expr();
        self.nesting -= 1;
        e
    }

    fn binary(
        left: Expr,
        right: Expr,
        make: impl FnOnce(Box<Expr>, Box<Expr>) -> ExprKind,
    ) -> Expr {
        let pos = left.pos;
        Expr {
            kind: make(Box::new(left), Box::new(right)),
            pos,
        }
    }

    fn or_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.and_expr()?;
        while self.eat(&Tok::Or) {
            let right = self.and_expr()?;
            left = Self::binary(left, right, ExprKind::Or);
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.equality_expr()?;
        while self.eat(&Tok::And) {
            let right = self.equality_expr()?;
            left = Self::binary(left, right, ExprKind::And);
        }
        Ok(left)
    }

    fn equality_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.relational_expr()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Eq) => CmpOp::Eq,
                Some(Tok::Ne) => CmpOp::Ne,
                _ => return Ok(left),
            };
            self.i += 1;
            let right = self.relational_expr()?;
            left = Self::binary(left, right, |a, b| ExprKind::Compare(op, a, b));
        }
    }

    fn relational_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.additive_expr()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Lt) => CmpOp::Lt,
                Some(Tok::Le) => CmpOp::Le,
                Some(Tok::Gt) => CmpOp::Gt,
                Some(Tok::Ge) => CmpOp::Ge,
                _ => return Ok(left),
            };
            self.i += 1;
            let right = self.additive_expr()?;
            left = Self::binary(left, right, |a, b| ExprKind::Compare(op, a, b));
        }
    }

    fn additive_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.multiplicative_expr()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Plus) => ArithOp::Add,
                Some(Tok::Minus) => ArithOp::Sub,
                _ => return Ok(left),
            };
            self.i += 1;
            let right = self.multiplicative_expr()?;
            left = Self::binary(left, right, |a, b| ExprKind::Arith(op, a, b));
        }
    }

    fn multiplicative_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.unary_expr()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Multiply) => ArithOp::Mul,
                Some(Tok::Div) => ArithOp::Div,
                Some(Tok::Mod) => ArithOp::Mod,
                _ => return Ok(left),
            };
            self.i += 1;
            let right = self.unary_expr()?;
            left = Self::binary(left, right, |a, b| ExprKind::Arith(op, a, b));
        }
    }

    fn unary_expr(&mut self) -> Result<Expr, XPathError> {
        let mut minus = Vec::new();
        while self.peek() == Some(&Tok::Minus) {
            minus.push(self.pos());
            self.i += 1;
        }
        let mut e = self.union_expr()?;
        while let Some(pos) = minus.pop() {
            e = Expr {
                kind: ExprKind::Neg(Box::new(e)),
                pos,
            };
        }
        Ok(e)
    }

    fn union_expr(&mut self) -> Result<Expr, XPathError> {
        let mut left = self.path_expr()?;
        while self.eat(&Tok::Pipe) {
            let right = self.path_expr()?;
            for side in [&left, &right] {
                if !side.is_node_set() {
                    return Err(XPathError::syntax(
                        side.pos,
                        "the operands of `|` must be node-sets",
                    ));
                }
            }
            left = Expr {
                pos: left.pos,
                kind: ExprKind::Union(Box::new(left), Box::new(right)),
            };
        }
        Ok(left)
    }

    fn path_expr(&mut self) -> Result<Expr, XPathError> {
        let pos = self.pos();
        match self.peek() {
            Some(
                Tok::Variable(_)
                | Tok::LParen
                | Tok::Literal(_)
                | Tok::Number(_)
                | Tok::Function(_),
            ) => {
                let primary = self.primary_expr()?;
                let predicates = self.predicates()?;
                let mut steps = Vec::new();
                if matches!(self.peek(), Some(Tok::Slash | Tok::DoubleSlash)) {
                    self.more_steps(&mut steps)?;
                }
                if predicates.is_empty() && steps.is_empty() {
                    return Ok(primary);
                }
                if !primary.is_node_set() {
                    return Err(XPathError::syntax(
                        primary.pos,
                        "predicates and `/` need a node-set on their left",
                    ));
                }
                Ok(path(pos, PathStart::Primary(primary), predicates, steps))
            }
            Some(Tok::Slash) => {
                self.i += 1;
                let mut steps = Vec::new();
                if self.step_starts() {
                    self.relative_path(&mut steps)?;
                }
                Ok(path(pos, PathStart::DocumentRoot, Vec::new(), steps))
            }
            Some(Tok::DoubleSlash) => {
                self.i += 1;
                let mut steps = vec![descendant_or_self()];
                self.relative_path(&mut steps)?;
                Ok(path(pos, PathStart::DocumentRoot, Vec::new(), steps))
            }
            _ if self.step_starts() => {
                let mut steps = Vec::new();
                self.relative_path(&mut steps)?;
                Ok(path(pos, PathStart::Context, Vec::new(), steps))
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn step_starts(&self) -> bool {
        matches!(
            self.peek(),
            Some(
                Tok::NameTest { .. }
                    | Tok::NodeType(_)
                    | Tok::Axis(_)
                    | Tok::At
                    | Tok::Dot
                    | Tok::DotDot
            )
        )
    }

    fn relative_path(&mut self, steps: &mut Vec<Step>) -> Result<(), XPathError> {
        steps.push(self.step()?);
        self.more_steps(steps)
    }

    /// `('/' Step | '//' Step)*`
    fn more_steps(&mut self, steps: &mut Vec<Step>) -> Result<(), XPathError> {
        loop {
            if self.eat(&Tok::Slash) {
                steps.push(self.step()?);
            } else if self.eat(&Tok::DoubleSlash) {
                steps.push(descendant_or_self());
                steps.push(self.step()?);
            } else {
                return Ok(());
            }
        }
    }

    fn step(&mut self) -> Result<Step, XPathError> {
        if self.eat(&Tok::Dot) {
            return Ok(Step {
                axis: Axis::Itself,
                test: NodeTest::Node,
                predicates: Vec::new(),
            });
        }
        if self.eat(&Tok::DotDot) {
            return Ok(Step {
                axis: Axis::Parent,
                test: NodeTest::Node,
                predicates: Vec::new(),
            });
        }
        let axis = if self.eat(&Tok::At) {
            Axis::Attribute
        } else if let Some(Tok::Axis(name)) = self.peek() {
            let pos = self.pos();
            let axis = Axis::from_name(name).ok_or_else(|| {
                XPathError::syntax(pos, format!("axis `{name}` is not supported"))
            })?;
            self.i += 1;
            self.expect(&Tok::ColonColon, "`::`")?;
            axis
        } else {
            Axis::Child
        };
        let test = self.node_test()?;
        let predicates = self.predicates()?;
        Ok(Step {
            axis,
            test,
            predicates,
        })
    }

    fn node_test(&mut self) -> Result<NodeTest, XPathError> {
        let pos = self.pos();
        match self.peek().cloned() {
            Some(Tok::NameTest { prefix, local }) => {
                self.i += 1;
                let ns = match prefix {
                    None => String::new(),
                    Some(p) => self.namespace_of(&p, pos)?,
                };
                Ok(match local {
                    Some(local) => NodeTest::Name { ns, local },
                    None if ns.is_empty() => NodeTest::Any,
                    None => NodeTest::AnyInNamespace(ns),
                })
            }
            Some(Tok::NodeType(kind)) => {
                self.i += 1;
                self.expect(&Tok::LParen, "`(`")?;
                let test = match kind.as_str() {
                    "text" => NodeTest::Text,
                    "node" => NodeTest::Node,
                    "comment" => NodeTest::Comment,
                    _ => match self.peek().cloned() {
                        Some(Tok::Literal(target)) => {
                            self.i += 1;
                            NodeTest::ProcessingInstruction(Some(target))
                        }
                        _ => NodeTest::ProcessingInstruction(None),
                    },
                };
                self.expect(&Tok::RParen, "`)`")?;
                Ok(test)
            }
            _ => Err(self.unexpected("a name or node test")),
        }
    }

    fn namespace_of(&self, prefix: &str, pos: usize) -> Result<String, XPathError> {
        self.namespaces
            .iter()
            .find(|(p, _)| p == prefix)
            .map(|(_, uri)| uri.clone())
            .ok_or_else(|| {
                XPathError::syntax(pos, format!("namespace prefix `{prefix}` is not declared"))
            })
    }

    fn predicates(&mut self) -> Result<Vec<Predicate>, XPathError> {
        let mut out = Vec::new();
        while self.eat(&Tok::LBracket) {
            let expr = self.expr()?;
            self.expect(&Tok::RBracket, "`]`")?;
            out.push(Predicate {
                uses_last: calls_last(&expr),
                max_position: max_position(&expr),
                expr,
            });
        }
        Ok(out)
    }

    fn primary_expr(&mut self) -> Result<Expr, XPathError> {
        let pos = self.pos();
        let tok = self.peek().cloned();
        let kind = match tok {
            Some(Tok::Variable(name)) => {
                self.i += 1;
                let v = Variable::from_name(&name).ok_or_else(|| {
                    XPathError::syntax(
                        pos,
                        format!(
                            "unknown variable `${name}`; the variables are $Root, $Body, \
                             $LocalEnvironment, $Environment and $ExceptionList"
                        ),
                    )
                })?;
                ExprKind::Var(v)
            }
            Some(Tok::LParen) => {
                self.i += 1;
                let e = self.expr()?;
                self.expect(&Tok::RParen, "`)`")?;
                return Ok(e);
            }
            Some(Tok::Literal(s)) => {
                self.i += 1;
                ExprKind::Literal(s)
            }
            Some(Tok::Number(n)) => {
                self.i += 1;
                ExprKind::Number(n)
            }
            Some(Tok::Function(name)) => {
                self.i += 1;
                return self.call(&name, pos);
            }
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr { kind, pos })
    }

    fn call(&mut self, name: &str, pos: usize) -> Result<Expr, XPathError> {
        let (f, min, max, node_set_arg) = Function::lookup(name)
            .ok_or_else(|| XPathError::syntax(pos, format!("unknown function `{name}()`")))?;
        self.expect(&Tok::LParen, "`(`")?;
        let mut args = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                args.push(self.expr()?);
                if self.eat(&Tok::Comma) {
                    continue;
                }
                self.expect(&Tok::RParen, "`,` or `)`")?;
                break;
            }
        }
        if args.len() < min || max.is_some_and(|m| args.len() > m) {
            let expected = match max {
                Some(m) if m == min => format!("{min}"),
                Some(m) => format!("{min} to {m}"),
                None => format!("at least {min}"),
            };
            return Err(XPathError::syntax(
                pos,
                format!(
                    "{name}() takes {expected} argument(s), found {}",
                    args.len()
                ),
            ));
        }
        if node_set_arg && let Some(a) = args.first().filter(|a| !a.is_node_set()) {
            return Err(XPathError::syntax(
                a.pos,
                format!("the argument of {name}() must be a node-set"),
            ));
        }
        Ok(Expr {
            kind: ExprKind::Call(f, args),
            pos,
        })
    }
}

fn path(pos: usize, start: PathStart, predicates: Vec<Predicate>, steps: Vec<Step>) -> Expr {
    Expr {
        kind: ExprKind::Path(Box::new(PathExpr {
            start,
            predicates,
            steps,
        })),
        pos,
    }
}

/// The step `//` stands for.
fn descendant_or_self() -> Step {
    Step {
        axis: Axis::DescendantOrSelf,
        test: NodeTest::Node,
        predicates: Vec::new(),
    }
}

/// Whether `last()` is called anywhere in `e` (conservative: also inside inner predicates).
fn calls_last(e: &Expr) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if matches!(e.kind, ExprKind::Call(Function::Last, _)) {
            return true;
        }
        stack.extend(e.children());
    }
    false
}

/// The highest proximity position that can satisfy predicate `e`, when that is evident.
fn max_position(e: &Expr) -> Option<usize> {
    let is_position = |e: &Expr| matches!(e.kind, ExprKind::Call(Function::Position, _));
    match &e.kind {
        ExprKind::Number(n) => Some(if n.fract() == 0.0 { at_most(*n) } else { 0 }),
        ExprKind::Compare(op, a, b) => {
            let (op, n) = match (&a.kind, &b.kind) {
                (_, ExprKind::Number(n)) if is_position(a) => (*op, *n),
                (ExprKind::Number(n), _) if is_position(b) => (op.swapped(), *n),
                _ => return None,
            };
            if n.is_nan() {
                // Every comparison with NaN except `!=` is false.
                return (op != CmpOp::Ne).then_some(0);
            }
            match op {
                CmpOp::Lt if n.is_finite() => Some(at_most(n.ceil() - 1.0)),
                CmpOp::Le if n.is_finite() => Some(at_most(n.floor())),
                CmpOp::Eq if n.fract() == 0.0 => Some(at_most(n)),
                CmpOp::Eq => Some(0),
                _ => None,
            }
        }
        ExprKind::And(a, b) => match (max_position(a), max_position(b)) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        _ => None,
    }
}

/// Positions start at 1: a bound below 1 admits nothing.
fn at_most(n: f64) -> usize {
    if n < 1.0 || n.is_nan() {
        0
    } else {
        // Saturates for huge values, which only means "no early stop" in practice.
        n as usize
    }
}

/// Reject expressions deep enough to exhaust the evaluator's stack.
fn check_depth(e: &Expr) -> Result<(), XPathError> {
    let mut stack = vec![(e, 1usize)];
    while let Some((e, depth)) = stack.pop() {
        let depth = match &e.kind {
            ExprKind::Path(p) => depth + p.steps.len(),
            _ => depth,
        };
        if depth > MAX_DEPTH {
            return Err(XPathError::syntax(
                e.pos,
                format!("the expression is more than {MAX_DEPTH} levels deep"),
            ));
        }
        stack.extend(e.children().into_iter().map(|c| (c, depth + 1)));
    }
    Ok(())
}
