//! REST API projects over real sockets: the samples' orders API and REST Echo, a project whose
//! operations lack subflows, and the served documents.

mod common;

use std::sync::OnceLock;

use common::{Server, request, samples_dir, tempdir::TempDir};
use serde_json::Value;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let s = Server::start(&samples_dir());
        common::stop_at_exit(&s);
        s
    })
}

fn call(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> common::Response {
    request(server().http_port, method, path, headers, body)
}

fn json(r: &common::Response) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.text()))
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[test]
fn orders_api_creates_an_order_then_reads_it_back() {
    let r = call(
        "POST",
        "/samples/api/v1/orders",
        &[JSON],
        br#"{"item":"pen","quantity":3}"#,
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let created = json(&r);
    let id = created["id"].as_i64().expect("an id");
    assert_eq!(created["item"], "pen");
    let r = call("GET", &format!("/samples/api/v1/orders/{id}"), &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(json(&r), created);
}

#[test]
fn orders_api_answers_404_from_the_flow_when_the_order_does_not_exist() {
    let r = call("GET", "/samples/api/v1/orders/999999999", &[], b"");
    assert_eq!(r.status, 404, "{}", r.text());
}

#[test]
fn orders_api_rejects_an_invalid_body_naming_the_field_when_validation_is_on() {
    let r = call(
        "POST",
        "/samples/api/v1/orders",
        &[JSON],
        br#"{"item":"pen","quantity":0}"#,
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.header("Content-Type"), Some("application/problem+json"));
    let p = json(&r);
    assert_eq!(p["errors"][0]["in"], "body");
    assert_eq!(p["errors"][0]["field"], "/quantity");
    assert_eq!(p["errors"][0]["reason"], "0 is less than the minimum 1");
    let r = call(
        "POST",
        "/samples/api/v1/orders",
        &[JSON],
        br#"{"item":"pen"}"#,
    );
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("required property `quantity` is missing"),
        "{}",
        r.text()
    );
    let r = call("POST", "/samples/api/v1/orders", &[JSON], b"{not json");
    assert_eq!(r.status, 400);
    assert!(r.text().contains("not JSON"), "{}", r.text());
}

#[test]
fn orders_api_rejects_a_path_parameter_of_the_wrong_type_when_validation_is_on() {
    let r = call("GET", "/samples/api/v1/orders/abc", &[], b"");
    assert_eq!(r.status, 400, "{}", r.text());
    let p = json(&r);
    assert_eq!(p["errors"][0]["in"], "path");
    assert_eq!(p["errors"][0]["field"], "id");
    assert_eq!(p["errors"][0]["reason"], "expected integer, found string");
}

#[test]
fn orders_api_answers_404_and_405_with_allow_when_nothing_matches() {
    let r = call("GET", "/samples/api/v1/customers", &[], b"");
    assert_eq!(r.status, 404, "{}", r.text());
    let r = call("DELETE", "/samples/api/v1/orders", &[], b"");
    assert_eq!(r.status, 405, "{}", r.text());
    assert_eq!(r.header("Allow"), Some("POST"));
}

#[test]
fn orders_api_answers_a_cors_preflight_and_marks_responses_when_cors_is_set() {
    let r = call(
        "OPTIONS",
        "/samples/api/v1/orders",
        &[
            ("Origin", "https://shop.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(r.header("Access-Control-Allow-Methods"), Some("POST"));
    let r = call(
        "GET",
        "/samples/api/v1/orders/1",
        &[("Origin", "https://shop.example")],
        b"",
    );
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
}

#[test]
fn orders_document_is_served_with_the_real_endpoint_as_json_and_yaml() {
    let r = call("GET", "/orders/openapi.json", &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let doc = json(&r);
    // The test client sends `Host: localhost`.
    assert_eq!(doc["servers"][0]["url"], "http://localhost/samples/api/v1");
    assert!(doc.get("x-sluice").is_none());
    assert_eq!(
        doc["paths"]["/orders"]["post"]["operationId"],
        "createOrder"
    );
    let r = call("GET", "/orders/openapi.yaml", &[], b"");
    assert_eq!(r.status, 200);
    assert!(r.header("Content-Type").is_some_and(|c| c.contains("yaml")));
    assert!(
        r.text().contains("\"operationId\": \"getOrder\""),
        "{}",
        r.text()
    );
}

#[test]
fn rest_echo_copies_the_json_and_changes_its_last_element() {
    let r = call(
        "POST",
        "/samples/rest-echo",
        &[JSON],
        br#"{"Parent":{"First":1,"Last":"Test"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), r#"{"Parent":{"First":1,"Last":"Changed"}}"#);
}

#[test]
fn validate_names_every_operation_without_a_subflow_with_its_line() {
    let dir = TempDir::new("rest-missing");
    std::fs::create_dir_all(dir.path().join("apis")).unwrap();
    std::fs::write(
        dir.path().join("apis/shop.yaml"),
        "openapi: 3.0.3\ninfo: { title: shop, version: '1' }\npaths:\n  /a:\n    get:\n      operationId: getA\n      responses: {}\n    post:\n      responses: {}\n  /b:\n    put:\n      operationId: putB\n      responses: {}\n",
    )
    .unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["validate", &dir.path().display().to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for (line, what) in [
        (5, "operation `getA` (GET /a) has no subflow `getA`"),
        (8, "operation POST /a has no operationId"),
        (11, "operation `putB` (PUT /b) has no subflow `putB`"),
    ] {
        assert!(
            err.contains(&format!("shop.yaml:{line}:")) && err.contains(what),
            "{what} at line {line}:\n{err}"
        );
    }
}

const SET_ID: &str = "CREATE COMPUTE MODULE SetId
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment.Destination.REST.Request.Parameters.id = InputRoot.JSON.Data.id;
		RETURN TRUE;
	END;
END MODULE;
";

#[test]
fn rest_request_calls_an_operation_with_parameters_from_the_local_environment() {
    let r = call(
        "POST",
        "/samples/api/v1/orders",
        &[JSON],
        br#"{"item":"ink","quantity":2}"#,
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let id = json(&r)["id"].as_i64().expect("an id");
    // A second server whose flow calls the samples' orders API; the document sits outside apis/
    // so that this project does not serve it too.
    let dir = TempDir::new("rest-request");
    for folder in ["flows", "models", "esql"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
    }
    std::fs::copy(
        samples_dir().join("apis/orders.yaml"),
        dir.path().join("models/orders.yaml"),
    )
    .unwrap();
    std::fs::write(dir.path().join("esql/call.esql"), SET_ID).unwrap();
    let flow = format!(
        "flow: call-orders\nnodes:\n  in: {{ type: HTTPInput, path: /call, domain: JSON, wires: {{ out: [set] }} }}\n  set: {{ type: Compute, module: SetId, compute_mode: message_local_environment, wires: {{ out: [get] }} }}\n  get: {{ type: RESTRequest, api: models/orders.yaml, operation: getOrder, base_url: 'http://127.0.0.1:{}/samples/api/v1', domain: JSON, wires: {{ out: [reply], error: [reply] }} }}\n  reply: {{ type: HTTPReply }}\n",
        server().http_port
    );
    std::fs::write(dir.path().join("flows/call.yaml"), flow).unwrap();
    let caller = Server::start(dir.path());
    let body = format!(r#"{{"id":{id}}}"#);
    let r = request(caller.http_port, "POST", "/call", &[JSON], body.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    let order = json(&r);
    assert_eq!(
        (order["id"].as_i64(), order["item"].as_str()),
        (Some(id), Some("ink"))
    );
}

/// Schemathesis (a Python OpenAPI testing tool) reads the served document and calls every
/// operation with generated requests: none may get a server error or a response that does not
/// match the document.
#[test]
fn schemathesis_calls_every_operation_of_the_served_document_without_a_server_error() {
    let Some(tool) = sluice_flow_testing::require_tool(
        "schemathesis (pip install schemathesis)",
        &["schemathesis", "st"],
    ) else {
        return;
    };
    let report = TempDir::new("schemathesis");
    let events = report.path().join("events.ndjson");
    let out = std::process::Command::new(tool)
        .args([
            "run",
            &format!(
                "http://127.0.0.1:{}/orders/openapi.json",
                server().http_port
            ),
            "--checks",
            "not_a_server_error,response_schema_conformance",
            "--max-examples",
            "25",
            "--seed",
            "1",
            "--report",
            "ndjson",
            "--report-ndjson-path",
        ])
        .arg(&events)
        .env("SCHEMATHESIS_TELEMETRY", "false")
        // It keeps a database of examples in its working folder.
        .current_dir(report.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run schemathesis");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its event log names each operation with the cases it sent.
    let log = std::fs::read_to_string(&events).expect("schemathesis' event log");
    for op in ["POST /orders", "GET /orders/{id}"] {
        assert!(
            log.contains(&format!(r#"{{"label":"{op}","cases":{{"#)),
            "{op} was not called:\n{stdout}"
        );
    }
}
