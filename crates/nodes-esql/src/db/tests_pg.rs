//! DatabaseRetrieve, DatabaseRoute and DatabaseInput on a PostgreSQL datasource named in
//! sluice.yaml, against a real server the test starts (skipped, with a reason, when PostgreSQL
//! is not installed).

use std::collections::BTreeMap;

use sluice_db::{Datasource, SqlValueRef};
use sluice_flow_testing::PgServer;
use sluice_node_api::{DatasourceDef, Services};

use super::db::{RECORD, input_flow, run_until};
use super::run_with;

fn services(server: &PgServer) -> Services {
    let mut s = Services::none();
    s.datasources = BTreeMap::from([(
        "SHOP".to_string(),
        DatasourceDef::Postgres {
            conninfo: server.url(),
            password_env: None,
        },
    )]);
    s
}

fn setup(server: &PgServer, sql: &str) {
    Datasource::postgres("test", &server.url(), None)
        .expect("datasource")
        .statement()
        .expect("connection")
        .execute_batch(sql)
        .expect("schema");
}

fn count(server: &PgServer, sql: &str) -> Option<i64> {
    let ds = Datasource::postgres("test", &server.url(), None).ok()?;
    let mut n = None;
    ds.statement()
        .ok()?
        .query(sql, &[], |r| {
            if let SqlValueRef::Integer(i) = r.get(0)? {
                n = Some(i);
            }
            Ok::<_, sluice_db::DbError>(())
        })
        .ok()?;
    n
}

const CUSTOMERS: &str = "DROP TABLE IF EXISTS customers;
     CREATE TABLE customers(id INTEGER PRIMARY KEY, name VARCHAR(20), region CHAR(2), tier INTEGER, credit NUMERIC(10,2));
     INSERT INTO customers VALUES (42, 'Ada', 'EU', 2, 1500.50), (43, 'Grace', 'US', 1, 20);";

fn one(node: &str, wires: &str, body: &str, services: &Services) -> Vec<String> {
    run_with(
        "",
        &format!(
            "nodes:\n  s: {{ type: Source, body: \"{body}\", wires: {{ out: [n] }} }}\n  n: {{ {node}, wires: {{ {wires} }} }}\n  out: {{ type: Capture }}\n  nf: {{ type: Capture }}\n  fail: {{ type: Capture }}\n  eu: {{ type: Capture }}\n  other: {{ type: Capture }}\n"
        ),
        services,
        &|_| {},
    )
}

#[test]
fn postgres_retrieve_writes_typed_columns_and_finds_no_key_when_no_row() {
    let Some(server) = PgServer::start() else {
        return;
    };
    setup(&server, CUSTOMERS);
    let s = services(&server);
    let node = "type: DatabaseRetrieve, datasource: SHOP, table: customers, query_elements: { id: '$Body/order/customer' }, data_elements: { name: '$Body/order/name', credit: '$Body/order/credit' }";
    let wires = "out: [out], key_not_found: [nf], failure: [fail]";
    assert_eq!(
        one(node, wires, "<order><customer>42</customer></order>", &s),
        ["out: <order><customer>42</customer><name>Ada</name><credit>1500.50</credit></order>"]
    );
    assert_eq!(
        one(node, wires, "<order><customer>7</customer></order>", &s),
        ["nf: <order><customer>7</customer></order>"]
    );
}

#[test]
fn postgres_retrieve_failure_carries_the_servers_sqlstate_when_the_table_is_missing() {
    let Some(server) = PgServer::start() else {
        return;
    };
    let s = services(&server);
    let node = "type: DatabaseRetrieve, datasource: SHOP, table: nowhere, query_elements: { id: '$Body/order/customer' }, data_elements: { name: '$Body/order/name' }";
    let log = one(
        node,
        "out: [out], failure: [fail]",
        "<order><customer>42</customer></order>",
        &s,
    );
    assert_eq!(log.len(), 1, "{log:?}");
    for part in ["fail: ", "DatabaseException", "42P01", "nowhere"] {
        assert!(log[0].contains(part), "{part} in {}", log[0]);
    }
}

#[test]
fn postgres_route_reads_the_row_and_routes_on_its_columns() {
    let Some(server) = PgServer::start() else {
        return;
    };
    setup(&server, CUSTOMERS);
    let s = services(&server);
    let node = "type: DatabaseRoute, datasource: SHOP, table: customers, query_elements: { id: '$Body/order/customer' }, filter_table: { eu: \"$LocalEnvironment/DatabaseRoute/region = 'EU' and $LocalEnvironment/DatabaseRoute/credit > 1000\" }";
    let wires = "eu: [eu], default: [other], key_not_found: [nf], failure: [fail]";
    assert_eq!(
        one(node, wires, "<order><customer>42</customer></order>", &s),
        ["eu: <order><customer>42</customer></order>"]
    );
    assert_eq!(
        one(node, wires, "<order><customer>43</customer></order>", &s),
        ["other: <order><customer>43</customer></order>"]
    );
}

#[test]
fn postgres_input_ends_events_with_the_flow_and_backs_out_the_failing_one() {
    let Some(server) = PgServer::start() else {
        return;
    };
    setup(
        &server,
        "DROP TABLE IF EXISTS orders, order_events, seen;
         CREATE TABLE orders(id INTEGER PRIMARY KEY, amount INTEGER);
         CREATE TABLE order_events(event_id SERIAL PRIMARY KEY, order_id INTEGER, status VARCHAR(10) DEFAULT 'new');
         CREATE TABLE seen(id INTEGER);
         INSERT INTO orders VALUES (1, 100), (2, 2000);
         INSERT INTO order_events(order_id) VALUES (1), (2);",
    );
    let s = services(&server);
    let flow = input_flow(
        "SHOP",
        ", backout_threshold: 2, backout_event: \"UPDATE order_events SET status = 'failed' WHERE event_id = :event_id\"",
    );
    let log = run_until(RECORD, &flow, &s, &|_| {
        count(
            &server,
            "SELECT COUNT(*) FROM order_events WHERE status = 'failed'",
        ) == Some(1)
    });
    assert_eq!(log, ["got: <Event><id>1</id><amount>100</amount></Event>"]);
    assert_eq!(count(&server, "SELECT COUNT(*) FROM order_events"), Some(1));
    assert_eq!(
        count(&server, "SELECT CAST(MAX(id) AS BIGINT) FROM seen"),
        Some(1)
    );
    assert_eq!(count(&server, "SELECT COUNT(*) FROM seen"), Some(1));
}
