//! The PostgreSQL backend against a real server the test starts (skipped, with a reason, when
//! PostgreSQL is not installed).

use std::sync::Arc;

use sluice_db::{Datasource, DbError, Product, SqlValue, SqlValueRef, UnitId};
use sluice_flow_testing::PgServer;

fn datasource(server: &PgServer) -> Arc<Datasource> {
    Datasource::postgres("ORDERS", &server.url(), None).expect("datasource")
}

fn owned(v: SqlValueRef<'_>) -> SqlValue {
    match v {
        SqlValueRef::Null => SqlValue::Null,
        SqlValueRef::Integer(i) => SqlValue::Integer(i),
        SqlValueRef::Real(f) => SqlValue::Real(f),
        SqlValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        SqlValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
        SqlValueRef::Decimal(d) => SqlValue::Decimal(d),
        SqlValueRef::Boolean(b) => SqlValue::Boolean(b),
        SqlValueRef::Date(d) => SqlValue::Date(d),
        SqlValueRef::Time(t) => SqlValue::Time(t),
        SqlValueRef::Timestamp(t) => SqlValue::Timestamp(t),
        SqlValueRef::TimestampUtc(t) => SqlValue::TimestampUtc(t),
    }
}

fn rows(ds: &Datasource, sql: &str, params: &[SqlValue]) -> Vec<Vec<SqlValue>> {
    let mut out = Vec::new();
    ds.statement()
        .expect("connection")
        .query(sql, params, |r| {
            let mut row = Vec::new();
            for i in 0..r.columns().len() {
                row.push(owned(r.get(i)?));
            }
            out.push(row);
            Ok::<_, DbError>(())
        })
        .expect("query");
    out
}

fn count(ds: &Datasource, table: &str) -> i64 {
    match rows(ds, &format!("SELECT COUNT(*) FROM {table}"), &[]).first() {
        Some(r) => match r.first() {
            Some(SqlValue::Integer(n)) => *n,
            other => panic!("count {other:?}"),
        },
        None => panic!("no count row"),
    }
}

#[test]
fn postgres_types_round_trip_exactly_when_written_and_read() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let ds = datasource(&server);
    assert_eq!(ds.product(), Product::Postgres);
    let conn = ds.statement().expect("connection");
    conn.execute_batch(
        "CREATE TABLE t(i2 SMALLINT, i4 INTEGER, i8 BIGINT, n NUMERIC(30,4), d DECIMAL,
                        r REAL, f DOUBLE PRECISION, c CHARACTER(3), v VARCHAR(20), x TEXT,
                        b BYTEA, flag BOOLEAN, day DATE, at TIME, ts TIMESTAMP,
                        tz TIMESTAMPTZ)",
    )
    .expect("schema");
    let values = vec![
        SqlValue::Integer(-7),
        SqlValue::Integer(70_000),
        SqlValue::Integer(9_000_000_000),
        SqlValue::Decimal("12345678901234567890.1234".into()),
        SqlValue::Decimal("0.1".into()),
        SqlValue::Real(1.5),
        SqlValue::Real(0.1),
        SqlValue::Text("ab".into()),
        SqlValue::Text("grüße".into()),
        SqlValue::Text("it's ? here".into()),
        SqlValue::Blob(vec![0, 1, 255]),
        SqlValue::Boolean(true),
        SqlValue::Date(19_782),
        SqlValue::Time(45_296_000_001),
        SqlValue::Timestamp(1_700_000_000_123_456),
        SqlValue::TimestampUtc(-1_000_000),
    ];
    let marks = vec!["?"; values.len()].join(", ");
    assert_eq!(
        conn.execute(&format!("INSERT INTO t VALUES ({marks})"), &values)
            .expect("insert"),
        1
    );
    // Nulls in every column, and ESQL's looser forms: integers and text into typed columns.
    let nulls = vec![SqlValue::Null; values.len()];
    conn.execute(&format!("INSERT INTO t VALUES ({marks})"), &nulls)
        .expect("nulls");
    conn.execute(
        "INSERT INTO t(n, d, day, ts, flag, i4) VALUES (?, ?, ?, ?, ?, ?)",
        &[
            SqlValue::Integer(5),
            SqlValue::Text("-1.50".into()),
            SqlValue::Text("2024-02-29".into()),
            SqlValue::Text("2024-02-29 13:45:00".into()),
            SqlValue::Integer(0),
            SqlValue::Decimal("42".into()),
        ],
    )
    .expect("loose forms");
    drop(conn);

    let got = rows(&ds, "SELECT * FROM t ORDER BY i2 NULLS LAST, n", &[]);
    let mut expected = values.clone();
    expected[3] = SqlValue::Decimal("12345678901234567890.1234".into());
    expected[7] = SqlValue::Text("ab ".into());
    assert_eq!(got[0], expected);
    assert!(
        got[1..]
            .iter()
            .any(|r| r.iter().all(|v| *v == SqlValue::Null))
    );
    let loose = got
        .iter()
        .find(|r| r[3] == SqlValue::Decimal("5.0000".into()))
        .expect("the loose row");
    assert_eq!(loose[1], SqlValue::Integer(42));
    assert_eq!(loose[4], SqlValue::Decimal("-1.50".into()));
    assert_eq!(loose[11], SqlValue::Boolean(false));
    assert_eq!(loose[12], SqlValue::Date(19_782));
    assert_eq!(
        loose[14],
        SqlValue::Timestamp(19_782 * 86_400_000_000 + 49_500_000_000)
    );

    // Decimal arithmetic in the server stays exact: no float between.
    let sum = rows(
        &ds,
        "SELECT CAST(? AS NUMERIC) + CAST(? AS NUMERIC)",
        &[
            SqlValue::Decimal("0.1".into()),
            SqlValue::Decimal("0.2".into()),
        ],
    );
    assert_eq!(sum, [[SqlValue::Decimal("0.3".into())]]);
}

#[test]
fn postgres_markers_in_literals_stay_text_when_numbered() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let ds = datasource(&server);
    let got = rows(
        &ds,
        "SELECT '?' AS q, \"?\".v, ? /* ? */ FROM (SELECT 1 AS v) AS \"?\" -- ?\n WHERE ? > 0",
        &[SqlValue::Text("x".into()), SqlValue::Integer(1)],
    );
    assert_eq!(
        got,
        [[
            SqlValue::Text("?".into()),
            SqlValue::Integer(1),
            SqlValue::Text("x".into())
        ]]
    );
    let err = ds
        .statement()
        .expect("connection")
        .execute("SELECT ?", &[])
        .expect_err("one marker, no value");
    assert!(
        matches!(
            err,
            DbError::Markers {
                markers: 1,
                values: 0,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn postgres_units_commit_or_roll_back_and_report_sqlstate_when_run() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let ds = datasource(&server);
    ds.statement()
        .expect("connection")
        .execute_batch("CREATE TABLE o(id INTEGER PRIMARY KEY)")
        .expect("schema");
    let insert = |id: i64| {
        ds.statement()
            .expect("connection")
            .execute("INSERT INTO o VALUES (?)", &[SqlValue::Integer(id)])
    };

    let unit = UnitId::next();
    assert!(ds.begin(unit).expect("begin"));
    assert!(!ds.begin(unit).expect("join"));
    insert(1).expect("insert");
    ds.rollback(unit);
    assert!(!ds.in_transaction());
    assert_eq!(count(&ds, "o"), 0, "rolled back");

    let unit = UnitId::next();
    assert!(ds.begin(unit).expect("begin"));
    insert(1).expect("insert");
    // Another thread's statement runs on another connection and does not see the unit's row.
    let other = ds.clone();
    let seen = std::thread::spawn(move || count(&other, "o"))
        .join()
        .expect("thread");
    assert_eq!(seen, 0);
    ds.commit(unit).expect("commit");
    assert_eq!(count(&ds, "o"), 1, "committed");

    let err = insert(1).expect_err("duplicate key");
    assert_eq!(err.sqlstate(), Some("23505"));
    assert!(err.native_code().is_some_and(|n| n > 0));
    assert!(err.to_string().contains("ORDERS"), "{err}");
    assert!(err.to_string().contains("INSERT INTO o"), "{err}");
    assert!(err.database_text().contains("duplicate key"), "{err}");

    // A connection the server closed while idle is replaced when a unit of work next needs
    // one: nothing ran on it yet.
    let killer = Datasource::postgres("KILLER", &server.url(), None).expect("datasource");
    killer
        .statement()
        .expect("connection")
        .execute_batch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'sluice' AND pid <> pg_backend_pid()",
        )
        .expect("terminate the others");
    std::thread::sleep(std::time::Duration::from_millis(100));
    for _ in 0..3 {
        let unit = UnitId::next();
        assert!(ds.begin(unit).expect("begin"));
        assert_eq!(count(&ds, "o"), 1, "a fresh connection");
        ds.commit(unit).expect("commit");
    }
}

#[test]
fn postgres_connect_fails_naming_the_datasource_when_no_server_listens() {
    let ds = Datasource::postgres(
        "NOWHERE",
        "host=127.0.0.1 port=1 user=x connect_timeout=2",
        None,
    )
    .expect("a valid string");
    let err = ds.statement().err().expect("nothing listens on port 1");
    assert!(matches!(err, DbError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("NOWHERE"), "{err}");
    let bad = sluice_db::check_conninfo("postgresql://[::1").expect_err("bad URL");
    assert!(matches!(bad, DbError::Config { .. }), "{bad:?}");
    assert!(matches!(
        sluice_db::check_conninfo("dbname=x"),
        Err(DbError::NoHost)
    ));
    sluice_db::check_conninfo("host=db port=5432 dbname=orders").expect("key=value");
}
