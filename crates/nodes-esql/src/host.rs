//! What ESQL nodes offer their modules: PROPAGATE through the engine, and database work in
//! the flow's unit of work.

use std::sync::Arc;

use sluice_db::{Datasource, DbError, UnitId};
use sluice_esql::runtime::{Host, PropagateTo};
use sluice_node_api::{Ctx, ExceptionKind, Message, NodeError, Terminal, Tree};

pub use super::Transaction;
use super::work::DatabaseWork;

/// Output terminals of ESQL nodes by the number `PROPAGATE TO TERMINAL n` uses.
const NUMBERED: [&str; 5] = ["out", "out1", "out2", "out3", "out4"];

/// The product's exception 2321, with the error's text.
fn database_error(e: DbError) -> NodeError {
    NodeError::new(ExceptionKind::Database, 2321, e.to_string())
}

pub struct CtxHost<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    pub transaction: Transaction,
    /// `transaction: commit`: the node's own unit of work, once it touched the database.
    own: Option<(UnitId, Arc<Datasource>)>,
}

impl<'c, 'a> CtxHost<'c, 'a> {
    pub fn new(ctx: &'c mut Ctx<'a>, transaction: Transaction) -> CtxHost<'c, 'a> {
        CtxHost {
            ctx,
            transaction,
            own: None,
        }
    }

    /// The end of the node's run: with `transaction: commit`, commit its database work when
    /// the run succeeded, roll it back when it failed.
    pub fn finish(&mut self, succeeded: bool) -> Result<(), NodeError> {
        if let Some((unit, db)) = self.own.take() {
            if succeeded {
                db.commit(unit).map_err(database_error)?;
            } else {
                db.rollback(unit);
            }
        }
        Ok(())
    }

    fn terminal(&self, name: &str) -> Result<Terminal, NodeError> {
        self.ctx.terminal_named(name).ok_or_else(|| {
            NodeError::recoverable(format!("PROPAGATE to unknown terminal '{name}'"))
        })
    }
}

impl Drop for CtxHost<'_, '_> {
    fn drop(&mut self) {
        // A run that ended without `finish` (an error on the way out) does not commit.
        if let Some((unit, db)) = self.own.take() {
            db.rollback(unit);
        }
    }
}

impl Host for CtxHost<'_, '_> {
    fn propagate(
        &mut self,
        to: PropagateTo,
        msg: &mut Message,
        environment: &mut Tree,
    ) -> Result<(), NodeError> {
        // The Environment lives with the invocation while downstream nodes run.
        std::mem::swap(&mut self.ctx.inv.environment, environment);
        let r = match to {
            // The product's names for "no propagation" and the failure terminal.
            PropagateTo::Terminal(name) if name == "nowhere" => Ok(()),
            PropagateTo::TerminalIndex(-2) => Ok(()),
            PropagateTo::TerminalIndex(-1) => self
                .terminal("failure")
                .and_then(|t| self.ctx.propagate(t, msg)),
            PropagateTo::Terminal(name) => self
                .terminal(&name)
                .and_then(|t| self.ctx.propagate(t, msg)),
            PropagateTo::TerminalIndex(i) => {
                match usize::try_from(i).ok().and_then(|i| NUMBERED.get(i)) {
                    Some(name) => self.terminal(name).and_then(|t| self.ctx.propagate(t, msg)),
                    None => Err(NodeError::recoverable(format!(
                        "PROPAGATE to unknown terminal number {i}"
                    ))),
                }
            }
            PropagateTo::Label(l) => self.ctx.propagate_to_label(&l, msg),
        };
        std::mem::swap(&mut self.ctx.inv.environment, environment);
        r
    }

    fn context(&mut self) -> Option<&mut Tree> {
        self.ctx.inv.context.as_mut()
    }

    fn join_database(&mut self, db: &Arc<Datasource>) -> Result<(), NodeError> {
        match self.transaction {
            Transaction::Automatic => {
                // One transaction per datasource and invocation, whichever node begins it.
                self.ctx
                    .inv
                    .unit_of_work
                    .get_or_join(&work_key(db), || {
                        let unit = UnitId::next();
                        db.begin(unit).map(|_| DatabaseWork::new(db.clone(), unit))
                    })
                    .map_err(database_error)?;
            }
            Transaction::Commit => {
                if self.own.is_none() {
                    let unit = UnitId::next();
                    if db.begin(unit).map_err(database_error)? {
                        self.own = Some((unit, db.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    fn end_database_work(&mut self, db: &Arc<Datasource>, commit: bool) -> Result<(), NodeError> {
        match self.transaction {
            Transaction::Automatic => {
                // The work leaves the unit of work ended; the next statement joins anew.
                if let Some(mut work) = self
                    .ctx
                    .inv
                    .unit_of_work
                    .leave::<DatabaseWork>(&work_key(db))
                {
                    if commit {
                        work.commit_now().map_err(database_error)?;
                    } else {
                        work.rollback_now();
                    }
                }
            }
            Transaction::Commit => {
                if let Some((unit, db)) = self.own.take() {
                    if commit {
                        db.commit(unit).map_err(database_error)?;
                    } else {
                        db.rollback(unit);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The unit of work's key for a datasource's work: the datasource itself, so that nodes naming
/// one file share it (the registry gives them one) while each `:memory:` database is its own.
pub(crate) fn work_key(db: &Arc<Datasource>) -> String {
    format!("{:p}", Arc::as_ptr(db))
}
