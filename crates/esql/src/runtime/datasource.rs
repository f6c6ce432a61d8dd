//! A node's database and the unit of work its changes belong to.
//!
//! One SQLite connection per datasource. A unit of work (a flow invocation, or one node
//! evaluation for `transaction: commit`) that touches the database opens a transaction on it
//! (`BEGIN`) and owns the connection until it commits or rolls back; statements from other
//! threads wait for that, so one invocation never sees or commits another's work. A flow
//! invocation runs on one thread from start to end (propagation is synchronous), which is
//! why the owner is also identified by its thread: nodes further down the same invocation
//! use the open transaction as it is.
//!
//! Lock order: `owner` before `conn`. `conn` is held only for one statement.

use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};
use rusqlite::Connection;
use sluice_node_api::{Resource, ResourceError};

/// How long a unit of work waits for another to release the connection.
const WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    thread: ThreadId,
    unit: u64,
}

/// A database reached through the `Database` correlation name.
pub struct Datasource {
    name: String,
    owner: Mutex<Option<Owner>>,
    freed: Condvar,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Datasource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Datasource({})", self.name)
    }
}

impl Datasource {
    /// Open a database file, or a private in-memory database for `:memory:`.
    pub fn open(datasource: &str) -> Result<Arc<Datasource>, String> {
        let conn = if datasource == ":memory:" {
            Connection::open_in_memory()
        } else {
            Connection::open(datasource)
        }
        .map_err(|e| format!("cannot open database {datasource}: {e}"))?;
        Ok(Arc::new(Datasource {
            name: datasource.to_string(),
            owner: Mutex::new(None),
            freed: Condvar::new(),
            conn: Mutex::new(conn),
        }))
    }

    /// The datasource as configured (a path, or `:memory:`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether a unit of work has a transaction open.
    pub fn in_transaction(&self) -> bool {
        self.owner.lock().is_some()
    }

    /// Wait until no other thread's unit of work owns the connection (or fail after a while).
    fn wait_free<'g>(&'g self, me: ThreadId) -> Result<MutexGuard<'g, Option<Owner>>, String> {
        let mut owner = self.owner.lock();
        while owner.is_some_and(|o| o.thread != me) {
            if self.freed.wait_for(&mut owner, WAIT).timed_out()
                && owner.is_some_and(|o| o.thread != me)
            {
                return Err(format!(
                    "database {} stayed busy in another unit of work for {}s",
                    self.name,
                    WAIT.as_secs()
                ));
            }
        }
        Ok(owner)
    }

    /// Join unit of work `unit` (from this thread): `BEGIN` when it has no transaction open
    /// yet. `Ok(true)` when this call began it — the caller then ends it with [`commit`] or
    /// [`rollback`] (or hands a [`DatabaseWork`] to the unit of work).
    ///
    /// [`commit`]: Datasource::commit
    /// [`rollback`]: Datasource::rollback
    pub fn begin(&self, unit: u64) -> Result<bool, String> {
        let me = std::thread::current().id();
        let mut owner = self.wait_free(me)?;
        match *owner {
            Some(o) if o.unit == unit => return Ok(false),
            Some(_) => {
                return Err(format!(
                    "database {} has a transaction open for a node further up this flow \
                     (its `transaction` is `commit`); use `automatic` there or another datasource",
                    self.name
                ));
            }
            None => {}
        }
        self.conn
            .lock()
            .execute_batch("BEGIN")
            .map_err(|e| format!("cannot begin a transaction on {}: {e}", self.name))?;
        *owner = Some(Owner { thread: me, unit });
        Ok(true)
    }

    /// Commit unit of work `unit`'s transaction. A failed commit rolls back.
    pub fn commit(&self, unit: u64) -> Result<(), String> {
        self.end(unit, true)
    }

    /// Roll back unit of work `unit`'s transaction.
    pub fn rollback(&self, unit: u64) {
        let _ = self.end(unit, false);
    }

    fn end(&self, unit: u64, commit: bool) -> Result<(), String> {
        let mut owner = self.owner.lock();
        if owner.is_none_or(|o| o.unit != unit) {
            return Ok(());
        }
        let conn = self.conn.lock();
        let r = if commit {
            conn.execute_batch("COMMIT").map_err(|e| {
                let _ = conn.execute_batch("ROLLBACK");
                format!("cannot commit the work on database {}: {e}", self.name)
            })
        } else {
            // The transaction may be gone already (SQLite rolls back on some errors).
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Ok(())
        };
        drop(conn);
        *owner = None;
        self.freed.notify_all();
        r
    }

    /// The connection for one statement, once no other thread's unit of work owns it.
    pub(crate) fn statement(&self) -> Result<MutexGuard<'_, Connection>, String> {
        let me = std::thread::current().id();
        let owner = self.wait_free(me)?;
        // Locking the connection before letting go of `owner` keeps a BEGIN of another thread
        // from slipping in between: this statement runs on its own, before that transaction.
        let conn = self.conn.lock();
        drop(owner);
        Ok(conn)
    }
}

/// A datasource's transaction as a participant in a flow's unit of work: committed when the
/// flow completes, rolled back when it fails — or when dropped without either.
pub struct DatabaseWork {
    datasource: Arc<Datasource>,
    unit: u64,
}

impl DatabaseWork {
    pub fn new(datasource: Arc<Datasource>, unit: u64) -> DatabaseWork {
        DatabaseWork { datasource, unit }
    }
}

impl Resource for DatabaseWork {
    fn commit(&mut self) -> Result<(), ResourceError> {
        self.datasource
            .commit(self.unit)
            .map_err(|e| ResourceError::new(format!("datasource {}", self.datasource.name), e))
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

/// A number for a new unit of work, unique in the process.
pub fn new_unit_of_work() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(ds: &Datasource) -> i64 {
        ds.statement()
            .expect("connection")
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .expect("count")
    }

    fn table() -> Arc<Datasource> {
        let ds = Datasource::open(":memory:").expect("open");
        ds.statement()
            .expect("connection")
            .execute_batch("CREATE TABLE t(v INTEGER)")
            .expect("create");
        ds
    }

    fn insert(ds: &Datasource) {
        ds.statement()
            .expect("connection")
            .execute_batch("INSERT INTO t VALUES (1)")
            .expect("insert");
    }

    #[test]
    fn rollback_discards_work_of_the_unit() {
        let ds = table();
        assert!(ds.begin(7).expect("begin"));
        assert!(!ds.begin(7).expect("join again"), "the same unit joins");
        insert(&ds);
        ds.rollback(7);
        assert_eq!(count(&ds), 0);
        assert!(!ds.in_transaction());
    }

    #[test]
    fn commit_keeps_work_and_frees_the_connection() {
        let ds = table();
        assert!(ds.begin(8).expect("begin"));
        insert(&ds);
        ds.commit(8).expect("commit");
        assert!(!ds.in_transaction());
        assert_eq!(count(&ds), 1);
    }

    #[test]
    fn dropped_participant_rolls_back() {
        let ds = table();
        assert!(ds.begin(9).expect("begin"));
        insert(&ds);
        drop(DatabaseWork::new(ds.clone(), 9));
        assert_eq!(count(&ds), 0);
    }

    #[test]
    fn other_unit_on_same_thread_is_an_error_not_a_deadlock() {
        let ds = table();
        assert!(ds.begin(10).expect("begin"));
        let err = ds.begin(11).expect_err("nested unit");
        assert!(err.contains("transaction open"), "{err}");
        ds.rollback(10);
    }

    #[test]
    fn other_thread_waits_for_the_unit_to_end() {
        let ds = table();
        assert!(ds.begin(12).expect("begin"));
        insert(&ds);
        let other = ds.clone();
        let t = std::thread::spawn(move || {
            // Runs only after unit 12 ended, so it sees its outcome.
            count(&other)
        });
        std::thread::sleep(Duration::from_millis(50));
        ds.rollback(12);
        assert_eq!(t.join().expect("thread"), 0);
    }
}
