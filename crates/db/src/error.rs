//! The one error type of the database layer.

use std::time::Duration;

/// A datasource that could not be opened, reached, or made to begin, commit or run a statement.
/// Every message names the datasource (its path, `:memory:`, or its sluice.yaml name).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The database could not be opened: the file is not a database, its folder does not
    /// exist, or it may not be read or written.
    #[error("cannot open database {datasource}: {source}")]
    Open {
        /// The datasource as configured.
        datasource: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// Another unit of work (another flow instance) kept the datasource's one connection for
    /// longer than a unit of work waits for it.
    #[error(
        "database {datasource} stayed busy in another unit of work for {}s",
        waited.as_secs()
    )]
    Busy {
        /// The datasource.
        datasource: String,
        /// How long this unit of work waited.
        waited: Duration,
    },
    /// This thread already holds a transaction on the datasource for another unit of work:
    /// a node further up the same flow, whose `transaction` is `commit`, has not finished.
    /// Waiting would never end, so this unit of work fails instead.
    #[error(
        "database {datasource} has a transaction open for a node further up this flow \
         (its `transaction` is `commit`); use `automatic` there or another datasource"
    )]
    HeldFurtherUp {
        /// The datasource.
        datasource: String,
    },
    /// `BEGIN` failed.
    #[error("cannot begin a transaction on {datasource}: {source}")]
    Begin {
        /// The datasource.
        datasource: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// `COMMIT` failed (a deferred constraint, a full disk); the work was rolled back.
    #[error("cannot commit the work on database {datasource}: {source}")]
    Commit {
        /// The datasource.
        datasource: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A statement could not be prepared or run, or a value of its result could not be read.
    #[error("statement on database {datasource} failed: {source}")]
    Statement {
        /// The datasource.
        datasource: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A PostgreSQL datasource's connection string is not one (neither a `postgresql://` URL
    /// nor `key=value` pairs), or names no database server.
    #[error("datasource {datasource}: bad PostgreSQL connection string: {source}")]
    Config {
        /// The datasource.
        datasource: String,
        /// The driver's complaint.
        #[source]
        source: postgres::Error,
    },
    /// No connection to the PostgreSQL server could be made (down, wrong address, refused
    /// login, timed out).
    #[error("cannot connect to PostgreSQL datasource {datasource}: {source}")]
    Connect {
        /// The datasource.
        datasource: String,
        /// The driver's error.
        #[source]
        source: postgres::Error,
    },
    /// PostgreSQL refused `BEGIN` (the connection broke).
    #[error("cannot begin a transaction on {datasource}: {source}")]
    PgBegin {
        /// The datasource.
        datasource: String,
        /// The driver's error.
        #[source]
        source: postgres::Error,
    },
    /// PostgreSQL's `COMMIT` failed (a deferred constraint, a serialization failure, a broken
    /// connection); the work was rolled back.
    #[error("cannot commit the work on database {datasource}: {source}")]
    PgCommit {
        /// The datasource.
        datasource: String,
        /// The driver's error.
        #[source]
        source: postgres::Error,
    },
    /// A statement on PostgreSQL could not be prepared or run.
    #[error(
        "statement on database {datasource} failed: {}: {statement}",
        pg_text(source)
    )]
    PgStatement {
        /// The datasource.
        datasource: String,
        /// The SQL as the flow gave it.
        statement: String,
        /// The driver's error, with the server's SQLSTATE.
        #[source]
        source: postgres::Error,
    },
    /// A value of a PostgreSQL result could not be read (a type with no ESQL counterpart).
    #[error("cannot read column {column} from database {datasource}: {source}")]
    PgValue {
        /// The datasource.
        datasource: String,
        /// The column's name.
        column: String,
        /// Why.
        #[source]
        source: postgres::Error,
    },
    /// A two-phase step on PostgreSQL failed: `PREPARE TRANSACTION` (the work was rolled
    /// back), or `COMMIT PREPARED`/`ROLLBACK PREPARED`/listing `pg_prepared_xacts` (the
    /// transaction stays prepared, for recovery to settle).
    #[error(
        "cannot {step} transaction '{xid}' on database {datasource}: {}",
        pg_text(source)
    )]
    PgTwoPhase {
        /// The datasource.
        datasource: String,
        /// `prepare`, `commit prepared`, `roll back prepared` or `list prepared`.
        step: &'static str,
        /// The transaction id (the prefix, for a listing).
        xid: String,
        /// The driver's error.
        #[source]
        source: postgres::Error,
    },
    /// A transaction id with characters other than letters, digits, `.`, `-`, `_` and `:`, or
    /// longer than PostgreSQL's 199, was given for a two-phase step.
    #[error(
        "'{xid}' is not a usable transaction id (letters, digits and . - _ : only, at most 199)"
    )]
    BadXid {
        /// The id given.
        xid: String,
    },
    /// Two-phase commit was asked of a datasource that cannot prepare (SQLite).
    #[error(
        "database {datasource} cannot prepare a transaction (two-phase commit is PostgreSQL's)"
    )]
    NoTwoPhase {
        /// The datasource.
        datasource: String,
    },
    /// A PostgreSQL connection string names no server (`host=` or the URL's host).
    #[error("the PostgreSQL connection string names no host")]
    NoHost,
    /// A statement was given more or fewer values than it has `?` markers.
    #[error(
        "statement on database {datasource} has {markers} parameter markers but {values} values: {statement}"
    )]
    Markers {
        /// The datasource.
        datasource: String,
        /// The SQL.
        statement: String,
        /// `?` markers in the SQL.
        markers: usize,
        /// Values given.
        values: usize,
    },
}

/// The server's message (with its detail) rather than the driver's wrapper text.
fn pg_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => match d.detail() {
            Some(detail) => format!("{} ({detail})", d.message()),
            None => d.message().to_string(),
        },
        None => e.to_string(),
    }
}

/// PostgreSQL's own number for a SQLSTATE (its `MAKE_SQLSTATE`): six bits a character.
fn sqlstate_number(state: &str) -> i64 {
    state
        .bytes()
        .take(5)
        .enumerate()
        .map(|(i, c)| i64::from(c.wrapping_sub(b'0') & 0x3F) << (6 * i))
        .sum()
}

impl DbError {
    /// The SQLSTATE of the error: PostgreSQL's own; None for SQLite's and for errors that
    /// happen before any database answered.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            DbError::Connect { source, .. }
            | DbError::PgBegin { source, .. }
            | DbError::PgCommit { source, .. }
            | DbError::PgTwoPhase { source, .. }
            | DbError::PgStatement { source, .. } => source.code().map(|c| c.code()),
            _ => None,
        }
    }

    /// The SQLSTATE as the product reports it: the database's own, else `D` and the native
    /// code (SQLite has no SQLSTATE), else `D00000` for errors before any database answered.
    pub fn reported_state(&self) -> String {
        match (self.sqlstate(), self.native_code()) {
            (Some(s), _) => s.to_string(),
            (None, Some(n)) => format!("D{:05}", n.max(0)),
            (None, None) => "D00000".to_string(),
        }
    }

    /// The database's message for the error, without the datasource and statement.
    pub fn database_text(&self) -> String {
        match self {
            DbError::Open { source, .. }
            | DbError::Begin { source, .. }
            | DbError::Commit { source, .. }
            | DbError::Statement { source, .. } => source.to_string(),
            DbError::Config { source, .. }
            | DbError::Connect { source, .. }
            | DbError::PgBegin { source, .. }
            | DbError::PgCommit { source, .. }
            | DbError::PgTwoPhase { source, .. }
            | DbError::PgStatement { source, .. }
            | DbError::PgValue { source, .. } => pg_text(source),
            other => other.to_string(),
        }
    }

    /// The statement the error is about, when it is about one.
    pub fn statement(&self) -> Option<&str> {
        match self {
            DbError::PgStatement { statement, .. } | DbError::Markers { statement, .. } => {
                Some(statement)
            }
            _ => None,
        }
    }

    /// The database's own code for the error, when the database gave one (SQLite's extended
    /// result code, `SQLITE_CONSTRAINT_UNIQUE` = 2067 say; for PostgreSQL the number its
    /// sources give the SQLSTATE, its `MAKE_SQLSTATE`; see [`DbError::sqlstate`]).
    pub fn native_code(&self) -> Option<i64> {
        match self {
            DbError::Open { source, .. }
            | DbError::Begin { source, .. }
            | DbError::Commit { source, .. }
            | DbError::Statement { source, .. } => match source {
                rusqlite::Error::SqliteFailure(f, _) => Some(i64::from(f.extended_code)),
                _ => None,
            },
            DbError::Busy { .. } | DbError::HeldFurtherUp { .. } | DbError::Markers { .. } => None,
            DbError::Config { .. } | DbError::PgValue { .. } | DbError::NoHost => None,
            DbError::BadXid { .. } | DbError::NoTwoPhase { .. } => None,
            DbError::Connect { .. }
            | DbError::PgTwoPhase { .. }
            | DbError::PgBegin { .. }
            | DbError::PgCommit { .. }
            | DbError::PgStatement { .. } => self.sqlstate().map(sqlstate_number),
        }
    }

    /// The datasource the error is about.
    pub fn datasource(&self) -> &str {
        match self {
            DbError::Open { datasource, .. }
            | DbError::Busy { datasource, .. }
            | DbError::HeldFurtherUp { datasource }
            | DbError::Begin { datasource, .. }
            | DbError::Commit { datasource, .. }
            | DbError::Statement { datasource, .. }
            | DbError::Config { datasource, .. }
            | DbError::Connect { datasource, .. }
            | DbError::PgBegin { datasource, .. }
            | DbError::PgCommit { datasource, .. }
            | DbError::PgStatement { datasource, .. }
            | DbError::PgValue { datasource, .. }
            | DbError::Markers { datasource, .. }
            | DbError::PgTwoPhase { datasource, .. }
            | DbError::NoTwoPhase { datasource } => datasource,
            DbError::NoHost | DbError::BadXid { .. } => "",
        }
    }
}
