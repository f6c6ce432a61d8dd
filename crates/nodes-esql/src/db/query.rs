//! The SELECT that DatabaseRetrieve and DatabaseRoute build from their properties (the
//! product's "query elements"): a table, the columns to read, and conditions whose values come
//! from XPath expressions over the message assembly, bound as parameters so that the statement
//! is prepared once per connection.

use std::sync::Arc;

use sluice_db::{Datasource, DbError, Row, SqlValue, SqlValueRef, UnitId};
use sluice_node_api::{ConfigError, Ctx, Exception, ExceptionKind, Message, NodeError, StringMap};
use sluice_nodes_core::routing::{compile, xpath_failed};
use sluice_tree::xpath::{XPath, XPathContext, XValue};
use sluice_tree::{Tree, Value};

use crate::host::work_key;
use crate::work::DatabaseWork;

/// The comparisons a query element can make, as written after its column.
const OPERATORS: &[(&str, &str)] = &[
    ("=", "="),
    ("<>", "<>"),
    ("!=", "<>"),
    ("<", "<"),
    ("<=", "<="),
    (">", ">"),
    (">=", ">="),
    ("like", "LIKE"),
    ("is null", "IS NULL"),
    ("is not null", "IS NOT NULL"),
];

/// One condition of the WHERE clause: `column op ?` with the value of `value`, or a test
/// for NULL that takes no value.
struct Condition {
    value: Option<(XPath, String)>,
}

/// A compiled SELECT and the expressions that give its parameters.
pub struct Query {
    pub sql: String,
    conditions: Vec<Condition>,
}

/// Whether `s` is a plain SQL identifier, optionally qualified (`schema.table`): the names the
/// node puts into SQL text are checked rather than quoted, so that a column reads back under
/// the name the database gives it.
fn identifier(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Check a name the node puts into SQL text.
pub fn check_identifier(property: &str, s: &str) -> Result<(), ConfigError> {
    if identifier(s) {
        Ok(())
    } else {
        Err(ConfigError::property(
            property,
            format!("`{s}` is not a table or column name (letters, digits, `_`, `schema.name`)"),
        ))
    }
}

impl Query {
    /// `SELECT columns FROM table WHERE query_elements ORDER BY order_by`. A query element is
    /// `column` or `column OP` (`=`, `<>`, `<`, `<=`, `>`, `>=`, `like`, `is null`,
    /// `is not null`) → an XPath expression giving the value.
    pub fn build(
        table: &str,
        columns: &[String],
        query_elements: &StringMap,
        order_by: &[String],
    ) -> Result<Query, ConfigError> {
        check_identifier("table", table)?;
        let mut select = Vec::new();
        for c in columns {
            if c != "*" {
                check_identifier("columns", c)?;
            }
            select.push(c.as_str());
        }
        if select.is_empty() {
            select.push("*");
        }
        let mut sql = format!("SELECT {} FROM {table}", select.join(", "));
        let mut conditions = Vec::new();
        for (i, (key, src)) in query_elements.iter().enumerate() {
            let key = key.trim();
            let (column, op) = match key.split_once(char::is_whitespace) {
                Some((c, rest)) => (c, rest.trim().to_ascii_lowercase()),
                None => (key, "=".to_string()),
            };
            check_identifier("query_elements", column)?;
            let Some((_, sql_op)) = OPERATORS.iter().find(|(w, _)| *w == op) else {
                return Err(ConfigError::property(
                    "query_elements",
                    format!("unknown comparison `{op}` for column `{column}`"),
                )
                .with_hint("use =, <>, <, <=, >, >=, like, is null or is not null"));
            };
            sql.push_str(if i == 0 { " WHERE " } else { " AND " });
            sql.push_str(column);
            sql.push(' ');
            sql.push_str(sql_op);
            let value = if sql_op.starts_with("IS ") {
                None
            } else {
                sql.push_str(" ?");
                Some((compile("query_elements", src)?, src.clone()))
            };
            conditions.push(Condition { value });
        }
        for (i, o) in order_by.iter().enumerate() {
            let (column, dir) = match o.trim().split_once(char::is_whitespace) {
                Some((c, d)) => (c, d.trim().to_ascii_uppercase()),
                None => (o.trim(), "ASC".to_string()),
            };
            check_identifier("order_by", column)?;
            if dir != "ASC" && dir != "DESC" {
                return Err(ConfigError::property(
                    "order_by",
                    format!("`{o}`: a column is followed by asc or desc only"),
                ));
            }
            sql.push_str(if i == 0 { " ORDER BY " } else { ", " });
            sql.push_str(column);
            sql.push(' ');
            sql.push_str(&dir);
        }
        Ok(Query { sql, conditions })
    }

    /// The parameter values for one message.
    pub fn parameters(
        &self,
        msg: &mut Message,
        environment: &mut Tree,
    ) -> Result<Vec<SqlValue>, NodeError> {
        let mut out = Vec::with_capacity(self.conditions.len());
        let mut xc = XPathContext::new(msg, environment);
        for c in &self.conditions {
            let Some((xpath, src)) = &c.value else {
                continue;
            };
            let v = match xpath.evaluate(&mut xc).map_err(|e| xpath_failed(e, src))? {
                XValue::NodeSet(nodes) => match nodes.first() {
                    None => SqlValue::Null,
                    Some(&n) => {
                        SqlValue::Text(xc.string_value(n).map_err(|e| xpath_failed(e, src))?)
                    }
                },
                XValue::String(s) => SqlValue::Text(s),
                XValue::Boolean(b) => SqlValue::Boolean(b),
                XValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
                    SqlValue::Integer(n as i64)
                }
                XValue::Number(n) => SqlValue::Real(n),
            };
            out.push(v);
        }
        Ok(out)
    }
}

/// Run `sql` in the invocation's unit of work on `db` (so that it sees what the flow wrote
/// there, and what it reads stays consistent until the flow commits) and read at most `limit`
/// rows.
pub fn fetch_in_flow(
    ctx: &mut Ctx<'_>,
    db: &Arc<Datasource>,
    sql: &str,
    params: &[SqlValue],
    limit: usize,
) -> Result<Vec<OwnedRow>, NodeError> {
    ctx.inv
        .unit_of_work
        .get_or_join(&work_key(db), || {
            let unit = UnitId::next();
            db.begin(unit).map(|_| DatabaseWork::new(db.clone(), unit))
        })
        .map_err(database_error)?;
    fetch(db, sql, params, limit)
}

/// Run `sql` on this thread's connection of `db` (in the transaction the thread's unit of
/// work has open there, if any) and read at most `limit` rows.
pub fn fetch(
    db: &Datasource,
    sql: &str,
    params: &[SqlValue],
    limit: usize,
) -> Result<Vec<OwnedRow>, NodeError> {
    let conn = db.statement().map_err(database_error)?;
    let mut rows: Vec<OwnedRow> = Vec::new();
    let mut columns: Option<Arc<[String]>> = None;
    conn.query(sql, params, |r: &Row<'_>| {
        if rows.len() >= limit {
            return Ok(());
        }
        let cols = columns
            .get_or_insert_with(|| r.columns().iter().cloned().collect())
            .clone();
        let mut values = Vec::with_capacity(cols.len());
        for i in 0..cols.len() {
            values.push(OwnedValue::of(r.get(i)?));
        }
        rows.push(OwnedRow {
            columns: cols,
            values,
        });
        Ok(())
    })
    .map_err(|Failed(e)| e)?;
    Ok(rows)
}

/// A database error on its way out of a row callback.
struct Failed(NodeError);

impl From<DbError> for Failed {
    fn from(e: DbError) -> Failed {
        Failed(database_error(e))
    }
}

/// A database error as the product's exception 2321 (a DatabaseException), with the inserts
/// ESQL's database errors carry: the SQLSTATE (PostgreSQL's own; for SQLite, which has none,
/// `D` and its native code), the native code, the database's text, the datasource and the
/// statement.
pub fn database_error(e: DbError) -> NodeError {
    Exception::new(ExceptionKind::Database, 2321, e.to_string())
        .with_insert(e.reported_state())
        .with_insert(e.native_code().unwrap_or(0).to_string())
        .with_insert(e.database_text())
        .with_insert(e.datasource())
        .with_insert(e.statement().unwrap_or_default())
        .into()
}

/// A column value as a message tree value.
pub fn tree_value(t: &mut Tree, v: SqlValueRef<'_>) -> Value {
    match v {
        SqlValueRef::Null => Value::Null,
        SqlValueRef::Integer(i) => Value::Integer(i),
        SqlValueRef::Real(f) => Value::Float(f),
        SqlValueRef::Text(s) => Value::Character(t.alloc_text(s)),
        SqlValueRef::Blob(b) => Value::Blob(t.alloc_text(b)),
        SqlValueRef::Decimal(d) => Value::Decimal(t.alloc_text(d.as_bytes())),
        SqlValueRef::Boolean(b) => Value::Boolean(b),
        SqlValueRef::Date(d) => match i32::try_from(d) {
            Ok(d) => Value::Date(d),
            Err(_) => Value::Character(t.alloc_text(d.to_string().as_bytes())),
        },
        SqlValueRef::Time(us) => Value::Time(us),
        SqlValueRef::Timestamp(us) => Value::Timestamp(us),
        SqlValueRef::TimestampUtc(us) => Value::GmtTimestamp(us),
    }
}

/// One result row, read out of the driver: column names and values as SQL values, so that
/// the node can write them after the statement released the connection.
pub struct OwnedRow {
    pub columns: Arc<[String]>,
    pub values: Vec<OwnedValue>,
}

/// A column value owned by the node.
#[derive(Clone, Debug, PartialEq)]
pub enum OwnedValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
    Decimal(String),
    Boolean(bool),
    Date(i64),
    Time(i64),
    Timestamp(i64),
    TimestampUtc(i64),
}

impl OwnedValue {
    pub fn of(v: SqlValueRef<'_>) -> OwnedValue {
        match v {
            SqlValueRef::Null => OwnedValue::Null,
            SqlValueRef::Integer(i) => OwnedValue::Integer(i),
            SqlValueRef::Real(f) => OwnedValue::Real(f),
            SqlValueRef::Text(s) => OwnedValue::Text(s.to_vec()),
            SqlValueRef::Blob(b) => OwnedValue::Blob(b.to_vec()),
            SqlValueRef::Decimal(d) => OwnedValue::Decimal(d),
            SqlValueRef::Boolean(b) => OwnedValue::Boolean(b),
            SqlValueRef::Date(d) => OwnedValue::Date(d),
            SqlValueRef::Time(t) => OwnedValue::Time(t),
            SqlValueRef::Timestamp(t) => OwnedValue::Timestamp(t),
            SqlValueRef::TimestampUtc(t) => OwnedValue::TimestampUtc(t),
        }
    }

    pub fn as_ref(&self) -> SqlValueRef<'_> {
        match self {
            OwnedValue::Null => SqlValueRef::Null,
            OwnedValue::Integer(i) => SqlValueRef::Integer(*i),
            OwnedValue::Real(f) => SqlValueRef::Real(*f),
            OwnedValue::Text(s) => SqlValueRef::Text(s),
            OwnedValue::Blob(b) => SqlValueRef::Blob(b),
            OwnedValue::Decimal(d) => SqlValueRef::Decimal(d.clone()),
            OwnedValue::Boolean(b) => SqlValueRef::Boolean(*b),
            OwnedValue::Date(d) => SqlValueRef::Date(*d),
            OwnedValue::Time(t) => SqlValueRef::Time(*t),
            OwnedValue::Timestamp(t) => SqlValueRef::Timestamp(*t),
            OwnedValue::TimestampUtc(t) => SqlValueRef::TimestampUtc(*t),
        }
    }

    /// The value as a statement parameter.
    pub fn to_param(&self) -> SqlValue {
        match self {
            OwnedValue::Null => SqlValue::Null,
            OwnedValue::Integer(i) => SqlValue::Integer(*i),
            OwnedValue::Real(f) => SqlValue::Real(*f),
            OwnedValue::Text(s) => SqlValue::Text(String::from_utf8_lossy(s).into_owned()),
            OwnedValue::Blob(b) => SqlValue::Blob(b.clone()),
            OwnedValue::Decimal(d) => SqlValue::Decimal(d.clone()),
            OwnedValue::Boolean(b) => SqlValue::Boolean(*b),
            OwnedValue::Date(d) => SqlValue::Date(*d),
            OwnedValue::Time(t) => SqlValue::Time(*t),
            OwnedValue::Timestamp(t) => SqlValue::Timestamp(*t),
            OwnedValue::TimestampUtc(t) => SqlValue::TimestampUtc(*t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> StringMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn build_makes_a_parameterised_select_when_given_query_elements() {
        let q = Query::build(
            "app.customers",
            &["name".into(), "region".into()],
            &map(&[
                ("id", "$Body/order/customer"),
                ("tier >=", "2"),
                ("closed is null", ""),
            ]),
            &["name desc".into(), "id".into()],
        )
        .expect("query");
        assert_eq!(
            q.sql,
            "SELECT name, region FROM app.customers WHERE id = ? AND tier >= ? AND closed IS NULL \
             ORDER BY name DESC, id ASC"
        );
        assert_eq!(q.conditions.iter().filter(|c| c.value.is_some()).count(), 2);
    }

    #[test]
    fn build_rejects_a_table_name_when_it_is_not_an_identifier() {
        let e = Query::build("t; DROP TABLE x", &[], &StringMap::new(), &[])
            .err()
            .expect("rejected");
        assert_eq!(e.property.as_deref(), Some("table"));
    }

    #[test]
    fn build_rejects_an_operator_when_it_is_unknown() {
        let e = Query::build("t", &[], &map(&[("id ~", "1")]), &[])
            .err()
            .expect("rejected");
        assert!(e.message.contains("unknown comparison `~`"), "{e}");
    }

    #[test]
    fn database_error_carries_the_sqlstate_when_sqlite_fails() {
        let ds = Datasource::open(sluice_db::IN_MEMORY).expect("open");
        let e = ds
            .statement()
            .expect("connection")
            .execute("SELECT * FROM missing", &[])
            .expect_err("no table");
        let n = database_error(e);
        assert_eq!(n.exception.kind, ExceptionKind::Database);
        assert_eq!(n.exception.number, 2321);
        assert_eq!(n.exception.inserts[0], "D00001");
        assert!(n.exception.inserts[2].contains("no such table"), "{n}");
    }
}
