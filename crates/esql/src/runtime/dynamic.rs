//! EVAL: ESQL text compiled at run time in the scope of the routine that runs it.
//!
//! The compiler records, at every EVAL, the names in scope (the routine's locals, the module's
//! and schema's variables, the routines it can call). At run time the text is parsed inside a
//! small wrapper routine and compiled against that record, so it reads and sets the caller's
//! variables and the correlation names exactly as code written in place would. Compiled texts
//! are cached per node, keyed by site and text, so an EVAL repeated with the same text
//! compiles once.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::compile::{Compiled, Cx};
use super::ir::{Ex, St};
use crate::EsqlError;
use crate::syntax::ast::{Item, RoutineBody, StmtKind};

/// How many compiled texts a node keeps; beyond that the cache starts again, so that texts
/// built from message data cannot grow it without bound.
const CACHE_ENTRIES: usize = 64;

/// Compiled EVAL text.
#[derive(Debug)]
pub(crate) enum EvalCode {
    /// The statement form: one block holding the text's statements.
    Stmts(Vec<St>),
    /// The function form: one expression.
    Expr(Ex),
}

type Key = (u32, bool, Box<str>);

/// A node's compiled EVAL texts.
#[derive(Default)]
pub(crate) struct EvalCache {
    entries: Mutex<HashMap<Key, Arc<EvalCode>>>,
}

impl EvalCache {
    /// The compiled form of `text` at EVAL site `site` (statements, or an expression when
    /// `expr`), compiling it on first use. `line` is the line of the EVAL, which the compiled
    /// statements report as theirs. The error names the line and column in the text.
    pub fn get(
        &self,
        prog: &Compiled,
        site: u32,
        text: &str,
        expr: bool,
        line: u32,
    ) -> Result<Arc<EvalCode>, EsqlError> {
        let key: Key = (site, expr, text.into());
        if let Some(hit) = self.entries.lock().get(&key) {
            return Ok(hit.clone());
        }
        // Compiling happens outside the lock: other instances keep using the cache meanwhile.
        let code = Arc::new(compile_text(prog, site, text, expr, line)?);
        let mut entries = self.entries.lock();
        if entries.len() >= CACHE_ENTRIES {
            entries.clear();
        }
        entries.insert(key, code.clone());
        Ok(code)
    }

    /// How many texts are compiled and cached.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }
}

/// The wrapper's first line; the text starts on the second, so its lines are the wrapper's
/// minus one and its columns are unchanged.
const STMT_HEAD: &str = "CREATE PROCEDURE Eval() BEGIN\n";
const EXPR_HEAD: &str = "CREATE PROCEDURE Eval() BEGIN RETURN (\n";

fn compile_text(
    prog: &Compiled,
    site: u32,
    text: &str,
    expr: bool,
    line: u32,
) -> Result<EvalCode, EsqlError> {
    let site = prog
        .eval_sites
        .get(site as usize)
        .ok_or(EsqlError::Internal(
            "an EVAL site is missing from the program",
        ))?;
    let src = if expr {
        format!("{EXPR_HEAD}{text}\n);\nEND;")
    } else {
        let sep = if text.trim_end().ends_with(';') {
            ""
        } else {
            ";"
        };
        format!("{STMT_HEAD}{text}{sep}\nEND;")
    };
    let file =
        crate::syntax::parse(&src).map_err(|diagnostics| EsqlError::EvalText { diagnostics })?;
    let shape = EsqlError::EvalShape { expression: expr };
    let body = match file.items.as_slice() {
        [Item::Routine(r)] if file.schema.is_none() && file.path.is_empty() => match &r.body {
            RoutineBody::Esql(b) => b,
            RoutineBody::External(_) => return Err(shape),
        },
        _ => return Err(shape),
    };
    let mut cx = Cx::for_eval(&prog.index, &src, site, line);
    // BEGIN ATOMIC needs a mutex made at deploy time, which run-time text does not have.
    cx.atomic_base = usize::MAX / 2;
    let code = if expr {
        let e = match &body.kind {
            StmtKind::Begin { body, .. } => match body.as_slice() {
                [s] => match &s.kind {
                    StmtKind::Return(Some(e)) => e,
                    _ => return Err(shape),
                },
                _ => return Err(shape),
            },
            _ => return Err(shape),
        };
        EvalCode::Expr(cx.expr(e))
    } else {
        EvalCode::Stmts(vec![cx.stmt(body)])
    };
    if cx.atomic_base != usize::MAX / 2 {
        return Err(EsqlError::EvalAtomic);
    }
    let diagnostics = cx.take_diags();
    if !diagnostics.is_empty() {
        return Err(EsqlError::EvalText { diagnostics });
    }
    Ok(code)
}
