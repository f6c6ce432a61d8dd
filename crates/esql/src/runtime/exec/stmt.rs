//! Statements: the interpreter loop, SET, handlers and the control statements.

use sluice_esql_scalar::{self as scalar, Value};
use sluice_node_api::ExceptionKind;
use sluice_tree::{NodeId, Position, Text, field_type};

use super::{Exec, Flow, Frame, Loc, R, RtError, RtVal, Var};
use crate::runtime::convert;
use crate::runtime::ir::{Ex, HandlerIr, SetTarget, Sk, St, VarKind, trees};

use crate::runtime::exec::nav::{Idx, Sel};
use crate::syntax::ast::{FieldPart, HandlerKind, LogKind, Relation};

pub(super) fn position(r: Relation) -> Position {
    match r {
        Relation::FirstChild => Position::FirstChild,
        Relation::LastChild => Position::LastChild,
        Relation::PreviousSibling => Position::PrevSibling,
        Relation::NextSibling => Position::NextSibling,
    }
}

impl<'a> Exec<'a> {
    pub fn block(&mut self, frame: &mut Frame, stmts: &[St]) -> R<Flow> {
        for s in stmts {
            match self.stmt(frame, s)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    pub fn stmt(&mut self, frame: &mut Frame, s: &St) -> R<Flow> {
        self.file = s.file;
        self.line = s.line;
        let mark = self.trees.len();
        let r = self.stmt_kind(frame, s);
        // Temporary trees (ROW values, SELECT results) die with their statement, except when the
        // statement may have left a ROW or REFERENCE variable pointing into one.
        let keeps_trees = matches!(
            &s.kind,
            Sk::Declare {
                kind: VarKind::Row | VarKind::Reference,
                ..
            } | Sk::Move { .. }
                | Sk::Eval(..)
                | Sk::Create {
                    as_ref: Some(_),
                    ..
                }
        );
        if !keeps_trees {
            self.trees.truncate(mark.max(trees::FIRST_VAR as usize));
        }
        match r {
            Err(mut e) => {
                stamp(&mut e, self.prog, s.file, s.line);
                Err(e)
            }
            ok => ok,
        }
    }

    pub(super) fn stmt_kind(&mut self, frame: &mut Frame, s: &St) -> R<Flow> {
        match &s.kind {
            Sk::Nothing => {}
            Sk::Declare { slots, kind, init } => {
                for a in slots {
                    // Only a ROW variable reuses what it held (its tree slot).
                    let old = match kind {
                        VarKind::Row => self.var(frame, *a).ok(),
                        _ => None,
                    };
                    let v = self.init_var(frame, kind, init.as_ref(), old.as_ref())?;
                    *self.var_mut(frame, *a)? = v;
                }
            }
            Sk::Set {
                target,
                part,
                value,
                all,
            } => self.set(frame, target, *part, value, *all)?,
            Sk::Create {
                relative,
                target,
                as_ref,
                domain,
                source,
            } => self.create(frame, *relative, target, *as_ref, domain.as_ref(), source)?,
            Sk::Move { var, target } => self.move_ref(frame, *var, target)?,
            Sk::Detach(t) => {
                let Some(at) = self.target_loc(frame, t)? else {
                    return Err(RtError::general("DETACH of a field that does not exist"));
                };
                self.check_writable(at.tree)?;
                self.tree(at.tree)?.detach(at.node)?;
            }
            Sk::Attach {
                source,
                target,
                relation,
            } => {
                let (Some(src), Some(dst)) = (
                    self.target_loc(frame, source)?,
                    self.target_loc(frame, target)?,
                ) else {
                    return Err(RtError::general(
                        "ATTACH needs a detached field and a target that exist",
                    ));
                };
                self.check_writable(dst.tree)?;
                let pos = position(*relation);
                if src.tree == dst.tree {
                    self.tree(dst.tree)?.attach(src.node, dst.node, pos)?;
                } else {
                    let moved = self.copy_to(dst, src, pos)?;
                    self.tree(src.tree)?.delete(src.node)?;
                    if let SetTarget::Path(p) = source
                        && p.steps.is_empty()
                        && let crate::runtime::ir::Head::Var(a) = p.head
                    {
                        *self.var_mut(frame, a)? = Var::Ref {
                            tree: moved.tree,
                            node: moved.node,
                            moved: true,
                        };
                    }
                }
            }
            Sk::Delete {
                relation,
                target,
                clauses,
            } => {
                let Some(at) = self.target_loc(frame, target)? else {
                    return Ok(Flow::Next);
                };
                let victim = match relation {
                    None => Some(at),
                    Some(r) => self.relative(frame, at, *r, clauses, None)?,
                };
                if let Some(v) = victim {
                    self.delete(v)?;
                }
            }
            Sk::If {
                branches,
                otherwise,
            } => {
                for (c, body) in branches {
                    if self.condition(frame, c)? == Some(true) {
                        return self.block(frame, body);
                    }
                }
                if let Some(b) = otherwise {
                    return self.block(frame, b);
                }
            }
            Sk::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(body) = self.case_branch(frame, operand.as_ref(), whens)? {
                    return self.block(frame, body);
                }
                match otherwise {
                    Some(b) => return self.block(frame, b),
                    None => {
                        return Err(RtError::new(
                            ExceptionKind::Recoverable,
                            2949,
                            "S20000",
                            "no WHEN clause of the CASE statement matched and it has no ELSE",
                        ));
                    }
                }
            }
            Sk::While { label, cond, body } => {
                while self.condition(frame, cond)? == Some(true) {
                    match self.block(frame, body)? {
                        Flow::Leave(l) if Some(l) == *label => break,
                        Flow::Iterate(l) if Some(l) == *label => continue,
                        Flow::Next => {}
                        other => return Ok(other),
                    }
                }
            }
            Sk::Repeat { label, body, until } => loop {
                match self.block(frame, body)? {
                    Flow::Leave(l) if Some(l) == *label => break,
                    Flow::Iterate(l) if Some(l) == *label => {}
                    Flow::Next => {}
                    other => return Ok(other),
                }
                if self.condition(frame, until)? == Some(true) {
                    break;
                }
            },
            Sk::Loop { label, body } => loop {
                match self.block(frame, body)? {
                    Flow::Leave(l) if Some(l) == *label => break,
                    Flow::Iterate(l) if Some(l) == *label => {}
                    Flow::Next => {}
                    other => return Ok(other),
                }
            },
            Sk::For {
                label,
                var,
                source,
                body,
            } => {
                // The list is made as the loop starts: fields the body adds are not visited,
                // so the loop always ends, as the product promises for FOR.
                return self.with_all(frame, source, |ex, frame, items| {
                    for l in items {
                        *ex.var_mut(frame, *var)? = Var::Ref {
                            tree: l.tree,
                            node: l.node,
                            moved: true,
                        };
                        match ex.block(frame, body)? {
                            Flow::Leave(x) if Some(x) == *label => break,
                            Flow::Iterate(x) if Some(x) == *label => {}
                            Flow::Next => {}
                            other => return Ok(other),
                        }
                    }
                    Ok(Flow::Next)
                });
            }
            Sk::Begin {
                label,
                atomic,
                handlers,
                body,
            } => {
                let shared = self.shared;
                let _guard = atomic.and_then(|i| shared.atomic.get(i)).map(|m| m.lock());
                let r = self.handled_block(frame, handlers, body)?;
                return Ok(match r {
                    Flow::Leave(l) if Some(l) == *label => Flow::Next,
                    other => other,
                });
            }
            Sk::Leave(l) => return Ok(Flow::Leave(*l)),
            Sk::Iterate(l) => return Ok(Flow::Iterate(*l)),
            Sk::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.eval(frame, e)?),
                    None => None,
                };
                return Ok(Flow::Return(v));
            }
            Sk::Propagate(p) => self.propagate(frame, p)?,
            Sk::Throw(ev) => {
                let severity = match &ev.severity {
                    Some(e) => self.scalar(frame, e)?,
                    None => Value::Integer(1),
                };
                let number = match &ev.message {
                    Some(e) => self.scalar(frame, e)?,
                    None => Value::Integer(2951),
                };
                let mut inserts = Vec::new();
                for v in &ev.values {
                    let x = self.scalar(frame, v)?;
                    inserts.push(convert::text(&x));
                }
                let number = match number {
                    Value::Integer(i) => i as u32,
                    _ => 2951,
                };
                let text = "User exception thrown by THROW".to_string();
                let mut e = RtError::new(ExceptionKind::User, number, "U11222", text);
                e.exception.inserts = inserts;
                if let Value::Integer(s) = severity {
                    e.exception.severity = s as u32;
                }
                if let Some(c) = &ev.catalog {
                    let c = self.scalar(frame, c)?;
                    e.exception.catalog = convert::text(&c);
                }
                return Err(e);
            }
            Sk::EndWork { commit, datasource } => {
                self.end_work(frame, *commit, datasource.as_ref())?;
            }
            Sk::Resignal => {
                return Err(self
                    .caught
                    .last()
                    .cloned()
                    .unwrap_or_else(|| RtError::general("RESIGNAL outside a handler")));
            }
            Sk::Call {
                routine,
                args,
                into,
            } => {
                let ret = self.call_with(frame, *routine, args)?;
                if let Some(t) = into {
                    let v = ret.unwrap_or(RtVal::S(Value::Null));
                    self.store(frame, t, v)?;
                }
            }
            Sk::Eval(site, e) => return self.eval_statement(frame, *site, e),
            Sk::Log { kind, event } => {
                let mut parts = Vec::new();
                for v in &event.values {
                    let x = self.scalar(frame, v)?;
                    parts.push(convert::text(&x));
                }
                let number = match &event.message {
                    Some(e) => convert::text(&self.scalar(frame, e)?),
                    None => String::new(),
                };
                match kind {
                    LogKind::Event => {
                        tracing::info!(number = %number, inserts = ?parts, "ESQL LOG EVENT.")
                    }
                    LogKind::UserTrace => {
                        tracing::debug!(number = %number, inserts = ?parts, "ESQL LOG USER TRACE.")
                    }
                }
            }
            Sk::Expr(e) => {
                self.eval(frame, e)?;
            }
            Sk::Insert {
                table,
                columns,
                values,
            } => self.db_insert(frame, table, columns, values)?,
            Sk::Update {
                table,
                alias: _,
                sets,
                filter,
            } => self.db_update(frame, table, sets, filter.as_ref())?,
            Sk::DeleteFrom {
                table,
                alias: _,
                filter,
            } => self.db_delete(frame, table, filter.as_ref())?,
        }
        Ok(Flow::Next)
    }

    pub(super) fn handled_block(
        &mut self,
        frame: &mut Frame,
        handlers: &[HandlerIr],
        body: &[St],
    ) -> R<Flow> {
        if handlers.is_empty() {
            return self.block(frame, body);
        }
        for s in body {
            match self.stmt(frame, s) {
                Ok(Flow::Next) => {}
                Ok(other) => return Ok(other),
                Err(e) => {
                    let Some(h) = handlers.iter().find(|h| handles(h, &e.sqlstate)) else {
                        return Err(e);
                    };
                    self.sql = super::SqlStatus {
                        code: if e.native != 0 { e.native } else { -1 },
                        state: e.sqlstate.clone(),
                        native: e.native,
                        text: e.exception.text.clone(),
                    };
                    self.caught.push(e);
                    let r = self.stmt(frame, &h.body);
                    self.caught.pop();
                    match r? {
                        Flow::Next => {}
                        other => return Ok(other),
                    }
                    if h.kind == HandlerKind::Exit {
                        return Ok(Flow::Next);
                    }
                }
            }
        }
        Ok(Flow::Next)
    }

    /// The field a SET/DETACH/DELETE target names, without creating it.
    pub(super) fn target_loc(&mut self, frame: &mut Frame, t: &SetTarget) -> R<Option<Loc>> {
        match t {
            SetTarget::Var(a, _) => match self.var(frame, *a)? {
                Var::Ref { tree, node, .. } => Ok(Some(self.live(tree, node)?)),
                Var::Row(t) => Ok(Some(Loc {
                    tree: t,
                    node: NodeId(0),
                })),
                Var::Scalar(_) => Err(RtError::general("a scalar variable is not a field")),
            },
            SetTarget::Path(p) => self.nav(frame, p),
        }
    }

    /// Store a value into a variable or field (as SET does).
    pub(super) fn store(&mut self, frame: &mut Frame, t: &SetTarget, v: RtVal) -> R<()> {
        match t {
            SetTarget::Var(a, t) => {
                let s = self.scalar_of(v)?;
                *self.var_mut(frame, *a)? = Var::Scalar(super::cast_to(s, *t)?);
                Ok(())
            }
            SetTarget::Path(p) => {
                if let RtVal::S(Value::Null) = v {
                    if let Some(at) = self.nav(frame, p)? {
                        self.delete(at)?;
                    }
                    return Ok(());
                }
                // `SET OutputRoot.*[I] = InputRoot.*[I]` (the toolkit's CopyMessageHeaders): a
                // wildcard target that does not exist yet takes the copied field's name.
                if let (Some((last, init)), RtVal::F(src)) = (p.steps.split_last(), &v)
                    && matches!(last.name, crate::runtime::ir::NameMatch::Any)
                {
                    let parent = self.nav_create_steps(frame, &p.head, init)?;
                    let sel = self.sel(frame, last)?;
                    if self.find_child(parent.tree, parent.node, &sel)?.is_none() {
                        self.copy_to(parent, *src, Position::LastChild)?;
                        return Ok(());
                    }
                }
                // A field copied to a field that does not exist yet (`SET out.Desc =
                // in.Description`): the copy goes straight into place, named as the target,
                // instead of an empty field being made, replaced by the copy and deleted.
                if let (Some((last, init)), RtVal::F(src)) = (p.steps.split_last(), &v) {
                    let parent = self.nav_create_steps(frame, &p.head, init)?;
                    let sel = self.sel(frame, last)?;
                    let at = if parent.tree != src.tree
                        && parent.node != NodeId(0)
                        && matches!(sel.index, Idx::Nth(1))
                        && sel.name.is_some()
                    {
                        match self.find_child(parent.tree, parent.node, &sel)? {
                            Some(at) => at,
                            None => {
                                self.copy_as_child(parent, *src, &sel)?;
                                return Ok(());
                            }
                        }
                    } else {
                        self.child_or_create(parent.tree, parent.node, &sel)?
                    };
                    self.assign(
                        Loc {
                            tree: parent.tree,
                            node: at,
                        },
                        v,
                    )?;
                    return Ok(());
                }
                let at = self.nav_create(frame, p)?;
                self.assign(at, v)?;
                Ok(())
            }
        }
    }

    pub(super) fn set(
        &mut self,
        frame: &mut Frame,
        target: &SetTarget,
        part: Option<FieldPart>,
        value: &Ex,
        all: bool,
    ) -> R<()> {
        if let (SetTarget::Var(a, t), None) = (target, part) {
            let v = self.scalar(frame, value)?;
            *self.var_mut(frame, *a)? = Var::Scalar(super::cast_to(v, *t)?);
            return Ok(());
        }
        let SetTarget::Path(p) = target else {
            return Err(RtError::general(
                "only fields have a TYPE, NAME, NAMESPACE or VALUE",
            ));
        };
        if let Some(part) = part {
            let v = self.scalar(frame, value)?;
            let at = self.nav_create(frame, p)?;
            let t = self.tree(at.tree)?;
            match part {
                FieldPart::Value => {
                    self.set_value(at, &v)?;
                }
                FieldPart::Type => match v {
                    Value::Integer(i) => t.set_field_type(at.node, i as u32),
                    other => {
                        return Err(RtError::general(format!(
                            "a field type must be an INTEGER, not {}",
                            other.type_name()
                        )));
                    }
                },
                FieldPart::Name => {
                    let s = convert::text(&v);
                    let txt = t.alloc_text(s.as_bytes());
                    t.set_name(at.node, txt);
                }
                FieldPart::Namespace => {
                    let s = convert::text(&v);
                    let txt = t.alloc_text(s.as_bytes());
                    t.set_namespace(at.node, txt);
                }
            }
            return Ok(());
        }
        let v = self.eval(frame, value)?;
        if all {
            // `SET x[] = list`: replace every instance by one per item.
            let Some((last, init)) = p.steps.split_last() else {
                return Err(RtError::general("[] needs a field name"));
            };
            let parent = self.nav_create_steps(frame, &p.head, init)?;
            let sel = self.sel(frame, last)?;
            for n in self.find_all(parent.tree, parent.node, &sel)? {
                self.tree(parent.tree)?.delete(n)?;
            }
            let items = match v {
                RtVal::L(items) => items,
                RtVal::S(Value::Null) => Vec::new(),
                other => vec![other],
            };
            for item in items {
                let id = self.new_child(parent, &sel)?;
                self.assign(
                    Loc {
                        tree: parent.tree,
                        node: id,
                    },
                    item,
                )?;
            }
            return Ok(());
        }
        self.store(frame, target, v)
    }

    /// A new last child of `parent` named and typed as a step selects.
    pub(super) fn new_child(&mut self, parent: Loc, s: &Sel) -> R<sluice_tree::NodeId> {
        let t = self.tree(parent.tree)?;
        let name = s
            .name
            .as_ref()
            .map(|n| super::nav::intern(t, n))
            .unwrap_or(Text::EMPTY);
        let id = t.create_last_child(
            parent.node,
            s.ty.unwrap_or(field_type::NAME),
            name,
            sluice_tree::Value::Null,
        )?;
        if let Some(ns) = &s.ns
            && !ns.is_empty()
        {
            let n = super::nav::intern(t, ns);
            t.set_namespace(id, n);
        }
        Ok(id)
    }
}

impl Exec<'_> {
    /// A new tree whose root holds copies of the children of `src` (PROPAGATE MESSAGE,
    /// ENVIRONMENT and EXCEPTION clauses).
    pub(super) fn subtree_copy(&mut self, src: Loc, name: &'static str) -> R<sluice_tree::Tree> {
        let mut out = sluice_tree::Tree::new(name);
        let t = self.tree(src.tree)?;
        let mut c = t.first_child(src.node)?;
        while let Some(id) = c {
            out.copy_from(t, id, NodeId(0), Position::LastChild)?;
            c = t.next_sibling(id)?;
        }
        Ok(out)
    }
}

fn handles(h: &HandlerIr, state: &str) -> bool {
    h.states.iter().any(|(pattern, like, escape)| {
        if *like {
            let esc = escape.map(|c| Value::from_string(c.to_string()));
            scalar::compare::like(
                &Value::from_text(state),
                &Value::from_text(pattern),
                esc.as_ref(),
            ) == Ok(Some(true))
        } else {
            pattern == state
        }
    })
}

/// Record where an error happened, once (the innermost statement wins).
pub(crate) fn stamp(
    e: &mut RtError,
    prog: &crate::runtime::compile::Compiled,
    file: u32,
    line: u32,
) {
    if e.exception.file.is_empty() && !e.passed_up {
        e.exception.file = prog
            .files
            .get(file as usize)
            .map(|f| f.path.clone())
            .unwrap_or_default();
        e.exception.line = line;
    }
}
