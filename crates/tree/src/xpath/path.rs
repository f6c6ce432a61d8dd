//! Walking location paths step by step over the tree, streaming.
//!
//! Each step iterates its axis lazily (`first_child`/`next_sibling`, parents, pre-order for
//! descendants) and passes matching nodes through its predicates to the next step. A predicate
//! that admits nothing past some position (`[1]`, `[position() <= 3]`) ends the step's
//! iteration as soon as that position is reached, so `Parent[1]/First[1]` never looks past the
//! first `First`. A predicate that calls `last()` needs the step's size, so that step collects
//! its nodes first.

use crate::xpath::ast::{Axis, NodeTest, PathExpr, PathStart, Predicate, Step};
use crate::xpath::error::XPathError;
use crate::xpath::eval::{Evaluator, Flow, Focus, Sink};
use crate::xpath::node::{NodeKind, XNode};
use crate::xpath::value::XValue;

impl<'e, 't> Evaluator<'e, 't> {
    pub(crate) fn stream_path(
        &mut self,
        p: &PathExpr,
        f: &Focus,
        sink: &mut Sink<'_, 'e, 't>,
    ) -> Result<Flow, XPathError> {
        let steps = &p.steps;
        match &p.start {
            PathStart::Context => self.walk(f.node, steps, sink),
            PathStart::DocumentRoot => match self.cx.root_node(f.node.slot) {
                Some(r) => self.walk(r, steps, sink),
                None => Ok(Flow::Go),
            },
            PathStart::Primary(e) if p.predicates.is_empty() => {
                self.stream(e, f, &mut |ev, n| ev.walk(n, steps, &mut *sink))
            }
            PathStart::Primary(e) => {
                // A filter expression's predicates count positions in document order.
                let mut nodes = self.node_set(e, f)?;
                for pred in &p.predicates {
                    nodes = self.filter(nodes, pred)?;
                }
                for n in nodes {
                    if self.walk(n, steps, sink)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Go)
            }
        }
    }

    fn walk(
        &mut self,
        node: XNode,
        steps: &[Step],
        sink: &mut Sink<'_, 'e, 't>,
    ) -> Result<Flow, XPathError> {
        let Some((step, rest)) = steps.split_first() else {
            return sink(self, node);
        };
        self.walk_step(node, step, &mut |ev, n| ev.walk(n, rest, &mut *sink))
    }

    fn walk_step(
        &mut self,
        node: XNode,
        step: &Step,
        sink: &mut Sink<'_, 'e, 't>,
    ) -> Result<Flow, XPathError> {
        let preds = &step.predicates;
        if preds.iter().any(|p| p.max_position == Some(0)) {
            return Ok(Flow::Go);
        }
        if preds.iter().any(|p| p.uses_last) {
            let mut nodes = Vec::new();
            self.axis(node, step, &mut |_, n| {
                nodes.push(n);
                Ok(Flow::Go)
            })?;
            for pred in preds {
                nodes = self.filter(nodes, pred)?;
            }
            for n in nodes {
                if sink(self, n)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
            return Ok(Flow::Go);
        }
        let mut counters = vec![0usize; preds.len()];
        let mut sink_stopped = false;
        self.axis(node, step, &mut |ev, n| {
            let mut passed = true;
            for (k, pred) in preds.iter().enumerate() {
                counters[k] += 1;
                let focus = Focus {
                    node: n,
                    position: counters[k],
                    size: None,
                };
                if !ev.predicate_true(pred, &focus)? {
                    passed = false;
                    break;
                }
            }
            if passed && sink(ev, n)? == Flow::Stop {
                sink_stopped = true;
                return Ok(Flow::Stop);
            }
            let exhausted = preds
                .iter()
                .zip(&counters)
                .any(|(p, &c)| p.max_position.is_some_and(|m| c >= m));
            Ok(if exhausted { Flow::Stop } else { Flow::Go })
        })?;
        Ok(if sink_stopped { Flow::Stop } else { Flow::Go })
    }

    /// Keep the nodes (in the order given, which sets their positions) that satisfy `pred`.
    pub(crate) fn filter(
        &mut self,
        nodes: Vec<XNode>,
        pred: &Predicate,
    ) -> Result<Vec<XNode>, XPathError> {
        let size = nodes.len();
        let mut out = Vec::with_capacity(size);
        for (i, n) in nodes.into_iter().enumerate() {
            let focus = Focus {
                node: n,
                position: i + 1,
                size: Some(size),
            };
            if self.predicate_true(pred, &focus)? {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// A number is compared with the position; anything else is converted with `boolean()`.
    fn predicate_true(&mut self, pred: &Predicate, f: &Focus) -> Result<bool, XPathError> {
        if pred.expr.is_node_set() {
            return self.exists(&pred.expr, f);
        }
        match self.eval(&pred.expr, f)? {
            XValue::Number(n) => Ok(n == f.position as f64),
            v => self.as_bool(v),
        }
    }

    /// Hand the nodes on `step`'s axis from `node` that pass its node test to `f`, in the
    /// axis's order (reverse document order for ancestors and preceding siblings).
    fn axis(
        &mut self,
        node: XNode,
        step: &Step,
        f: &mut Sink<'_, 'e, 't>,
    ) -> Result<Flow, XPathError> {
        let mut visit = |ev: &mut Self, n: XNode| -> Result<Flow, XPathError> {
            if ev.test_matches(n, step)? {
                f(ev, n)
            } else {
                Ok(Flow::Go)
            }
        };
        macro_rules! visit {
            ($n:expr) => {
                if visit(self, $n)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            };
        }
        match step.axis {
            Axis::Itself => visit!(node),
            Axis::Child => {
                let mut at = self.cx.first_child(node)?;
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.next_sibling(n)?;
                }
            }
            Axis::Attribute => {
                let mut at = self.cx.next_attribute(node, None)?;
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.next_attribute(node, Some(n))?;
                }
            }
            Axis::Parent => {
                if let Some(p) = self.cx.parent(node)? {
                    visit!(p);
                }
            }
            Axis::Ancestor | Axis::AncestorOrSelf => {
                let mut at = if step.axis == Axis::AncestorOrSelf {
                    Some(node)
                } else {
                    self.cx.parent(node)?
                };
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.parent(n)?;
                }
            }
            Axis::Descendant | Axis::DescendantOrSelf => {
                let mut at = if step.axis == Axis::DescendantOrSelf {
                    Some(node)
                } else {
                    self.cx.first_child(node)?
                };
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.next_in_subtree(n, node)?;
                }
            }
            Axis::FollowingSibling => {
                let mut at = self.cx.next_sibling(node)?;
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.next_sibling(n)?;
                }
            }
            Axis::PrecedingSibling => {
                let mut at = self.cx.prev_sibling(node)?;
                while let Some(n) = at {
                    visit!(n);
                    at = self.cx.prev_sibling(n)?;
                }
            }
        }
        Ok(Flow::Go)
    }

    fn test_matches(&self, n: XNode, step: &Step) -> Result<bool, XPathError> {
        // The principal node type of the attribute axis is attribute, else element.
        let principal = if step.axis == Axis::Attribute {
            NodeKind::Attribute
        } else {
            NodeKind::Element
        };
        Ok(match &step.test {
            NodeTest::Node => true,
            NodeTest::Text => matches!(n.kind, NodeKind::Text | NodeKind::ValueText),
            NodeTest::Comment => n.kind == NodeKind::Comment,
            NodeTest::ProcessingInstruction(target) => {
                n.kind == NodeKind::ProcessingInstruction
                    && match target {
                        Some(t) => self.cx.local_name(n)? == t.as_bytes(),
                        None => true,
                    }
            }
            NodeTest::Any => n.kind == principal,
            NodeTest::AnyInNamespace(ns) => {
                n.kind == principal && self.cx.namespace_uri(n)? == ns.as_bytes()
            }
            NodeTest::Name { ns, local } => {
                n.kind == principal
                    && self.cx.local_name(n)? == local.as_bytes()
                    && self.cx.namespace_uri(n)? == ns.as_bytes()
            }
        })
    }
}
