//! SELECT over message trees (and database tables, which are read into a tree first).

use sluice_esql_scalar::{self as scalar, Value};
use sluice_tree::NodeId;

use super::{Exec, Frame, Loc, R, RtError, RtVal, Var};
use crate::runtime::ir::{Ex, FromSource, SelectIr, SelectItem, SelectListIr};
use crate::syntax::ast::Aggregate;

impl<'a> Exec<'a> {
    pub fn select(&mut self, frame: &mut Frame, s: &SelectIr) -> R<RtVal> {
        // The rows of every FROM source.
        let mut sources = Vec::with_capacity(s.from.len());
        for f in &s.from {
            let rows = match &f.source {
                FromSource::Tree(p) => self.nav_all(frame, p)?,
                FromSource::Table { schema, table } => self.db_table(schema.as_deref(), table)?,
            };
            sources.push(rows);
        }
        let mut matched: Vec<Vec<Loc>> = Vec::new();
        let mut combo = Vec::with_capacity(sources.len());
        self.product(frame, s, &sources, 0, &mut combo, &mut matched)?;

        match &s.list {
            SelectListIr::Aggregates { items, scalar: one } => {
                let t = self.new_tree("Row");
                let root = Loc {
                    tree: t,
                    node: NodeId(0),
                };
                for it in items {
                    let v = self.aggregate(frame, s, &matched, it)?;
                    if *one {
                        return Ok(RtVal::S(v));
                    }
                    self.put_named(root, &it.name, RtVal::S(v))?;
                }
                Ok(RtVal::L(vec![RtVal::F(root)]))
            }
            SelectListIr::Item(e) => {
                let mut out = Vec::with_capacity(matched.len());
                for row in &matched {
                    self.bind(frame, s, row)?;
                    out.push(self.eval(frame, e)?);
                }
                Ok(RtVal::L(out))
            }
            SelectListIr::Star => Ok(RtVal::L(
                matched
                    .iter()
                    .filter_map(|r| r.first().copied())
                    .map(RtVal::F)
                    .collect(),
            )),
            SelectListIr::Fields(items) => {
                let t = self.new_tree("SelectResult");
                let mut out = Vec::with_capacity(matched.len());
                for row in &matched {
                    self.bind(frame, s, row)?;
                    let tr = self.tree(t)?;
                    let id = tr.create_last_child(
                        NodeId(0),
                        sluice_tree::field_type::NAME,
                        sluice_tree::Text::from_static("Row"),
                        sluice_tree::Value::Null,
                    )?;
                    let at = Loc { tree: t, node: id };
                    self.fill_row(frame, at, items)?;
                    out.push(RtVal::F(at));
                }
                Ok(RtVal::L(out))
            }
        }
    }

    /// Point the FROM aliases at one combination of rows.
    fn bind(&mut self, frame: &mut Frame, s: &SelectIr, row: &[Loc]) -> R<()> {
        for (f, l) in s.from.iter().zip(row) {
            *self.var_mut(frame, f.alias)? = Var::Ref {
                tree: l.tree,
                node: l.node,
                moved: true,
            };
            if matches!(f.source, FromSource::Table { .. }) {
                self.db_row = Some(*l);
            }
        }
        Ok(())
    }

    fn product(
        &mut self,
        frame: &mut Frame,
        s: &SelectIr,
        sources: &[Vec<Loc>],
        depth: usize,
        combo: &mut Vec<Loc>,
        out: &mut Vec<Vec<Loc>>,
    ) -> R<()> {
        if depth == sources.len() {
            self.bind(frame, s, combo)?;
            let keep = match &s.filter {
                Some(f) => self.condition(frame, f)? == Some(true),
                None => true,
            };
            if keep {
                out.push(combo.clone());
            }
            return Ok(());
        }
        for l in &sources[depth] {
            combo.push(*l);
            self.product(frame, s, sources, depth + 1, combo, out)?;
            combo.pop();
        }
        Ok(())
    }

    fn aggregate(
        &mut self,
        frame: &mut Frame,
        s: &SelectIr,
        rows: &[Vec<Loc>],
        it: &SelectItem,
    ) -> R<Value> {
        let Ex::Aggregate { func, arg } = &it.expr else {
            return Err(RtError::general(
                "a SELECT list mixes aggregates and plain values",
            ));
        };
        let mut acc = Value::Null;
        let mut count = 0i64;
        for row in rows {
            self.bind(frame, s, row)?;
            let v = match arg {
                Some(a) => self.scalar(frame, a)?,
                None => Value::Integer(1),
            };
            if v.is_null() {
                continue;
            }
            count += 1;
            acc = match (func, acc) {
                (Aggregate::Count, _) => Value::Null,
                (_, Value::Null) => v,
                (Aggregate::Sum, a) => scalar::arith::add(&a, &v)?,
                (Aggregate::Max, a) => {
                    if scalar::compare::greater(&v, &a)? == Some(true) {
                        v
                    } else {
                        a
                    }
                }
                (Aggregate::Min, a) => {
                    if scalar::compare::less(&v, &a)? == Some(true) {
                        v
                    } else {
                        a
                    }
                }
            };
        }
        Ok(match func {
            Aggregate::Count => Value::Integer(count),
            _ => acc,
        })
    }
}
