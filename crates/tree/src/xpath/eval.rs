//! Evaluating compiled expressions: values, conversions, comparisons and node-set streaming.
//!
//! Node-set expressions are evaluated by *streaming*: nodes are handed to a sink one at a time
//! as navigation finds them, and the sink may stop the walk. Existential questions (a
//! comparison with a node-set, `boolean()`, a predicate) stop at the first node that answers
//! them, so they parse no more of the message than that node. Whole node-sets are collected
//! from the same stream and put in document order only when the path may yield them out of
//! order.

use crate::xpath::ast::{ArithOp, CmpOp, Expr, ExprKind, Variable};
use crate::xpath::context::XPathContext;
use crate::xpath::error::XPathError;
use crate::xpath::node::{TreeSlot, XNode};
use crate::xpath::value::{XValue, boolean_to_string, number_to_string, string_to_number};

/// The context of evaluating a sub-expression: context node, position and size. The size is
/// unknown while a step streams; predicates that call `last()` are never streamed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Focus {
    pub node: XNode,
    pub position: usize,
    pub size: Option<usize>,
}

/// Whether a node stream should go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Go,
    Stop,
}

/// A receiver of streamed nodes.
pub(crate) type Sink<'s, 'e, 't> =
    dyn FnMut(&mut Evaluator<'e, 't>, XNode) -> Result<Flow, XPathError> + 's;

pub(crate) struct Evaluator<'e, 't> {
    pub cx: &'e mut XPathContext<'t>,
    /// Prefix to URI, as given when compiling (for `name()`).
    pub namespaces: &'e [(String, String)],
}

impl<'e, 't> Evaluator<'e, 't> {
    pub fn new(cx: &'e mut XPathContext<'t>, namespaces: &'e [(String, String)]) -> Self {
        Evaluator { cx, namespaces }
    }

    /// The outermost focus: Root, position 1 of 1.
    pub fn initial_focus(&self) -> Focus {
        let node = self.cx.root_node(TreeSlot::Root).unwrap_or(XNode::new(
            TreeSlot::Root,
            crate::xpath::tree_api::NodeId(0),
            crate::xpath::node::NodeKind::Element,
        ));
        Focus {
            node,
            position: 1,
            size: Some(1),
        }
    }

    pub fn eval(&mut self, e: &Expr, f: &Focus) -> Result<XValue, XPathError> {
        Ok(match &e.kind {
            ExprKind::Number(n) => XValue::Number(*n),
            ExprKind::Literal(s) => XValue::String(s.clone()),
            ExprKind::Var(_) | ExprKind::Path(_) | ExprKind::Union(..) => {
                XValue::NodeSet(self.node_set(e, f)?)
            }
            ExprKind::Or(a, b) => XValue::Boolean(self.eval_bool(a, f)? || self.eval_bool(b, f)?),
            ExprKind::And(a, b) => XValue::Boolean(self.eval_bool(a, f)? && self.eval_bool(b, f)?),
            ExprKind::Compare(op, a, b) => XValue::Boolean(self.compare(*op, a, b, f)?),
            ExprKind::Arith(op, a, b) => {
                let x = self.eval_number(a, f)?;
                let y = self.eval_number(b, f)?;
                XValue::Number(match op {
                    ArithOp::Add => x + y,
                    ArithOp::Sub => x - y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div => x / y,
                    // Rust's `%` truncates like XPath's `mod` (the sign follows the dividend).
                    ArithOp::Mod => x % y,
                })
            }
            ExprKind::Neg(a) => XValue::Number(-self.eval_number(a, f)?),
            ExprKind::Call(func, args) => self.call(*func, args, f)?,
        })
    }

    pub fn eval_bool(&mut self, e: &Expr, f: &Focus) -> Result<bool, XPathError> {
        if e.is_node_set() {
            return self.exists(e, f);
        }
        let v = self.eval(e, f)?;
        self.as_bool(v)
    }

    pub fn eval_string(&mut self, e: &Expr, f: &Focus) -> Result<String, XPathError> {
        if e.is_node_set() {
            return match self.first_node(e, f)? {
                Some(n) => self.cx.string_value(n),
                None => Ok(String::new()),
            };
        }
        let v = self.eval(e, f)?;
        self.as_string(v)
    }

    pub fn eval_number(&mut self, e: &Expr, f: &Focus) -> Result<f64, XPathError> {
        if e.is_node_set() {
            return match self.first_node(e, f)? {
                Some(n) => self.cx.number_value(n),
                None => Ok(f64::NAN),
            };
        }
        let v = self.eval(e, f)?;
        self.as_number(v)
    }

    pub fn as_bool(&mut self, v: XValue) -> Result<bool, XPathError> {
        Ok(match v {
            XValue::NodeSet(ns) => !ns.is_empty(),
            XValue::Boolean(b) => b,
            XValue::Number(n) => n != 0.0 && !n.is_nan(),
            XValue::String(s) => !s.is_empty(),
        })
    }

    pub fn as_string(&mut self, v: XValue) -> Result<String, XPathError> {
        Ok(match v {
            XValue::NodeSet(ns) => match ns.first() {
                Some(&n) => self.cx.string_value(n)?,
                None => String::new(),
            },
            XValue::Boolean(b) => boolean_to_string(b).to_owned(),
            XValue::Number(n) => number_to_string(n),
            XValue::String(s) => s,
        })
    }

    pub fn as_number(&mut self, v: XValue) -> Result<f64, XPathError> {
        Ok(match v {
            XValue::NodeSet(ns) => match ns.first() {
                Some(&n) => self.cx.number_value(n)?,
                None => f64::NAN,
            },
            XValue::Boolean(b) => f64::from(u8::from(b)),
            XValue::Number(n) => n,
            XValue::String(s) => string_to_number(&s),
        })
    }

    // ----- node-sets ----------------------------------------------------------------------

    /// The node a variable names, if its tree has one.
    fn var_node(&mut self, v: Variable) -> Result<Option<XNode>, XPathError> {
        Ok(match v {
            Variable::Root => self.cx.root_node(TreeSlot::Root),
            Variable::Body => self.cx.body_node()?,
            Variable::LocalEnvironment => self.cx.root_node(TreeSlot::LocalEnvironment),
            Variable::Environment => self.cx.root_node(TreeSlot::Environment),
            Variable::ExceptionList => self.cx.root_node(TreeSlot::ExceptionList),
        })
    }

    /// Hand the nodes of a node-set expression to `sink` as they are found (not necessarily in
    /// document order, possibly repeated when `streams_in_order` is false).
    pub fn stream(
        &mut self,
        e: &Expr,
        f: &Focus,
        sink: &mut Sink<'_, 'e, 't>,
    ) -> Result<Flow, XPathError> {
        match &e.kind {
            ExprKind::Var(v) => match self.var_node(*v)? {
                Some(n) => sink(self, n),
                None => Ok(Flow::Go),
            },
            ExprKind::Path(p) => self.stream_path(p, f, sink),
            ExprKind::Union(a, b) => {
                if self.stream(a, f, sink)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                self.stream(b, f, sink)
            }
            _ => Err(XPathError::Type {
                position: e.pos,
                message: "expected a node-set".to_owned(),
            }),
        }
    }

    /// The whole node-set, in document order without duplicates.
    pub fn node_set(&mut self, e: &Expr, f: &Focus) -> Result<Vec<XNode>, XPathError> {
        let mut out = Vec::new();
        self.stream(e, f, &mut |_, n| {
            out.push(n);
            Ok(Flow::Go)
        })?;
        if e.streams_in_order() {
            Ok(out)
        } else {
            self.cx.sort_dedup(out)
        }
    }

    /// Whether the node-set is non-empty (stops at the first node).
    pub fn exists(&mut self, e: &Expr, f: &Focus) -> Result<bool, XPathError> {
        let mut found = false;
        self.stream(e, f, &mut |_, _| {
            found = true;
            Ok(Flow::Stop)
        })?;
        Ok(found)
    }

    /// The first node in document order (stops there when the stream is in order).
    pub fn first_node(&mut self, e: &Expr, f: &Focus) -> Result<Option<XNode>, XPathError> {
        if e.streams_in_order() {
            let mut first = None;
            self.stream(e, f, &mut |_, n| {
                first = Some(n);
                Ok(Flow::Stop)
            })?;
            return Ok(first);
        }
        Ok(self.node_set(e, f)?.first().copied())
    }

    /// The number of distinct nodes.
    pub fn count(&mut self, e: &Expr, f: &Focus) -> Result<usize, XPathError> {
        if e.streams_in_order() {
            let mut n = 0usize;
            self.stream(e, f, &mut |_, _| {
                n += 1;
                Ok(Flow::Go)
            })?;
            return Ok(n);
        }
        Ok(self.node_set(e, f)?.len())
    }

    // ----- comparisons (XPath 1.0 §3.4) -----------------------------------------------------

    fn compare(&mut self, op: CmpOp, a: &Expr, b: &Expr, f: &Focus) -> Result<bool, XPathError> {
        match (a.is_node_set(), b.is_node_set()) {
            (true, true) => self.compare_sets(op, a, b, f),
            (true, false) => {
                let v = self.eval(b, f)?;
                self.compare_set_value(op, a, v, f)
            }
            (false, true) => {
                let v = self.eval(a, f)?;
                self.compare_set_value(op.swapped(), b, v, f)
            }
            (false, false) => {
                let x = self.eval(a, f)?;
                let y = self.eval(b, f)?;
                self.compare_values(op, x, y)
            }
        }
    }

    /// Some node of `a` and some node of `b` whose string values compare true.
    fn compare_sets(
        &mut self,
        op: CmpOp,
        a: &Expr,
        b: &Expr,
        f: &Focus,
    ) -> Result<bool, XPathError> {
        let mut right: Vec<String> = Vec::new();
        self.stream(b, f, &mut |ev, n| {
            right.push(ev.cx.string_value(n)?);
            Ok(Flow::Go)
        })?;
        if right.is_empty() {
            return Ok(false);
        }
        let right_numbers: Vec<f64> = if op.is_equality() {
            Vec::new()
        } else {
            right.iter().map(|s| string_to_number(s)).collect()
        };
        let mut found = false;
        self.stream(a, f, &mut |ev, n| {
            let s = ev.cx.string_value(n)?;
            found = if op.is_equality() {
                right.iter().any(|r| compare_strings(op, &s, r))
            } else {
                let x = string_to_number(&s);
                right_numbers.iter().any(|&y| compare_numbers(op, x, y))
            };
            Ok(if found { Flow::Stop } else { Flow::Go })
        })?;
        Ok(found)
    }

    /// Some node of `set` whose value compares true with `v` (`set op v`).
    fn compare_set_value(
        &mut self,
        op: CmpOp,
        set: &Expr,
        v: XValue,
        f: &Focus,
    ) -> Result<bool, XPathError> {
        let mut found = false;
        match v {
            XValue::Boolean(b) => {
                let x = self.exists(set, f)?;
                return self.compare_values(op, XValue::Boolean(x), XValue::Boolean(b));
            }
            XValue::NodeSet(_) => {
                return Err(XPathError::Internal(
                    "a node-set reached a scalar comparison".to_owned(),
                ));
            }
            XValue::String(s) if op.is_equality() => {
                self.stream(set, f, &mut |ev, n| {
                    found = compare_strings(op, &ev.cx.string_value(n)?, &s);
                    Ok(if found { Flow::Stop } else { Flow::Go })
                })?;
            }
            XValue::String(_) | XValue::Number(_) => {
                let y = self.as_number(v)?;
                self.stream(set, f, &mut |ev, n| {
                    found = compare_numbers(op, ev.cx.number_value(n)?, y);
                    Ok(if found { Flow::Stop } else { Flow::Go })
                })?;
            }
        }
        Ok(found)
    }

    fn compare_values(&mut self, op: CmpOp, x: XValue, y: XValue) -> Result<bool, XPathError> {
        if !op.is_equality() {
            let (a, b) = (self.as_number(x)?, self.as_number(y)?);
            return Ok(compare_numbers(op, a, b));
        }
        let equal = match (&x, &y) {
            (XValue::Boolean(_), _) | (_, XValue::Boolean(_)) => {
                self.as_bool(x)? == self.as_bool(y)?
            }
            (XValue::Number(_), _) | (_, XValue::Number(_)) => {
                self.as_number(x)? == self.as_number(y)?
            }
            _ => self.as_string(x)? == self.as_string(y)?,
        };
        Ok(if op == CmpOp::Eq { equal } else { !equal })
    }
}

fn compare_strings(op: CmpOp, a: &str, b: &str) -> bool {
    if op == CmpOp::Eq { a == b } else { a != b }
}

fn compare_numbers(op: CmpOp, a: f64, b: f64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}
