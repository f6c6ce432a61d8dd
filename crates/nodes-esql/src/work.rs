//! A datasource's transaction as a resource of an invocation's unit of work.

use std::sync::Arc;

use sluice_db::{Datasource, UnitId};
use sluice_node_api::{Resource, ResourceError};

/// A datasource's transaction in a flow's unit of work: committed when the flow completes,
/// rolled back when it fails — or when dropped without either.
pub struct DatabaseWork {
    datasource: Arc<Datasource>,
    unit: UnitId,
}

impl DatabaseWork {
    /// The transaction unit of work `unit` has open (or will open) on `datasource`.
    pub fn new(datasource: Arc<Datasource>, unit: UnitId) -> DatabaseWork {
        DatabaseWork { datasource, unit }
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
