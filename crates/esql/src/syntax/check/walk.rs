//! The checker's walk over the AST.

use super::names::{
    correlation_like, correlation_names, counterpart, is_correlation_name, is_domain_name,
};
use super::scope::{Label, Scopes};
use crate::syntax::ast::*;
use crate::syntax::span::Span;

/// The routine being checked, for RETURN.
struct RoutineContext {
    kind: RoutineKind,
    name: String,
    has_returns: bool,
}

#[derive(Default)]
pub struct Checker {
    problems: Vec<(Span, String)>,
    scopes: Scopes,
    /// Routine and module names, one frame per file and module: they live apart from
    /// variables.
    routines: Scopes,
    /// Module names, apart from routine names.
    modules: Scopes,
    labels: Vec<Label>,
    /// Depth of SELECT, UPDATE and DELETE FROM being checked.
    in_query: usize,
    module: Option<ModuleKind>,
    routine: Option<RoutineContext>,
}

fn kind_word(kind: ModuleKind) -> &'static str {
    match kind {
        ModuleKind::Compute => "COMPUTE",
        ModuleKind::Filter => "FILTER",
        ModuleKind::Database => "DATABASE",
    }
}

/// Edit distance, case-insensitive, for "did you mean" hints.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl Checker {
    fn names_database(e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Field(r) if r.database_name().is_some())
    }

    pub fn into_problems(self) -> Vec<(Span, String)> {
        self.problems
    }

    fn report(&mut self, span: Span, message: String) {
        self.problems.push((span, message));
    }

    fn declare(&mut self, id: &Ident) {
        if let Some(prev) = self.scopes.declare(id) {
            self.report(
                id.span,
                format!(
                    "`{}` is already declared in this scope (at line {})",
                    id.name, prev.line
                ),
            );
        }
    }

    /// Declares the names of a DECLARE, remembering which cannot be assigned: CONSTANT
    /// and EXTERNAL variables and NAMESPACE and NAME constants.
    fn declare_all(&mut self, d: &Declare) {
        let constant = matches!(
            d.modifier,
            Some(DeclareModifier::Constant | DeclareModifier::External)
        ) || matches!(d.ty.ty, DataType::Namespace | DataType::Name);
        for n in &d.names {
            self.declare(n);
            if constant {
                self.scopes.mark_constant(n);
            }
        }
    }

    fn declare_routine(&mut self, id: &Ident, what: &str) {
        if let Some(prev) = self.routines.declare(id) {
            self.report(
                id.span,
                format!(
                    "{what} `{}` is already defined (at line {})",
                    id.name, prev.line
                ),
            );
        }
    }

    pub fn file(&mut self, file: &File) {
        self.scopes.push();
        self.routines.push();
        self.modules.push();
        self.items(&file.items);
        self.routines.pop();
        self.scopes.pop();
    }

    /// Declares every item of a level first (they are visible throughout), then checks
    /// each one.
    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Declare(d) => self.declare_all(d),
                Item::Routine(r) => {
                    let what = match r.kind {
                        RoutineKind::Function => "function",
                        RoutineKind::Procedure => "procedure",
                    };
                    self.declare_routine(&r.name, what);
                }
                Item::Module(m) => {
                    // Module names match case-insensitively, unlike variables.
                    let key = Ident {
                        name: m.name.name.to_lowercase(),
                        ..m.name.clone()
                    };
                    if let Some(prev) = self.modules.declare(&key) {
                        let msg = format!(
                            "module `{}` is already defined (at line {})",
                            m.name.name, prev.line
                        );
                        self.report(m.name.span, msg);
                    }
                }
            }
        }
        for item in items {
            match item {
                Item::Declare(d) => {
                    self.shared_reference(d);
                    self.declaration(d);
                }
                Item::Routine(r) => self.routine(r),
                Item::Module(m) => self.module(m),
            }
        }
    }

    fn module(&mut self, m: &Module) {
        self.module = Some(m.kind);
        self.scopes.push();
        self.routines.push();
        self.items(&m.items);
        self.routines.pop();
        self.scopes.pop();
        self.module = None;
    }

    fn routine(&mut self, r: &Routine) {
        self.routine = Some(RoutineContext {
            kind: r.kind,
            name: r.name.name.clone(),
            has_returns: r.returns.is_some(),
        });
        self.scopes.push();
        for p in &r.params {
            self.declare(&p.name);
        }
        if let RoutineBody::Esql(body) = &r.body {
            // The body is a scope of its own: a DECLARE there may overlay a parameter
            // of the same name, as the product allows.
            self.stmt(body);
        }
        self.scopes.pop();
        self.routine = None;
    }

    /// A SHARED variable outlives the message, so it cannot refer into a message tree.
    fn shared_reference(&mut self, d: &Declare) {
        if d.modifier == Some(DeclareModifier::Shared) && d.ty.ty == DataType::Reference {
            let msg = "a SHARED variable cannot be a REFERENCE; use ROW to keep a tree".to_string();
            self.report(d.ty.span, msg);
        }
    }

    fn declaration(&mut self, d: &Declare) {
        if let Some(init) = &d.init {
            self.expr(init);
        }
    }

    fn push_label(&mut self, label: &Option<Ident>, is_loop: bool) {
        if let Some(l) = label {
            if self.labels.iter().any(|x| x.name == l.name) {
                self.report(
                    l.span,
                    format!(
                        "label `{}` is already in use by an enclosing statement",
                        l.name
                    ),
                );
            }
            self.labels.push(Label {
                name: l.name.clone(),
                is_loop,
            });
        }
    }

    fn pop_label(&mut self, label: &Option<Ident>) {
        if label.is_some() {
            self.labels.pop();
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.scopes.push();
        self.block_in_current(stmts);
        self.scopes.pop();
    }

    fn block_in_current(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            if let StmtKind::Declare(d) = &s.kind {
                self.declare_all(d);
            }
        }
        for s in stmts {
            self.stmt(s);
        }
    }

    fn label_target(&mut self, id: &Ident, iterate: bool) {
        let verb = if iterate { "ITERATE" } else { "LEAVE" };
        match self.labels.iter().rev().find(|l| l.name == id.name) {
            None => self.report(id.span, format!("{verb} names unknown label `{}`", id.name)),
            Some(l) if iterate && !l.is_loop => {
                let msg = format!(
                    "ITERATE names `{}`, which labels a BEGIN block, not a loop",
                    id.name
                );
                self.report(id.span, msg);
            }
            Some(_) => {}
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Declare(d) => {
                let word = match d.modifier {
                    Some(DeclareModifier::Shared) => Some("SHARED"),
                    Some(DeclareModifier::External) => Some("EXTERNAL"),
                    _ => None,
                };
                if let Some(word) = word {
                    let msg =
                        format!("{word} variables can only be declared at module or schema level");
                    self.report(d.span, msg);
                }
                self.shared_reference(d);
                self.declaration(d);
            }
            StmtKind::DeclareHandler(h) => {
                for c in &h.conditions {
                    self.expr(&c.pattern);
                    self.opt_expr(&c.escape);
                }
                self.stmt(&h.body);
            }
            StmtKind::Set { target, value, .. } => {
                self.assignable(target);
                self.field_ref(target);
                self.expr(value);
            }
            StmtKind::Create(c) => {
                self.field_ref(&c.target);
                if let Some(r) = &c.as_ref {
                    self.field_ref(r);
                }
                self.opt_expr(&c.domain);
                match &c.source {
                    CreateSource::Values(cl) => self.clauses(cl),
                    CreateSource::Repeat(v) => self.opt_expr(v),
                    CreateSource::From(e) => self.expr(e),
                    CreateSource::Parse { source, options } => {
                        self.expr(source);
                        self.bitstream(options);
                    }
                }
            }
            StmtKind::Move { reference, target } => {
                self.field_ref(reference);
                match target {
                    MoveTarget::To(r) => self.field_ref(r),
                    MoveTarget::Parent => {}
                    MoveTarget::Relative { clauses, .. } => self.clauses(clauses),
                }
            }
            StmtKind::Detach(r) => self.field_ref(r),
            StmtKind::Attach { source, target, .. } => {
                self.field_ref(source);
                self.field_ref(target);
            }
            StmtKind::DeleteField {
                target, clauses, ..
            } => {
                self.field_ref(target);
                self.clauses(clauses);
            }
            StmtKind::If(i) => {
                for (cond, body) in &i.branches {
                    self.expr(cond);
                    self.block(body);
                }
                if let Some(b) = &i.otherwise {
                    self.block(b);
                }
            }
            StmtKind::Case(c) => {
                if let Some(op) = &c.operand {
                    self.expr(op);
                }
                for (cond, body) in &c.whens {
                    self.expr(cond);
                    self.block(body);
                }
                if let Some(b) = &c.otherwise {
                    self.block(b);
                }
            }
            StmtKind::While { label, cond, body } => {
                self.expr(cond);
                self.push_label(label, true);
                self.block(body);
                self.pop_label(label);
            }
            StmtKind::Repeat { label, body, until } => {
                self.push_label(label, true);
                self.block(body);
                self.pop_label(label);
                self.expr(until);
            }
            StmtKind::Loop { label, body } => {
                self.push_label(label, true);
                self.block(body);
                self.pop_label(label);
            }
            StmtKind::For {
                label,
                var,
                source,
                body,
            } => {
                self.field_ref(source);
                self.scopes.push();
                self.scopes.bind(&var.name, var.span);
                self.push_label(label, true);
                self.block(body);
                self.pop_label(label);
                self.scopes.pop();
            }
            StmtKind::Begin { label, body, .. } => {
                self.push_label(label, false);
                self.block(body);
                self.pop_label(label);
            }
            StmtKind::Leave(id) => self.label_target(id, false),
            StmtKind::Iterate(id) => self.label_target(id, true),
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    if let Some(r) = &self.routine
                        && !r.has_returns
                    {
                        let what = match r.kind {
                            RoutineKind::Function => "function",
                            RoutineKind::Procedure => "procedure",
                        };
                        let msg = format!(
                            "RETURN gives a value, but {what} `{}` has no RETURNS clause",
                            r.name
                        );
                        self.report(s.span, msg);
                    }
                    self.expr(v);
                }
            }
            StmtKind::Propagate(p) => {
                match &p.target {
                    Some(PropagateTarget::Terminal(e) | PropagateTarget::Label(e)) => self.expr(e),
                    None => {}
                }
                for r in [&p.environment, &p.message, &p.exception]
                    .into_iter()
                    .flatten()
                {
                    self.field_ref(r);
                }
            }
            StmtKind::Throw(c) | StmtKind::Log { clauses: c, .. } => self.event(c),
            StmtKind::Resignal => {}
            StmtKind::EndWork { datasource, .. } => {
                // `COMMIT Database.DSN` names a data source, not a field.
                if let Some(e) = datasource
                    && !Self::names_database(e)
                {
                    self.expr(e);
                }
            }
            StmtKind::Call(c) => {
                for a in &c.args {
                    self.expr(a);
                }
                if let Some(r) = &c.schema {
                    self.field_ref(r);
                }
                if let Some(r) = &c.into {
                    self.field_ref(r);
                }
            }
            StmtKind::Eval(e) | StmtKind::Passthru(e) => self.expr(e),
            StmtKind::Insert { table, values, .. } => {
                self.field_ref(table);
                for v in values {
                    self.expr(v);
                }
            }
            StmtKind::Update(u) => {
                self.field_ref(&u.table);
                self.in_query += 1;
                self.scopes.push();
                self.bind_table(&u.table, &u.alias);
                for (col, value) in &u.sets {
                    self.field_ref(col);
                    self.expr(value);
                }
                self.opt_expr(&u.filter);
                self.scopes.pop();
                self.in_query -= 1;
            }
            StmtKind::DeleteFrom {
                table,
                alias,
                filter,
            } => {
                self.field_ref(table);
                self.in_query += 1;
                self.scopes.push();
                self.bind_table(table, alias);
                self.opt_expr(filter);
                self.scopes.pop();
                self.in_query -= 1;
            }
        }
    }

    /// SET may not change a constant (it may change fields under a ROW or reference).
    fn assignable(&mut self, target: &FieldRef) {
        if target.steps.len() != 1 {
            return;
        }
        if let Some(head) = target.head()
            && let Some(at) = self.scopes.constant(&head.name)
        {
            let msg = format!(
                "`{}` is a constant (declared at line {}) and cannot be SET",
                head.name, at.line
            );
            self.report(head.span, msg);
        }
    }

    /// Makes a table or FROM item's alias — or, without one, its last name — usable as
    /// a correlation name.
    fn bind_table(&mut self, source: &FieldRef, alias: &Option<Ident>) {
        match alias {
            Some(a) => self.scopes.bind(&a.name, a.span),
            None => {
                if let Some(PathStep {
                    name: NameSpec::Ident(id),
                    ..
                }) = source.steps.last()
                {
                    self.scopes.bind(&id.name, id.span);
                }
            }
        }
    }

    fn clauses(&mut self, c: &FieldClauses) {
        for e in [&c.ty, &c.namespace, &c.name, &c.value]
            .into_iter()
            .flatten()
        {
            self.expr(e);
        }
        if let Some(step) = &c.identity {
            self.step(step);
        }
    }

    fn event(&mut self, c: &EventClauses) {
        for e in [&c.severity, &c.catalog, &c.message].into_iter().flatten() {
            self.expr(e);
        }
        for v in &c.values {
            self.expr(v);
        }
    }

    fn bitstream(&mut self, o: &BitstreamOptions) {
        for e in [&o.options, &o.encoding, &o.ccsid, &o.set, &o.ty, &o.format]
            .into_iter()
            .flatten()
        {
            self.expr(e);
        }
    }

    fn opt_expr(&mut self, e: &Option<Expr>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn field_ref(&mut self, r: &FieldRef) {
        if let Some(head) = r.head() {
            if r.steps.len() >= 2 {
                self.head(head, true);
            } else if self.in_query == 0 {
                // A lone name may be a database column inside a query; elsewhere it is
                // a variable, a constant or a correlation name.
                self.head(head, false);
            }
        }
        for step in &r.steps {
            self.step(step);
        }
    }

    /// The first name of a reference. `path` is false for a lone name, which is only
    /// checked against the correlation names, never against variables' spelling.
    fn head(&mut self, head: &Ident, path: bool) {
        let name = head.name.as_str();
        if self.scopes.visible(name) || is_domain_name(name) {
            return;
        }
        if is_correlation_name(name) {
            if let Some(kind) = self.module
                && !correlation_names(kind).contains(&name)
            {
                let mut msg = format!(
                    "correlation name `{name}` is not available in a {} module",
                    kind_word(kind)
                );
                if let Some(other) = counterpart(name, kind) {
                    msg.push_str(&format!("; did you mean `{other}`?"));
                }
                self.report(head.span, msg);
            }
            return;
        }
        if !path {
            if let Some(guess) = self.correlation_guess(name) {
                self.report(
                    head.span,
                    format!("unknown correlation name `{name}`; did you mean `{guess}`?"),
                );
            }
            return;
        }
        if let Some(var) = self.scopes.similar(name) {
            self.report(
                head.span,
                format!("unknown name `{name}`; did you mean the variable `{var}`?"),
            );
            return;
        }
        // Only a near miss of a correlation name is plainly wrong: any other name may be
        // a schema-level variable declared in another file.
        if let Some(guess) = self.correlation_guess(name) {
            self.report(
                head.span,
                format!("unknown correlation name `{name}`; did you mean `{guess}`?"),
            );
        }
    }

    /// A correlation name that `name` is a near miss of: the same apart from case, or
    /// (inside a module) one or two edits away.
    fn correlation_guess(&self, name: &str) -> Option<&'static str> {
        let limit = if name.len() >= 8 { 2 } else { 1 };
        correlation_like(name, self.module).or_else(|| {
            let pool = match self.module {
                Some(k) => correlation_names(k),
                None => &[],
            };
            pool.iter().copied().find(|c| distance(c, name) <= limit)
        })
    }

    fn step(&mut self, step: &PathStep) {
        if let Some(TypeQualifier::Expr(e)) = &step.type_qualifier {
            self.expr(e);
        }
        if let Some(NamespaceSpec::Dynamic(e)) = &step.namespace {
            self.expr(e);
        }
        if let NameSpec::Dynamic(e) = &step.name {
            self.expr(e);
        }
        match &step.index {
            Some(Index::Nth(e))
            | Some(Index::FromLast(Some(e)))
            | Some(Index::FromFirst(Some(e))) => self.expr(e),
            _ => {}
        }
    }

    fn select(&mut self, s: &Select) {
        for f in &s.from {
            self.field_ref(&f.source);
        }
        self.in_query += 1;
        self.scopes.push();
        for f in &s.from {
            self.bind_table(&f.source, &f.alias);
        }
        match &s.list {
            SelectList::Star => {}
            SelectList::Item(e) => self.expr(e),
            SelectList::Fields(items) => {
                for i in items {
                    self.expr(&i.expr);
                }
            }
        }
        if let Some(f) = &s.filter {
            self.expr(f);
        }
        self.scopes.pop();
        self.in_query -= 1;
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Niladic(_) => {}
            ExprKind::Field(r) => self.field_ref(r),
            ExprKind::Unary { expr, .. } | ExprKind::Is { expr, .. } => self.expr(expr),
            ExprKind::Index { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            ExprKind::The(x) | ExprKind::Exists(x) | ExprKind::IntervalOf { expr: x, .. } => {
                self.expr(x)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Between {
                expr, low, high, ..
            } => {
                self.expr(expr);
                self.expr(low);
                self.expr(high);
            }
            ExprKind::In { expr, list, .. } => {
                self.expr(expr);
                list.iter().for_each(|x| self.expr(x));
            }
            ExprKind::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                self.expr(expr);
                self.expr(pattern);
                self.opt_box(escape);
            }
            ExprKind::Case(c) => {
                self.opt_box(&c.operand);
                for (w, t) in &c.whens {
                    self.expr(w);
                    self.expr(t);
                }
                self.opt_box(&c.otherwise);
            }
            ExprKind::Cast(c) => {
                c.sources.iter().for_each(|x| self.expr(x));
                for o in [&c.ccsid, &c.encoding, &c.format, &c.default] {
                    self.opt_box(o);
                }
            }
            ExprKind::Select(s) => self.select(s),
            ExprKind::Row(fields) => {
                for (x, name) in fields {
                    self.expr(x);
                    if let Some(NameSpec::Dynamic(n)) = name {
                        self.expr(n);
                    }
                }
            }
            ExprKind::List(items) | ExprKind::Call { args: items, .. } => {
                items.iter().for_each(|x| self.expr(x))
            }
            ExprKind::Quantified {
                source,
                alias,
                predicate,
                ..
            } => {
                self.field_ref(source);
                self.scopes.push();
                self.scopes.bind(&alias.name, alias.span);
                self.expr(predicate);
                self.scopes.pop();
            }
            ExprKind::Aggregate { arg, .. } => self.opt_box(arg),
            ExprKind::Substring { source, from, len } => {
                self.expr(source);
                self.expr(from);
                self.opt_box(len);
            }
            ExprKind::SubstringAround { source, marker, .. } => {
                self.expr(source);
                self.expr(marker);
            }
            ExprKind::Position {
                needle,
                haystack,
                from,
                repeat,
            } => {
                self.expr(needle);
                self.expr(haystack);
                self.opt_box(from);
                self.opt_box(repeat);
            }
            ExprKind::Trim { chars, source, .. } => {
                self.opt_box(chars);
                self.expr(source);
            }
            ExprKind::Overlay {
                source,
                placing,
                from,
                len,
            } => {
                self.expr(source);
                self.expr(placing);
                self.expr(from);
                self.opt_box(len);
            }
            ExprKind::Extract { source, .. } => self.expr(source),
            ExprKind::Round { value, places, .. } => {
                self.expr(value);
                self.expr(places);
            }
            ExprKind::AsBitstream { source, options } => {
                self.expr(source);
                self.bitstream(options);
            }
            ExprKind::Passthru { sql, to, values } => {
                self.expr(sql);
                if let Some(t) = to {
                    self.field_ref(t);
                }
                values.iter().for_each(|x| self.expr(x));
            }
        }
    }

    fn opt_box(&mut self, e: &Option<Box<Expr>>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }
}
