//! The one error type of the database layer.

use std::time::Duration;

/// A datasource that could not be opened, reached, or made to begin, commit or run a statement.
/// Every message names the datasource (its path, or `:memory:`).
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
}

impl DbError {
    /// The database's own code for the error, when the database gave one (SQLite's extended
    /// result code, `SQLITE_CONSTRAINT_UNIQUE` = 2067 say).
    pub fn native_code(&self) -> Option<i64> {
        match self {
            DbError::Open { source, .. }
            | DbError::Begin { source, .. }
            | DbError::Commit { source, .. }
            | DbError::Statement { source, .. } => match source {
                rusqlite::Error::SqliteFailure(f, _) => Some(i64::from(f.extended_code)),
                _ => None,
            },
            DbError::Busy { .. } | DbError::HeldFurtherUp { .. } => None,
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
            | DbError::Statement { datasource, .. } => datasource,
        }
    }
}
