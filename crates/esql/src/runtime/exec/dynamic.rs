//! EVAL at run time: the text is compiled (or found in the node's cache) and run in the
//! caller's frame, so it sees and changes the caller's variables.

use sluice_esql_scalar::Value;
use sluice_node_api::ExceptionKind;

use super::{Exec, Flow, Frame, R, RtError, RtVal};
use crate::EsqlError;
use crate::runtime::convert;
use crate::runtime::dynamic::EvalCode;
use crate::runtime::ir::Ex;

/// A compile error in EVAL text: a runtime error of the statement that ran EVAL. The
/// product reports it as exception text with the text and the problem as inserts.
fn compile_error(text: &str, problem: EsqlError) -> RtError {
    let problem = problem.to_string();
    let mut e = RtError::new(
        ExceptionKind::Recoverable,
        2402,
        "S42000",
        format!("EVAL text does not compile: {problem}"),
    );
    e.exception.inserts = vec![text.to_string(), problem];
    e
}

impl Exec<'_> {
    /// The text an EVAL argument gives, or `None` for NULL.
    fn eval_text(&mut self, frame: &mut Frame, e: &Ex) -> R<Option<String>> {
        match self.scalar(frame, e)? {
            Value::Null => Ok(None),
            v => Ok(Some(convert::text(&v))),
        }
    }

    /// `EVAL(text);`: run the text's statements. EVAL of NULL does nothing.
    pub(super) fn eval_statement(&mut self, frame: &mut Frame, site: u32, e: &Ex) -> R<Flow> {
        let Some(text) = self.eval_text(frame, e)? else {
            return Ok(Flow::Next);
        };
        let code = self
            .node
            .evals
            .get(self.prog, site, &text, false, self.line)
            .map_err(|p| compile_error(&text, p))?;
        let EvalCode::Stmts(body) = &*code else {
            return Err(RtError::general(
                "EVAL statement text compiled as an expression (this is a bug, please report it)",
            ));
        };
        // The text's labels are its own: a LEAVE or ITERATE cannot reach the caller's loops.
        Ok(match self.block(frame, body)? {
            Flow::Leave(_) | Flow::Iterate(_) => Flow::Next,
            other => other,
        })
    }

    /// `EVAL(text)` in an expression: the text's value. EVAL of NULL is NULL.
    pub(super) fn eval_function(&mut self, frame: &mut Frame, site: u32, e: &Ex) -> R<RtVal> {
        let Some(text) = self.eval_text(frame, e)? else {
            return Ok(RtVal::S(Value::Null));
        };
        let code = self
            .node
            .evals
            .get(self.prog, site, &text, true, self.line)
            .map_err(|p| compile_error(&text, p))?;
        let EvalCode::Expr(x) = &*code else {
            return Err(RtError::general(
                "EVAL function text compiled as statements (this is a bug, please report it)",
            ));
        };
        self.eval(frame, x)
    }
}
