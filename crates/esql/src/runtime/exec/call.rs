//! Calls of ESQL routines: IN, OUT and INOUT parameters, REFERENCE arguments, RETURN.

use sluice_esql_scalar::Value;

use super::stmt::stamp;
use super::{Exec, Flow, Frame, R, RtError, RtVal, Var};
use crate::runtime::ir::{Ex, Mode, RoutineIr, VarKind};

/// The deepest nesting of routine calls; deeper recursion is an error, not a stack overflow.
const MAX_CALL_DEPTH: u32 = 128;
/// Stack an evaluation may use (flow threads and test threads have at least 2 MiB).
const STACK_BUDGET: usize = 768 * 1024;

impl<'a> Exec<'a> {
    /// Call routine `r` with `args`, evaluated in the caller's `frame`; returns the routine's
    /// value. OUT and INOUT parameters are copied back to the caller's variables or fields.
    /// The routine's frame reuses the storage of an earlier call's, so a call allocates
    /// nothing once the evaluation has run a call as deep.
    pub fn call_with(&mut self, frame: &mut Frame, r: usize, args: &[Ex]) -> R<Option<RtVal>> {
        let size = self.prog.routines[r].frame_size as usize;
        let mut callee = Frame {
            vars: self.spare_frames.pop().unwrap_or_default(),
        };
        callee.vars.resize(size, Var::Scalar(Value::Null));
        let result = self.call_in(frame, &mut callee, r, args);
        callee.vars.clear();
        self.spare_frames.push(callee.vars);
        result
    }

    fn call_in(
        &mut self,
        frame: &mut Frame,
        callee: &mut Frame,
        r: usize,
        args: &[Ex],
    ) -> R<Option<RtVal>> {
        let prog = self.prog;
        let routine = &prog.routines[r];
        // Every argument is evaluated before any is converted to its parameter's type, and
        // before the routine is found unfit to call, so that errors come in that order.
        for (i, a) in args.iter().enumerate() {
            let param = routine.params.get(i);
            let by_ref = param.is_some_and(|p| matches!(p.kind, VarKind::Reference | VarKind::Row));
            let v = self.eval(frame, a)?;
            let v = if by_ref {
                v
            } else {
                RtVal::S(self.scalar_of(v)?)
            };
            let Some(p) = param else {
                continue;
            };
            let var = match (&p.kind, v) {
                (VarKind::Reference | VarKind::Row, RtVal::F(l)) => Var::Ref {
                    tree: l.tree,
                    node: l.node,
                    moved: true,
                },
                (VarKind::Scalar(_), RtVal::S(s)) if p.mode != Mode::Out => Var::Scalar(s),
                _ => Var::Scalar(Value::Null),
            };
            if let Some(slot) = callee.vars.get_mut(p.slot as usize) {
                *slot = var;
            }
        }
        if let Some(ext) = &routine.external
            && !routine.database
        {
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
        for p in &routine.params {
            if let (VarKind::Scalar(t), Some(Var::Scalar(v))) =
                (&p.kind, callee.vars.get_mut(p.slot as usize))
                && p.mode != Mode::Out
            {
                *v = super::cast_to(std::mem::replace(v, Value::Null), *t)?;
            }
        }
        if routine.database
            && let Some(ext) = &routine.external
        {
            self.call_database(callee, routine, ext)?;
            self.copy_back(frame, callee, routine, args)?;
            return Ok(None);
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
        let flow = self.block(callee, &routine.body);
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
            (Some(RtVal::S(s)), Some(t)) => Some(RtVal::S(super::cast_to(s, *t)?)),
            (v, _) => v,
        };
        self.copy_back(frame, callee, routine, args)?;
        Ok(ret)
    }

    /// Copy OUT and INOUT parameters back to the caller's variables or fields.
    fn copy_back(
        &mut self,
        frame: &mut Frame,
        callee: &mut Frame,
        routine: &RoutineIr,
        args: &[Ex],
    ) -> R<()> {
        for (p, a) in routine.params.iter().zip(args) {
            if p.mode == Mode::In || !matches!(p.kind, VarKind::Scalar(_)) {
                continue;
            }
            let Some(Var::Scalar(v)) = callee.vars.get_mut(p.slot as usize) else {
                continue;
            };
            let v = std::mem::replace(v, Value::Null);
            match a {
                Ex::Var(a) => *self.var_mut(frame, *a)? = Var::Scalar(v),
                Ex::Path(pth) => {
                    let at = self.nav_create(frame, pth)?;
                    self.set_value(at, &v)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}
