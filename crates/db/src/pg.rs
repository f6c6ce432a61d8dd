//! A PostgreSQL datasource: a small pool of connections shared by a flow's instances.
//!
//! A unit of work takes one connection for its first statement, sends `BEGIN` then, and keeps
//! it until it commits or rolls back; other units of work take other connections, so they run
//! side by side as the server's isolation allows. A statement outside any unit of work takes
//! a connection for itself and runs in autocommit. Connections are made when first needed
//! (building a flow never touches the network), and one found closed is dropped and replaced
//! on the next use.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use postgres::{Client, NoTls, Statement};

use crate::{DbError, UnitId, Warning};

/// Statements kept prepared per connection; the cache starts again when full.
const STATEMENT_CACHE: usize = 256;

/// One server connection and the statements prepared on it, by SQL text (with `?` markers).
pub(crate) struct PgConn {
    pub(crate) client: Client,
    prepared: HashMap<String, (Statement, usize)>,
    /// The warnings the server sent since they were last taken.
    warnings: Arc<Mutex<Vec<Warning>>>,
}

impl PgConn {
    pub(crate) fn take_warnings(&self) -> Vec<Warning> {
        std::mem::take(&mut *self.warnings.lock())
    }

    /// The statement for `sql` (markers numbered), prepared once per connection, and how many
    /// markers it has.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<(Statement, usize), postgres::Error> {
        if let Some(p) = self.prepared.get(sql) {
            return Ok(p.clone());
        }
        let (numbered, markers) = crate::pg_codec::number_markers(sql);
        let st = self.client.prepare(&numbered)?;
        if self.prepared.len() >= STATEMENT_CACHE {
            self.prepared.clear();
        }
        self.prepared.insert(sql.to_string(), (st.clone(), markers));
        Ok((st, markers))
    }
}

struct UnitConn {
    unit: UnitId,
    /// None before the first statement, and while a statement has it.
    conn: Option<PgConn>,
    begun: bool,
}

#[derive(Default)]
struct State {
    idle: Vec<PgConn>,
    /// Connections made and not yet dropped (idle, held by units, or by statements).
    open: usize,
    units: HashMap<ThreadId, UnitConn>,
}

/// The pool of one PostgreSQL datasource.
pub(crate) struct Pool {
    name: String,
    config: postgres::Config,
    max: usize,
    wait: Duration,
    state: Mutex<State>,
    freed: Condvar,
}

/// A connection lent to one statement; it goes back to its unit of work, or to the pool,
/// when the statement is done.
pub(crate) struct Lease<'p> {
    pool: &'p Pool,
    pub(crate) conn: Option<PgConn>,
    unit: Option<UnitId>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        let mut st = self.pool.state.lock();
        if let Some(unit) = self.unit
            && let Some(u) = st.units.get_mut(&std::thread::current().id())
            && u.unit == unit
        {
            u.conn = Some(conn);
            return;
        }
        self.pool.give_back(&mut st, conn);
    }
}

impl Pool {
    pub(crate) fn new(name: String, config: postgres::Config, max: usize, wait: Duration) -> Pool {
        Pool {
            name,
            config,
            max: max.max(1),
            wait,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    fn give_back(&self, st: &mut State, conn: PgConn) {
        if conn.client.is_closed() {
            st.open -= 1;
        } else {
            st.idle.push(conn);
        }
        self.freed.notify_one();
    }

    fn discard(&self, conn: PgConn) {
        drop(conn);
        self.state.lock().open -= 1;
        self.freed.notify_one();
    }

    /// An idle connection, a new one while there are fewer than `max`, or one that another
    /// unit of work gives back within the wait.
    fn acquire(&self) -> Result<PgConn, DbError> {
        let mut st = self.state.lock();
        loop {
            while let Some(c) = st.idle.pop() {
                if c.client.is_closed() {
                    st.open -= 1;
                    continue;
                }
                return Ok(c);
            }
            if st.open < self.max {
                st.open += 1;
                drop(st);
                let warnings = Arc::new(Mutex::new(Vec::new()));
                let mut config = self.config.clone();
                let slot = warnings.clone();
                config.notice_callback(move |n| {
                    // NOTICE and below are chatter ("does not exist, skipping"), not warnings.
                    if matches!(
                        n.parsed_severity(),
                        Some(postgres::error::Severity::Warning)
                    ) {
                        slot.lock().push(Warning {
                            sqlstate: n.code().code().to_string(),
                            text: n.message().to_string(),
                        });
                    }
                });
                return match config.connect(NoTls) {
                    Ok(client) => Ok(PgConn {
                        client,
                        prepared: HashMap::new(),
                        warnings,
                    }),
                    Err(source) => {
                        let mut st = self.state.lock();
                        st.open -= 1;
                        self.freed.notify_one();
                        Err(DbError::Connect {
                            datasource: self.name.clone(),
                            source,
                        })
                    }
                };
            }
            if self.freed.wait_for(&mut st, self.wait).timed_out() && st.idle.is_empty() {
                return Err(DbError::Busy {
                    datasource: self.name.clone(),
                    waited: self.wait,
                });
            }
        }
    }

    pub(crate) fn in_transaction(&self) -> bool {
        !self.state.lock().units.is_empty()
    }

    /// Join `unit` from this thread; no connection is taken and nothing is sent yet.
    pub(crate) fn begin(&self, unit: UnitId) -> Result<bool, DbError> {
        let me = std::thread::current().id();
        let mut st = self.state.lock();
        match st.units.get(&me) {
            Some(u) if u.unit == unit => Ok(false),
            Some(_) => Err(DbError::HeldFurtherUp {
                datasource: self.name.clone(),
            }),
            None => {
                st.units.insert(
                    me,
                    UnitConn {
                        unit,
                        conn: None,
                        begun: false,
                    },
                );
                Ok(true)
            }
        }
    }

    /// Take `unit`'s connection state out of the table, whichever thread it was opened on.
    fn take_unit(&self, unit: UnitId) -> Option<UnitConn> {
        let mut st = self.state.lock();
        let thread = st
            .units
            .iter()
            .find(|(_, u)| u.unit == unit)
            .map(|(t, _)| *t)?;
        st.units.remove(&thread)
    }

    /// End `unit`: COMMIT or ROLLBACK on its connection if it ever ran a statement.
    pub(crate) fn end(&self, unit: UnitId, commit: bool) -> Result<(), DbError> {
        let taken = self.take_unit(unit);
        let Some(UnitConn {
            conn: Some(mut conn),
            begun: true,
            ..
        }) = taken
        else {
            return Ok(());
        };
        let r = if commit {
            conn.client.batch_execute("COMMIT").map_err(|source| {
                let _ = conn.client.batch_execute("ROLLBACK");
                DbError::PgCommit {
                    datasource: self.name.clone(),
                    source,
                }
            })
        } else {
            // A failed rollback means the connection is gone, which ends the transaction too.
            let _ = conn.client.batch_execute("ROLLBACK");
            Ok(())
        };
        let mut st = self.state.lock();
        self.give_back(&mut st, conn);
        r
    }

    /// Phase one: end `unit` with `PREPARE TRANSACTION 'xid'`. `Ok(false)` when the unit
    /// never ran a statement here (nothing to prepare, nothing left open). A failed prepare
    /// leaves nothing prepared: PostgreSQL rolls the transaction back.
    pub(crate) fn prepare(&self, unit: UnitId, xid: &str) -> Result<bool, DbError> {
        check_xid(xid)?;
        let taken = self.take_unit(unit);
        let Some(UnitConn {
            conn: Some(mut conn),
            begun: true,
            ..
        }) = taken
        else {
            return Ok(false);
        };
        let r = conn
            .client
            .batch_execute(&format!("PREPARE TRANSACTION '{xid}'"))
            .map(|()| true)
            .map_err(|source| {
                let _ = conn.client.batch_execute("ROLLBACK");
                self.two_phase_error("prepare", xid, source)
            });
        let mut st = self.state.lock();
        self.give_back(&mut st, conn);
        r
    }

    /// Phase two: `COMMIT PREPARED 'xid'` (or `ROLLBACK PREPARED`) on any connection of the
    /// pool. `Ok(false)` when no transaction `xid` is prepared (settled already).
    pub(crate) fn finish_prepared(&self, xid: &str, commit: bool) -> Result<bool, DbError> {
        check_xid(xid)?;
        let (sql, step) = if commit {
            (format!("COMMIT PREPARED '{xid}'"), "commit prepared")
        } else {
            (format!("ROLLBACK PREPARED '{xid}'"), "roll back prepared")
        };
        let mut conn = self.acquire()?;
        let r = match conn.client.batch_execute(&sql) {
            Ok(()) => Ok(true),
            // 42704 undefined_object: no prepared transaction has that id.
            Err(e) if e.code().is_some_and(|c| c.code() == "42704") => Ok(false),
            Err(source) => Err(self.two_phase_error(step, xid, source)),
        };
        let mut st = self.state.lock();
        self.give_back(&mut st, conn);
        r
    }

    /// The ids of the transactions prepared in this datasource's database whose id starts
    /// with `prefix`.
    pub(crate) fn prepared(&self, prefix: &str) -> Result<Vec<String>, DbError> {
        check_xid(prefix)?;
        let mut conn = self.acquire()?;
        let r = conn
            .client
            .query(
                "SELECT gid FROM pg_prepared_xacts \
                 WHERE database = current_database() AND starts_with(gid, $1) ORDER BY prepared",
                &[&prefix],
            )
            .map(|rows| rows.iter().map(|r| r.get::<_, String>(0)).collect())
            .map_err(|source| self.two_phase_error("list prepared", prefix, source));
        let mut st = self.state.lock();
        self.give_back(&mut st, conn);
        r
    }

    fn two_phase_error(&self, step: &'static str, xid: &str, source: postgres::Error) -> DbError {
        DbError::PgTwoPhase {
            datasource: self.name.clone(),
            step,
            xid: xid.to_string(),
            source,
        }
    }

    /// The connection for one statement: the unit of work's (sending `BEGIN` on its first
    /// statement), or one of its own in autocommit.
    pub(crate) fn lease(&self) -> Result<Lease<'_>, DbError> {
        let me = std::thread::current().id();
        let mut st = self.state.lock();
        let Some(u) = st.units.get_mut(&me) else {
            drop(st);
            return Ok(Lease {
                pool: self,
                conn: Some(self.acquire()?),
                unit: None,
            });
        };
        let unit = u.unit;
        if let Some(conn) = u.conn.take() {
            return Ok(Lease {
                pool: self,
                conn: Some(conn),
                unit: Some(unit),
            });
        }
        if u.begun {
            // The unit's connection is out with a statement that is still running.
            return Err(DbError::HeldFurtherUp {
                datasource: self.name.clone(),
            });
        }
        drop(st);
        // An idle connection the server closed (restart, idle timeout) shows only now.
        // Nothing ran on it yet, so a fresh one takes its place; every idle one may be dead.
        let mut tries = self.max + 1;
        let conn = loop {
            let mut conn = self.acquire()?;
            match conn.client.batch_execute("BEGIN") {
                Ok(()) => break conn,
                Err(_) if conn.client.is_closed() && tries > 1 => {
                    tries -= 1;
                    self.discard(conn);
                }
                Err(source) => {
                    let mut st = self.state.lock();
                    self.give_back(&mut st, conn);
                    return Err(DbError::PgBegin {
                        datasource: self.name.clone(),
                        source,
                    });
                }
            }
        };
        let mut st = self.state.lock();
        if let Some(u) = st.units.get_mut(&me) {
            u.begun = true;
        }
        Ok(Lease {
            pool: self,
            conn: Some(conn),
            unit: Some(unit),
        })
    }
}

/// Refuse an id that could not be quoted as a literal safely, or that PostgreSQL would refuse.
fn check_xid(xid: &str) -> Result<(), DbError> {
    let ok = xid.len() < 200
        && xid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(DbError::BadXid {
            xid: xid.to_string(),
        })
    }
}
