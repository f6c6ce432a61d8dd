//! ESQL nodes on a PostgreSQL datasource named in sluice.yaml, against a real server the
//! test starts (skipped, with a reason, when PostgreSQL is not installed).

use std::collections::BTreeMap;
use std::sync::Arc;

use sluice_db::{Datasource, SqlValueRef};
use sluice_flow_testing::PgServer;
use sluice_node_api::{DatasourceDef, Services};

use super::run_with;

fn services(server: &PgServer) -> Services {
    let mut s = Services::none();
    s.datasources = BTreeMap::from([(
        "ORDERS".to_string(),
        DatasourceDef::Postgres {
            conninfo: server.url(),
            password_env: None,
        },
    )]);
    s
}

/// A connection of the test's own, outside the flow.
fn direct(server: &PgServer) -> Arc<Datasource> {
    Datasource::postgres("test", &server.url(), None).expect("datasource")
}

fn ids(server: &PgServer) -> Vec<i64> {
    let mut got = Vec::new();
    direct(server)
        .statement()
        .expect("connection")
        .query("SELECT id FROM orders ORDER BY id", &[], |r| {
            if let SqlValueRef::Integer(i) = r.get(0)? {
                got.push(i);
            }
            Ok::<_, sluice_db::DbError>(())
        })
        .expect("ids");
    got
}

fn create_orders(server: &PgServer) {
    direct(server)
        .statement()
        .expect("connection")
        .execute_batch(
            "DROP TABLE IF EXISTS orders;
             CREATE TABLE orders(id INTEGER PRIMARY KEY, amount NUMERIC, price NUMERIC(20,4),
                 note VARCHAR(40), ok BOOLEAN, day DATE, at TIME, ts TIMESTAMP, data BYTEA,
                 ratio DOUBLE PRECISION, big BIGINT, small SMALLINT, r REAL, c CHARACTER(2))",
        )
        .expect("schema");
}

const STORE: &str = "CREATE COMPUTE MODULE Store
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  DECLARE d DECIMAL 0.1;
  SET d = d + 0.2;
  INSERT INTO Database.orders(id, amount, price, note, ok, day, at, ts, data, ratio, big, small, r, c)
   VALUES(CAST(InputRoot.XMLNSC.O.Id AS INTEGER), d, CAST('12345678901234.5678' AS DECIMAL),
    InputRoot.XMLNSC.O.Note, TRUE, DATE '2024-02-29', TIME '13:45:00', TIMESTAMP '2024-02-29 13:45:00.123456',
    X'00FF', 0.5e0, 9000000000, -3, 1.5e0, 'ab');
  INSERT INTO Database.orders(id) VALUES(CAST(InputRoot.XMLNSC.O.Id AS INTEGER) + 1);
  SET OutputRoot.XMLNSC.R.Row[] = PASSTHRU('SELECT * FROM orders WHERE note = ''it''''s ?'' OR id = ? ORDER BY id',
   CAST(InputRoot.XMLNSC.O.Id AS INTEGER) + 1);
  IF InputRoot.XMLNSC.O.Fail = 'yes' THEN
   THROW USER EXCEPTION VALUES('later failure');
  END IF;
  RETURN TRUE;
 END;
END MODULE;
";

fn store_flow(body: &str) -> String {
    format!(
        "nodes:\n  s: {{ type: Source, body: \"{body}\", wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Store, datasource: ORDERS, wires: {{ out: [got] }} }}\n  got: {{ type: Capture }}\n"
    )
}

#[test]
fn postgres_compute_inserts_and_passthru_reads_every_type_when_the_flow_completes() {
    let Some(server) = PgServer::start() else {
        return;
    };
    create_orders(&server);
    let log = run_with(
        STORE,
        &store_flow("<O><Id>1</Id><Note>it&apos;s ?</Note></O>"),
        &services(&server),
        &|_| {},
    );
    assert_eq!(log.len(), 1, "{log:?}");
    let out = &log[0];
    for part in [
        "<id>1</id>",
        "<amount>0.3</amount>",
        "<price>12345678901234.5678</price>",
        "<note>it's ?</note>",
        "<ok>TRUE</ok>",
        "<day>2024-02-29</day>",
        "<at>13:45:00</at>",
        "<ts>2024-02-29T13:45:00.123456</ts>",
        "<data>00FF</data>",
        "<ratio>5E-1</ratio>",
        "<r>1.5E+0</r>",
        "<big>9000000000</big>",
        "<small>-3</small>",
        "<c>ab</c>",
        "<id>2</id>",
        "<amount/>",
    ] {
        assert!(out.contains(part), "{part} in {out}");
    }
    assert_eq!(ids(&server), [1, 2], "committed with the flow");
}

#[test]
fn postgres_insert_is_rolled_back_when_a_later_failure_ends_the_flow() {
    let Some(server) = PgServer::start() else {
        return;
    };
    create_orders(&server);
    let log = run_with(
        STORE,
        &store_flow("<O><Id>5</Id><Note>n</Note><Fail>yes</Fail></O>"),
        &services(&server),
        &|_| {},
    );
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("later failure"), "{}", log[0]);
    assert!(ids(&server).is_empty(), "rolled back with the flow");
}

const DUPLICATE: &str = "CREATE COMPUTE MODULE Dup
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  INSERT INTO Database.orders(id) VALUES(7);
  INSERT INTO Database.orders(id) VALUES(7);
  SET OutputRoot.XMLNSC.R.Code = SQLCODE;
  SET OutputRoot.XMLNSC.R.State = SQLSTATE;
  SET OutputRoot.XMLNSC.R.Native = SQLNATIVEERROR;
  SET OutputRoot.XMLNSC.R.Text = SQLERRORTEXT;
  RETURN TRUE;
 END;
END MODULE;
";

fn duplicate_flow(throw: bool) -> String {
    format!(
        "nodes:\n  s: {{ type: Source, body: '<O/>', wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Dup, datasource: ORDERS, throw_exception_on_database_error: {throw}, wires: {{ out: [got], failure: [failed] }} }}\n  got: {{ type: Capture }}\n  failed: {{ type: Capture }}\n"
    )
}

#[test]
fn postgres_constraint_violation_sets_sqlstate_when_throw_exception_is_off() {
    let Some(server) = PgServer::start() else {
        return;
    };
    create_orders(&server);
    let log = run_with(
        DUPLICATE,
        &duplicate_flow(false),
        &services(&server),
        &|_| {},
    );
    assert_eq!(log.len(), 1, "{log:?}");
    let out = &log[0];
    assert!(out.starts_with("got:"), "{out}");
    assert!(out.contains("<State>23505</State>"), "{out}");
    assert!(out.contains("<Native>"), "{out}");
    assert!(!out.contains("<Code>0</Code>"), "{out}");
    assert!(out.contains("duplicate key"), "{out}");

    create_orders(&server);
    let log = run_with(
        DUPLICATE,
        &duplicate_flow(true),
        &services(&server),
        &|_| {},
    );
    assert_eq!(log.len(), 1, "{log:?}");
    let out = &log[0];
    assert!(out.starts_with("failed:"), "{out}");
    for part in ["DatabaseException", "23505", "ORDERS", "INSERT INTO"] {
        assert!(out.contains(part), "{part} in {out}");
    }
}

const PROCEDURES: &str = "CREATE COMPUTE MODULE Proc
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  DECLARE total DECIMAL;
  DECLARE note CHARACTER 'hi';
  DECLARE d INTEGER;
  CALL price(4, total, note);
  CALL twice(21, d);
  SET OutputRoot.XMLNSC.R.Total = total;
  SET OutputRoot.XMLNSC.R.Note = note;
  SET OutputRoot.XMLNSC.R.D = d;
  RETURN TRUE;
 END;
 CREATE PROCEDURE price(IN qty INTEGER, OUT total DECIMAL, INOUT note CHARACTER)
  LANGUAGE DATABASE EXTERNAL NAME \"app.price\";
 CREATE PROCEDURE twice(IN v INTEGER, OUT d INTEGER)
  LANGUAGE DATABASE EXTERNAL NAME \"app.twice\";
END MODULE;
";

#[test]
fn postgres_procedure_and_function_fill_out_and_inout_parameters_when_called() {
    let Some(server) = PgServer::start() else {
        return;
    };
    direct(&server)
        .statement()
        .expect("connection")
        .execute_batch(
            "CREATE SCHEMA app;
             CREATE PROCEDURE app.price(IN qty INTEGER, OUT total NUMERIC, INOUT note TEXT)
               LANGUAGE plpgsql AS $$ BEGIN total := qty * 1.25; note := note || '!'; END $$;
             CREATE FUNCTION app.twice(IN v INTEGER, OUT d INTEGER)
               LANGUAGE sql AS $$ SELECT v * 2 $$;",
        )
        .expect("routines");
    let log = run_with(
        PROCEDURES,
        "nodes:\n  s: { type: Source, body: '<O/>', wires: { out: [c] } }\n  c: { type: Compute, module: Proc, datasource: ORDERS, wires: { out: [got], failure: [got] } }\n  got: { type: Capture }\n",
        &services(&server),
        &|_| {},
    );
    assert_eq!(
        log,
        ["got: <R><Total>5.00</Total><Note>hi!</Note><D>42</D></R>"]
    );
}

const WARN: &str = "CREATE COMPUTE MODULE Warn
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  PASSTHRU('DO $$ BEGIN RAISE WARNING ''low stock'' USING ERRCODE = ''01000''; END $$');
  SET OutputRoot.XMLNSC.R.State = SQLSTATE;
  SET OutputRoot.XMLNSC.R.Code = SQLCODE;
  SET OutputRoot.XMLNSC.R.Text = SQLERRORTEXT;
  RETURN TRUE;
 END;
END MODULE;
";

fn warn_flow(as_errors: bool) -> String {
    format!(
        "nodes:\n  s: {{ type: Source, body: '<O/>', wires: {{ out: [c] }} }}\n  c: {{ type: Compute, module: Warn, datasource: ORDERS, treat_warnings_as_errors: {as_errors}, wires: {{ out: [got], failure: [failed] }} }}\n  got: {{ type: Capture }}\n  failed: {{ type: Capture }}\n"
    )
}

#[test]
fn postgres_warning_sets_sqlstate_or_fails_when_treated_as_an_error() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let log = run_with(WARN, &warn_flow(false), &services(&server), &|_| {});
    assert_eq!(
        log,
        ["got: <R><State>01000</State><Code>0</Code><Text>low stock</Text></R>"]
    );
    let log = run_with(WARN, &warn_flow(true), &services(&server), &|_| {});
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].starts_with("failed:"), "{}", log[0]);
    assert!(
        log[0].contains("low stock") && log[0].contains("01000"),
        "{}",
        log[0]
    );
}
