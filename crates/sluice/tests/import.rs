//! `sluice import` on a workspace written in the product's XMI format: what it writes, what it
//! reports, and that the imported project runs a message through.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Server;
use common::tempdir::TempDir;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/import/workspace")
}

fn import(out: &Path, extra: &[&str]) -> (bool, String, String) {
    let o = Command::new(common::bin())
        .arg("import")
        .arg(workspace())
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run sluice import");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn import_writes_a_project_that_runs_and_reports_what_did_not_map() {
    let dir = TempDir::new("import");
    let out = dir.path().join("project");
    let (ok, stdout, stderr) = import(&out, &[]);
    assert!(ok, "{stdout}{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("imported 7 flows (5 complete), 21 nodes (18 mapped), report: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Failing.msgflow: 2 unmapped parts"),
        "{stdout}"
    );

    let report = std::fs::read_to_string(out.join("IMPORT-REPORT.md")).unwrap();
    assert!(
        report.contains("node type `ComIbmJavaCompute` | not in Sluice yet"),
        "{report}"
    );
    assert!(
        report.contains("property `validateMaster` = `contentAndValue`"),
        "{report}"
    );
    assert!(
        report.contains("unknown node type `JavaCompute`"),
        "{report}"
    );
    assert!(out.join("flows-incomplete/Failing.yaml").is_file());
    assert!(
        report.contains("BAR override lines applied: 2 of 4"),
        "{report}"
    );
    assert!(
        report.contains("`orders.Orders#Nope.queueName` = `NOWHERE`: the flow has no node `Nope`"),
        "{report}"
    );
    assert!(report.contains("`billing.Invoices#MQ Input.queueName` = `INVOICES`: no flow of the workspace has that name"), "{report}");
    let orders = std::fs::read_to_string(out.join("flows/Orders.yaml")).unwrap();
    assert!(orders.contains("instances: 4"), "{orders}");
    let settings = std::fs::read_to_string(out.join("sluice.yaml")).unwrap();
    assert!(settings.contains("- name: ORDERS.JAVA"), "{settings}");

    // Policies: a PostgreSQL JDBC provider is a datasource, an MQTT policy gives its node the
    // broker and topic, a client MQ endpoint and a DB2 provider are reported.
    assert!(
        settings.contains(
            "  Warehouse:\n    postgres: 'host=db.example port=5432 dbname=stock'\n    password_env: WAREHOUSE_PASSWORD"
        ),
        "{settings}"
    );
    assert!(
        settings.contains("brokers:\n  mqtt_127_0_0_1_1:\n    mqtt: 'tcp://127.0.0.1:1'"),
        "{settings}"
    );
    let readings = std::fs::read_to_string(out.join("flows/Readings.yaml")).unwrap();
    assert!(readings.contains("topics: [plant/readings]"), "{readings}");
    assert!(readings.contains("broker: mqtt_127_0_0_1_1"), "{readings}");
    assert!(
        report.contains("| 7 | MQ Input | policy `{DefaultPolicies}:RemoteQM` | a client connection to queue manager `QM1` at mq.example:1414"),
        "{report}"
    );
    assert!(
        report.contains("`{DefaultPolicies}:Ledger` (JDBCProviders) | DefaultPolicies/Warehouse.policyxml:11 | **not mapped**: a DB2 Universal Database database"),
        "{report}"
    );
    // A flow that validates but has a part that did not map waits aside, with why.
    assert!(out.join("flows-incomplete/Stock.yaml").is_file());
    assert!(
        stdout.contains("Stock.msgflow: 1 unmapped part, written to flows-incomplete/Stock.yaml"),
        "{stdout}"
    );
    // A subflow named like a node type is named for what it is.
    assert!(out.join("subflows/Route_subflow.yaml").is_file());
    // The DFDL schema is carried into models/ and found by the message type the node names.
    assert!(out.join("models/record.xsd").is_file());
    let records = std::fs::read_to_string(out.join("flows/Records.yaml")).unwrap();
    assert!(
        records.contains("message_type: record\n    message_model: models/record.xsd"),
        "{records}"
    );

    // The complete flow runs: its subflow (from the library), its ESQL with the flow's
    // user-defined property, its Route by the rule carried across.
    let server = Server::start(&out);
    let r = server.post("/imported/orders", br#"{"qty":2}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), r#"{"qty":2,"region":"APAC","audited":true}"#);
    let big = server.post("/imported/orders", br#"{"qty":20}"#);
    assert_eq!(big.text(), r#"{"qty":20,"region":"APAC"}"#);
    // The DFDL flow deployed, so its carried model compiled; it answers with the record, and
    // with the reply header its HTTP Header node's rows set.
    let rec = server.post("/imported/records", b"north,21,C");
    assert_eq!((rec.status, rec.text().as_str()), (200, "north,21,C"));
    assert_eq!(
        rec.header("x-station-format"),
        Some("csv"),
        "{:?}",
        rec.headers
    );
}

#[test]
fn import_refuses_a_folder_that_is_not_empty_unless_forced() {
    let dir = TempDir::new("import-force");
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let (ok, _, stderr) = import(dir.path(), &[]);
    assert!(!ok);
    assert!(stderr.contains("is not empty (use --force"), "{stderr}");
    let (ok, stdout, stderr) = import(dir.path(), &["--force"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(dir.path().join("keep.txt").is_file());
}

#[test]
fn import_fails_when_the_folder_holds_no_flow() {
    let dir = TempDir::new("import-empty");
    let o = Command::new(common::bin())
        .arg("import")
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no .msgflow or .subflow file"));
}
