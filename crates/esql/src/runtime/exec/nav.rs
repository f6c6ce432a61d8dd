//! Navigating field references: finding fields (parsing on demand) and creating the missing
//! ones for SET and CREATE FIELD.

use std::borrow::Cow;

use sluice_esql_scalar::Value;
use sluice_tree::{NodeId, Text, Tree, field_type};

use super::{Exec, Frame, Loc, R, RtError, Var};
use crate::runtime::field_types;
use crate::runtime::ir::{Head, IndexIr, NameMatch, NsMatch, Path, Step, TypeMatch};

/// A step with its run-time parts evaluated.
pub(crate) struct Sel<'p> {
    pub ty: Option<u32>,
    /// `None`: any namespace.
    pub ns: Option<Cow<'p, [u8]>>,
    /// `None`: any name.
    pub name: Option<Cow<'p, [u8]>>,
    pub index: Idx,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Idx {
    Nth(usize),
    FromLast(usize),
    All,
}

pub(crate) fn matches(tree: &Tree, id: NodeId, s: &Sel) -> bool {
    if let Some(t) = s.ty
        && !field_types::matches(t, tree.field_type(id))
    {
        return false;
    }
    if let Some(n) = &s.name
        && !tree.name_is(id, n.as_ref())
    {
        return false;
    }
    if let Some(ns) = &s.ns
        && !tree.namespace_is(id, ns.as_ref())
    {
        return false;
    }
    true
}

impl<'a> Exec<'a> {
    fn text_of(&mut self, frame: &mut Frame, e: &crate::runtime::ir::Ex) -> R<Vec<u8>> {
        let v = self.scalar(frame, e)?;
        Ok(crate::runtime::convert::text(&v).into_bytes())
    }

    /// Evaluate the run-time parts of a step.
    pub fn sel<'p>(&mut self, frame: &mut Frame, s: &'p Step) -> R<Sel<'p>> {
        let ty = match &s.ty {
            None => None,
            Some(TypeMatch::Const(t)) => Some(*t),
            Some(TypeMatch::Dyn(e)) => match self.scalar(frame, e)? {
                Value::Integer(i) => Some(i as u32),
                Value::Null => None,
                other => {
                    return Err(RtError::general(format!(
                        "a field type must be an INTEGER, not {}",
                        other.type_name()
                    )));
                }
            },
        };
        let ns = match &s.ns {
            // A bare `*` matches in every namespace (`InputRoot.XMLNSC.*[1]` is the document
            // element whatever its namespace); a bare name only in the empty namespace.
            NsMatch::Unspecified if matches!(s.name, NameMatch::Any) => None,
            NsMatch::Unspecified => Some(Cow::Borrowed(&b""[..])),
            NsMatch::Any => None,
            NsMatch::Lit(b) => Some(Cow::Borrowed(&b[..])),
            NsMatch::Dyn(e) => Some(Cow::Owned(self.text_of(frame, e)?)),
        };
        let name = match &s.name {
            NameMatch::Lit(b) => Some(Cow::Borrowed(&b[..])),
            NameMatch::Any => None,
            NameMatch::Dyn(e) => Some(Cow::Owned(self.text_of(frame, e)?)),
        };
        let index = match &s.index {
            IndexIr::First => Idx::Nth(1),
            IndexIr::Last => Idx::FromLast(1),
            IndexIr::All => Idx::All,
            IndexIr::Nth(e) => Idx::Nth(self.index_value(frame, e)?),
            IndexIr::FromLast(e) => Idx::FromLast(self.index_value(frame, e)?),
        };
        Ok(Sel {
            ty,
            ns,
            name,
            index,
        })
    }

    fn index_value(&mut self, frame: &mut Frame, e: &crate::runtime::ir::Ex) -> R<usize> {
        match self.scalar(frame, e)? {
            Value::Integer(i) if i >= 1 => Ok(i as usize),
            Value::Decimal(d) => match d.to_i64(sluice_esql_scalar::RoundingMode::HalfEven) {
                Ok(i) if i >= 1 => Ok(i as usize),
                _ => Err(RtError::general(format!(
                    "an array index must be 1 or more, not {d}"
                ))),
            },
            other => Err(RtError::general(format!(
                "an array index must be an INTEGER of 1 or more, not {}",
                crate::runtime::convert::text(&other)
            ))),
        }
    }

    /// Where a path starts; `None` when the head names no field (an empty InputBody).
    pub fn head(&mut self, frame: &Frame, h: &Head) -> R<Option<Loc>> {
        Ok(match h {
            Head::Root(t) => Some(Loc {
                tree: *t,
                node: NodeId(0),
            }),
            Head::Body(t) => {
                let tree = self.tree(*t)?;
                let last = tree.last_child(NodeId(0))?;
                last.map(|n| Loc { tree: *t, node: n })
            }
            Head::Child(t, name) => {
                let tree = self.tree(*t)?;
                tree.child_named(NodeId(0), None, name, 0)?
                    .map(|n| Loc { tree: *t, node: n })
            }
            Head::Var(a) => match *self.var_ref(frame, *a)? {
                Var::Ref { tree, node, .. } => {
                    if self.tree(tree)?.is_deleted(node) {
                        return Err(RtError::general(
                            "the reference points at a field that was deleted",
                        ));
                    }
                    Some(Loc { tree, node })
                }
                Var::Row(t) => Some(Loc {
                    tree: t,
                    node: NodeId(0),
                }),
                Var::Scalar(_) => {
                    return Err(RtError::general(
                        "a scalar variable cannot start a field reference",
                    ));
                }
            },
        })
    }

    /// The `n`-th (1-based) matching child of `parent`, or from the end.
    pub fn find_child(&mut self, tree: u32, parent: NodeId, s: &Sel) -> R<Option<NodeId>> {
        Ok(self.find_child_counted(tree, parent, s)?.0)
    }

    /// [`Exec::find_child`], with how many matching children it passed: when nothing is found
    /// for `Nth`, that is every match, which spares [`Exec::child_or_create`] a second scan.
    fn find_child_counted(
        &mut self,
        tree: u32,
        parent: NodeId,
        s: &Sel,
    ) -> R<(Option<NodeId>, usize)> {
        let t = self.tree(tree)?;
        match s.index {
            Idx::Nth(_) | Idx::All => {
                let n = if let Idx::Nth(n) = s.index { n } else { 1 };
                let mut seen = 0;
                let mut c = t.first_child(parent)?;
                while let Some(id) = c {
                    if matches(t, id, s) {
                        seen += 1;
                        if seen == n {
                            return Ok((Some(id), seen));
                        }
                    }
                    c = t.next_sibling(id)?;
                }
                Ok((None, seen))
            }
            Idx::FromLast(n) => {
                let mut seen = 0;
                let mut c = t.last_child(parent)?;
                while let Some(id) = c {
                    if matches(t, id, s) {
                        seen += 1;
                        if seen == n {
                            return Ok((Some(id), seen));
                        }
                    }
                    c = t.prev_sibling(id);
                }
                Ok((None, seen))
            }
        }
    }

    /// Every matching child of `parent`, in order.
    pub fn find_all(&mut self, tree: u32, parent: NodeId, s: &Sel) -> R<Vec<NodeId>> {
        let t = self.tree(tree)?;
        let mut out = Vec::new();
        let mut c = t.first_child(parent)?;
        while let Some(id) = c {
            if matches(t, id, s) {
                out.push(id);
            }
            c = t.next_sibling(id)?;
        }
        Ok(out)
    }

    /// The field a path names (first match of every step), if it exists.
    pub fn nav(&mut self, frame: &mut Frame, p: &Path) -> R<Option<Loc>> {
        let Some(mut at) = self.head(frame, &p.head)? else {
            return Ok(None);
        };
        for step in &p.steps {
            let s = self.sel(frame, step)?;
            match self.find_child(at.tree, at.node, &s)? {
                Some(n) => at.node = n,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    /// The field a path names, or the deepest field on the way when it does not exist (the
    /// product's rule for `DECLARE r REFERENCE TO path`); the flag says whether it was found.
    pub fn nav_deepest(&mut self, frame: &mut Frame, p: &Path) -> R<Option<(Loc, bool)>> {
        let Some(mut at) = self.head(frame, &p.head)? else {
            return Ok(None);
        };
        for step in &p.steps {
            let s = self.sel(frame, step)?;
            match self.find_child(at.tree, at.node, &s)? {
                Some(n) => at.node = n,
                None => return Ok(Some((at, false))),
            }
        }
        Ok(Some((at, true)))
    }

    /// Every field a path names; `[]` (or a FROM/FOR source) on the last step selects all.
    pub fn nav_all(&mut self, frame: &mut Frame, p: &Path) -> R<Vec<Loc>> {
        let Some(mut at) = self.head(frame, &p.head)? else {
            return Ok(Vec::new());
        };
        let Some((last, init)) = p.steps.split_last() else {
            return Ok(vec![at]);
        };
        for step in init {
            let s = self.sel(frame, step)?;
            match self.find_child(at.tree, at.node, &s)? {
                Some(n) => at.node = n,
                None => return Ok(Vec::new()),
            }
        }
        let s = self.sel(frame, last)?;
        if let Idx::All = s.index {
            let t = self.tree(at.tree)?;
            let mut out = Vec::new();
            let mut c = t.first_child(at.node)?;
            while let Some(id) = c {
                if matches(t, id, &s) {
                    out.push(Loc {
                        tree: at.tree,
                        node: id,
                    });
                }
                c = t.next_sibling(id)?;
            }
            Ok(out)
        } else {
            Ok(self
                .find_child(at.tree, at.node, &s)?
                .map(|n| Loc {
                    tree: at.tree,
                    node: n,
                })
                .into_iter()
                .collect())
        }
    }

    /// The field a path names, creating the missing steps (SET, CREATE FIELD).
    pub fn nav_create(&mut self, frame: &mut Frame, p: &Path) -> R<Loc> {
        self.nav_create_steps(frame, &p.head, &p.steps)
    }

    /// [`Exec::nav_create`] for the first `steps` of a path.
    pub fn nav_create_steps(&mut self, frame: &mut Frame, head: &Head, steps: &[Step]) -> R<Loc> {
        let Some(mut at) = self.head(frame, head)? else {
            return Err(RtError::general(
                "the start of the field reference does not exist",
            ));
        };
        self.check_writable(at.tree)?;
        for step in steps {
            let s = self.sel(frame, step)?;
            at.node = self.child_or_create(at.tree, at.node, &s)?;
        }
        Ok(at)
    }

    /// The matching child, created (with as many instances as the index asks for) when missing.
    pub fn child_or_create(&mut self, tree: u32, parent: NodeId, s: &Sel) -> R<NodeId> {
        let (found, seen) = self.find_child_counted(tree, parent, s)?;
        if let Some(n) = found {
            return Ok(n);
        }
        // `(XMLNSC.XmlDeclaration)*` creates a nameless field of that type; a bare `*` names
        // nothing that could be created.
        let name: &[u8] = match (s.name.as_ref(), s.ty) {
            (Some(n), _) => n,
            (None, Some(_)) => b"",
            (None, None) => {
                return Err(RtError::general("cannot create a field whose name is `*`"));
            }
        };
        let ns = s.ns.clone().unwrap_or(Cow::Borrowed(&b""[..]));
        let ty = s.ty.unwrap_or(field_type::NAME);
        let wanted = match s.index {
            Idx::Nth(n) => n,
            _ => 1,
        };
        let have = match s.index {
            Idx::Nth(_) => seen,
            _ => 0,
        };
        if wanted > have + MAX_GAP {
            return Err(RtError::general(format!(
                "cannot create instance [{wanted}] of a field that has {have} instances"
            )));
        }
        let t = self.tree(tree)?;
        let name_t = intern(t, name);
        let ns_t = intern(t, &ns);
        let mut last = parent;
        for _ in have..wanted.max(have + 1) {
            last = t.create_last_child(parent, ty, name_t, sluice_tree::Value::Null)?;
            if !ns_t.is_empty() {
                t.set_namespace(last, ns_t);
            }
        }
        // `SET OutputRoot.XMLNSC.…` makes the body's domain element: give it its parser so
        // that ASBITSTREAM and output nodes write it in that domain.
        if parent == NodeId(0)
            && tree == crate::runtime::ir::trees::OUT_ROOT
            && let Some(p) = super::bitstream::parser_for(&String::from_utf8_lossy(name))
        {
            let i = t.add_parser(p);
            t.set_parser(last, i);
        }
        Ok(last)
    }
}

/// How many missing instances `SET x[n]` creates at most before instance `n`.
const MAX_GAP: usize = 10_000;

/// A name for a new element, shared with the element named so before when there was one.
pub(crate) fn intern(t: &mut Tree, bytes: &[u8]) -> Text {
    t.intern_name(bytes)
}
