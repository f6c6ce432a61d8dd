//! The Database correlation name: SELECT FROM Database.t, INSERT, UPDATE, DELETE FROM and
//! PASSTHRU, as SQL run through the node's datasource. Rows are read into a tree and filtered
//! by the ESQL WHERE expression, so every ESQL predicate works the same on tables and on
//! messages.

use sluice_db::{DbError, SqlValue, SqlValueRef};
use sluice_esql_scalar::Value;
use sluice_node_api::ExceptionKind;
use sluice_tree::{NodeId, Text, field_type};

use super::{Exec, Frame, Loc, R, RtError, RtVal};
use crate::runtime::convert;
use crate::runtime::ir::Ex;

/// A database error as the product's exception 2321: a failed statement carries the
/// database's own code as its native error and in its SQLSTATE (`Dnnnnn`); the datasource
/// being busy or held by a node further up has neither.
impl From<DbError> for RtError {
    fn from(e: DbError) -> RtError {
        match &e {
            DbError::Statement { source, .. } => {
                let native = e.native_code().unwrap_or(-1);
                let mut r = RtError::new(
                    ExceptionKind::Database,
                    2321,
                    &format!("D{:05}", native.max(0)),
                    format!("database error: {source}"),
                );
                r.native = native;
                r
            }
            _ => RtError::new(ExceptionKind::Database, 2321, "D00000", e.to_string()),
        }
    }
}

fn to_sql(v: &Value) -> SqlValue {
    match v {
        Value::Null => SqlValue::Null,
        Value::Boolean(b) => SqlValue::Integer(*b as i64),
        Value::Integer(i) => SqlValue::Integer(*i),
        Value::Float(f) => SqlValue::Real(*f),
        Value::Decimal(d) => SqlValue::Text(d.to_string()),
        Value::Blob(b) => SqlValue::Blob(b.to_vec()),
        other => SqlValue::Text(convert::text(other)),
    }
}

fn from_sql(v: SqlValueRef<'_>) -> Value {
    match v {
        SqlValueRef::Null => Value::Null,
        SqlValueRef::Integer(i) => Value::Integer(i),
        SqlValueRef::Real(f) => Value::Float(f),
        SqlValueRef::Text(t) => Value::from_text(&String::from_utf8_lossy(t)),
        SqlValueRef::Blob(b) => Value::from_bytes(b.to_vec()),
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
        Ok(out)
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

    /// The rowids of the rows the filter keeps.
    fn matching_rowids(
        &mut self,
        frame: &mut Frame,
        table: &str,
        filter: Option<&Ex>,
    ) -> R<Vec<i64>> {
        let rows = self.query_rows(
            &format!(
                "SELECT rowid AS \"__rowid\", * FROM {}",
                Self::table_sql(table)
            ),
            &[],
        )?;
        let mut ids = Vec::new();
        for r in rows {
            self.db_row = Some(r);
            let keep = match filter {
                Some(f) => self.condition(frame, f)? == Some(true),
                None => true,
            };
            if keep {
                let t = self.tree(r.tree)?;
                if let Some(c) = t.child_named(r.node, None, b"__rowid", 0)?
                    && let sluice_tree::Value::Integer(i) = t.value(c)
                {
                    ids.push(i);
                }
            }
        }
        self.db_row = None;
        Ok(ids)
    }

    fn exec_sql(&mut self, sql: &str, params: &[SqlValue]) -> R<usize> {
        // The same SQL text (parameter markers, not literals) is prepared once.
        let n = self.connection()?.execute(sql, params)?;
        self.sql = super::SqlStatus::default();
        Ok(n)
    }

    pub fn db_insert(
        &mut self,
        frame: &mut Frame,
        table: &str,
        columns: &[String],
        values: &[Ex],
    ) -> R<()> {
        let mut params = Vec::with_capacity(values.len());
        for v in values {
            params.push(to_sql(&self.scalar(frame, v)?));
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
        let rows = self.query_rows(
            &format!(
                "SELECT rowid AS \"__rowid\", * FROM {}",
                Self::table_sql(table)
            ),
            &[],
        )?;
        for r in rows {
            let t = self.tree(r.tree)?;
            let id = match t.child_named(r.node, None, b"__rowid", 0)? {
                Some(c) => match t.value(c) {
                    sluice_tree::Value::Integer(i) => i,
                    _ => continue,
                },
                None => continue,
            };
            if !ids.contains(&id) {
                continue;
            }
            self.db_row = Some(r);
            let mut params = Vec::with_capacity(sets.len() + 1);
            for (_, e) in sets {
                params.push(to_sql(&self.scalar(frame, e)?));
            }
            self.db_row = None;
            params.push(SqlValue::Integer(id));
            let assigns = sets
                .iter()
                .map(|(c, _)| format!("{} = ?", quote(c)))
                .collect::<Vec<_>>()
                .join(", ");
            self.exec_sql(
                &format!(
                    "UPDATE {} SET {assigns} WHERE rowid = ?",
                    Self::table_sql(table)
                ),
                &params,
            )?;
        }
        Ok(())
    }

    pub fn db_delete(&mut self, frame: &mut Frame, table: &str, filter: Option<&Ex>) -> R<()> {
        for id in self.matching_rowids(frame, table, filter)? {
            self.exec_sql(
                &format!("DELETE FROM {} WHERE rowid = ?", Self::table_sql(table)),
                &[SqlValue::Integer(id)],
            )?;
        }
        Ok(())
    }

    /// PASSTHRU: a query gives its rows as a list; any other statement gives NULL.
    pub fn passthru(&mut self, frame: &mut Frame, sql: &Ex, values: &[Ex]) -> R<RtVal> {
        let text = convert::text(&self.scalar(frame, sql)?);
        let mut params = Vec::with_capacity(values.len());
        for v in values {
            params.push(to_sql(&self.scalar(frame, v)?));
        }
        let is_query = self.connection()?.returns_rows(&text)?;
        if is_query {
            let rows = self.query_rows(&text, &params)?;
            Ok(RtVal::L(rows.into_iter().map(RtVal::F).collect()))
        } else {
            self.exec_sql(&text, &params)?;
            Ok(RtVal::S(Value::Null))
        }
    }
}
