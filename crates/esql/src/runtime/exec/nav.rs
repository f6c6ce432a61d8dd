//! Navigating field references: finding fields (parsing on demand) and creating the missing
//! ones for SET and CREATE FIELD.

use std::ops::Deref;

use sluice_esql_scalar::{CharString, Value};
use sluice_tree::{NodeId, Text, Tree, field_type};

use super::{Exec, Frame, Loc, R, RtError, Var};
use crate::runtime::field_types;
use crate::runtime::ir::{Head, IndexIr, NameMatch, NsMatch, Path, Step, TypeMatch};

/// A step with its run-time parts evaluated.
pub(crate) struct Sel<'p> {
    pub ty: Option<u32>,
    /// `None`: any namespace.
    pub ns: Option<StepText<'p>>,
    /// `None`: any name.
    pub name: Option<StepText<'p>>,
    pub index: Idx,
}

/// A name or namespace of a step: as the program writes it, or computed as the step runs
/// (`{expr}`) and held as the CHARACTER text it came as.
pub(crate) enum StepText<'p> {
    Written(&'p [u8]),
    Computed(CharString),
}

impl Deref for StepText<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            StepText::Written(b) => b,
            StepText::Computed(s) => s.as_bytes(),
        }
    }
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
        && !tree.name_is(id, n)
    {
        return false;
    }
    if let Some(ns) = &s.ns
        && !tree.namespace_is(id, ns)
    {
        return false;
    }
    true
}

impl<'a> Exec<'a> {
    fn text_of<'p>(&mut self, frame: &mut Frame, e: &crate::runtime::ir::Ex) -> R<StepText<'p>> {
        let v = self.scalar(frame, e)?;
        Ok(StepText::Computed(crate::runtime::convert::char_text(&v)))
    }

    /// Evaluate the run-time parts of a step.
    #[inline]
    pub fn sel<'p>(&mut self, frame: &mut Frame, s: &'p Step) -> R<Sel<'p>> {
        // Most steps are written out in full (`.Invoice`, `.Item[<]`): nothing to evaluate,
        // and built where the caller uses them.
        match (&s.ty, &s.ns, &s.name, &s.index) {
            (
                None | Some(TypeMatch::Const(_)),
                NsMatch::Unspecified | NsMatch::Any | NsMatch::Lit(_),
                NameMatch::Lit(_) | NameMatch::Any,
                IndexIr::First | IndexIr::Last | IndexIr::All,
            ) => Ok(written(s)),
            _ => self.sel_evaluated(frame, s),
        }
    }

    #[inline(never)]
    fn sel_evaluated<'p>(&mut self, frame: &mut Frame, s: &'p Step) -> R<Sel<'p>> {
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
            NsMatch::Dyn(e) => Some(self.text_of(frame, e)?),
            written => written_ns(written, &s.name),
        };
        let name = match &s.name {
            NameMatch::Dyn(e) => Some(self.text_of(frame, e)?),
            written => written_name(written),
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
        let mut out = Vec::new();
        self.nav_all_into(frame, p, &mut out)?;
        Ok(out)
    }

    /// [`Exec::nav_all`] appending to `out`, for callers that reuse one list.
    pub fn nav_all_into(&mut self, frame: &mut Frame, p: &Path, out: &mut Vec<Loc>) -> R<()> {
        let Some(mut at) = self.head(frame, &p.head)? else {
            return Ok(());
        };
        let Some((last, init)) = p.steps.split_last() else {
            out.push(at);
            return Ok(());
        };
        for step in init {
            let s = self.sel(frame, step)?;
            match self.find_child(at.tree, at.node, &s)? {
                Some(n) => at.node = n,
                None => return Ok(()),
            }
        }
        let s = self.sel(frame, last)?;
        if let Idx::All = s.index {
            let t = self.tree(at.tree)?;
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
        } else if let Some(n) = self.find_child(at.tree, at.node, &s)? {
            out.push(Loc {
                tree: at.tree,
                node: n,
            });
        }
        Ok(())
    }

    /// Run `f` over every field a path names (as [`Exec::nav_all`] lists them), the list
    /// made before the first run and kept in storage the evaluation reuses.
    pub fn with_all<T>(
        &mut self,
        frame: &mut Frame,
        p: &Path,
        f: impl FnOnce(&mut Self, &mut Frame, &[Loc]) -> R<T>,
    ) -> R<T> {
        let mut list = self.spare_lists.pop().unwrap_or_default();
        let r = match self.nav_all_into(frame, p, &mut list) {
            Ok(()) => f(self, frame, &list),
            Err(e) => Err(e),
        };
        list.clear();
        self.spare_lists.push(list);
        r
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
        let name: &[u8] = match (s.name.as_deref(), s.ty) {
            (Some(n), _) => n,
            (None, Some(_)) => b"",
            (None, None) => {
                return Err(RtError::general("cannot create a field whose name is `*`"));
            }
        };
        let ns = s.ns.as_deref().unwrap_or_default();
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
        let ns_t = intern(t, ns);
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

/// A step that has nothing to evaluate.
#[inline]
fn written(s: &Step) -> Sel<'_> {
    Sel {
        ty: match s.ty {
            Some(TypeMatch::Const(t)) => Some(t),
            _ => None,
        },
        ns: written_ns(&s.ns, &s.name),
        name: written_name(&s.name),
        index: match s.index {
            IndexIr::Last => Idx::FromLast(1),
            IndexIr::All => Idx::All,
            _ => Idx::Nth(1),
        },
    }
}

/// The namespace a step matches as the program writes it (a computed one, `Dyn`, is left to
/// `sel_evaluated`).
#[inline]
fn written_ns<'p>(ns: &'p NsMatch, name: &NameMatch) -> Option<StepText<'p>> {
    match ns {
        // A bare `*` matches in every namespace (`InputRoot.XMLNSC.*[1]` is the document
        // element whatever its namespace); a bare name only in the empty namespace.
        NsMatch::Unspecified if matches!(name, NameMatch::Any) => None,
        NsMatch::Unspecified => Some(StepText::Written(b"")),
        NsMatch::Lit(b) => Some(StepText::Written(b)),
        NsMatch::Any | NsMatch::Dyn(_) => None,
    }
}

/// The name a step matches as the program writes it (a computed one, `Dyn`, is left to
/// `sel_evaluated`).
#[inline]
fn written_name(name: &NameMatch) -> Option<StepText<'_>> {
    match name {
        NameMatch::Lit(b) => Some(StepText::Written(b)),
        NameMatch::Any | NameMatch::Dyn(_) => None,
    }
}

/// How many missing instances `SET x[n]` creates at most before instance `n`.
const MAX_GAP: usize = 10_000;

/// A name for a new element, shared with the element named so before when there was one.
pub(crate) fn intern(t: &mut Tree, bytes: &[u8]) -> Text {
    t.intern_name(bytes)
}
