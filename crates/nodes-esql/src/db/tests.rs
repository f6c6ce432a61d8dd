//! DatabaseRetrieve, DatabaseRoute and DatabaseInput in real flows on an SQLite file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_db::{Datasource, SqlValueRef};
use sluice_flow::{Flow, Registry, load_flow};
use sluice_node_api::Services;

use super::{CAPTURE, LOG, LOG_ID, SERIAL, SOURCE, run_with};

/// A folder of the test's own with an SQLite file made by `schema`.
pub(super) struct TestDb {
    pub dir: PathBuf,
}

impl TestDb {
    pub fn new(schema: &str) -> TestDb {
        let dir = std::env::temp_dir().join(format!(
            "sluice-dbnodes-{}-{}",
            std::process::id(),
            LOG_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("dir");
        let ds = Datasource::open_file(&dir.join("t.sqlite")).expect("open");
        ds.statement()
            .expect("connection")
            .execute_batch(schema)
            .expect("schema");
        TestDb { dir }
    }

    pub fn path(&self) -> String {
        self.dir.join("t.sqlite").display().to_string()
    }

    pub fn count(&self, sql: &str) -> i64 {
        count_in(&self.path(), sql).expect("count")
    }
}

/// The integer a query on the SQLite file at `path` gives, through a connection of its own;
/// None while the database is busy.
pub(super) fn count_in(path: &str, sql: &str) -> Option<i64> {
    let ds = Datasource::open_file(Path::new(path)).ok()?;
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

impl Drop for TestDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const CUSTOMERS: &str = "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, region TEXT, tier INTEGER);
     INSERT INTO customers VALUES (42, 'Ada', 'EU', 2), (43, 'Grace', 'US', 1), (44, 'Linus', 'EU', 3);
     CREATE TABLE items(order_id INTEGER, sku TEXT, qty INTEGER);
     INSERT INTO items VALUES (7, 'A-1', 2), (7, 'B-2', 1), (8, 'C-3', 5);";

fn flow(node: &str, wires: &str, body: &str) -> String {
    format!(
        "nodes:\n  s: {{ type: Source, body: \"{body}\", wires: {{ out: [n] }} }}\n  n: {{ {node}, wires: {{ {wires} }} }}\n  out: {{ type: Capture }}\n  nf: {{ type: Capture }}\n  fail: {{ type: Capture }}\n  eu: {{ type: Capture }}\n  us: {{ type: Capture }}\n  gold: {{ type: Capture }}\n  other: {{ type: Capture }}\n"
    )
}

fn retrieve(db: &TestDb, extra: &str) -> String {
    format!(
        "type: DatabaseRetrieve, datasource: '{}', table: customers, query_elements: {{ id: '$Body/order/customer' }}, data_elements: {{ name: '$Body/order/name', tier: '$LocalEnvironment/Lookup/tier' }}{extra}",
        db.path()
    )
}

const RETRIEVE_WIRES: &str = "out: [out], key_not_found: [nf], failure: [fail]";

#[test]
fn retrieve_writes_the_columns_into_the_message_when_a_row_matches() {
    let db = TestDb::new(CUSTOMERS);
    let log = run_with(
        "",
        &flow(
            &retrieve(&db, ""),
            RETRIEVE_WIRES,
            "<order><customer>42</customer></order>",
        ),
        &Services::none(),
        &|_| {},
    );
    assert_eq!(
        log,
        ["out: <order><customer>42</customer><name>Ada</name></order>"]
    );
}

#[test]
fn retrieve_propagates_to_key_not_found_unchanged_when_no_row_matches() {
    let db = TestDb::new(CUSTOMERS);
    let log = run_with(
        "",
        &flow(
            &retrieve(&db, ""),
            RETRIEVE_WIRES,
            "<order><customer>99</customer></order>",
        ),
        &Services::none(),
        &|_| {},
    );
    assert_eq!(log, ["nf: <order><customer>99</customer></order>"]);
}

#[test]
fn retrieve_repeats_the_shared_element_per_row_when_multiple_rows() {
    let db = TestDb::new(CUSTOMERS);
    let node = format!(
        "type: DatabaseRetrieve, datasource: '{}', table: items, query_elements: {{ order_id: '$Body/order/id' }}, order_by: [sku], data_elements: {{ sku: '$Body/order/item/sku', qty: '$Body/order/item/qty' }}, multiple_rows: true",
        db.path()
    );
    let log = run_with(
        "",
        &flow(&node, RETRIEVE_WIRES, "<order><id>7</id></order>"),
        &Services::none(),
        &|_| {},
    );
    assert_eq!(
        log,
        [
            "out: <order><id>7</id><item><sku>A-1</sku><qty>2</qty></item><item><sku>B-2</sku><qty>1</qty></item></order>"
        ]
    );
}

#[test]
fn retrieve_sends_the_database_error_to_failure_when_the_table_is_missing() {
    let db = TestDb::new("CREATE TABLE other(x);");
    let log = run_with(
        "",
        &flow(
            &retrieve(&db, ""),
            RETRIEVE_WIRES,
            "<order><customer>42</customer></order>",
        ),
        &Services::none(),
        &|_| {},
    );
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].starts_with("fail: "), "{}", log[0]);
    for part in ["DatabaseException", "2321", "D00001", "no such table"] {
        assert!(log[0].contains(part), "{part} in {}", log[0]);
    }
}

fn route(db: &TestDb, mode: &str) -> String {
    format!(
        "type: DatabaseRoute, datasource: '{}', table: customers, columns: [region, tier], query_elements: {{ id: '$Body/order/customer' }}, distribution_mode: {mode}, filter_table: {{ eu: \"$LocalEnvironment/DatabaseRoute/region = 'EU'\", us: \"$LocalEnvironment/DatabaseRoute/region = 'US'\", gold: '$LocalEnvironment/DatabaseRoute/tier >= 3' }}",
        db.path()
    )
}

const ROUTE_WIRES: &str =
    "eu: [eu], us: [us], gold: [gold], default: [other], key_not_found: [nf], failure: [fail]";

fn route_once(db: &TestDb, mode: &str, customer: u32) -> Vec<String> {
    run_with(
        "",
        &flow(
            &route(db, mode),
            ROUTE_WIRES,
            &format!("<order><customer>{customer}</customer></order>"),
        ),
        &Services::none(),
        &|_| {},
    )
}

#[test]
fn route_propagates_to_every_matching_filter_when_distribution_is_all() {
    let db = TestDb::new(CUSTOMERS);
    let body = "<order><customer>44</customer></order>";
    assert_eq!(
        route_once(&db, "all", 44),
        [format!("eu: {body}"), format!("gold: {body}")]
    );
}

#[test]
fn route_stops_at_the_first_match_when_distribution_is_first() {
    let db = TestDb::new(CUSTOMERS);
    assert_eq!(
        route_once(&db, "first", 44),
        ["eu: <order><customer>44</customer></order>"]
    );
}

#[test]
fn route_goes_to_default_when_no_filter_matches_and_key_not_found_when_no_row() {
    let db = TestDb::new(
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, region TEXT, tier INTEGER);
         INSERT INTO customers VALUES (45, 'APAC', 1);",
    );
    assert_eq!(
        route_once(&db, "all", 45),
        ["other: <order><customer>45</customer></order>"]
    );
    assert_eq!(
        route_once(&db, "all", 46),
        ["nf: <order><customer>46</customer></order>"]
    );
}

#[test]
fn route_rejects_a_wired_terminal_when_it_has_no_filter() {
    let db = TestDb::new(CUSTOMERS);
    let mut r = Registry::new();
    r.register(&SOURCE);
    r.register(&CAPTURE);
    crate::register(&mut |s| r.register(s));
    let src = flow(
        &route(&db, "all"),
        &format!("{ROUTE_WIRES}, asia: [other]"),
        "<a/>",
    );
    let def = load_flow("t.yaml", &src, &r).expect("loads");
    let e = Flow::build(&def, &db.dir, &Services::none())
        .err()
        .expect("rejected");
    assert!(
        e[0].to_string()
            .contains("terminal `asia` is wired but has no filter expression"),
        "{}",
        e[0]
    );
}

// ----- DatabaseInput -----------------------------------------------------------------------

pub(super) const EVENTS: &str = "CREATE TABLE orders(id INTEGER PRIMARY KEY, amount INTEGER);
     CREATE TABLE order_events(event_id INTEGER PRIMARY KEY, order_id INTEGER, status TEXT DEFAULT 'new');
     CREATE TABLE seen(id INTEGER);
     INSERT INTO orders VALUES (1, 100), (2, 2000);
     INSERT INTO order_events(order_id) VALUES (1), (2);";

/// Run a flow whose input node polls until `done` holds for the log (or 10 s passed).
pub(super) fn run_until(
    esql: &str,
    flow: &str,
    services: &Services,
    done: &dyn Fn(&[String]) -> bool,
) -> Vec<String> {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!(
        "sluice-dbinput-{}-{}",
        std::process::id(),
        LOG_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(dir.join("esql")).expect("project dir");
    std::fs::write(dir.join("esql/main.esql"), esql).expect("write esql");
    let mut r = Registry::new();
    r.register(&CAPTURE);
    crate::register(&mut |s| r.register(s));
    let def = load_flow("t.yaml", flow, &r).unwrap_or_else(|e| panic!("{}", e[0]));
    let f = Arc::new(Flow::build(&def, &dir, services).unwrap_or_else(|e| panic!("{}", e[0])));
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let running = f.start();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until && !done(&LOG.lock().unwrap_or_else(|e| e.into_inner())) {
        std::thread::sleep(Duration::from_millis(20));
    }
    running.stop();
    let _ = std::fs::remove_dir_all(&dir);
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// A DATABASE module that records the order it is given, and fails for large ones.
pub(super) const RECORD: &str = "CREATE DATABASE MODULE Record
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  INSERT INTO Database.seen(id) VALUES(CAST(Body.Event.id AS INTEGER));
  IF CAST(Body.Event.amount AS INTEGER) > 1000 THEN
   THROW USER EXCEPTION VALUES('too large');
  END IF;
  RETURN TRUE;
 END;
END MODULE;
";

pub(super) fn input_flow(datasource: &str, extra: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: DatabaseInput, datasource: '{datasource}', event_query: \"SELECT event_id, order_id FROM order_events WHERE status = 'new' ORDER BY event_id\", message_query: 'SELECT id, amount FROM orders WHERE id = :order_id', end_event: 'DELETE FROM order_events WHERE event_id = :event_id', polling_interval_ms: 50{extra}, wires: {{ out: [rec] }} }}\n  rec: {{ type: Database, module: Record, datasource: '{datasource}', wires: {{ out: [got] }} }}\n  got: {{ type: Capture }}\n"
    )
}

#[test]
fn input_propagates_each_event_and_ends_it_in_the_flows_unit_of_work() {
    let db = TestDb::new(EVENTS);
    let flow = input_flow(
        &db.path(),
        ", backout_threshold: 2, backout_event: \"UPDATE order_events SET status = 'failed' WHERE event_id = :event_id\"",
    );
    let path = db.path();
    let log = run_until(RECORD, &flow, &Services::none(), &|_| {
        count_in(
            &path,
            "SELECT COUNT(*) FROM order_events WHERE status = 'failed'",
        ) == Some(1)
    });
    assert_eq!(log, ["got: <Event><id>1</id><amount>100</amount></Event>"]);
    // Event 1 ended with its insert committed; event 2's insert rolled back each time and the
    // event was marked failed at the threshold.
    assert_eq!(db.count("SELECT COUNT(*) FROM order_events"), 1);
    assert_eq!(
        db.count("SELECT COUNT(*) FROM order_events WHERE status = 'failed' AND order_id = 2"),
        1
    );
    assert_eq!(db.count("SELECT COUNT(*) FROM seen"), 1);
    assert_eq!(db.count("SELECT MAX(id) FROM seen"), 1);
}
