//! Running statements: the values they take and give, and the one place that knows which
//! database product a datasource is.
//!
//! Callers see [`Connection`], [`SqlValue`] and [`Row`], never the driver's types, so that a
//! second product (PostgreSQL) is another [`Backend`] variant here rather than a change in
//! every caller.

use parking_lot::MutexGuard;
use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::DbError;

/// A value given to a statement for a `?` marker.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A value of a result row, borrowed from the row. Text comes as the database stored it,
/// which need not be UTF-8.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SqlValueRef<'r> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'r [u8]),
    Blob(&'r [u8]),
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(f) => ValueRef::Real(*f),
            SqlValue::Text(t) => ValueRef::Text(t.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl<'r> From<ValueRef<'r>> for SqlValueRef<'r> {
    fn from(v: ValueRef<'r>) -> SqlValueRef<'r> {
        match v {
            ValueRef::Null => SqlValueRef::Null,
            ValueRef::Integer(i) => SqlValueRef::Integer(i),
            ValueRef::Real(f) => SqlValueRef::Real(f),
            ValueRef::Text(t) => SqlValueRef::Text(t),
            ValueRef::Blob(b) => SqlValueRef::Blob(b),
        }
    }
}

/// A datasource's connection, of whichever database product it is.
pub(crate) enum Backend {
    Sqlite(rusqlite::Connection),
}

impl Backend {
    pub(crate) fn begin(&self) -> rusqlite::Result<()> {
        match self {
            Backend::Sqlite(c) => c.execute_batch("BEGIN"),
        }
    }

    pub(crate) fn commit(&self) -> rusqlite::Result<()> {
        match self {
            Backend::Sqlite(c) => c.execute_batch("COMMIT"),
        }
    }

    /// Roll back the open transaction, if there still is one: SQLite ends a transaction by
    /// itself on some errors. A failed rollback leaves nothing to do but go on: the
    /// connection is then outside any transaction or will be rolled back when closed.
    pub(crate) fn rollback(&self) {
        match self {
            Backend::Sqlite(c) => {
                if !c.is_autocommit() {
                    let _ = c.execute_batch("ROLLBACK");
                }
            }
        }
    }
}

/// The connection of a datasource, held for one statement: no other unit of work runs one on
/// it meanwhile. From [`Datasource::statement`](crate::Datasource::statement).
pub struct Connection<'d> {
    pub(crate) datasource: &'d str,
    pub(crate) backend: MutexGuard<'d, Backend>,
}

impl Connection<'_> {
    fn failed(&self, source: rusqlite::Error) -> DbError {
        DbError::Statement {
            datasource: self.datasource.to_string(),
            source,
        }
    }

    /// Run one statement with `params` for its `?` markers; the number of rows it changed.
    /// The statement is prepared once per connection and SQL text, so SQL that takes its
    /// values as parameters rather than literals is prepared only once.
    pub fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<usize, DbError> {
        match &*self.backend {
            Backend::Sqlite(c) => c
                .prepare_cached(sql)
                .and_then(|mut st| st.execute(rusqlite::params_from_iter(params)))
                .map_err(|e| self.failed(e)),
        }
    }

    /// Run statements separated by `;`, without parameters (schema changes, test set-up).
    pub fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        match &*self.backend {
            Backend::Sqlite(c) => c.execute_batch(sql).map_err(|e| self.failed(e)),
        }
    }

    /// Whether `sql` is a statement that gives rows (a query) rather than one that changes
    /// something.
    pub fn returns_rows(&self, sql: &str) -> Result<bool, DbError> {
        match &*self.backend {
            Backend::Sqlite(c) => c
                .prepare_cached(sql)
                .map(|st| st.column_count() > 0)
                .map_err(|e| self.failed(e)),
        }
    }

    /// Run a query with `params` for its `?` markers and give each result row to `each_row`,
    /// in order. The first error — the database's or `each_row`'s — ends the query.
    pub fn query<E: From<DbError>>(
        &self,
        sql: &str,
        params: &[SqlValue],
        mut each_row: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match &*self.backend {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| self.failed(e))?;
                let columns: Vec<String> =
                    st.column_names().iter().map(|s| s.to_string()).collect();
                let mut rows = st
                    .query(rusqlite::params_from_iter(params))
                    .map_err(|e| self.failed(e))?;
                while let Some(row) = rows.next().map_err(|e| self.failed(e))? {
                    each_row(&Row {
                        datasource: self.datasource,
                        columns: &columns,
                        row: RowOf::Sqlite(row),
                    })?;
                }
                Ok(())
            }
        }
    }
}

enum RowOf<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
}

/// One result row of [`Connection::query`].
pub struct Row<'r> {
    datasource: &'r str,
    columns: &'r [String],
    row: RowOf<'r>,
}

impl Row<'_> {
    /// The names of the columns, in order; the same for every row of a query.
    pub fn columns(&self) -> &[String] {
        self.columns
    }

    /// The value of column `i` (counted from 0).
    pub fn get(&self, i: usize) -> Result<SqlValueRef<'_>, DbError> {
        match &self.row {
            RowOf::Sqlite(r) => {
                r.get_ref(i)
                    .map(SqlValueRef::from)
                    .map_err(|source| DbError::Statement {
                        datasource: self.datasource.to_string(),
                        source,
                    })
            }
        }
    }
}
