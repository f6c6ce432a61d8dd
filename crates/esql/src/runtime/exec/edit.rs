//! CREATE, MOVE and the relative navigation DELETE … OF shares with MOVE.

use sluice_esql_scalar::{CharString, Value};
use sluice_tree::{Position, Text, field_type};

use super::stmt::position;
use super::{Exec, Frame, Loc, R, RtError, RtVal, Var};
use crate::runtime::convert;
use crate::runtime::ir::{Clauses, CreateSourceIr, Ex, MoveIr, SetTarget, VarAddr};
use crate::syntax::ast::Relation;

impl<'a> Exec<'a> {
    /// The field next to `at` in `relation` that the clauses select (MOVE, DELETE).
    pub(super) fn relative(
        &mut self,
        frame: &mut Frame,
        at: Loc,
        relation: Relation,
        clauses: &Clauses,
        repeat: Option<(bool, bool)>,
    ) -> R<Option<Loc>> {
        // Most MOVEs have no TYPE, NAMESPACE or NAME clause: nothing to evaluate then.
        let (ty, ns, name) =
            if clauses.ty.is_none() && clauses.namespace.is_none() && clauses.name.is_none() {
                (None, None, None)
            } else {
                self.clause_filter(frame, clauses)?
            };
        // REPEAT NAME compares with the start's name where it lies (no copy per MOVE).
        let (ty, name, same_name) = match repeat {
            Some((rt, rn)) => {
                let t = self.tree(at.tree)?;
                (
                    if rt { Some(t.field_type(at.node)) } else { ty },
                    if rn { None } else { name },
                    rn.then(|| t.name(at.node)),
                )
            }
            None => (ty, name, None),
        };
        let identity = match &clauses.identity {
            Some(step) => Some(self.sel(frame, step)?),
            None => None,
        };
        let t = self.tree(at.tree)?;
        let mut c = match relation {
            Relation::FirstChild => t.first_child(at.node)?,
            Relation::LastChild => t.last_child(at.node)?,
            Relation::NextSibling => t.next_sibling(at.node)?,
            Relation::PreviousSibling => t.prev_sibling(at.node),
        };
        while let Some(id) = c {
            let ok = ty.is_none_or(|x| crate::runtime::field_types::matches(x, t.field_type(id)))
                && name.as_ref().is_none_or(|n| t.name_is(id, n.as_bytes()))
                && same_name.is_none_or(|n| t.name_is(id, t.bytes(n)))
                && ns.as_ref().is_none_or(|n| t.namespace_is(id, n.as_bytes()))
                && identity
                    .as_ref()
                    .is_none_or(|s| super::nav::matches(t, id, s));
            if ok {
                return Ok(Some(Loc {
                    tree: at.tree,
                    node: id,
                }));
            }
            c = match relation {
                Relation::FirstChild | Relation::NextSibling => t.next_sibling(id)?,
                Relation::LastChild | Relation::PreviousSibling => t.prev_sibling(id),
            };
        }
        Ok(None)
    }

    #[allow(clippy::type_complexity)]
    #[inline(never)]
    pub(super) fn clause_filter(
        &mut self,
        frame: &mut Frame,
        c: &Clauses,
    ) -> R<(Option<u32>, Option<CharString>, Option<CharString>)> {
        let ty = match &c.ty {
            Some(e) => match self.scalar(frame, e)? {
                Value::Integer(i) => Some(i as u32),
                _ => None,
            },
            None => None,
        };
        let ns = match &c.namespace {
            Some(e) => Some(convert::char_text(&self.scalar(frame, e)?)),
            None => None,
        };
        let name = match &c.name {
            Some(e) => Some(convert::char_text(&self.scalar(frame, e)?)),
            None => None,
        };
        Ok((ty, ns, name))
    }

    pub(super) fn move_ref(&mut self, frame: &mut Frame, var: VarAddr, target: &MoveIr) -> R<()> {
        let Var::Ref { tree, node, .. } = self.var(frame, var)? else {
            return Err(RtError::general("MOVE needs a REFERENCE variable"));
        };
        self.live(tree, node)?;
        let at = Loc { tree, node };
        let dest = match target {
            MoveIr::To(p) => self.nav(frame, p)?,
            MoveIr::Parent => self.tree(tree)?.parent(node).map(|n| Loc { tree, node: n }),
            MoveIr::Relative {
                relation,
                clauses,
                repeat_type,
                repeat_name,
            } => {
                let repeat = (*repeat_type || *repeat_name).then_some((*repeat_type, *repeat_name));
                self.relative(frame, at, *relation, clauses, repeat)?
            }
        };
        let v = self.var_mut(frame, var)?;
        match dest {
            Some(d) => {
                *v = Var::Ref {
                    tree: d.tree,
                    node: d.node,
                    moved: true,
                }
            }
            None => {
                if let Var::Ref { moved, .. } = v {
                    *moved = false;
                }
            }
        }
        Ok(())
    }

    pub(super) fn create(
        &mut self,
        frame: &mut Frame,
        relative: Option<Relation>,
        target: &SetTarget,
        as_ref: Option<VarAddr>,
        domain: Option<&Ex>,
        source: &CreateSourceIr,
    ) -> R<()> {
        let domain = match domain {
            Some(d) => {
                let v = self.scalar(frame, d)?;
                Some(convert::char_text(&v))
            }
            None => None,
        };
        let new = match relative {
            None => {
                let SetTarget::Path(p) = target else {
                    return Err(RtError::general("CREATE FIELD needs a field reference"));
                };
                let at = self.nav_create(frame, p)?;
                match source {
                    CreateSourceIr::From(e) => {
                        let v = self.eval(frame, e)?;
                        self.assign(at, v)?
                    }
                    CreateSourceIr::Values(c) => {
                        self.apply_clauses(frame, at, c)?;
                        at
                    }
                    CreateSourceIr::Repeat(_) | CreateSourceIr::Parse { .. } => {
                        return Err(RtError::general(
                            "CREATE FIELD takes values or FROM; use CREATE … OF for PARSE and REPEAT",
                        ));
                    }
                }
            }
            Some(rel) => {
                let Some(at) = self.target_loc(frame, target)? else {
                    return Err(RtError::general("the target of CREATE … OF does not exist"));
                };
                self.check_writable(at.tree)?;
                let pos = position(rel);
                match source {
                    CreateSourceIr::From(e) => match self.eval(frame, e)? {
                        RtVal::F(src) => self.copy_to(at, src, pos)?,
                        RtVal::L(items) => {
                            let mut last = None;
                            for it in items {
                                if let RtVal::F(src) = it {
                                    last = Some(self.copy_to(at, src, pos)?);
                                }
                            }
                            match last {
                                Some(l) => l,
                                None => return Ok(()),
                            }
                        }
                        RtVal::S(v) => {
                            let l = self.create_at(at, pos)?;
                            self.set_value(l, &v)?;
                            l
                        }
                    },
                    CreateSourceIr::Values(c) => {
                        let l = self.create_at(at, pos)?;
                        self.apply_clauses(frame, l, c)?;
                        if c.name.is_none()
                            && c.identity.is_none()
                            && let Some(d) = &domain
                        {
                            let t = self.tree(l.tree)?;
                            let n = t.alloc_text(d.as_bytes());
                            t.set_name(l.node, n);
                        }
                        l
                    }
                    CreateSourceIr::Repeat(v) => {
                        let model = match rel {
                            Relation::NextSibling | Relation::PreviousSibling => Some(at),
                            Relation::FirstChild => {
                                self.tree(at.tree)?.first_child(at.node)?.map(|n| Loc {
                                    tree: at.tree,
                                    node: n,
                                })
                            }
                            Relation::LastChild => {
                                self.tree(at.tree)?.last_child(at.node)?.map(|n| Loc {
                                    tree: at.tree,
                                    node: n,
                                })
                            }
                        };
                        let l = self.create_at(at, pos)?;
                        if let Some(m) = model {
                            let t = self.tree(at.tree)?;
                            let (n, ns, ty) =
                                (t.name(m.node), t.namespace(m.node), t.field_type(m.node));
                            t.set_name(l.node, n);
                            t.set_namespace(l.node, ns);
                            t.set_field_type(l.node, ty);
                        }
                        if let Some(v) = v {
                            let x = self.scalar(frame, v)?;
                            self.set_value(l, &x)?;
                        }
                        l
                    }
                    CreateSourceIr::Parse { source, options } => {
                        let d = domain.as_deref().unwrap_or("BLOB");
                        self.parse_into(frame, at, pos, d, source, options)?
                    }
                }
            }
        };
        if relative.is_none()
            && let Some(d) = &domain
        {
            self.mark_domain(new, d)?;
        } else if let (Some(d), Some(_), false) = (
            &domain,
            relative,
            matches!(source, CreateSourceIr::Parse { .. }),
        ) {
            self.mark_domain(new, d)?;
        }
        if let Some(a) = as_ref {
            *self.var_mut(frame, a)? = Var::Ref {
                tree: new.tree,
                node: new.node,
                moved: true,
            };
        }
        Ok(())
    }

    pub(super) fn create_at(&mut self, at: Loc, pos: Position) -> R<Loc> {
        let t = self.tree(at.tree)?;
        let v = sluice_tree::Value::Null;
        let id = match pos {
            Position::FirstChild => {
                t.create_first_child(at.node, field_type::NAME, Text::EMPTY, v)?
            }
            Position::LastChild => {
                t.create_last_child(at.node, field_type::NAME, Text::EMPTY, v)?
            }
            Position::NextSibling => {
                t.create_next_sibling(at.node, field_type::NAME, Text::EMPTY, v)?
            }
            Position::PrevSibling => {
                t.create_prev_sibling(at.node, field_type::NAME, Text::EMPTY, v)?
            }
        };
        Ok(Loc {
            tree: at.tree,
            node: id,
        })
    }

    pub(super) fn apply_clauses(&mut self, frame: &mut Frame, at: Loc, c: &Clauses) -> R<()> {
        if let Some(step) = &c.identity {
            let s = self.sel(frame, step)?;
            let t = self.tree(at.tree)?;
            if let Some(n) = &s.name {
                let n = super::nav::intern(t, n);
                t.set_name(at.node, n);
            }
            if let Some(ns) = &s.ns
                && !ns.is_empty()
            {
                let n = super::nav::intern(t, ns);
                t.set_namespace(at.node, n);
            }
            if let Some(ty) = s.ty {
                t.set_field_type(at.node, ty);
            }
        }
        if let Some(e) = &c.ty {
            match self.scalar(frame, e)? {
                Value::Integer(i) => self.tree(at.tree)?.set_field_type(at.node, i as u32),
                Value::Null => {}
                other => {
                    return Err(RtError::general(format!(
                        "TYPE must be an INTEGER, not {}",
                        other.type_name()
                    )));
                }
            }
        }
        if let Some(e) = &c.namespace {
            let v = self.scalar(frame, e)?;
            let t = self.tree(at.tree)?;
            let n = name_text(t, &v);
            t.set_namespace(at.node, n);
        }
        if let Some(e) = &c.name {
            let v = self.scalar(frame, e)?;
            let t = self.tree(at.tree)?;
            let n = name_text(t, &v);
            t.set_name(at.node, n);
        }
        if let Some(e) = &c.value {
            let v = self.scalar(frame, e)?;
            let t = self.tree(at.tree)?;
            let tv = convert::to_tree(t, &v);
            t.set_value(at.node, tv);
            if !v.is_null() && t.field_type(at.node) == field_type::NAME {
                t.set_field_type(at.node, field_type::NAME_VALUE);
            }
        }
        Ok(())
    }
}

/// A NAME or NAMESPACE clause's value as a name in tree `t` (character data as it is, other
/// values as CAST to CHARACTER gives them).
fn name_text(t: &mut sluice_tree::Tree, v: &sluice_esql_scalar::Value) -> sluice_tree::Text {
    match v {
        Value::Character(s) => super::nav::intern(t, s.as_bytes()),
        other => super::nav::intern(t, convert::char_text(other).as_bytes()),
    }
}
