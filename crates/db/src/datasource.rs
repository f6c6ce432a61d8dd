//! A datasource and the unit of work its changes belong to.
//!
//! SQLite: one connection per datasource. A unit of work (a flow invocation, or one node
//! evaluation for `transaction: commit`) that touches the database opens a transaction on it
//! (`BEGIN`) and owns the connection until it commits or rolls back; statements from other
//! threads wait for that, so one invocation never sees or commits another's work. A flow
//! invocation runs on one thread from start to end (propagation is synchronous), which is why
//! the owner is also identified by its thread: nodes further down the same invocation use the
//! open transaction as it is.
//!
//! PostgreSQL: a pool of connections ([`crate::pg`]); each unit of work holds one of its own,
//! found by the same thread identity.
//!
//! Lock order: `owner` before `conn`. `conn` is held only for one statement.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ThreadId;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::DbError;
use crate::connection::{Connection, Held};
use crate::pg::Pool;

/// How long a unit of work waits for another to release the connection.
const WAIT: Duration = Duration::from_secs(30);

/// How many connections a PostgreSQL datasource opens at most.
pub const POSTGRES_POOL: usize = 8;

/// How long connecting to PostgreSQL may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The name that opens a private in-memory database.
pub const IN_MEMORY: &str = ":memory:";

/// A unit of work's number, unique in the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnitId(u64);

impl UnitId {
    /// A number no unit of work of this process had before.
    pub fn next() -> UnitId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        UnitId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    thread: ThreadId,
    unit: UnitId,
}

struct Sqlite {
    owner: Mutex<Option<Owner>>,
    freed: Condvar,
    conn: Mutex<rusqlite::Connection>,
}

enum Engine {
    Sqlite(Sqlite),
    Postgres(Box<Pool>),
}

/// A database: an SQLite one reached through one connection shared by the units of work that
/// use it, or a PostgreSQL server reached through a pool.
pub struct Datasource {
    name: String,
    wait: Duration,
    engine: Engine,
}

impl std::fmt::Debug for Datasource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Datasource({})", self.name)
    }
}

impl Datasource {
    /// Open a database file, or a private in-memory database for `:memory:`.
    pub fn open(datasource: &str) -> Result<Arc<Datasource>, DbError> {
        if datasource == IN_MEMORY {
            let conn = rusqlite::Connection::open_in_memory().map_err(|source| DbError::Open {
                datasource: datasource.to_string(),
                source,
            })?;
            return Ok(Datasource::with(datasource.to_string(), conn));
        }
        Datasource::open_file(Path::new(datasource))
    }

    /// Open the database file at `path`; the datasource is named by the path.
    pub fn open_file(path: &Path) -> Result<Arc<Datasource>, DbError> {
        let name = path.display().to_string();
        // Write-ahead logging: readers in other processes (a report, the sqlite3 shell) do not
        // block the flows' writes, and a commit is one append rather than a journal rewrite.
        let opened = rusqlite::Connection::open(path).and_then(|conn| {
            conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
            Ok(conn)
        });
        match opened {
            Ok(conn) => Ok(Datasource::with(name, conn)),
            Err(source) => Err(DbError::Open {
                datasource: name,
                source,
            }),
        }
    }

    /// A PostgreSQL datasource named `name`, for the server `conninfo` names (a
    /// `postgresql://` URL or `key=value` pairs), with `password` when given (it overrides
    /// one in `conninfo`). Nothing is connected until the first statement.
    pub fn postgres(
        name: &str,
        conninfo: &str,
        password: Option<&str>,
    ) -> Result<Arc<Datasource>, DbError> {
        let mut config: postgres::Config = conninfo.parse().map_err(|source| DbError::Config {
            datasource: name.to_string(),
            source,
        })?;
        if let Some(p) = password {
            config.password(p);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("sluice");
        }
        Ok(Arc::new(Datasource {
            name: name.to_string(),
            wait: WAIT,
            engine: Engine::Postgres(Box::new(Pool::new(
                name.to_string(),
                config,
                POSTGRES_POOL,
                WAIT,
            ))),
        }))
    }

    fn with(name: String, conn: rusqlite::Connection) -> Arc<Datasource> {
        Arc::new(Datasource {
            name,
            wait: WAIT,
            engine: Engine::Sqlite(Sqlite {
                owner: Mutex::new(None),
                freed: Condvar::new(),
                conn: Mutex::new(conn),
            }),
        })
    }

    /// The datasource as configured (a path, `:memory:`, or its name in sluice.yaml).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which database product the datasource is.
    pub fn product(&self) -> crate::Product {
        match self.engine {
            Engine::Sqlite(_) => crate::Product::Sqlite,
            Engine::Postgres(_) => crate::Product::Postgres,
        }
    }

    /// Whether a unit of work has a transaction open.
    pub fn in_transaction(&self) -> bool {
        match &self.engine {
            Engine::Sqlite(s) => s.owner.lock().is_some(),
            Engine::Postgres(p) => p.in_transaction(),
        }
    }

    /// Wait until no other thread's unit of work owns the connection (or fail after a while).
    fn wait_free<'s>(
        &self,
        s: &'s Sqlite,
        me: ThreadId,
    ) -> Result<MutexGuard<'s, Option<Owner>>, DbError> {
        let mut owner = s.owner.lock();
        while owner.is_some_and(|o| o.thread != me) {
            if s.freed.wait_for(&mut owner, self.wait).timed_out()
                && owner.is_some_and(|o| o.thread != me)
            {
                return Err(DbError::Busy {
                    datasource: self.name.clone(),
                    waited: self.wait,
                });
            }
        }
        Ok(owner)
    }

    /// Join unit of work `unit` (from this thread): `BEGIN` when it has no transaction open
    /// yet (on PostgreSQL, with the unit's first statement). `Ok(true)` when this call began
    /// it — the caller then ends it with [`commit`] or [`rollback`] (or hands that duty to the
    /// unit of work it keeps).
    ///
    /// [`commit`]: Datasource::commit
    /// [`rollback`]: Datasource::rollback
    pub fn begin(&self, unit: UnitId) -> Result<bool, DbError> {
        let s = match &self.engine {
            Engine::Sqlite(s) => s,
            Engine::Postgres(p) => return p.begin(unit),
        };
        let me = std::thread::current().id();
        let mut owner = self.wait_free(s, me)?;
        match *owner {
            Some(o) if o.unit == unit => return Ok(false),
            Some(_) => {
                return Err(DbError::HeldFurtherUp {
                    datasource: self.name.clone(),
                });
            }
            None => {}
        }
        s.conn
            .lock()
            .execute_batch("BEGIN")
            .map_err(|source| DbError::Begin {
                datasource: self.name.clone(),
                source,
            })?;
        *owner = Some(Owner { thread: me, unit });
        Ok(true)
    }

    /// Commit unit of work `unit`'s transaction. A failed commit rolls back. Nothing happens
    /// when `unit` has no transaction open (it ended already, or never began one).
    pub fn commit(&self, unit: UnitId) -> Result<(), DbError> {
        self.end(unit, true)
    }

    /// Roll back unit of work `unit`'s transaction, if it has one open.
    pub fn rollback(&self, unit: UnitId) {
        // Rolling back reports nothing: there is no error to report.
        let _ = self.end(unit, false);
    }

    fn end(&self, unit: UnitId, commit: bool) -> Result<(), DbError> {
        let s = match &self.engine {
            Engine::Sqlite(s) => s,
            Engine::Postgres(p) => return p.end(unit, commit),
        };
        let mut owner = s.owner.lock();
        if owner.is_none_or(|o| o.unit != unit) {
            return Ok(());
        }
        let conn = s.conn.lock();
        let r = if commit {
            conn.execute_batch("COMMIT").map_err(|source| {
                sqlite_rollback(&conn);
                DbError::Commit {
                    datasource: self.name.clone(),
                    source,
                }
            })
        } else {
            sqlite_rollback(&conn);
            Ok(())
        };
        drop(conn);
        *owner = None;
        s.freed.notify_all();
        r
    }

    /// Whether the datasource can prepare a transaction (two-phase commit): PostgreSQL.
    pub fn can_prepare(&self) -> bool {
        matches!(self.engine, Engine::Postgres(_))
    }

    /// Phase one of two-phase commit: end unit of work `unit`'s transaction with
    /// `PREPARE TRANSACTION 'xid'`. `Ok(false)` when the unit did nothing here (nothing is
    /// left prepared). A failure leaves nothing prepared.
    pub fn prepare(&self, unit: UnitId, xid: &str) -> Result<bool, DbError> {
        match &self.engine {
            Engine::Postgres(p) => p.prepare(unit, xid),
            Engine::Sqlite(_) => Err(DbError::NoTwoPhase {
                datasource: self.name.clone(),
            }),
        }
    }

    /// Phase two: commit (`COMMIT PREPARED`) or roll back (`ROLLBACK PREPARED`) the prepared
    /// transaction `xid`. `Ok(false)` when no transaction of that id is prepared.
    pub fn finish_prepared(&self, xid: &str, commit: bool) -> Result<bool, DbError> {
        match &self.engine {
            Engine::Postgres(p) => p.finish_prepared(xid, commit),
            Engine::Sqlite(_) => Err(DbError::NoTwoPhase {
                datasource: self.name.clone(),
            }),
        }
    }

    /// The ids of the transactions left prepared in the database whose id starts with
    /// `prefix` (none for SQLite, which cannot prepare).
    pub fn prepared(&self, prefix: &str) -> Result<Vec<String>, DbError> {
        match &self.engine {
            Engine::Postgres(p) => p.prepared(prefix),
            Engine::Sqlite(_) => Ok(Vec::new()),
        }
    }

    /// The connection for one statement, once no other thread's unit of work owns it.
    pub fn statement(&self) -> Result<Connection<'_>, DbError> {
        let s = match &self.engine {
            Engine::Sqlite(s) => s,
            Engine::Postgres(p) => {
                let lease = p.lease()?;
                // Warnings left from an earlier statement are not this one's.
                if let Some(c) = &lease.conn {
                    c.take_warnings();
                }
                return Ok(Connection {
                    datasource: &self.name,
                    held: Held::Postgres(Box::new(std::cell::RefCell::new(lease))),
                });
            }
        };
        let me = std::thread::current().id();
        let owner = self.wait_free(s, me)?;
        // Locking the connection before letting go of `owner` keeps a BEGIN of another thread
        // from slipping in between: this statement runs on its own, before that transaction.
        let conn = s.conn.lock();
        drop(owner);
        Ok(Connection {
            datasource: &self.name,
            held: Held::Sqlite(conn),
        })
    }
}

/// Roll back the open transaction, if there still is one: SQLite ends a transaction by itself
/// on some errors. A failed rollback leaves nothing to do but go on: the connection is then
/// outside any transaction or will be rolled back when closed.
fn sqlite_rollback(conn: &rusqlite::Connection) {
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SqlValue, SqlValueRef};

    fn count(ds: &Datasource) -> i64 {
        let mut n = 0;
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

    fn table() -> Arc<Datasource> {
        let ds = Datasource::open(IN_MEMORY).expect("open");
        ds.statement()
            .expect("connection")
            .execute_batch("CREATE TABLE t(v INTEGER)")
            .expect("create");
        ds
    }

    fn insert(ds: &Datasource) {
        ds.statement()
            .expect("connection")
            .execute("INSERT INTO t VALUES (?)", &[SqlValue::Integer(1)])
            .expect("insert");
    }

    #[test]
    fn rollback_discards_work_of_the_unit() {
        let ds = table();
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        assert!(!ds.begin(unit).expect("join again"), "the same unit joins");
        insert(&ds);
        ds.rollback(unit);
        assert_eq!(count(&ds), 0);
        assert!(!ds.in_transaction());
    }

    #[test]
    fn commit_keeps_work_and_frees_the_connection() {
        let ds = table();
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        insert(&ds);
        ds.commit(unit).expect("commit");
        assert!(!ds.in_transaction());
        assert_eq!(count(&ds), 1);
    }

    #[test]
    fn commit_of_another_unit_does_nothing_when_it_has_no_transaction() {
        let ds = table();
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        insert(&ds);
        ds.commit(UnitId::next()).expect("nothing to commit");
        ds.rollback(UnitId::next());
        assert!(ds.in_transaction());
        ds.rollback(unit);
        assert_eq!(count(&ds), 0);
    }

    #[test]
    fn commit_fails_and_rolls_back_when_a_deferred_constraint_is_broken() {
        let ds = Datasource::open(IN_MEMORY).expect("open");
        ds.statement()
            .expect("connection")
            .execute_batch(
                "PRAGMA foreign_keys = ON;
                 CREATE TABLE p(id INTEGER PRIMARY KEY);
                 CREATE TABLE t(v INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);",
            )
            .expect("schema");
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        insert(&ds);
        let err = ds.commit(unit).expect_err("orphan row");
        assert!(matches!(err, DbError::Commit { .. }), "{err:?}");
        assert!(err.to_string().contains(":memory:"), "{err}");
        assert_eq!(err.native_code(), Some(787), "SQLITE_CONSTRAINT_FOREIGNKEY");
        assert!(!ds.in_transaction());
        assert_eq!(count(&ds), 0);
    }

    #[test]
    fn other_unit_on_same_thread_is_an_error_not_a_deadlock() {
        let ds = table();
        let first = UnitId::next();
        assert!(ds.begin(first).expect("begin"));
        let err = ds.begin(UnitId::next()).expect_err("nested unit");
        assert!(matches!(err, DbError::HeldFurtherUp { .. }), "{err:?}");
        assert!(err.to_string().contains("transaction open"), "{err}");
        ds.rollback(first);
    }

    #[test]
    fn other_thread_waits_for_the_unit_to_end() {
        let ds = table();
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        insert(&ds);
        let other = ds.clone();
        let t = std::thread::spawn(move || {
            // Runs only after the unit ended, so it sees its outcome.
            count(&other)
        });
        std::thread::sleep(Duration::from_millis(50));
        ds.rollback(unit);
        assert_eq!(t.join().expect("thread"), 0);
    }

    #[test]
    fn statement_fails_busy_when_another_unit_keeps_the_connection_too_long() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        let mut ds = Datasource::with(IN_MEMORY.to_string(), conn);
        Arc::get_mut(&mut ds).expect("sole owner").wait = Duration::from_millis(20);
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        let other = ds.clone();
        let err = std::thread::spawn(move || other.statement().err())
            .join()
            .expect("thread")
            .expect("busy");
        assert!(matches!(err, DbError::Busy { .. }), "{err:?}");
        assert!(err.to_string().contains("stayed busy"), "{err}");
        ds.rollback(unit);
    }

    #[test]
    fn statement_error_names_the_datasource_and_keeps_sqlite_code() {
        let ds = table();
        let err = ds
            .statement()
            .expect("connection")
            .execute("INSERT INTO nope VALUES (1)", &[])
            .expect_err("no table");
        assert!(matches!(err, DbError::Statement { .. }), "{err:?}");
        assert_eq!(err.datasource(), IN_MEMORY);
        assert!(err.to_string().contains("no such table"), "{err}");
        assert_eq!(err.native_code(), Some(1), "SQLITE_ERROR");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn open_fails_naming_the_file_when_its_folder_is_missing() {
        let path = std::env::temp_dir()
            .join(format!("sluice-db-missing-{}", std::process::id()))
            .join("x.sqlite");
        let err = Datasource::open(&path.display().to_string()).expect_err("no folder");
        assert!(matches!(err, DbError::Open { .. }), "{err:?}");
        assert!(err.to_string().contains("x.sqlite"), "{err}");
    }

    #[test]
    fn query_gives_rows_in_order_with_column_names() {
        let ds = table();
        let conn = ds.statement().expect("connection");
        conn.execute_batch("INSERT INTO t VALUES (1), (2), (NULL)")
            .expect("insert");
        assert!(conn.returns_rows("SELECT v FROM t").expect("prepare"));
        assert!(!conn.returns_rows("DELETE FROM t").expect("prepare"));
        let mut got = Vec::new();
        conn.query(
            "SELECT v AS val, 'x' AS tag FROM t WHERE v IS NULL OR v > ? ORDER BY rowid",
            &[SqlValue::Integer(1)],
            |r| {
                assert_eq!(r.columns(), ["val", "tag"]);
                got.push((format!("{:?}", r.get(0)?), format!("{:?}", r.get(1)?)));
                Ok::<_, DbError>(())
            },
        )
        .expect("query");
        assert_eq!(
            got,
            [
                ("Integer(2)".to_string(), "Text([120])".to_string()),
                ("Null".to_string(), "Text([120])".to_string())
            ]
        );
    }
}
