//! PROPAGATE: the output trees (per the compute mode) sent on through the host.

use sluice_esql_scalar::Value;
use sluice_tree::Message;

use super::{Exec, Frame, R, RtError};
use crate::runtime::PropagateTo;
use crate::runtime::convert;
use crate::runtime::ir::{PropTarget, PropagateIr, trees};
use crate::syntax::ast::PropagateControl;

impl<'a> Exec<'a> {
    pub(super) fn propagate(&mut self, frame: &mut Frame, p: &PropagateIr) -> R<()> {
        let to = match &p.target {
            None => PropagateTo::Terminal("out".into()),
            Some(PropTarget::Terminal(e)) => match self.scalar(frame, e)? {
                Value::Integer(i) => PropagateTo::TerminalIndex(i),
                v => PropagateTo::Terminal(convert::text(&v)),
            },
            Some(PropTarget::Label(e)) => {
                PropagateTo::Label(convert::text(&self.scalar(frame, e)?))
            }
        };
        let mut input = Message {
            root: std::mem::replace(
                &mut self.trees[trees::IN_ROOT as usize],
                sluice_tree::Tree::new("Root"),
            ),
            local_environment: std::mem::replace(
                &mut self.trees[trees::IN_LOCAL_ENV as usize],
                sluice_tree::Tree::new("LocalEnvironment"),
            ),
            exception_list: std::mem::replace(
                &mut self.trees[trees::IN_EXCEPTION as usize],
                sluice_tree::Tree::new("ExceptionList"),
            ),
        };
        let keep = p.delete == PropagateControl::None;
        let saved_out: Option<[sluice_tree::Tree; 3]> = keep.then(|| {
            [
                self.trees[trees::OUT_ROOT as usize].clone(),
                self.trees[trees::OUT_LOCAL_ENV as usize].clone(),
                self.trees[trees::OUT_EXCEPTION as usize].clone(),
            ]
        });
        let mut msg = self.take_output(&input);
        if let Some(m) = &p.message
            && let Some(src) = self.nav(frame, m)?
        {
            msg.root = self.subtree_copy(src, "Root")?;
        }
        if let Some(e) = &p.exception
            && let Some(src) = self.nav(frame, e)?
        {
            msg.exception_list = self.subtree_copy(src, "ExceptionList")?;
        }
        if p.finalize == PropagateControl::Default {
            super::finalize::finalize(&mut msg.root)?;
        }
        let mut own_env = match &p.environment {
            Some(e) => match self.nav(frame, e)? {
                Some(src) => Some(self.subtree_copy(src, "Environment")?),
                None => None,
            },
            None => None,
        };
        // Downstream nodes may use shared state of this program: unlock while they run.
        let held = self.holds_shared();
        self.release_shared();
        self.swap_context();
        let r = match own_env.as_mut() {
            Some(env) => self.host.propagate(to, &mut msg, env),
            None => {
                let env = &mut self.trees[trees::ENVIRONMENT as usize];
                self.host.propagate(to, &mut msg, env)
            }
        };
        self.swap_context();
        if held {
            self.acquire_shared()?;
        }
        std::mem::swap(&mut self.trees[trees::IN_ROOT as usize], &mut input.root);
        std::mem::swap(
            &mut self.trees[trees::IN_LOCAL_ENV as usize],
            &mut input.local_environment,
        );
        std::mem::swap(
            &mut self.trees[trees::IN_EXCEPTION as usize],
            &mut input.exception_list,
        );
        match saved_out {
            Some([a, b, c]) => {
                self.trees[trees::OUT_ROOT as usize] = a;
                self.trees[trees::OUT_LOCAL_ENV as usize] = b;
                self.trees[trees::OUT_EXCEPTION as usize] = c;
            }
            // DELETE DEFAULT: the next PROPAGATE starts from empty output trees, whatever the
            // compute mode took for this one.
            None => {
                self.trees[trees::OUT_ROOT as usize] = sluice_tree::Tree::new("Root");
                self.trees[trees::OUT_LOCAL_ENV as usize] =
                    sluice_tree::Tree::new("LocalEnvironment");
                self.trees[trees::OUT_EXCEPTION as usize] = sluice_tree::Tree::new("ExceptionList");
            }
        }
        r.map_err(|e| RtError {
            exception: e.exception,
            sqlstate: "S00000".into(),
            native: 0,
            passed_up: e.passed_up,
        })
    }
}
