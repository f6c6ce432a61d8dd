//! A datasource's transaction as a resource of an invocation's unit of work.

use std::sync::Arc;

use sluice_db::{Datasource, UnitId};
use sluice_node_api::{Prepare, Resource, ResourceError};

/// A datasource's transaction in a flow's unit of work: committed when the flow completes,
/// rolled back when it fails — or when dropped without either.
pub struct DatabaseWork {
    datasource: Arc<Datasource>,
    unit: UnitId,
    /// The id it prepared under, until that transaction is committed or rolled back.
    prepared: Option<String>,
}

impl DatabaseWork {
    /// The transaction unit of work `unit` has open (or will open) on `datasource`.
    pub fn new(datasource: Arc<Datasource>, unit: UnitId) -> DatabaseWork {
        DatabaseWork {
            datasource,
            unit,
            prepared: None,
        }
    }
}

impl DatabaseWork {
    /// ESQL's COMMIT: commit the work so far, before the unit of work ends.
    pub fn commit_now(&mut self) -> Result<(), sluice_db::DbError> {
        self.datasource.commit(self.unit)
    }

    /// ESQL's ROLLBACK: undo the work so far, before the unit of work ends.
    pub fn rollback_now(&mut self) {
        self.datasource.rollback(self.unit);
    }
}

impl Resource for DatabaseWork {
    fn commit(&mut self) -> Result<(), ResourceError> {
        self.datasource
            .commit(self.unit)
            .map_err(|e| ResourceError::new(format!("datasource {}", self.datasource.name()), e))
    }

    fn rollback(&mut self) {
        self.datasource.rollback(self.unit);
    }

    fn prepare(&mut self, xid: &str) -> Result<Prepare, ResourceError> {
        if !self.datasource.can_prepare() {
            return Ok(Prepare::OnePhase);
        }
        match self.datasource.prepare(self.unit, xid) {
            Ok(true) => {
                self.prepared = Some(xid.to_string());
                Ok(Prepare::Prepared)
            }
            Ok(false) => Ok(Prepare::Nothing),
            Err(e) => Err(self.failed(e)),
        }
    }

    fn commit_prepared(&mut self) -> Result<(), ResourceError> {
        let Some(xid) = self.prepared.take() else {
            return Ok(());
        };
        match self.datasource.finish_prepared(&xid, true) {
            Ok(true) => Ok(()),
            Ok(false) => Err(ResourceError::new(
                format!("datasource {}", self.datasource.name()),
                format!("prepared transaction '{xid}' is no longer there to commit"),
            )),
            Err(e) => Err(self.failed(e)),
        }
    }

    fn rollback_prepared(&mut self) {
        if let Some(xid) = self.prepared.take()
            && let Err(error) = self.datasource.finish_prepared(&xid, false)
        {
            // Still prepared: recovery at the next start rolls it back (no decision names it).
            tracing::error!(%error, %xid, "Cannot roll back a prepared transaction; it is settled at the next start.");
        }
    }
}

impl DatabaseWork {
    fn failed(&self, e: sluice_db::DbError) -> ResourceError {
        ResourceError::new(format!("datasource {}", self.datasource.name()), e)
    }
}

impl Drop for DatabaseWork {
    fn drop(&mut self) {
        // Ending a unit of work twice is harmless: this only acts when nothing ended it.
        self.datasource.rollback(self.unit);
    }
}

#[cfg(test)]
mod tests {
    use sluice_db::{DbError, IN_MEMORY, SqlValueRef};
    use sluice_node_api::UnitOfWork;

    use super::*;

    /// A database whose commit fails while `t` holds a row without its parent in `p`.
    fn datasource() -> Arc<Datasource> {
        let ds = Datasource::open(IN_MEMORY).expect("open");
        ds.statement()
            .expect("connection")
            .execute_batch(
                "PRAGMA foreign_keys = ON;
                 CREATE TABLE p(id INTEGER PRIMARY KEY);
                 CREATE TABLE t(v INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);
                 INSERT INTO p VALUES (1);",
            )
            .expect("schema");
        ds
    }

    fn insert(ds: &Datasource, v: i64) {
        ds.statement()
            .expect("connection")
            .execute(
                "INSERT INTO t VALUES (?)",
                &[sluice_db::SqlValue::Integer(v)],
            )
            .expect("insert");
    }

    fn count(ds: &Datasource) -> i64 {
        let mut n = -1;
        ds.statement()
            .expect("connection")
            .query("SELECT COUNT(*) FROM t", &[], |r| {
                if let SqlValueRef::Integer(i) = r.get(0)? {
                    n = i;
                }
                Ok::<_, DbError>(())
            })
            .expect("count");
        n
    }

    fn joined(ds: &Arc<Datasource>) -> UnitOfWork {
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        let mut uow = UnitOfWork::default();
        uow.join(ds.name(), DatabaseWork::new(ds.clone(), unit));
        uow
    }

    #[test]
    fn database_work_commits_with_the_unit_of_work() {
        let ds = datasource();
        let mut uow = joined(&ds);
        insert(&ds, 1);
        uow.commit().expect("commit");
        assert_eq!(count(&ds), 1);
        assert!(!ds.in_transaction());
    }

    #[test]
    fn database_work_rolls_back_when_dropped_unended() {
        let ds = datasource();
        let uow = joined(&ds);
        insert(&ds, 1);
        drop(uow);
        assert_eq!(count(&ds), 0);
        assert!(!ds.in_transaction());
    }

    #[test]
    fn database_work_commit_error_names_the_datasource_and_keeps_the_cause() {
        let ds = datasource();
        let mut uow = joined(&ds);
        insert(&ds, 2);
        let err = uow.commit().expect_err("orphan row");
        assert_eq!(err.resource, "datasource :memory:");
        let cause = err.source.downcast_ref::<DbError>().expect("a DbError");
        assert!(matches!(cause, DbError::Commit { .. }), "{cause:?}");
        assert_eq!(count(&ds), 0, "the failed commit rolled back");
    }
}
