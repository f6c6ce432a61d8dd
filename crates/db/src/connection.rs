//! Running statements: the values they take and give, and the one place that knows which
//! database product a datasource is.
//!
//! Callers see [`Connection`], [`SqlValue`] and [`Row`], never the driver's types: SQLite and
//! PostgreSQL are two variants here rather than a difference in every caller.

use parking_lot::MutexGuard;
use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::DbError;
use crate::datetime;
use crate::pg::Lease;

/// The database product behind a datasource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    Sqlite,
    Postgres,
}

/// A value given to a statement for a `?` marker.
///
/// SQLite has no DECIMAL, BOOLEAN or date types: it is given decimals, dates and times as
/// text (`123.40`, `2024-02-29`, `13:45:00`, `2024-02-29 13:45:00`) and booleans as 0 or 1.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    /// An exact decimal as plain text, `-12.50`.
    Decimal(String),
    Boolean(bool),
    /// Days from 1970-01-01.
    Date(i64),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from 1970-01-01 00:00, no time zone.
    Timestamp(i64),
    /// Microseconds from 1970-01-01 00:00 UTC.
    TimestampUtc(i64),
}

impl SqlValue {
    /// The kind of value, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            SqlValue::Null => "NULL",
            SqlValue::Integer(_) => "an integer",
            SqlValue::Real(_) => "a float",
            SqlValue::Text(_) => "text",
            SqlValue::Blob(_) => "a blob",
            SqlValue::Decimal(_) => "a decimal",
            SqlValue::Boolean(_) => "a boolean",
            SqlValue::Date(_) => "a date",
            SqlValue::Time(_) => "a time",
            SqlValue::Timestamp(_) | SqlValue::TimestampUtc(_) => "a timestamp",
        }
    }
}

/// A value of a result row, borrowed from the row where it can be. Text comes as the database
/// stored it, which need not be UTF-8. SQLite gives only the first five kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValueRef<'r> {
    Null,
    Integer(i64),
    Real(f64),
    Text(&'r [u8]),
    Blob(&'r [u8]),
    /// An exact decimal (NUMERIC) as plain text with the column's scale, `1500.00`.
    Decimal(String),
    Boolean(bool),
    /// Days from 1970-01-01.
    Date(i64),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from 1970-01-01 00:00 (TIMESTAMP, no time zone).
    Timestamp(i64),
    /// Microseconds from 1970-01-01 00:00 UTC (TIMESTAMPTZ).
    TimestampUtc(i64),
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            SqlValue::Integer(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            SqlValue::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            SqlValue::Text(t) | SqlValue::Decimal(t) => {
                ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes()))
            }
            SqlValue::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
            SqlValue::Boolean(b) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*b))),
            SqlValue::Date(d) => ToSqlOutput::from(datetime::date_text(*d)),
            SqlValue::Time(t) => ToSqlOutput::from(datetime::time_text(*t)),
            SqlValue::Timestamp(t) | SqlValue::TimestampUtc(t) => {
                ToSqlOutput::from(datetime::timestamp_text(*t))
            }
        })
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

/// A warning the database gave with a statement that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Its SQLSTATE (class `01` mostly).
    pub sqlstate: String,
    /// The database's text.
    pub text: String,
}

/// The connection of a datasource, held for one statement: no other unit of work runs one on
/// it meanwhile. From [`Datasource::statement`](crate::Datasource::statement).
pub struct Connection<'d> {
    pub(crate) datasource: &'d str,
    pub(crate) held: Held<'d>,
}

pub(crate) enum Held<'d> {
    Sqlite(MutexGuard<'d, rusqlite::Connection>),
    Postgres(Box<std::cell::RefCell<Lease<'d>>>),
}

impl Connection<'_> {
    fn failed(&self, source: rusqlite::Error) -> DbError {
        DbError::Statement {
            datasource: self.datasource.to_string(),
            source,
        }
    }

    fn pg_failed(&self, sql: &str, source: postgres::Error) -> DbError {
        DbError::PgStatement {
            datasource: self.datasource.to_string(),
            statement: sql.to_string(),
            source,
        }
    }

    /// The warnings the database gave with the statements run on this connection since they
    /// were last taken (PostgreSQL's `WARNING` notices; SQLite gives none).
    pub fn take_warnings(&self) -> Vec<Warning> {
        match &self.held {
            Held::Sqlite(_) => Vec::new(),
            Held::Postgres(lease) => lease
                .borrow()
                .conn
                .as_ref()
                .map(|c| c.take_warnings())
                .unwrap_or_default(),
        }
    }

    /// Which product the datasource is.
    pub fn product(&self) -> Product {
        match self.held {
            Held::Sqlite(_) => Product::Sqlite,
            Held::Postgres(_) => Product::Postgres,
        }
    }

    /// Run `f` on the PostgreSQL connection with the statement for `sql` prepared and its
    /// marker count checked against `params`.
    fn with_pg<T>(
        &self,
        lease: &std::cell::RefCell<Lease<'_>>,
        sql: &str,
        params: &[SqlValue],
        f: impl FnOnce(&mut postgres::Client, &postgres::Statement) -> Result<T, postgres::Error>,
    ) -> Result<T, DbError> {
        let mut lease = lease.borrow_mut();
        let Some(conn) = lease.conn.as_mut() else {
            return Err(DbError::HeldFurtherUp {
                datasource: self.datasource.to_string(),
            });
        };
        let (st, markers) = conn.prepare(sql).map_err(|e| self.pg_failed(sql, e))?;
        if markers != params.len() {
            return Err(DbError::Markers {
                datasource: self.datasource.to_string(),
                statement: sql.to_string(),
                markers,
                values: params.len(),
            });
        }
        f(&mut conn.client, &st).map_err(|e| self.pg_failed(sql, e))
    }

    /// Run one statement with `params` for its `?` markers; the number of rows it changed.
    /// The statement is prepared once per connection and SQL text, so SQL that takes its
    /// values as parameters rather than literals is prepared only once.
    pub fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<usize, DbError> {
        match &self.held {
            Held::Sqlite(c) => c
                .prepare_cached(sql)
                .and_then(|mut st| st.execute(rusqlite::params_from_iter(params)))
                .map_err(|e| self.failed(e)),
            Held::Postgres(lease) => self.with_pg(lease, sql, params, |c, st| {
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    params.iter().map(|p| p as _).collect();
                c.execute(st, &refs).map(|n| n as usize)
            }),
        }
    }

    /// Run statements separated by `;`, without parameters (schema changes, test set-up).
    pub fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        match &self.held {
            Held::Sqlite(c) => c.execute_batch(sql).map_err(|e| self.failed(e)),
            Held::Postgres(lease) => {
                let mut lease = lease.borrow_mut();
                match lease.conn.as_mut() {
                    Some(conn) => conn
                        .client
                        .batch_execute(sql)
                        .map_err(|e| self.pg_failed(sql, e)),
                    None => Err(DbError::HeldFurtherUp {
                        datasource: self.datasource.to_string(),
                    }),
                }
            }
        }
    }

    /// Whether `sql` is a statement that gives rows (a query) rather than one that changes
    /// something.
    pub fn returns_rows(&self, sql: &str) -> Result<bool, DbError> {
        match &self.held {
            Held::Sqlite(c) => c
                .prepare_cached(sql)
                .map(|st| st.column_count() > 0)
                .map_err(|e| self.failed(e)),
            Held::Postgres(lease) => {
                let mut lease = lease.borrow_mut();
                match lease.conn.as_mut() {
                    Some(conn) => conn
                        .prepare(sql)
                        .map(|(st, _)| !st.columns().is_empty())
                        .map_err(|e| self.pg_failed(sql, e)),
                    None => Err(DbError::HeldFurtherUp {
                        datasource: self.datasource.to_string(),
                    }),
                }
            }
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
        match &self.held {
            Held::Sqlite(c) => {
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
            Held::Postgres(lease) => {
                let (columns, rows) = self.with_pg(lease, sql, params, |c, st| {
                    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                        params.iter().map(|p| p as _).collect();
                    let rows = c.query(st, &refs)?;
                    let columns = st.columns().iter().map(|c| c.name().to_string()).collect();
                    Ok((columns, rows))
                })?;
                let columns: Vec<String> = columns;
                for row in &rows {
                    each_row(&Row {
                        datasource: self.datasource,
                        columns: &columns,
                        row: RowOf::Postgres(row),
                    })?;
                }
                Ok(())
            }
        }
    }
}

enum RowOf<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
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
            RowOf::Postgres(r) => r
                .try_get::<_, crate::pg_codec::Cell<'_>>(i)
                .map(|c| c.0)
                .map_err(|source| DbError::PgValue {
                    datasource: self.datasource.to_string(),
                    column: self.columns.get(i).cloned().unwrap_or_default(),
                    source,
                }),
        }
    }
}
