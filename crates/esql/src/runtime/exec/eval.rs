//! Expressions.

use sluice_esql_scalar::{self as scalar, CastOptions, Value};
use sluice_tree::NodeId;

use super::{Exec, Frame, Loc, R, RtError, RtVal, Var};
use crate::runtime::convert;
use crate::runtime::ir::{BitstreamIr, Ex, SelectItem, TreeFn, VarAddr};
use crate::syntax::ast::{BetweenMode, BinaryOp, IsTest, Niladic, Quantifier, UnaryOp};

fn truth(v: &Value) -> R<Option<bool>> {
    match v {
        Value::Boolean(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        // Message fields are character data: 'TRUE' and 'FALSE' read as BOOLEAN.
        Value::Character(_) => match scalar::cast(v, scalar::DataType::Boolean) {
            Ok(Value::Boolean(b)) => Ok(Some(b)),
            _ => Err(RtError::general(format!(
                "a condition must be BOOLEAN, not CHARACTER ({})",
                convert::text(v)
            ))),
        },
        other => Err(RtError::general(format!(
            "a condition must be BOOLEAN, not {} ({})",
            other.type_name(),
            convert::text(other)
        ))),
    }
}

impl<'a> Exec<'a> {
    /// An expression as a scalar value (a field gives its value; a missing field NULL).
    pub fn scalar(&mut self, frame: &mut Frame, e: &Ex) -> R<Value> {
        match e {
            Ex::Const(v) => Ok(v.clone()),
            Ex::Var(a) => self.var_value(frame, *a),
            _ => {
                let v = self.eval(frame, e)?;
                self.scalar_of(v)
            }
        }
    }

    pub fn scalar_of(&mut self, v: RtVal) -> R<Value> {
        Ok(match v {
            RtVal::S(s) => s,
            RtVal::F(l) => {
                let t = self.tree(l.tree)?;
                convert::read(t, l.node)
            }
            RtVal::L(items) => match items.into_iter().next() {
                Some(first) => self.scalar_of(first)?,
                None => Value::Null,
            },
        })
    }

    fn var_value(&mut self, frame: &Frame, a: VarAddr) -> R<Value> {
        match *self.var_ref(frame, a)? {
            Var::Scalar(ref v) => Ok(v.clone()),
            Var::Ref { tree, node, .. } => {
                let l = self.live(tree, node)?;
                Ok(convert::read(self.tree(l.tree)?, l.node))
            }
            Var::Row(t) => Ok(convert::read(self.tree(t)?, NodeId(0))),
        }
    }

    /// `CAST(source AS ty)` without options. A message field's text cast to a number is read
    /// where it lies, and a FLOAT becomes CHARACTER through a stack buffer: the casts of a
    /// transformation's every field cost no copies.
    fn plain_cast(&mut self, frame: &mut Frame, source: &Ex, ty: scalar::DataType) -> R<Value> {
        let v = self.eval(frame, source)?;
        if let RtVal::F(l) = &v {
            let t = self.tree(l.tree)?;
            if let sluice_tree::Value::Character(text) = t.value(l.node)
                && let Ok(s) = std::str::from_utf8(t.bytes(text))
                && let Some(r) = scalar::cast::cast_text(s, ty)
            {
                return Ok(r?);
            }
        }
        let v = self.scalar_of(v)?;
        if let (Value::Float(f), scalar::DataType::Character) = (&v, ty) {
            let mut buf = [0u8; sluice_tree::text_form::FLOAT_TEXT_BYTES];
            let text = sluice_tree::text_form::float_text(*f, &mut buf);
            return Ok(Value::Character(scalar::CharString::from(text)));
        }
        Ok(scalar::cast_with(&v, ty, &CastOptions::default())?)
    }

    /// The result of the first WHEN of a CASE (expression or statement) that holds: equal to
    /// the operand in the simple form, true in the searched form.
    pub fn case_branch<'w, T>(
        &mut self,
        frame: &mut Frame,
        operand: Option<&Ex>,
        whens: &'w [(Ex, T)],
    ) -> R<Option<&'w T>> {
        let op = match operand {
            Some(o) => Some(self.scalar(frame, o)?),
            None => None,
        };
        for (w, then) in whens {
            let hit = match &op {
                Some(v) => {
                    let wv = self.scalar(frame, w)?;
                    scalar::compare::equal(v, &wv)? == Some(true)
                }
                None => self.condition(frame, w)? == Some(true),
            };
            if hit {
                return Ok(Some(then));
            }
        }
        Ok(None)
    }

    pub fn condition(&mut self, frame: &mut Frame, e: &Ex) -> R<Option<bool>> {
        let v = self.scalar(frame, e)?;
        truth(&v)
    }

    /// An expression as a value, a field or a list.
    pub fn eval(&mut self, frame: &mut Frame, e: &Ex) -> R<RtVal> {
        Ok(match e {
            Ex::Const(v) => RtVal::S(v.clone()),
            Ex::Var(a) => match self.var_ref(frame, *a)? {
                Var::Scalar(v) => RtVal::S(v.clone()),
                &Var::Ref { tree, node, .. } => RtVal::F(self.live(tree, node)?),
                Var::Row(t) => RtVal::F(Loc {
                    tree: *t,
                    node: NodeId(0),
                }),
            },
            Ex::Path(p) => {
                if every(e).is_some() {
                    RtVal::L(self.nav_all(frame, p)?.into_iter().map(RtVal::F).collect())
                } else {
                    match self.nav(frame, p)? {
                        Some(l) => RtVal::F(l),
                        None => RtVal::S(Value::Null),
                    }
                }
            }
            Ex::Unary(op, x) => {
                let v = self.scalar(frame, x)?;
                RtVal::S(match op {
                    UnaryOp::Neg => scalar::arith::negate(&v)?,
                    UnaryOp::Plus => v,
                    UnaryOp::Not => Value::from_truth(scalar::compare::not(truth(&v)?)),
                })
            }
            Ex::Binary(op, a, b) => RtVal::S(self.binary(frame, *op, a, b)?),
            Ex::Between {
                expr,
                negated,
                mode,
                low,
                high,
            } => {
                let x = self.scalar(frame, expr)?;
                let mut lo = self.scalar(frame, low)?;
                let mut hi = self.scalar(frame, high)?;
                if *mode == BetweenMode::Symmetric
                    && scalar::compare::greater(&lo, &hi)? == Some(true)
                {
                    std::mem::swap(&mut lo, &mut hi);
                }
                let r = scalar::compare::and(
                    scalar::compare::greater_equal(&x, &lo)?,
                    scalar::compare::less_equal(&x, &hi)?,
                );
                RtVal::S(Value::from_truth(if *negated {
                    scalar::compare::not(r)
                } else {
                    r
                }))
            }
            Ex::In {
                expr,
                negated,
                list,
            } => {
                let x = self.scalar(frame, expr)?;
                let mut r = Some(false);
                for item in list {
                    let y = self.scalar(frame, item)?;
                    r = scalar::compare::or(r, scalar::compare::equal(&x, &y)?);
                    if r == Some(true) {
                        break;
                    }
                }
                RtVal::S(Value::from_truth(if *negated {
                    scalar::compare::not(r)
                } else {
                    r
                }))
            }
            Ex::Like {
                expr,
                negated,
                pattern,
                escape,
            } => {
                let x = self.scalar(frame, expr)?;
                let p = self.scalar(frame, pattern)?;
                let esc = match escape {
                    Some(e) => Some(self.scalar(frame, e)?),
                    None => None,
                };
                let r = scalar::compare::like(&x, &p, esc.as_ref())?;
                RtVal::S(Value::from_truth(if *negated {
                    scalar::compare::not(r)
                } else {
                    r
                }))
            }
            Ex::Is {
                expr,
                negated,
                test,
            } => {
                let v = self.scalar(frame, expr)?;
                let r = match test {
                    IsTest::Null => v.is_null(),
                    IsTest::True => v == Value::Boolean(true),
                    IsTest::False => v == Value::Boolean(false),
                    IsTest::Unknown => v.is_null(),
                    IsTest::Inf => matches!(v, Value::Float(f) if f.is_infinite()),
                    IsTest::PlusInf => matches!(v, Value::Float(f) if f == f64::INFINITY),
                    IsTest::MinusInf => matches!(v, Value::Float(f) if f == f64::NEG_INFINITY),
                    IsTest::NaN => matches!(v, Value::Float(f) if f.is_nan()),
                    IsTest::Num => {
                        matches!(v, Value::Float(f) if f.is_finite())
                            || matches!(v, Value::Integer(_) | Value::Decimal(_))
                    }
                };
                RtVal::S(Value::Boolean(r != *negated))
            }
            Ex::Case {
                operand,
                whens,
                otherwise,
            } => match self.case_branch(frame, operand.as_deref(), whens)? {
                Some(then) => self.eval(frame, then)?,
                None => match otherwise {
                    Some(o) => self.eval(frame, o)?,
                    None => RtVal::S(Value::Null),
                },
            },
            Ex::Cast {
                sources,
                ty,
                ccsid: None,
                encoding: None,
                format: None,
                default: None,
            } if sources.len() == 1 => RtVal::S(self.plain_cast(frame, &sources[0], *ty)?),
            Ex::Cast {
                sources,
                ty,
                ccsid,
                encoding,
                format,
                default,
            } => {
                let mut opts = CastOptions::default();
                if let Some(c) = ccsid {
                    opts.ccsid = int_opt(self.scalar(frame, c)?);
                }
                if let Some(c) = encoding {
                    opts.encoding = int_opt(self.scalar(frame, c)?);
                }
                if let Some(f) = format {
                    let v = self.scalar(frame, f)?;
                    opts.format = (!v.is_null()).then(|| convert::text(&v));
                }
                if let Some(d) = default {
                    opts.default = Some(self.scalar(frame, d)?);
                }
                let mut vals = Vec::with_capacity(sources.len());
                for s in sources {
                    vals.push(self.scalar(frame, s)?);
                }
                RtVal::S(if vals.len() == 1 {
                    scalar::cast_with(&vals[0], *ty, &opts)?
                } else {
                    compose_datetime(&vals, *ty)?
                })
            }
            Ex::Select(s) => self.select(frame, s)?,
            Ex::Index(base, index) => {
                let n = match self.scalar(frame, index)? {
                    Value::Integer(n) => n,
                    Value::Null => return Ok(RtVal::S(Value::Null)),
                    other => {
                        return Err(RtError::general(format!(
                            "an index must be an INTEGER, not {}",
                            other.type_name()
                        )));
                    }
                };
                match self.eval(frame, base)? {
                    RtVal::L(items) => usize::try_from(n)
                        .ok()
                        .and_then(|n| n.checked_sub(1))
                        .and_then(|i| items.into_iter().nth(i))
                        .unwrap_or(RtVal::S(Value::Null)),
                    // A single value is a list of one.
                    one if n == 1 => one,
                    _ => RtVal::S(Value::Null),
                }
            }
            Ex::The(x) => match self.eval(frame, x)? {
                RtVal::L(items) => items.into_iter().next().unwrap_or(RtVal::S(Value::Null)),
                other => other,
            },
            Ex::Row(items) => {
                let t = self.new_tree("Row");
                let root = Loc {
                    tree: t,
                    node: NodeId(0),
                };
                self.fill_row(frame, root, items)?;
                RtVal::F(root)
            }
            Ex::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.eval(frame, i)?);
                }
                RtVal::L(out)
            }
            Ex::Exists(x) => RtVal::S(Value::Boolean(match every(x) {
                Some(p) => self.with_all(frame, p, |_, _, items| Ok(!items.is_empty()))?,
                None => match self.eval(frame, x)? {
                    RtVal::L(items) => !items.is_empty(),
                    RtVal::F(_) => true,
                    RtVal::S(s) => !s.is_null(),
                },
            })),
            Ex::Quantified {
                quantifier,
                source,
                alias,
                predicate,
            } => {
                let r = self.with_all(frame, source, |ex, frame, items| {
                    let mut r = match quantifier {
                        Quantifier::All => Some(true),
                        _ => Some(false),
                    };
                    for l in items {
                        *ex.var_mut(frame, *alias)? = Var::Ref {
                            tree: l.tree,
                            node: l.node,
                            moved: true,
                        };
                        let p = ex.condition(frame, predicate)?;
                        r = match quantifier {
                            Quantifier::All => scalar::compare::and(r, p),
                            _ => scalar::compare::or(r, p),
                        };
                    }
                    Ok(r)
                })?;
                RtVal::S(Value::from_truth(r))
            }
            Ex::IntervalOf { expr, qualifier } => {
                // `(a - b) QUALIFIER`: the subtraction of two date-times as an interval.
                if let Ex::Binary(BinaryOp::Sub, a, b) = expr.as_ref() {
                    let x = self.scalar(frame, a)?;
                    let y = self.scalar(frame, b)?;
                    RtVal::S(scalar::arith::subtract_datetimes(&x, &y, Some(*qualifier))?)
                } else {
                    let v = self.scalar(frame, expr)?;
                    RtVal::S(scalar::cast(
                        &v,
                        scalar::DataType::Interval(Some(*qualifier)),
                    )?)
                }
            }
            Ex::Aggregate { .. } => {
                return Err(RtError::general(
                    "COUNT, SUM, MAX and MIN are allowed only in a SELECT list",
                ));
            }
            Ex::Niladic(n) => RtVal::S(self.niladic(*n)?),
            Ex::Broker(a) => RtVal::S(self.attributes.value(*a)),
            Ex::Builtin(name, args) => {
                RtVal::S(self.with_args(frame, args, |vals| scalar::call(name, vals))?)
            }
            Ex::Fast(func, args) => RtVal::S(
                self.with_args(frame, args, |vals| crate::runtime::fast::call(*func, vals))?,
            ),
            Ex::BuiltinNamed(name, args) => {
                RtVal::S(self.with_args(frame, args, |vals| scalar::call(name, vals))?)
            }
            Ex::TreeFn(f, args) => self.tree_fn(frame, *f, args)?,
            Ex::Cache(f, args) => RtVal::S(self.cache_fn(frame, *f, args)?),
            Ex::Call(r, args) => {
                let ret = self.call_with(frame, *r, args)?;
                ret.unwrap_or(RtVal::S(Value::Null))
            }
            Ex::AsBitstream { source, options } => {
                RtVal::S(self.as_bitstream(frame, source, options)?)
            }
            Ex::Passthru { sql, values } => self.passthru(frame, sql, values)?,
            Ex::Eval(site, text) => self.eval_function(frame, *site, text)?,
            Ex::Column(name) => match self.db_row {
                Some(row) => {
                    let t = self.tree(row.tree)?;
                    match t.child_named(row.node, None, name.as_bytes(), 0)? {
                        Some(c) => RtVal::S(convert::read(t, c)),
                        None => {
                            return Err(RtError::general(format!(
                                "the table has no column `{name}`"
                            )));
                        }
                    }
                }
                None => {
                    return Err(RtError::general(format!(
                        "column `{name}` used outside a database statement"
                    )));
                }
            },
        })
    }

    /// Call `f` with the values of `args`: held on the stack for the few arguments built-in
    /// functions take, so that a call allocates nothing for them.
    fn with_args(
        &mut self,
        frame: &mut Frame,
        args: &[Ex],
        f: impl FnOnce(&[Value]) -> Result<Value, scalar::ScalarError>,
    ) -> R<Value> {
        const ON_STACK: usize = 4;
        if args.len() > ON_STACK {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(self.scalar(frame, a)?);
            }
            return Ok(f(&vals)?);
        }
        let mut vals = [const { Value::Null }; ON_STACK];
        for (v, a) in vals.iter_mut().zip(args) {
            *v = self.scalar(frame, a)?;
        }
        Ok(f(&vals[..args.len()])?)
    }

    /// Fill `at` with the named values of a ROW constructor or SELECT item list.
    pub fn fill_row(&mut self, frame: &mut Frame, at: Loc, items: &[SelectItem]) -> R<()> {
        for it in items {
            let v = self.eval(frame, &it.expr)?;
            self.put_named(at, &it.name, v)?;
        }
        Ok(())
    }

    /// Store a value under a path of names below `at` (the last name is always a new field).
    pub fn put_named(&mut self, at: Loc, names: &[Box<[u8]>], v: RtVal) -> R<()> {
        let mut parent = at.node;
        let t = self.tree(at.tree)?;
        let Some((last, init)) = names.split_last() else {
            // No name: a value becomes a nameless field; a field keeps its own name.
            return match v {
                RtVal::F(src) => self
                    .copy_to(at, src, sluice_tree::Position::LastChild)
                    .map(|_| ()),
                other => {
                    let s = self.scalar_of(other)?;
                    let t = self.tree(at.tree)?;
                    let tv = convert::to_tree(t, &s);
                    t.create_last_child(
                        parent,
                        sluice_tree::field_type::VALUE,
                        sluice_tree::Text::EMPTY,
                        tv,
                    )?;
                    Ok(())
                }
            };
        };
        for n in init {
            parent = match t.child_named(parent, None, n, 0)? {
                Some(c) => c,
                None => {
                    let name = super::nav::intern(t, n);
                    t.create_last_child(
                        parent,
                        sluice_tree::field_type::NAME,
                        name,
                        sluice_tree::Value::Null,
                    )?
                }
            };
        }
        let name = super::nav::intern(t, last);
        let id = t.create_last_child(
            parent,
            sluice_tree::field_type::NAME,
            name,
            sluice_tree::Value::Null,
        )?;
        let dst = Loc {
            tree: at.tree,
            node: id,
        };
        match v {
            RtVal::L(items) => {
                // A list under one name: one field per item, all with that name.
                let t = self.tree(at.tree)?;
                t.delete(id)?;
                for item in items {
                    let t = self.tree(at.tree)?;
                    let id = t.create_last_child(
                        parent,
                        sluice_tree::field_type::NAME,
                        name,
                        sluice_tree::Value::Null,
                    )?;
                    self.assign(
                        Loc {
                            tree: at.tree,
                            node: id,
                        },
                        item,
                    )?;
                }
            }
            other => {
                self.assign(dst, other)?;
            }
        }
        Ok(())
    }

    fn binary(&mut self, frame: &mut Frame, op: BinaryOp, a: &Ex, b: &Ex) -> R<Value> {
        use scalar::compare as c;
        match op {
            BinaryOp::And => {
                let x = self.condition(frame, a)?;
                if x == Some(false) {
                    return Ok(Value::Boolean(false));
                }
                let y = self.condition(frame, b)?;
                return Ok(Value::from_truth(c::and(x, y)));
            }
            BinaryOp::Or => {
                let x = self.condition(frame, a)?;
                if x == Some(true) {
                    return Ok(Value::Boolean(true));
                }
                let y = self.condition(frame, b)?;
                return Ok(Value::from_truth(c::or(x, y)));
            }
            _ => {}
        }
        let x = self.scalar(frame, a)?;
        let y = self.scalar(frame, b)?;
        Ok(match op {
            BinaryOp::Mul => scalar::arith::multiply(&x, &y)?,
            BinaryOp::Div => scalar::arith::divide(&x, &y)?,
            BinaryOp::Add => scalar::arith::add(&x, &y)?,
            BinaryOp::Sub => scalar::arith::subtract(&x, &y)?,
            BinaryOp::Concat => scalar::arith::concat(&x, &y)?,
            BinaryOp::Eq => Value::from_truth(c::equal(&x, &y)?),
            BinaryOp::Ne => Value::from_truth(c::not_equal(&x, &y)?),
            BinaryOp::Lt => Value::from_truth(c::less(&x, &y)?),
            BinaryOp::Le => Value::from_truth(c::less_equal(&x, &y)?),
            BinaryOp::Gt => Value::from_truth(c::greater(&x, &y)?),
            BinaryOp::Ge => Value::from_truth(c::greater_equal(&x, &y)?),
            BinaryOp::And | BinaryOp::Or => Value::Null,
        })
    }

    fn niladic(&mut self, n: Niladic) -> R<Value> {
        let now = self.now();
        let name = match n {
            Niladic::CurrentDate => "CURRENT_DATE",
            Niladic::CurrentTime => "CURRENT_TIME",
            Niladic::CurrentTimestamp => "CURRENT_TIMESTAMP",
            Niladic::CurrentGmtDate => "CURRENT_GMTDATE",
            Niladic::CurrentGmtTime => "CURRENT_GMTTIME",
            Niladic::CurrentGmtTimestamp => "CURRENT_GMTTIMESTAMP",
            Niladic::LocalTimezone => "LOCAL_TIMEZONE",
            Niladic::SqlCode => return Ok(Value::Integer(self.sql.code)),
            Niladic::SqlState => {
                let s = if self.sql.state.is_empty() {
                    "00000"
                } else {
                    &self.sql.state
                };
                return Ok(Value::from_text(s));
            }
            Niladic::SqlNativeError => return Ok(Value::Integer(self.sql.native)),
            Niladic::SqlErrorText => return Ok(Value::from_text(&self.sql.text)),
            Niladic::UuidAsChar => return Ok(scalar::functions::uuid_as_char(None)?),
            Niladic::UuidAsBlob => return Ok(scalar::functions::uuid_as_blob(None)?),
        };
        Ok(scalar::functions::current_at(name, now)?)
    }

    fn field_arg(&mut self, frame: &mut Frame, e: &Ex) -> R<Option<Loc>> {
        Ok(match self.eval(frame, e)? {
            RtVal::F(l) => Some(l),
            RtVal::L(items) => match items.into_iter().next() {
                Some(RtVal::F(l)) => Some(l),
                _ => None,
            },
            RtVal::S(_) => None,
        })
    }

    fn tree_fn(&mut self, frame: &mut Frame, f: TreeFn, args: &[Ex]) -> R<RtVal> {
        let Some(first) = args.first() else {
            return Err(RtError::general("missing argument"));
        };
        Ok(RtVal::S(match f {
            TreeFn::Cardinality | TreeFn::Singular => {
                let n = match every(first) {
                    Some(p) => self.with_all(frame, p, |_, _, items| Ok(items.len()))?,
                    None => match self.eval(frame, first)? {
                        RtVal::L(items) => items.len(),
                        RtVal::F(_) => 1,
                        RtVal::S(_) => 0,
                    },
                };
                if f == TreeFn::Singular {
                    Value::Boolean(n == 1)
                } else {
                    Value::Integer(n as i64)
                }
            }
            TreeFn::LastMove => {
                let addr = match first {
                    Ex::Var(a) => Some(*a),
                    Ex::Path(p) if p.steps.is_empty() => match p.head {
                        crate::runtime::ir::Head::Var(a) => Some(a),
                        _ => None,
                    },
                    _ => None,
                };
                match addr.map(|a| self.var_ref(frame, a)).transpose()? {
                    Some(&Var::Ref { moved, .. }) => Value::Boolean(moved),
                    _ => return Err(RtError::general("LASTMOVE needs a REFERENCE variable")),
                }
            }
            TreeFn::SameField => {
                let a = self.field_arg(frame, first)?;
                let b = match args.get(1) {
                    Some(e) => self.field_arg(frame, e)?,
                    None => None,
                };
                Value::Boolean(a.is_some() && a == b)
            }
            TreeFn::FieldName
            | TreeFn::FieldNamespace
            | TreeFn::FieldType
            | TreeFn::FieldValue
            | TreeFn::BitStream => {
                let Some(l) = self.field_arg(frame, first)? else {
                    return Ok(RtVal::S(Value::Null));
                };
                if f == TreeFn::BitStream {
                    return Ok(RtVal::S(self.bitstream_of(
                        l,
                        &BitstreamIr::default(),
                        frame,
                    )?));
                }
                let t = self.tree(l.tree)?;
                match f {
                    TreeFn::FieldName => Value::from_text(&t.str(t.name(l.node))),
                    TreeFn::FieldNamespace => Value::from_text(&t.str(t.namespace(l.node))),
                    TreeFn::FieldType => Value::Integer(t.field_type(l.node) as i64),
                    _ => convert::read(t, l.node),
                }
            }
        }))
    }

    fn as_bitstream(&mut self, frame: &mut Frame, source: &Ex, options: &BitstreamIr) -> R<Value> {
        let Some(l) = self.field_arg(frame, source)? else {
            return Ok(Value::Null);
        };
        self.bitstream_of(l, options, frame)
    }
}

/// The path of an `x[]` expression, which names every matching field. CARDINALITY and EXISTS
/// go through those fields in the evaluation's reused storage ([`Exec::with_all`]) rather than
/// in a list value made for each call.
fn every(e: &Ex) -> Option<&crate::runtime::ir::Path> {
    match e {
        Ex::Path(p)
            if p.steps
                .last()
                .is_some_and(|s| matches!(s.index, crate::runtime::ir::IndexIr::All)) =>
        {
            Some(p)
        }
        _ => None,
    }
}

fn int_opt(v: Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(i),
        _ => None,
    }
}

/// `CAST(y, m, d AS DATE)`, `CAST(h, m, s AS TIME)`, `CAST(d, t AS TIMESTAMP)` and friends.
fn compose_datetime(vals: &[Value], ty: scalar::DataType) -> R<Value> {
    use scalar::DataType as D;
    if vals.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let int = |v: &Value| -> R<i64> {
        match v {
            Value::Integer(i) => Ok(*i),
            other => match scalar::cast(other, D::Integer)? {
                Value::Integer(i) => Ok(i),
                _ => Err(RtError::general("expected an INTEGER")),
            },
        }
    };
    let secs = |v: &Value| -> R<(i64, i64)> {
        match v {
            Value::Integer(i) => Ok((*i, 0)),
            other => {
                let f = match scalar::cast(other, D::Float)? {
                    Value::Float(f) => f,
                    _ => 0.0,
                };
                Ok((f.trunc() as i64, ((f.fract()) * 1e6).round() as i64))
            }
        }
    };
    match (ty, vals) {
        (D::Date, [y, m, d]) => Ok(Value::Date(scalar::Date::new(int(y)?, int(m)?, int(d)?)?)),
        (D::Time | D::GmtTime, [h, m, s]) => {
            let (sec, us) = secs(s)?;
            let t = scalar::Time::new(int(h)?, int(m)?, sec, us)?;
            Ok(if ty == D::Time {
                Value::Time(t)
            } else {
                Value::GmtTime(t)
            })
        }
        (D::Timestamp | D::GmtTimestamp, [Value::Date(d), Value::Time(t) | Value::GmtTime(t)]) => {
            let ts = scalar::Timestamp::new(*d, *t);
            Ok(if ty == D::Timestamp {
                Value::Timestamp(ts)
            } else {
                Value::GmtTimestamp(ts)
            })
        }
        (D::Timestamp | D::GmtTimestamp, [y, mo, d, h, mi, s]) => {
            let (sec, us) = secs(s)?;
            let ts = scalar::Timestamp::new(
                scalar::Date::new(int(y)?, int(mo)?, int(d)?)?,
                scalar::Time::new(int(h)?, int(mi)?, sec, us)?,
            );
            Ok(if ty == D::Timestamp {
                Value::Timestamp(ts)
            } else {
                Value::GmtTimestamp(ts)
            })
        }
        _ => Err(RtError::general(format!(
            "CAST of {} values to {ty} is not supported",
            vals.len()
        ))),
    }
}
