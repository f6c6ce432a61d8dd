//! Expressions: constants folded, built-ins mapped to the scalar layer, calls resolved.

use sluice_esql_scalar::{self as scalar, Value};

use super::Cx;
use crate::runtime::ir::{
    BitstreamIr, Ex, FromIr, FromSource, SelectIr, SelectItem, SelectListIr, TreeFn, VarKind,
};
use crate::syntax::ast::{self, BinaryOp, Expr, ExprKind, ExtractField, UnaryOp};

impl Cx<'_> {
    pub fn expr(&mut self, e: &Expr) -> Ex {
        match &e.kind {
            ExprKind::Literal(l) => match super::literal(l) {
                Ok(v) => Ex::Const(v),
                Err(m) => {
                    self.err(e.span, m);
                    Ex::Const(Value::Null)
                }
            },
            ExprKind::Field(r) => self.field_expr(r),
            ExprKind::Unary { op, expr } => {
                let x = self.expr(expr);
                if let Ex::Const(v) = &x {
                    let folded = match op {
                        UnaryOp::Neg => scalar::arith::negate(v).ok(),
                        UnaryOp::Plus => Some(v.clone()),
                        UnaryOp::Not => match v {
                            Value::Boolean(b) => Some(Value::Boolean(!b)),
                            Value::Null => Some(Value::Null),
                            _ => None,
                        },
                    };
                    if let Some(f) = folded {
                        return Ex::Const(f);
                    }
                }
                Ex::Unary(*op, Box::new(x))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                if let (Ex::Const(x), Ex::Const(y)) = (&a, &b) {
                    let folded = match op {
                        BinaryOp::Add => scalar::arith::add(x, y).ok(),
                        BinaryOp::Sub => scalar::arith::subtract(x, y).ok(),
                        BinaryOp::Mul => scalar::arith::multiply(x, y).ok(),
                        BinaryOp::Concat => scalar::arith::concat(x, y).ok(),
                        _ => None,
                    };
                    if let Some(f) = folded {
                        return Ex::Const(f);
                    }
                }
                Ex::Binary(*op, Box::new(a), Box::new(b))
            }
            ExprKind::Between {
                expr,
                negated,
                mode,
                low,
                high,
            } => Ex::Between {
                expr: Box::new(self.expr(expr)),
                negated: *negated,
                mode: *mode,
                low: Box::new(self.expr(low)),
                high: Box::new(self.expr(high)),
            },
            ExprKind::In {
                expr,
                negated,
                list,
            } => Ex::In {
                expr: Box::new(self.expr(expr)),
                negated: *negated,
                list: list.iter().map(|x| self.expr(x)).collect(),
            },
            ExprKind::Like {
                expr,
                negated,
                pattern,
                escape,
            } => Ex::Like {
                expr: Box::new(self.expr(expr)),
                negated: *negated,
                pattern: Box::new(self.expr(pattern)),
                escape: escape.as_ref().map(|x| Box::new(self.expr(x))),
            },
            ExprKind::Is {
                expr,
                negated,
                test,
            } => Ex::Is {
                expr: Box::new(self.expr(expr)),
                negated: *negated,
                test: *test,
            },
            ExprKind::Case(c) => Ex::Case {
                operand: c.operand.as_ref().map(|x| Box::new(self.expr(x))),
                whens: c
                    .whens
                    .iter()
                    .map(|(w, t)| (self.expr(w), self.expr(t)))
                    .collect(),
                otherwise: c.otherwise.as_ref().map(|x| Box::new(self.expr(x))),
            },
            ExprKind::Cast(c) => {
                let Some(ty) = super::data_type(&c.ty.ty) else {
                    self.err(c.ty.span, "CAST needs a scalar data type");
                    return Ex::Const(Value::Null);
                };
                let sources: Vec<Ex> = c.sources.iter().map(|x| self.expr(x)).collect();
                let opt =
                    |cx: &mut Self, o: &Option<Box<Expr>>| o.as_ref().map(|x| Box::new(cx.expr(x)));
                let ccsid = opt(self, &c.ccsid);
                let encoding = opt(self, &c.encoding);
                let format = opt(self, &c.format);
                let default = opt(self, &c.default);
                if let ([Ex::Const(v)], None, None, None, None) =
                    (sources.as_slice(), &ccsid, &encoding, &format, &default)
                    && let Ok(r) = scalar::cast(v, ty)
                {
                    return Ex::Const(r);
                }
                Ex::Cast {
                    sources,
                    ty,
                    ccsid,
                    encoding,
                    format,
                    default,
                }
            }
            ExprKind::Select(s) => self.select(s),
            ExprKind::The(x) => Ex::The(Box::new(self.expr(x))),
            ExprKind::Row(items) => Ex::Row(
                items
                    .iter()
                    .map(|(x, name)| {
                        let expr = self.expr(x);
                        let name = match name {
                            Some(ast::NameSpec::Ident(id)) => vec![Box::from(id.name.as_bytes())],
                            _ => default_name(x),
                        };
                        SelectItem { expr, name }
                    })
                    .collect(),
            ),
            ExprKind::List(items) => Ex::List(items.iter().map(|x| self.expr(x)).collect()),
            ExprKind::Exists(x) => Ex::Exists(Box::new(self.expr(x))),
            ExprKind::Quantified {
                quantifier,
                source,
                alias,
                predicate,
            } => {
                let Some(mut src) = self.path(source) else {
                    return Ex::Const(Value::Null);
                };
                all_last(&mut src);
                self.push_scope();
                let a = self.declare_local(&alias.name, VarKind::Reference);
                let p = self.expr(predicate);
                self.pop_scope();
                Ex::Quantified {
                    quantifier: *quantifier,
                    source: Box::new(src),
                    alias: a,
                    predicate: Box::new(p),
                }
            }
            ExprKind::Index { base, index } => {
                Ex::Index(Box::new(self.expr(base)), Box::new(self.expr(index)))
            }
            ExprKind::IntervalOf { expr, qualifier } => Ex::IntervalOf {
                expr: Box::new(self.expr(expr)),
                qualifier: *qualifier,
            },
            ExprKind::Aggregate { func, arg } => Ex::Aggregate {
                func: *func,
                arg: arg.as_ref().map(|x| Box::new(self.expr(x))),
            },
            ExprKind::Niladic(n) => Ex::Niladic(*n),
            ExprKind::Call { name, args } => self.call(name, args, e),
            ExprKind::Substring { source, from, len } => {
                let mut a = vec![self.expr(source), self.expr(from)];
                if let Some(l) = len {
                    a.push(self.expr(l));
                }
                builtin("SUBSTRING", a)
            }
            ExprKind::SubstringAround {
                source,
                after,
                marker,
            } => Ex::Builtin(
                if *after {
                    "SUBSTRING_AFTER"
                } else {
                    "SUBSTRING_BEFORE"
                },
                vec![self.expr(source), self.expr(marker)],
            ),
            ExprKind::Position {
                needle,
                haystack,
                from,
                repeat,
            } => {
                let mut a = vec![self.expr(needle), self.expr(haystack)];
                match (from, repeat) {
                    (Some(f), Some(r)) => {
                        a.push(self.expr(f));
                        a.push(self.expr(r));
                    }
                    (Some(f), None) => a.push(self.expr(f)),
                    (None, Some(r)) => {
                        a.push(Ex::Const(Value::Integer(1)));
                        a.push(self.expr(r));
                    }
                    (None, None) => {}
                }
                builtin("POSITION", a)
            }
            ExprKind::Trim {
                spec,
                chars,
                source,
            } => {
                let name = match spec {
                    Some(ast::TrimSpec::Leading) => "TRIM_LEADING",
                    Some(ast::TrimSpec::Trailing) => "TRIM_TRAILING",
                    _ => "TRIM_BOTH",
                };
                let mut a = vec![self.expr(source)];
                if let Some(c) = chars {
                    a.push(self.expr(c));
                }
                builtin(name, a)
            }
            ExprKind::Overlay {
                source,
                placing,
                from,
                len,
            } => {
                let mut a = vec![self.expr(source), self.expr(placing), self.expr(from)];
                if let Some(l) = len {
                    a.push(self.expr(l));
                }
                builtin("OVERLAY", a)
            }
            ExprKind::Extract { field, source } => {
                let f = match field {
                    ExtractField::Unit(u) => u.name(),
                    ExtractField::DayOfYear => "DAYOFYEAR",
                    ExtractField::DayOfWeek => "DAYOFWEEK",
                    ExtractField::MonthOfYear => "MONTHOFYEAR",
                    ExtractField::QuarterOfYear => "QUARTEROFYEAR",
                    ExtractField::WeekOfMonth => "WEEKOFMONTH",
                    ExtractField::WeekOfYear => "WEEKOFYEAR",
                    ExtractField::Quarter => "QUARTER",
                };
                Ex::Builtin(
                    "EXTRACT",
                    vec![Ex::Const(Value::from_text(f)), self.expr(source)],
                )
            }
            ExprKind::Round {
                value,
                places,
                mode,
            } => {
                let mut a = vec![self.expr(value), self.expr(places)];
                if let Some(m) = mode {
                    a.push(Ex::Const(Value::from_text(&m.name)));
                }
                builtin("ROUND", a)
            }
            ExprKind::AsBitstream { source, options } => Ex::AsBitstream {
                source: Box::new(self.expr(source)),
                options: Box::new(self.bitstream(options)),
            },
            ExprKind::Passthru { sql, to: _, values } => Ex::Passthru {
                sql: Box::new(self.expr(sql)),
                values: values.iter().map(|x| self.expr(x)).collect(),
            },
        }
    }

    pub fn bitstream(&mut self, o: &ast::BitstreamOptions) -> BitstreamIr {
        let mut f = |x: &Option<Box<Expr>>| x.as_ref().map(|e| self.expr(e));
        BitstreamIr {
            options: f(&o.options),
            encoding: f(&o.encoding),
            ccsid: f(&o.ccsid),
            set: f(&o.set),
            ty: f(&o.ty),
            format: f(&o.format),
        }
    }

    fn call(&mut self, name: &ast::QualifiedName, args: &[Expr], e: &Expr) -> Ex {
        if let Some(r) = self.index.find(self.file, self.module, name) {
            return Ex::Call(r, args.iter().map(|x| self.expr(x)).collect());
        }
        let upper = name.dotted().to_ascii_uppercase();
        if upper == "EVAL" {
            if args.len() != 1 {
                self.err(e.span, "EVAL takes 1 argument");
            }
            let site = self.eval_site(e.span);
            let arg = match args.first() {
                Some(a) => self.expr(a),
                None => Ex::Const(Value::Null),
            };
            return Ex::Eval(site, Box::new(arg));
        }
        if let Some(f) = crate::runtime::ir::CacheFn::of(&upper) {
            let (least, most) = f.arity();
            if args.len() < least || args.len() > most {
                let want = if least == most {
                    least.to_string()
                } else {
                    format!("{least} or {most}")
                };
                self.err(e.span, format!("{upper} takes {want} arguments"));
            }
            return Ex::Cache(f, args.iter().map(|x| self.expr(x)).collect());
        }
        let tree_fn = match upper.as_str() {
            "FIELDNAME" => Some(TreeFn::FieldName),
            "FIELDNAMESPACE" => Some(TreeFn::FieldNamespace),
            "FIELDTYPE" => Some(TreeFn::FieldType),
            "FIELDVALUE" => Some(TreeFn::FieldValue),
            "CARDINALITY" => Some(TreeFn::Cardinality),
            "SINGULAR" => Some(TreeFn::Singular),
            "SAMEFIELD" => Some(TreeFn::SameField),
            "LASTMOVE" => Some(TreeFn::LastMove),
            "BITSTREAM" => Some(TreeFn::BitStream),
            _ => None,
        };
        let compiled: Vec<Ex> = args.iter().map(|x| self.expr(x)).collect();
        if let Some(f) = tree_fn {
            let want = if f == TreeFn::SameField { 2 } else { 1 };
            if compiled.len() != want {
                self.err(e.span, format!("{upper} takes {want} argument(s)"));
            }
            return Ex::TreeFn(f, compiled);
        }
        // The scalar layer knows its names; asking with no arguments tells an unknown name
        // from a wrong argument count without evaluating anything of the program.
        match scalar::call(&upper, &[]) {
            Err(scalar::ScalarError::UnknownFunction(_)) => {
                self.err(
                    name.span,
                    format!("unknown function or procedure `{}`", name.dotted()),
                );
                Ex::Const(Value::Null)
            }
            _ => {
                if compiled.iter().all(|c| matches!(c, Ex::Const(_)))
                    && !matches!(
                        upper.as_str(),
                        "RAND" | "UUIDASCHAR" | "UUIDASBLOB" | "SLEEP"
                    )
                    && !upper.starts_with("CURRENT_")
                    && upper != "LOCAL_TIMEZONE"
                {
                    let vals: Vec<Value> = compiled
                        .iter()
                        .filter_map(|c| match c {
                            Ex::Const(v) => Some(v.clone()),
                            _ => None,
                        })
                        .collect();
                    if let Ok(v) = scalar::call(&upper, &vals) {
                        return Ex::Const(v);
                    }
                }
                match crate::runtime::fast::resolve(&upper, compiled.len()) {
                    Some(f) => Ex::Fast(f, compiled),
                    None => Ex::BuiltinNamed(upper.into_boxed_str(), compiled),
                }
            }
        }
    }

    fn select(&mut self, s: &ast::Select) -> Ex {
        self.push_scope();
        let mut from = Vec::new();
        let mut db = Vec::new();
        for f in &s.from {
            let head = f.source.head().map(|h| h.name.clone()).unwrap_or_default();
            let alias_name = f
                .alias
                .as_ref()
                .map(|a| a.name.clone())
                .or_else(|| last_name(&f.source))
                .unwrap_or_default();
            if head == "Database" {
                let names: Vec<String> = f
                    .source
                    .steps
                    .iter()
                    .skip(1)
                    .filter_map(|st| match &st.name {
                        ast::NameSpec::Ident(i) => Some(i.name.clone()),
                        _ => None,
                    })
                    .collect();
                let (schema, table) = match names.as_slice() {
                    [t] => (None, t.clone()),
                    [.., s2, t] => (Some(s2.clone()), t.clone()),
                    [] => {
                        self.err(f.span, "FROM Database needs a table name");
                        continue;
                    }
                };
                db.push(alias_name.clone());
                db.push(table.clone());
                let alias = self.declare_local(&alias_name, VarKind::Reference);
                from.push(FromIr {
                    source: FromSource::Table { schema, table },
                    alias,
                    alias_name,
                });
            } else {
                let Some(mut p) = self.path(&f.source) else {
                    continue;
                };
                all_last(&mut p);
                let alias = self.declare_local(&alias_name, VarKind::Reference);
                from.push(FromIr {
                    source: FromSource::Tree(p),
                    alias,
                    alias_name,
                });
            }
        }
        let saved = std::mem::replace(&mut self.db_alias, db);
        let filter = s.filter.as_ref().map(|x| self.expr(x));
        let list = match &s.list {
            ast::SelectList::Star => SelectListIr::Star,
            ast::SelectList::Item(x) => {
                let e = self.expr(x);
                if matches!(e, Ex::Aggregate { .. }) {
                    SelectListIr::Aggregates {
                        items: vec![SelectItem {
                            expr: e,
                            name: Vec::new(),
                        }],
                        scalar: true,
                    }
                } else {
                    SelectListIr::Item(e)
                }
            }
            ast::SelectList::Fields(items) => {
                let compiled: Vec<SelectItem> = items
                    .iter()
                    .map(|it| {
                        let expr = self.expr(&it.expr);
                        let name = match &it.alias {
                            Some(a) => a
                                .steps
                                .iter()
                                .filter_map(|st| match &st.name {
                                    ast::NameSpec::Ident(i) => Some(Box::from(i.name.as_bytes())),
                                    _ => None,
                                })
                                .collect(),
                            None => default_name(&it.expr),
                        };
                        SelectItem { expr, name }
                    })
                    .collect();
                if !compiled.is_empty()
                    && compiled
                        .iter()
                        .all(|i| matches!(i.expr, Ex::Aggregate { .. }))
                {
                    let scalar = compiled.len() == 1 && items[0].alias.is_none();
                    SelectListIr::Aggregates {
                        items: compiled,
                        scalar,
                    }
                } else {
                    SelectListIr::Fields(compiled)
                }
            }
        };
        self.db_alias = saved;
        self.pop_scope();
        Ex::Select(Box::new(SelectIr { list, from, filter }))
    }
}

/// A built-in with keyword syntax: a direct call when the table has it.
fn builtin(name: &'static str, args: Vec<Ex>) -> Ex {
    match crate::runtime::fast::resolve(name, args.len()) {
        Some(f) => Ex::Fast(f, args),
        None => Ex::Builtin(name, args),
    }
}

/// Make the last step of a FROM or FOR source select every match.
pub(crate) fn all_last(p: &mut crate::runtime::ir::Path) {
    if let Some(s) = p.steps.last_mut()
        && matches!(s.index, crate::runtime::ir::IndexIr::First)
    {
        s.index = crate::runtime::ir::IndexIr::All;
    }
}

fn last_name(r: &ast::FieldRef) -> Option<String> {
    match r.steps.last().map(|s| &s.name) {
        Some(ast::NameSpec::Ident(i)) => Some(i.name.clone()),
        _ => None,
    }
}

/// The name a SELECT or ROW item gets without AS: the last name of a field reference.
fn default_name(e: &Expr) -> Vec<Box<[u8]>> {
    match &e.kind {
        ExprKind::Field(r) if r.steps.len() > 1 => last_name(r)
            .map(|n| vec![Box::from(n.as_bytes())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}
