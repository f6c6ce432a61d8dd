//! The web UI on the admin port: its files and the admin routes it uses over plain HTTP, then
//! each view in a real headless Chromium (chromedriver over WebDriver), checking what a person
//! sees. `SLUICE_BLESS=1` saves a screenshot of each view into docs/ui/.

mod common;
#[path = "ui/webdriver.rs"]
mod webdriver;

use common::tempdir::TempDir;
use common::{Response, Server, request, sale_list, samples_dir};
use serde_json::Value;
use webdriver::Browser;

const ECHO: &str = "flow: echo\nnodes:\n  in: { type: HTTPInput, path: /echo, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";

/// alice/secret is an admin, olga/opsecret an operator; the token "viewtoken" a viewer
/// (`printf %s … | sha256sum`).
const ADMIN_YAML: &str = "queues:\n  - { name: UI.Q }\nadmin:\n  users:\n    alice: { password_sha256: 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b, role: admin }\n    olga: { password_sha256: cc1d52afa7d09960a87a8954694674d6b7b70df96582aa99e358e90a6cd86e26, role: operator }\n  tokens:\n    - { sha256: 9e785187de10f64c5a369e4491d9a6fffd072fa23317cbd6e5d0f1f1f3883da6, role: viewer }\n";

fn project(tag: &str, settings: &str) -> TempDir {
    let p = TempDir::new(tag);
    std::fs::create_dir_all(p.path().join("flows")).expect("flows");
    std::fs::write(p.path().join("flows/echo.yaml"), ECHO).expect("flow");
    std::fs::write(p.path().join("sluice.yaml"), settings).expect("settings");
    p
}

fn json(r: &Response) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.text()))
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

fn call(s: &Server, method: &str, path: &str, auth: &str, body: &[u8]) -> Response {
    request(s.admin_port, method, path, &[("Authorization", auth)], body)
}

#[test]
fn page_and_modules_are_served_without_credentials_with_csp_and_etag() {
    let p = project("ui-files", ADMIN_YAML);
    let s = Server::start(p.path());
    let page = s.admin_get("/");
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.text().contains("/ui/app.js"), "{}", page.text());
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    let js = s.admin_get("/ui/app.js");
    assert_eq!(
        js.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    let etag = js.header("etag").expect("an ETag").to_string();
    let again = request(
        s.admin_port,
        "GET",
        "/ui/app.js",
        &[("If-None-Match", &etag)],
        b"",
    );
    assert_eq!((again.status, again.body.len()), (304, 0));
    assert_eq!(s.admin_get("/ui/missing.js").status, 404);

    // The API still asks for credentials; the page's own requests are not offered the
    // browser's basic dialog.
    let r = s.admin_get("/api/v1/flows");
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some());
    let r = request(
        s.admin_port,
        "GET",
        "/api/v1/flows",
        &[("X-Requested-With", "sluice-ui")],
        b"",
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), None);
}

#[test]
fn graph_server_and_queue_routes_answer_with_the_callers_role() {
    let p = project("ui-api", ADMIN_YAML);
    let s = Server::start(p.path());
    let (admin, operator, viewer) = (
        basic("alice", "secret"),
        basic("olga", "opsecret"),
        "Bearer viewtoken".to_string(),
    );
    assert_eq!(s.post("/echo", b"hi").status, 200);

    let server = json(&call(&s, "GET", "/api/v1/server", &viewer, b""));
    assert_eq!(server["role"], "viewer");
    assert_eq!(server["flows"], 1);
    assert!(server["invocations"].as_u64() >= Some(1), "{server}");
    assert_eq!(
        json(&call(&s, "GET", "/api/v1/server", &admin, b""))["role"],
        "admin"
    );

    let g = json(&call(&s, "GET", "/api/v1/flows/echo/graph", &viewer, b""));
    assert_eq!(g["nodes"][0]["label"], "in");
    assert_eq!(g["nodes"][0]["statistics"]["invocations"], 1);
    assert_eq!(g["wires"][0]["from"], "in");
    assert_eq!(g["wires"][0]["terminal"], "out");
    assert_eq!(g["wires"][0]["to"], "reply");
    assert_eq!(
        call(&s, "GET", "/api/v1/flows/none/graph", &viewer, b"").status,
        404
    );

    let put = br#"{"body": "<a>1</a>"}"#;
    let r = call(&s, "POST", "/api/v1/queues/UI.Q/messages", &viewer, put);
    assert_eq!(r.status, 403, "{}", r.text());
    let r = call(&s, "POST", "/api/v1/queues/UI.Q/messages", &operator, put);
    assert_eq!(r.status, 201, "{}", r.text());
    let queues = json(&call(&s, "GET", "/api/v1/queues", &viewer, b""));
    let q = queues["queues"]
        .as_array()
        .and_then(|a| a.iter().find(|q| q["name"] == "UI.Q"))
        .unwrap_or_else(|| panic!("no UI.Q in {queues}"));
    assert_eq!(q["depth"], 1);
    let m = json(&call(
        &s,
        "GET",
        "/api/v1/queues/UI.Q/messages",
        &viewer,
        b"",
    ));
    assert_eq!(m["messages"][0]["body"]["text"], "<a>1</a>");
    assert_eq!(m["messages"][0]["descriptor"]["user_identifier"], "olga");
    assert_eq!(
        call(&s, "POST", "/api/v1/queues/UI.Q/clear", &viewer, b"").status,
        403
    );
    let r = json(&call(&s, "POST", "/api/v1/queues/UI.Q/get", &operator, b""));
    assert_eq!(r["message"]["body"]["text"], "<a>1</a>");
    assert_eq!(r["depth"], 0);

    let doc = json(&call(&s, "GET", "/api/v1/openapi.json", &viewer, b""));
    assert!(doc["paths"]["/api/v1/flows/{name}/graph"]["get"].is_object());
}

/// Put `body` on `queue` over the messaging API (the samples' queue manager lets anyone in).
fn mq_put(s: &Server, qm: &str, queue: &str, body: &[u8]) {
    let r = request(
        s.admin_port,
        "POST",
        &format!("/ibmmq/rest/v1/messaging/qmgr/{qm}/queue/{queue}/message"),
        &[
            ("Content-Type", "text/plain"),
            ("ibm-mq-rest-csrf-token", "x"),
        ],
        body,
    );
    assert!(r.status < 300, "put on {queue}: {} {}", r.status, r.text());
}

fn number(text: &str) -> Option<u64> {
    text.trim().replace(',', "").parse().ok()
}

#[test]
fn each_view_shows_the_samples_and_operators_act_on_flows_and_queues_in_a_browser() {
    let Some(b) = Browser::start() else { return };
    let s = Server::start(&samples_dir());
    let qm = json(&s.admin_get("/api/v1/server"))["queue_manager"]
        .as_str()
        .expect("queue manager")
        .to_string();
    for _ in 0..3 {
        assert_eq!(s.post("/samples/route-first", &sale_list(1)).status, 200);
    }
    let base = format!("http://127.0.0.1:{}/", s.admin_port);

    // Overview: figures filled in, and the rate once a second reading came.
    b.goto(&base);
    let version = json(&s.admin_get("/api/v1/server"))["version"]
        .as_str()
        .expect("version")
        .to_string();
    b.wait_text("#ov-version", "the version", |t| t == version);
    b.wait_text("#ov-flows", "flows running", |t| t.contains(" of "));
    b.wait_text("#ov-memory", "memory", |t| t.ends_with("iB"));
    let messages = b.wait_text("#ov-messages", "a message count", |t| {
        number(t).is_some_and(|n| n >= 3)
    });
    assert!(number(&messages) >= Some(3));
    b.wait_text("#ov-rate", "a rate", |t| t != "–");
    assert!(b.text("main").unwrap_or_default().contains("route-first"));
    b.screenshot("overview");

    // Flows: every sample listed with its state; the operator's buttons are there.
    b.click("a[data-nav=flows]");
    let table = b.wait_text("#flows", "the flows", |t| t.contains("route-first"));
    for name in ["mq-route-first", "json-echo", "reminders"] {
        assert!(table.contains(name), "{name} missing from\n{table}");
    }
    assert!(table.contains("running"), "{table}");
    assert!(b.shown("button[aria-label='Stop route-first']"));
    b.screenshot("flows");

    // A flow's graph: its nodes drawn with their types and counts.
    b.click("a[href='#/flows/route-first']");
    let node = b.wait_text(
        "svg.flow-graph g.node[data-label=route]",
        "the route node",
        |t| t.contains("Route"),
    );
    assert!(node.contains("first") && node.contains("default"), "{node}");
    b.wait_text(
        "svg.flow-graph g.node[data-label=in] .count",
        "the input node's count",
        |t| t.starts_with("3 msgs"),
    );
    let wires = b.run(
        "return document.querySelectorAll('svg.flow-graph path.wire').length",
        serde_json::json!([]),
    );
    assert_eq!(wires, 3, "in→route, route→reply, route→rejected");
    b.screenshot("graph");

    // Stop, and the page and the flow's HTTP path both say so; then start again.
    b.click("button[aria-label='Stop route-first']");
    b.wait_text("#flow-state", "stopped", |t| t == "stopped");
    assert_eq!(s.post("/samples/route-first", &sale_list(1)).status, 503);
    b.wait_text("#toast", "a message", |t| t.contains("stopped"));
    b.click("button[aria-label='Start route-first']");
    b.wait_text("#flow-state", "running", |t| t == "running");
    assert_eq!(s.post("/samples/route-first", &sale_list(1)).status, 200);

    // A graph of a flow over queues, with messages through it.
    mq_put(&s, &qm, "SAMPLES.ROUTE.IN", &sale_list(1));
    b.goto(&format!("{base}#/flows/mq-route-first"));
    b.wait_text(
        "svg.flow-graph g.node[data-label=out] .count",
        "a message routed",
        |t| t.starts_with("1 msgs"),
    );
    b.screenshot("graph-mq");

    // Queues: the list, then one queue's page: put, see it browsed and counted, get, clear.
    b.click("a[data-nav=queues]");
    let list = b.wait_text("#queues", "the queues", |t| t.contains("SAMPLES.ROUTE.OUT"));
    assert!(list.contains("AGGREGATION.IN"), "{list}");
    b.wait_text(
        "tr[data-queue='SAMPLES.ROUTE.OUT'] td[data-col=depth]",
        "the routed message",
        |t| t == "1",
    );
    b.screenshot("queues");
    b.click("a[href='#/queues/SAMPLES.ROUTE.OUT']");
    b.wait_text("#queue-depth", "depth 1", |t| t == "1");
    b.type_into("#put-body", "{\"order\": 42}");
    b.click("form.put button[type=submit]");
    b.wait_text("#queue-depth", "depth 2", |t| t == "2");
    let browsed = b.wait_text("#messages", "the put message", |t| {
        t.contains("{\"order\": 42}")
    });
    assert!(browsed.contains("2 messages"), "{browsed}");
    b.click("#messages details:last-of-type summary");
    b.wait_text("#messages details:last-of-type", "its descriptor", |t| {
        t.contains("MQSTR") && t.contains("sluice admin")
    });
    b.screenshot("queue");
    b.click("#get-first");
    b.wait_text("#got", "the message got", |t| t.contains("Parent"));
    b.wait_text("#queue-depth", "depth 1", |t| t == "1");
    b.click("#clear");
    b.click("#clear-yes");
    b.wait_text("#queue-depth", "depth 0", |t| t == "0");
    b.wait_text("#messages", "an empty queue", |t| t.contains("empty"));
    b.goto(&format!("{base}#/queues"));
    b.wait_text(
        "tr[data-queue='SAMPLES.ROUTE.OUT'] td[data-col=depth]",
        "depth 0 in the list",
        |t| t == "0",
    );

    let severe = b.severe_logs();
    assert!(
        severe.is_empty(),
        "the page logged errors (a script error or a CSP refusal): {severe:?}"
    );
}

#[test]
fn sign_in_takes_a_password_or_token_and_shows_only_what_the_role_may_do_in_a_browser() {
    let Some(b) = Browser::start() else { return };
    let p = project("ui-signin", ADMIN_YAML);
    let s = Server::start(p.path());
    let base = format!("http://127.0.0.1:{}/", s.admin_port);

    b.goto(&format!("{base}#/flows"));
    b.find("#signin-user");
    b.screenshot("sign-in");
    b.type_into("#signin-user", "alice");
    b.type_into("#signin-password", "wrong");
    b.click("form.signin button[type=submit]");
    b.wait_text("#signin-error", "a refusal", |t| t.contains("not accepted"));

    // A viewer's token: flows shown, no buttons that would only be refused.
    b.type_into("#signin-token", "viewtoken");
    b.click("form.signin button[type=submit]");
    b.wait_text("#flows", "the echo flow", |t| t.contains("echo"));
    assert_eq!(b.text("#who .role").as_deref(), Some("viewer"));
    assert!(!b.shown("button[aria-label='Stop echo']"));

    // Signing out forgets the token; an operator then gets the controls.
    b.click("#who button");
    b.find("#signin-user");
    b.type_into("#signin-user", "olga");
    b.type_into("#signin-password", "opsecret");
    b.click("form.signin button[type=submit]");
    b.wait_text("#who .role", "operator", |t| t == "operator");
    b.wait_text("#flows", "the echo flow", |t| t.contains("echo"));
    assert!(b.shown("button[aria-label='Stop echo']"));

    // Keyboard: after a load the view has the focus, so Tab reaches its first field, with a
    // visible ring. (The token stays for the tab: a reload signs nobody out.)
    b.goto(&format!("{base}?reload#/flows"));
    b.wait_text("#flows", "the echo flow", |t| t.contains("echo"));
    b.press_tab();
    let focused = b.run(
        "const a = document.activeElement; \
         return [a.id, getComputedStyle(a).outlineStyle];",
        serde_json::json!([]),
    );
    assert_eq!(focused, serde_json::json!(["flow-filter", "solid"]));
}
