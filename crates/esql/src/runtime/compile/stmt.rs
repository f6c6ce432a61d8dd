//! Statements and routines.

use sluice_esql_scalar::Value;

use super::Cx;
use super::scope::Binding;
use crate::runtime::ir::{
    Clauses, CreateSourceIr, EventIr, Ex, HandlerIr, IndexIr, Mode, MoveIr, ParamIr, PropTarget,
    PropagateIr, RoutineIr, SetTarget, Sk, St, VarKind,
};
use crate::syntax::ast::{
    self, CreatePosition, CreateSource, FieldRef, MoveTarget, ParamMode, PropagateControl,
    RoutineBody, RoutineKind, Stmt, StmtKind,
};

impl Cx<'_> {
    pub fn routine(&mut self, r: &ast::Routine) -> RoutineIr {
        let mut params = Vec::new();
        for p in &r.params {
            let kind = self.var_kind(&p.ty);
            let addr = self.declare_local(&p.name.name, kind.clone());
            let slot = match addr {
                crate::runtime::ir::VarAddr::Local(s) => s,
                _ => 0,
            };
            let mode = match p.mode {
                Some(ParamMode::Out) => Mode::Out,
                Some(ParamMode::InOut) => Mode::InOut,
                Some(ParamMode::In) => Mode::In,
                None if r.kind == RoutineKind::Function => Mode::In,
                None => Mode::In,
            };
            params.push(ParamIr { mode, kind, slot });
        }
        let returns = r.returns.as_ref().map(|t| super::data_type(&t.ty));
        let (body, external) = match &r.body {
            RoutineBody::Esql(s) => (vec![self.stmt(s)], None),
            RoutineBody::External(name) => (Vec::new(), Some(name.clone())),
        };
        RoutineIr {
            name: r.name.name.clone(),
            file: self.file,
            params,
            returns,
            frame_size: self.max_local,
            body,
            external,
            database: matches!(r.language, Some(ast::Language::Database)),
        }
    }

    fn block(&mut self, stmts: &[Stmt]) -> Vec<St> {
        self.push_scope();
        let out = stmts.iter().map(|s| self.stmt(s)).collect();
        self.pop_scope();
        out
    }

    fn target(&mut self, r: &FieldRef) -> Option<SetTarget> {
        if r.steps.len() == 1
            && let Some(id) = r.head()
            && r.steps[0].index.is_none()
            && let Some(Binding::Var(addr, kind)) = self.lookup(&id.name)
        {
            return Some(match kind {
                VarKind::Scalar(t) => SetTarget::Var(addr, t),
                _ => SetTarget::Path(crate::runtime::ir::Path {
                    head: crate::runtime::ir::Head::Var(addr),
                    steps: Vec::new(),
                }),
            });
        }
        if let Some(id) = r.head()
            && self.lookup(&id.name).is_none()
            && self.correlation(&id.name).is_none()
            && (r.steps.len() == 1 && crate::runtime::broker::lookup(&id.name).is_some()
                || r.steps.len() == 2 && id.name == "SQL")
        {
            self.err(
                id.span,
                "Cannot assign to a symbolic constant: broker attributes are read-only",
            );
            return None;
        }
        if let Some(id) = r.head()
            && let Some(Binding::Const(_)) = self.lookup(&id.name)
        {
            self.err(
                id.span,
                format!("`{}` is a constant and cannot be changed", id.name),
            );
            return None;
        }
        self.path(r).map(SetTarget::Path)
    }

    fn ref_var(&mut self, r: &FieldRef) -> Option<crate::runtime::ir::VarAddr> {
        if r.steps.len() == 1
            && let Some(id) = r.head()
        {
            if let Some(Binding::Var(addr, VarKind::Reference)) = self.lookup(&id.name) {
                return Some(addr);
            }
            self.err(
                id.span,
                format!("`{}` is not a REFERENCE variable", id.name),
            );
            return None;
        }
        self.err(r.span, "a REFERENCE variable is needed here");
        None
    }

    fn clauses(&mut self, c: &ast::FieldClauses) -> Clauses {
        let mut f = |x: &Option<Box<ast::Expr>>| x.as_ref().map(|e| self.expr(e));
        let ty = f(&c.ty);
        let namespace = f(&c.namespace);
        let name = f(&c.name);
        let value = f(&c.value);
        let identity = c.identity.as_ref().and_then(|s| self.step(s));
        Clauses {
            ty,
            namespace,
            name,
            value,
            identity,
        }
    }

    fn event(&mut self, c: &ast::EventClauses) -> EventIr {
        EventIr {
            severity: c.severity.as_ref().map(|e| self.expr(e)),
            catalog: c.catalog.as_ref().map(|e| self.expr(e)),
            message: c.message.as_ref().map(|e| self.expr(e)),
            values: c.values.iter().map(|e| self.expr(e)).collect(),
        }
    }

    fn table_name(&mut self, r: &FieldRef) -> String {
        if r.head().map(|h| h.name.as_str()) != Some("Database") || r.steps.len() < 2 {
            self.err(r.span, "expected Database.table");
            return String::new();
        }
        r.steps[1..]
            .iter()
            .filter_map(|s| match &s.name {
                ast::NameSpec::Ident(i) => Some(i.name.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    fn label(&mut self, l: &Option<ast::Ident>) -> Option<u32> {
        l.as_ref().map(|l| self.push_label(&l.name))
    }

    pub fn stmt(&mut self, s: &Stmt) -> St {
        let kind = self.stmt_kind(s);
        St {
            file: self.file,
            line: self.eval_line.unwrap_or(s.span.line),
            kind,
        }
    }

    fn stmt_kind(&mut self, s: &Stmt) -> Sk {
        match &s.kind {
            StmtKind::Declare(d) => {
                let kind = self.var_kind(&d.ty);
                let constant = matches!(d.modifier, Some(ast::DeclareModifier::Constant))
                    || matches!(d.ty.ty, ast::DataType::Namespace | ast::DataType::Name);
                if constant {
                    let v = self.const_init(d);
                    for n in &d.names {
                        self.declare_const(&n.name, v.clone());
                    }
                    return Sk::Nothing;
                }
                if matches!(
                    d.modifier,
                    Some(ast::DeclareModifier::Shared | ast::DeclareModifier::External)
                ) {
                    self.err(
                        d.span,
                        "SHARED and EXTERNAL variables are declared at module or schema level",
                    );
                }
                let init = d.init.as_ref().map(|e| self.expr(e));
                if kind == VarKind::Reference && init.is_none() {
                    self.err(d.span, "DECLARE … REFERENCE needs TO a field");
                }
                let slots = d
                    .names
                    .iter()
                    .map(|n| self.declare_local(&n.name, kind.clone()))
                    .collect();
                Sk::Declare { slots, kind, init }
            }
            StmtKind::DeclareHandler(_) => {
                // Attached to the enclosing BEGIN block by `begin`.
                Sk::Nothing
            }
            StmtKind::Set {
                target,
                part,
                value,
            } => {
                let value = self.expr(value);
                let all = target
                    .steps
                    .last()
                    .is_some_and(|s| matches!(s.index, Some(ast::Index::All)));
                match self.target(target) {
                    Some(mut t) => {
                        if all
                            && let SetTarget::Path(p) = &mut t
                            && let Some(last) = p.steps.last_mut()
                        {
                            last.index = IndexIr::First;
                        }
                        Sk::Set {
                            target: t,
                            part: *part,
                            value,
                            all,
                        }
                    }
                    None => Sk::Nothing,
                }
            }
            StmtKind::Create(c) => {
                let Some(target) = self.target(&c.target) else {
                    return Sk::Nothing;
                };
                let as_ref = c.as_ref.as_ref().and_then(|r| self.ref_var(r));
                let domain = c.domain.as_ref().map(|e| self.expr(e));
                let source = match &c.source {
                    CreateSource::Values(v) => CreateSourceIr::Values(self.clauses(v)),
                    CreateSource::Repeat(v) => {
                        CreateSourceIr::Repeat(v.as_ref().map(|e| self.expr(e)))
                    }
                    CreateSource::From(e) => CreateSourceIr::From(self.expr(e)),
                    CreateSource::Parse { source, options } => CreateSourceIr::Parse {
                        source: self.expr(source),
                        options: self.bitstream(options),
                    },
                };
                Sk::Create {
                    relative: match c.position {
                        CreatePosition::Field => None,
                        CreatePosition::Relative(r) => Some(r),
                    },
                    target,
                    as_ref,
                    domain,
                    source,
                }
            }
            StmtKind::Move { reference, target } => {
                let Some(var) = self.ref_var(reference) else {
                    return Sk::Nothing;
                };
                let target = match target {
                    MoveTarget::To(r) => match self.path(r) {
                        Some(p) => MoveIr::To(p),
                        None => return Sk::Nothing,
                    },
                    MoveTarget::Parent => MoveIr::Parent,
                    MoveTarget::Relative {
                        relation,
                        clauses,
                        repeat,
                    } => MoveIr::Relative {
                        relation: *relation,
                        clauses: Box::new(self.clauses(clauses)),
                        repeat_type: repeat.is_some_and(|r| r.ty),
                        repeat_name: repeat.is_some_and(|r| r.name),
                    },
                };
                Sk::Move { var, target }
            }
            StmtKind::Detach(r) => self.target(r).map_or(Sk::Nothing, Sk::Detach),
            StmtKind::Attach {
                source,
                target,
                relation,
            } => match (self.target(source), self.target(target)) {
                (Some(source), Some(target)) => Sk::Attach {
                    source,
                    target,
                    relation: *relation,
                },
                _ => Sk::Nothing,
            },
            StmtKind::DeleteField {
                relation,
                target,
                clauses,
            } => match self.target(target) {
                Some(t) => Sk::Delete {
                    relation: *relation,
                    target: t,
                    clauses: self.clauses(clauses),
                },
                None => Sk::Nothing,
            },
            StmtKind::If(i) => Sk::If {
                branches: i
                    .branches
                    .iter()
                    .map(|(c, b)| (self.expr(c), self.block(b)))
                    .collect(),
                otherwise: i.otherwise.as_ref().map(|b| self.block(b)),
            },
            StmtKind::Case(c) => Sk::Case {
                operand: c.operand.as_ref().map(|e| self.expr(e)),
                whens: c
                    .whens
                    .iter()
                    .map(|(w, b)| (self.expr(w), self.block(b)))
                    .collect(),
                otherwise: c.otherwise.as_ref().map(|b| self.block(b)),
            },
            StmtKind::While { label, cond, body } => {
                let l = self.label(label);
                let cond = self.expr(cond);
                let body = self.block(body);
                if l.is_some() {
                    self.pop_label();
                }
                Sk::While {
                    label: l,
                    cond,
                    body,
                }
            }
            StmtKind::Repeat { label, body, until } => {
                let l = self.label(label);
                self.push_scope();
                let b: Vec<St> = body.iter().map(|s| self.stmt(s)).collect();
                let until = self.expr(until);
                self.pop_scope();
                if l.is_some() {
                    self.pop_label();
                }
                Sk::Repeat {
                    label: l,
                    body: b,
                    until,
                }
            }
            StmtKind::Loop { label, body } => {
                let l = self.label(label);
                let body = self.block(body);
                if l.is_some() {
                    self.pop_label();
                }
                Sk::Loop { label: l, body }
            }
            StmtKind::For {
                label,
                var,
                source,
                body,
            } => {
                let l = self.label(label);
                let Some(mut src) = self.path(source) else {
                    return Sk::Nothing;
                };
                super::expr::all_last(&mut src);
                self.push_scope();
                let v = self.declare_local(&var.name, VarKind::Reference);
                let body = self.block(body);
                self.pop_scope();
                if l.is_some() {
                    self.pop_label();
                }
                Sk::For {
                    label: l,
                    var: v,
                    source: src,
                    body,
                }
            }
            StmtKind::Begin {
                label,
                atomic,
                body,
            } => {
                let l = self.label(label);
                let atomic = atomic.then(|| {
                    self.atomic_base += 1;
                    self.atomic_base - 1
                });
                self.push_scope();
                let mut handlers = Vec::new();
                let mut out = Vec::new();
                for st in body {
                    if let StmtKind::DeclareHandler(h) = &st.kind {
                        handlers.push(self.handler(h));
                    } else {
                        out.push(self.stmt(st));
                    }
                }
                self.pop_scope();
                if l.is_some() {
                    self.pop_label();
                }
                Sk::Begin {
                    label: l,
                    atomic,
                    handlers,
                    body: out,
                }
            }
            StmtKind::Leave(id) => match self.find_label(&id.name) {
                Some(l) => Sk::Leave(l),
                None => {
                    self.err(
                        id.span,
                        format!("no enclosing statement is labelled `{}`", id.name),
                    );
                    Sk::Nothing
                }
            },
            StmtKind::Iterate(id) => match self.find_label(&id.name) {
                Some(l) => Sk::Iterate(l),
                None => {
                    self.err(
                        id.span,
                        format!("no enclosing loop is labelled `{}`", id.name),
                    );
                    Sk::Nothing
                }
            },
            StmtKind::Return(e) => Sk::Return(e.as_ref().map(|e| self.expr(e))),
            StmtKind::Propagate(p) => {
                let target = match &p.target {
                    Some(ast::PropagateTarget::Terminal(e)) => {
                        Some(PropTarget::Terminal(self.expr(e)))
                    }
                    Some(ast::PropagateTarget::Label(e)) => Some(PropTarget::Label(self.expr(e))),
                    None => None,
                };
                let mut path = |r: &Option<FieldRef>| r.as_ref().and_then(|r| self.path(r));
                let environment = path(&p.environment);
                let message = path(&p.message);
                let exception = path(&p.exception);
                Sk::Propagate(Box::new(PropagateIr {
                    target,
                    environment,
                    message,
                    exception,
                    finalize: p.finalize.unwrap_or(PropagateControl::Default),
                    delete: p.delete.unwrap_or(PropagateControl::Default),
                }))
            }
            StmtKind::Throw(c) => Sk::Throw(Box::new(self.event(c))),
            StmtKind::Resignal => Sk::Resignal,
            StmtKind::EndWork { commit, datasource } => Sk::EndWork {
                commit: *commit,
                datasource: datasource.as_ref().map(|e| match database_name(e) {
                    Some(name) => Ex::Const(Value::from_text(&name)),
                    None => self.expr(e),
                }),
            },
            StmtKind::Call(c) => match self.index.find(self.file, self.module, &c.name) {
                Some(r) => {
                    let args = c.args.iter().map(|e| self.expr(e)).collect();
                    let into = c.into.as_ref().and_then(|t| self.target(t));
                    Sk::Call {
                        routine: r,
                        args,
                        into,
                    }
                }
                None => {
                    self.err(
                        c.name.span,
                        format!("unknown procedure or function `{}`", c.name.dotted()),
                    );
                    Sk::Nothing
                }
            },
            StmtKind::Eval(e) => {
                let site = self.eval_site(s.span);
                Sk::Eval(site, self.expr(e))
            }
            StmtKind::Log { kind, clauses, .. } => Sk::Log {
                kind: *kind,
                event: Box::new(self.event(clauses)),
            },
            StmtKind::Passthru(e) => Sk::Expr(self.expr(e)),
            StmtKind::Insert {
                table,
                columns,
                values,
            } => Sk::Insert {
                table: self.table_name(table),
                columns: columns.iter().map(|c| c.name.clone()).collect(),
                values: values.iter().map(|e| self.expr(e)).collect(),
            },
            StmtKind::Update(u) => {
                let table = self.table_name(&u.table);
                let alias = u
                    .alias
                    .as_ref()
                    .map(|a| a.name.clone())
                    .unwrap_or_else(|| table.clone());
                let saved =
                    std::mem::replace(&mut self.db_alias, vec![alias.clone(), table.clone()]);
                let sets = u
                    .sets
                    .iter()
                    .map(|(col, e)| {
                        let name = match col.steps.last().map(|s| &s.name) {
                            Some(ast::NameSpec::Ident(i)) => i.name.clone(),
                            _ => String::new(),
                        };
                        (name, self.expr(e))
                    })
                    .collect();
                let filter = u.filter.as_ref().map(|e| self.expr(e));
                self.db_alias = saved;
                Sk::Update {
                    table,
                    alias,
                    sets,
                    filter,
                }
            }
            StmtKind::DeleteFrom {
                table,
                alias,
                filter,
            } => {
                let table = self.table_name(table);
                let alias = alias
                    .as_ref()
                    .map(|a| a.name.clone())
                    .unwrap_or_else(|| table.clone());
                let saved =
                    std::mem::replace(&mut self.db_alias, vec![alias.clone(), table.clone()]);
                let filter = filter.as_ref().map(|e| self.expr(e));
                self.db_alias = saved;
                Sk::DeleteFrom {
                    table,
                    alias,
                    filter,
                }
            }
        }
    }

    fn handler(&mut self, h: &ast::Handler) -> HandlerIr {
        let mut states = Vec::new();
        for c in &h.conditions {
            let pattern = match self.expr(&c.pattern) {
                Ex::Const(Value::Character(s)) => s.to_string(),
                _ => {
                    self.err(c.pattern.span, "SQLSTATE needs a character literal");
                    String::new()
                }
            };
            let escape = c.escape.as_ref().and_then(|e| match self.expr(e) {
                Ex::Const(Value::Character(s)) => s.chars().next(),
                _ => None,
            });
            states.push((pattern, c.like, escape));
        }
        HandlerIr {
            kind: h.kind,
            states,
            body: Box::new(self.stmt(&h.body)),
        }
    }
}

/// The data source a COMMIT or ROLLBACK names as `Database.DSN`.
fn database_name(e: &crate::syntax::ast::Expr) -> Option<String> {
    match &e.kind {
        crate::syntax::ast::ExprKind::Field(r) => r.database_name(),
        _ => None,
    }
}
