//! Calls of ESQL routines: IN, OUT and INOUT parameters, REFERENCE arguments, RETURN.

use sluice_esql_scalar::Value;

use super::stmt::stamp;
use super::{Exec, Flow, Frame, R, RtError, RtVal, Var};
use crate::runtime::ir::{Ex, Mode, VarKind};

/// The deepest nesting of routine calls; deeper recursion is an error, not a stack overflow.
const MAX_CALL_DEPTH: u32 = 128;
/// Stack an evaluation may use (flow threads and test threads have at least 2 MiB).
const STACK_BUDGET: usize = 768 * 1024;

impl<'a> Exec<'a> {
    /// Call routine `r` with evaluated arguments; returns its value and the final values of
    /// its parameters (for OUT and INOUT).
    pub fn call(&mut self, r: usize, args: Vec<RtVal>) -> R<(Option<RtVal>, Vec<Var>)> {
        let prog = self.prog;
        let routine = &prog.routines[r];
        if let Some(ext) = &routine.external {
            return Err(RtError::general(format!(
                "routine {} is external ({ext}); only ESQL routines can run here",
                routine.name
            )));
        }
        if args.len() != routine.params.len() {
            return Err(RtError::general(format!(
                "{} expects {} argument(s) but was given {}",
                routine.name,
                routine.params.len(),
                args.len()
            )));
        }
        let mut frame = Frame {
            vars: vec![Var::Scalar(Value::Null); routine.frame_size as usize],
        };
        for (p, a) in routine.params.iter().zip(args) {
            let v = match (&p.kind, a) {
                (VarKind::Reference, RtVal::F(l)) | (VarKind::Row, RtVal::F(l)) => Var::Ref {
                    tree: l.tree,
                    node: l.node,
                    moved: true,
                },
                (VarKind::Scalar(t), a) if p.mode != Mode::Out => {
                    let s = self.scalar_of(a)?;
                    Var::Scalar(super::cast_to(s, *t)?)
                }
                (VarKind::Scalar(_), _) => Var::Scalar(Value::Null),
                (_, _) => Var::Scalar(Value::Null),
            };
            if let Some(slot) = frame.vars.get_mut(p.slot as usize) {
                *slot = v;
            }
        }
        // Deep recursion must end in an error, never in a stack overflow: check the depth and
        // how much stack this evaluation has used (the address of a local against the first).
        let probe = 0u8;
        let used = self.stack_base.abs_diff(std::ptr::addr_of!(probe) as usize);
        if self.depth >= MAX_CALL_DEPTH || used > STACK_BUDGET {
            return Err(RtError::general(format!(
                "routine calls nest too deeply (more than {MAX_CALL_DEPTH} calls or {} KiB of stack) in {}: runaway recursion?",
                STACK_BUDGET / 1024,
                routine.name
            )));
        }
        self.depth += 1;
        let saved = (self.file, self.line);
        self.file = routine.file;
        let flow = self.block(&mut frame, &routine.body);
        self.depth -= 1;
        let (file, line) = (self.file, self.line);
        self.file = saved.0;
        self.line = saved.1;
        let ret = match flow {
            Ok(Flow::Return(v)) => v,
            Ok(_) => None,
            Err(mut e) => {
                stamp(&mut e, prog, file, line);
                return Err(e);
            }
        };
        let ret = match (ret, &routine.returns) {
            (Some(v), Some(t)) => {
                let v = match v {
                    RtVal::S(s) => RtVal::S(super::cast_to(s, *t)?),
                    other => other,
                };
                Some(v)
            }
            (v, _) => v,
        };
        Ok((ret, frame.vars))
    }

    /// Evaluate arguments, call, and copy OUT/INOUT parameters back.
    pub fn call_with(
        &mut self,
        frame: &mut Frame,
        r: usize,
        args: &[Ex],
    ) -> R<(Option<RtVal>, ())> {
        let prog = self.prog;
        let routine = &prog.routines[r];
        let mut vals = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let by_ref = routine
                .params
                .get(i)
                .is_some_and(|p| matches!(p.kind, VarKind::Reference | VarKind::Row));
            let v = self.eval(frame, a)?;
            vals.push(if by_ref {
                v
            } else {
                RtVal::S(self.scalar_of(v)?)
            });
        }
        let (ret, out) = self.call(r, vals)?;
        for (i, p) in routine.params.iter().enumerate() {
            if p.mode == Mode::In || !matches!(p.kind, VarKind::Scalar(_)) {
                continue;
            }
            let Some(Var::Scalar(v)) = out.get(p.slot as usize).cloned() else {
                continue;
            };
            match args.get(i) {
                Some(Ex::Var(a)) => *self.var_mut(frame, *a)? = Var::Scalar(v),
                Some(Ex::Path(pth)) => {
                    let at = self.nav_create(frame, pth)?;
                    self.set_value(at, &v)?;
                }
                _ => {}
            }
        }
        Ok((ret, ()))
    }
}
