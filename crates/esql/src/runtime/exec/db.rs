//! The Database correlation name: SELECT FROM Database.t, INSERT, UPDATE, DELETE FROM and
//! PASSTHRU, as SQL run through the node's datasource. Rows are read into a tree and filtered
//! by the ESQL WHERE expression, so every ESQL predicate works the same on tables and on
//! messages.

use sluice_db::{DbError, Product, SqlValue, SqlValueRef};
use sluice_esql_scalar::Value;
use sluice_node_api::ExceptionKind;
use sluice_tree::{NodeId, Text, field_type};

use super::{Exec, Frame, Loc, R, RtError, RtVal, Var};
use crate::runtime::convert;
use crate::runtime::ir::{Ex, Mode, RoutineIr, VarKind};

/// A database error as the product's exception 2321. A failed statement carries the
/// database's SQLSTATE (PostgreSQL's own; SQLite has none, so `D` and its native code) and its
/// native code. PostgreSQL's errors name the datasource and statement in their text and have
/// as inserts the SQLSTATE, the native code, the server's text, the datasource and the
/// statement. Errors before any database answered (busy, no connection) have no code.
impl From<DbError> for RtError {
    fn from(e: DbError) -> RtError {
        let native = e.native_code();
        let state = e.reported_state();
        let text = match &e {
            DbError::Statement { source, .. } => format!("database error: {source}"),
            DbError::PgStatement { .. } | DbError::PgCommit { .. } | DbError::PgValue { .. } => {
                format!("database error: {e}")
            }
            other => other.to_string(),
        };
        let mut r = RtError::new(ExceptionKind::Database, 2321, &state, text);
        r.native = native.unwrap_or(if matches!(e, DbError::Statement { .. }) {
            -1
        } else {
            0
        });
        if e.sqlstate().is_some() {
            r.exception.inserts = vec![
                state,
                r.native.to_string(),
                e.database_text(),
                e.datasource().to_string(),
                e.statement().unwrap_or_default().to_string(),
            ];
        }
        r
    }
}

/// An ESQL value as a statement parameter. SQLite keeps today's forms (text for decimals and
/// dates, 0/1 for booleans); PostgreSQL gets typed values, so DECIMAL stays exact.
fn to_sql(v: &Value, product: Product) -> SqlValue {
    match (v, product) {
        (Value::Null, _) => SqlValue::Null,
        (Value::Integer(i), _) => SqlValue::Integer(*i),
        (Value::Float(f), _) => SqlValue::Real(*f),
        (Value::Blob(b), _) => SqlValue::Blob(b.to_vec()),
        (Value::Boolean(b), Product::Sqlite) => SqlValue::Integer(*b as i64),
        (Value::Decimal(d), Product::Sqlite) => SqlValue::Text(d.to_string()),
        (Value::Boolean(b), Product::Postgres) => SqlValue::Boolean(*b),
        (Value::Decimal(d), Product::Postgres) => SqlValue::Decimal(d.to_plain_string()),
        (Value::Date(d), Product::Postgres) => SqlValue::Date(d.to_days()),
        (Value::Time(t) | Value::GmtTime(t), Product::Postgres) => {
            SqlValue::Time(t.micros_of_day())
        }
        (Value::Timestamp(t), Product::Postgres) => SqlValue::Timestamp(t.to_micros()),
        (Value::GmtTimestamp(t), Product::Postgres) => SqlValue::TimestampUtc(t.to_micros()),
        (other, _) => SqlValue::Text(convert::text(other)),
    }
}

fn from_sql(v: SqlValueRef<'_>) -> Value {
    use sluice_esql_scalar::{Date, Decimal, Time, Timestamp};
    match v {
        SqlValueRef::Null => Value::Null,
        SqlValueRef::Integer(i) => Value::Integer(i),
        SqlValueRef::Real(f) => Value::Float(f),
        SqlValueRef::Text(t) => Value::from_text(&String::from_utf8_lossy(t)),
        SqlValueRef::Blob(b) => Value::from_bytes(b.to_vec()),
        SqlValueRef::Boolean(b) => Value::Boolean(b),
        // A NUMERIC wider than ESQL's 34 digits comes as its text rather than rounded.
        SqlValueRef::Decimal(d) => Decimal::parse(&d)
            .map(Value::Decimal)
            .unwrap_or_else(|_| Value::from_text(&d)),
        SqlValueRef::Date(d) => Date::from_days(d)
            .map(Value::Date)
            .unwrap_or(Value::Integer(d)),
        SqlValueRef::Time(t) => Value::Time(Time::from_micros_wrapping(t)),
        SqlValueRef::Timestamp(t) => Timestamp::from_micros(t)
            .map(Value::Timestamp)
            .unwrap_or(Value::Integer(t)),
        SqlValueRef::TimestampUtc(t) => Timestamp::from_micros(t)
            .map(Value::GmtTimestamp)
            .unwrap_or(Value::Integer(t)),
    }
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl<'a> Exec<'a> {
    /// The connection for one statement, joined to the host's unit of work on first use.
    fn connection(&mut self) -> R<sluice_db::Connection<'a>> {
        let Some(db) = self.db else {
            return Err(RtError::new(
                ExceptionKind::Database,
                2321,
                "D00000",
                "this node has no database: set its `datasource` property",
            ));
        };
        if !self.db_joined {
            self.db_joined = true;
            self.host.join_database(db).map_err(|e| {
                let mut r = RtError::new(ExceptionKind::Database, 2321, "D00000", "");
                r.exception = e.exception;
                r
            })?;
        }
        Ok(db.statement()?)
    }

    /// COMMIT or ROLLBACK: end the node's database work so far. A statement that names a data
    /// source other than the node's fails, as the node has no other.
    pub(super) fn end_work(
        &mut self,
        frame: &mut Frame,
        commit: bool,
        datasource: Option<&Ex>,
    ) -> R<()> {
        let word = if commit { "COMMIT" } else { "ROLLBACK" };
        let Some(db) = self.db else {
            return Err(RtError::new(
                ExceptionKind::Database,
                2321,
                "D00000",
                format!("{word}: this node has no database: set its `datasource` property"),
            ));
        };
        if let Some(e) = datasource {
            let named = self.scalar(frame, e)?;
            let named = crate::runtime::convert::text(&named);
            if named != db.name() {
                return Err(RtError::new(
                    ExceptionKind::Database,
                    2321,
                    "D00000",
                    format!(
                        "{word} names data source `{named}`, but this node's datasource is `{}`",
                        db.name()
                    ),
                ));
            }
        }
        if self.db_joined {
            self.db_joined = false;
            self.host.end_database_work(db, commit).map_err(|e| {
                let mut r = RtError::new(ExceptionKind::Database, 2321, "D00000", "");
                r.exception = e.exception;
                r
            })?;
        }
        Ok(())
    }

    /// Run a query and read its rows into a new tree: one `Row` per row, one field per column
    /// (plus the hidden `rowid` when asked for).
    fn query_rows(&mut self, sql: &str, params: &[SqlValue]) -> R<Vec<Loc>> {
        let r = self.query_rows_raw(sql, params);
        self.db_done(r)
    }

    fn query_rows_raw(
        &mut self,
        sql: &str,
        params: &[SqlValue],
    ) -> R<(Vec<Loc>, Vec<sluice_db::Warning>)> {
        let conn = self.connection()?;
        let t = self.new_tree("Database");
        let mut out = Vec::new();
        conn.query(sql, params, |row| {
            let tree = &mut self.trees[t as usize];
            let r = tree.create_last_child(
                NodeId(0),
                field_type::NAME,
                Text::from_static("Row"),
                sluice_tree::Value::Null,
            )?;
            for (i, n) in row.columns().iter().enumerate() {
                let v = from_sql(row.get(i)?);
                let name = tree.alloc_text(n.as_bytes());
                let tv = convert::to_tree(tree, &v);
                tree.create_last_child(r, field_type::NAME_VALUE, name, tv)?;
            }
            out.push(Loc { tree: t, node: r });
            Ok::<_, RtError>(())
        })?;
        Ok((out, conn.take_warnings()))
    }

    /// The end of a statement as the node's "throw exception on database error" and "treat
    /// warnings as errors" say: a database error (or a warning taken as one) either goes on as
    /// an exception or ends the statement with its SQLCODE family set and nothing done; a
    /// success clears them, or sets SQLSTATE and SQLERRORTEXT to a warning's.
    fn db_done<T: Default>(&mut self, r: R<(T, Vec<sluice_db::Warning>)>) -> R<T> {
        let r = match r {
            Ok((v, warnings)) => match warnings.into_iter().next() {
                None => {
                    self.sql = super::SqlStatus::default();
                    return Ok(v);
                }
                Some(w) if !self.db_errors.warnings_as_errors => {
                    self.sql = super::SqlStatus {
                        code: 0,
                        state: w.sqlstate,
                        native: 0,
                        text: w.text,
                    };
                    return Ok(v);
                }
                Some(w) => {
                    let mut e = RtError::new(
                        ExceptionKind::Database,
                        2321,
                        &w.sqlstate,
                        format!("database warning treated as an error: {}", w.text),
                    );
                    e.exception.inserts = vec![w.sqlstate.clone(), "0".into(), w.text.clone()];
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        match r {
            Err(e) if e.exception.kind == ExceptionKind::Database && !self.db_errors.throw => {
                self.sql = super::SqlStatus {
                    code: if e.native != 0 { e.native } else { -1 },
                    state: e.sqlstate.clone(),
                    native: e.native,
                    text: e.exception.text.clone(),
                };
                Ok(T::default())
            }
            other => other,
        }
    }

    /// Every row of a table (for SELECT … FROM Database.t).
    pub fn db_table(&mut self, schema: Option<&str>, table: &str) -> R<Vec<Loc>> {
        let name = match schema {
            Some(s) => format!("{}.{}", quote(s), quote(table)),
            None => quote(table),
        };
        self.query_rows(&format!("SELECT * FROM {name}"), &[])
    }

    fn table_sql(table: &str) -> String {
        table.split('.').map(quote).collect::<Vec<_>>().join(".")
    }

    fn db_product(&self) -> Product {
        self.db.map_or(Product::Sqlite, |d| d.product())
    }

    /// The hidden column that names a row for UPDATE and DELETE, and how a statement matches
    /// it: SQLite's `rowid`, PostgreSQL's `ctid` (stable within the unit of work's
    /// transaction, which both the read and the change run in).
    fn row_id_sql(&self) -> (&'static str, &'static str) {
        match self.db_product() {
            Product::Sqlite => ("rowid", "rowid = ?"),
            Product::Postgres => ("ctid::text", "ctid = CAST(? AS tid)"),
        }
    }

    fn rows_with_ids(&mut self, table: &str) -> R<Vec<Loc>> {
        let (id, _) = self.row_id_sql();
        self.query_rows(
            &format!(
                "SELECT {id} AS \"__rowid\", * FROM {}",
                Self::table_sql(table)
            ),
            &[],
        )
    }

    fn row_id(&mut self, r: Loc) -> R<Option<SqlValue>> {
        let t = self.tree(r.tree)?;
        Ok(match t.child_named(r.node, None, b"__rowid", 0)? {
            Some(c) => match convert::read(t, c) {
                Value::Integer(i) => Some(SqlValue::Integer(i)),
                Value::Null => None,
                other => Some(SqlValue::Text(convert::text(&other))),
            },
            None => None,
        })
    }

    /// The row ids of the rows the filter keeps.
    fn matching_rowids(
        &mut self,
        frame: &mut Frame,
        table: &str,
        filter: Option<&Ex>,
    ) -> R<Vec<SqlValue>> {
        let rows = self.rows_with_ids(table)?;
        let mut ids = Vec::new();
        for r in rows {
            self.db_row = Some(r);
            let keep = match filter {
                Some(f) => self.condition(frame, f)? == Some(true),
                None => true,
            };
            if keep && let Some(id) = self.row_id(r)? {
                ids.push(id);
            }
        }
        self.db_row = None;
        Ok(ids)
    }

    fn exec_sql(&mut self, sql: &str, params: &[SqlValue]) -> R<usize> {
        // The same SQL text (parameter markers, not literals) is prepared once.
        let r = self.connection().and_then(|c| {
            let n = c.execute(sql, params)?;
            Ok((n, c.take_warnings()))
        });
        self.db_done(r)
    }

    pub fn db_insert(
        &mut self,
        frame: &mut Frame,
        table: &str,
        columns: &[String],
        values: &[Ex],
    ) -> R<()> {
        let product = self.db_product();
        let mut params = Vec::with_capacity(values.len());
        for v in values {
            params.push(to_sql(&self.scalar(frame, v)?, product));
        }
        let cols = if columns.is_empty() {
            String::new()
        } else {
            format!(
                "({})",
                columns
                    .iter()
                    .map(|c| quote(c))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let marks = vec!["?"; params.len()].join(", ");
        self.exec_sql(
            &format!(
                "INSERT INTO {} {cols} VALUES ({marks})",
                Self::table_sql(table)
            ),
            &params,
        )?;
        Ok(())
    }

    pub fn db_update(
        &mut self,
        frame: &mut Frame,
        table: &str,
        sets: &[(String, Ex)],
        filter: Option<&Ex>,
    ) -> R<()> {
        let ids = self.matching_rowids(frame, table, filter)?;
        let rows = self.rows_with_ids(table)?;
        let product = self.db_product();
        let (_, matches) = self.row_id_sql();
        for r in rows {
            let Some(id) = self.row_id(r)? else {
                continue;
            };
            if !ids.contains(&id) {
                continue;
            }
            self.db_row = Some(r);
            let mut params = Vec::with_capacity(sets.len() + 1);
            for (_, e) in sets {
                params.push(to_sql(&self.scalar(frame, e)?, product));
            }
            self.db_row = None;
            params.push(id);
            let assigns = sets
                .iter()
                .map(|(c, _)| format!("{} = ?", quote(c)))
                .collect::<Vec<_>>()
                .join(", ");
            self.exec_sql(
                &format!(
                    "UPDATE {} SET {assigns} WHERE {matches}",
                    Self::table_sql(table)
                ),
                &params,
            )?;
        }
        Ok(())
    }

    pub fn db_delete(&mut self, frame: &mut Frame, table: &str, filter: Option<&Ex>) -> R<()> {
        let (_, matches) = self.row_id_sql();
        for id in self.matching_rowids(frame, table, filter)? {
            self.exec_sql(
                &format!("DELETE FROM {} WHERE {matches}", Self::table_sql(table)),
                &[id],
            )?;
        }
        Ok(())
    }

    /// PASSTHRU: a query gives its rows as a list; any other statement gives NULL.
    pub fn passthru(&mut self, frame: &mut Frame, sql: &Ex, values: &[Ex]) -> R<RtVal> {
        let text = convert::text(&self.scalar(frame, sql)?);
        let product = self.db_product();
        let mut params = Vec::with_capacity(values.len());
        for v in values {
            params.push(to_sql(&self.scalar(frame, v)?, product));
        }
        let is_query = self
            .connection()
            .and_then(|c| Ok((c.returns_rows(&text)?, Vec::new())));
        let is_query = self.db_done(is_query)?;
        if self.sql.code != 0 {
            return Ok(RtVal::S(Value::Null));
        }
        if is_query {
            let rows = self.query_rows(&text, &params)?;
            Ok(RtVal::L(rows.into_iter().map(RtVal::F).collect()))
        } else {
            self.exec_sql(&text, &params)?;
            Ok(RtVal::S(Value::Null))
        }
    }

    /// CALL of a `LANGUAGE DATABASE` routine: on PostgreSQL, a procedure runs as `CALL
    /// name(…)` with every parameter (NULL for OUT ones) and a function as `SELECT * FROM
    /// name(…)` with its IN and INOUT ones; the one row either gives holds the OUT and INOUT
    /// values, in order, which are set in the routine's parameters.
    pub(super) fn call_database(
        &mut self,
        callee: &mut Frame,
        routine: &RoutineIr,
        name: &str,
    ) -> R<()> {
        if self.db.is_some() && self.db_product() != Product::Postgres {
            return Err(RtError::new(
                ExceptionKind::Database,
                2321,
                "D00000",
                format!(
                    "{} is a LANGUAGE DATABASE routine: those run on PostgreSQL datasources only",
                    routine.name
                ),
            ));
        }
        let r = self.call_database_raw(callee, routine, name);
        let outs = self.db_done(r)?;
        let mut outs = outs.into_iter();
        for p in &routine.params {
            if p.mode == Mode::In {
                continue;
            }
            let (Some(v), VarKind::Scalar(t)) = (outs.next(), &p.kind) else {
                break;
            };
            let v = super::cast_to(v, *t)?;
            if let Some(slot) = callee.vars.get_mut(p.slot as usize) {
                *slot = Var::Scalar(v);
            }
        }
        Ok(())
    }

    fn call_database_raw(
        &mut self,
        callee: &mut Frame,
        routine: &RoutineIr,
        name: &str,
    ) -> R<(Vec<Value>, Vec<sluice_db::Warning>)> {
        let conn = self.connection()?;
        let (schema, object) = match name.rsplit_once('.') {
            Some((s, o)) => (SqlValue::Text(s.to_lowercase()), o.to_lowercase()),
            None => (SqlValue::Null, name.to_lowercase()),
        };
        let mut procedure = false;
        conn.query(
            "SELECT p.prokind = 'p' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
             WHERE p.proname = ? AND (n.nspname = ? OR CAST(? AS TEXT) IS NULL) LIMIT 1",
            &[SqlValue::Text(object), schema.clone(), schema],
            |row| {
                procedure = row.get(0)? == SqlValueRef::Boolean(true);
                Ok::<_, RtError>(())
            },
        )?;
        let product = Product::Postgres;
        let mut params = Vec::new();
        for p in &routine.params {
            let v = match callee.vars.get(p.slot as usize) {
                Some(Var::Scalar(v)) => v,
                _ => &Value::Null,
            };
            match p.mode {
                Mode::Out if procedure => params.push(SqlValue::Null),
                Mode::Out => {}
                _ => params.push(to_sql(v, product)),
            }
        }
        let marks = vec!["?"; params.len()].join(", ");
        let sql = if procedure {
            format!("CALL {name}({marks})")
        } else {
            format!("SELECT * FROM {name}({marks})")
        };
        let mut outs = Vec::new();
        conn.query(&sql, &params, |row| {
            if outs.is_empty() {
                for i in 0..row.columns().len() {
                    outs.push(from_sql(row.get(i)?));
                }
            }
            Ok::<_, RtError>(())
        })?;
        Ok((outs, conn.take_warnings()))
    }
}
