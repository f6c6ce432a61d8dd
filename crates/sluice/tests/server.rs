//! Server behaviour: bad projects, request limits, slow clients, redeploy, and SIGTERM.

mod common;

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use common::tempdir::TempDir;
use common::{Server, bin};

fn project(settings: &str, flows: &[(&str, &str)]) -> TempDir {
    let d = TempDir::new("project");
    std::fs::create_dir_all(d.path().join("flows")).unwrap();
    std::fs::write(d.path().join("sluice.yaml"), settings).unwrap();
    for (name, text) in flows {
        std::fs::write(d.path().join("flows").join(name), text).unwrap();
    }
    d
}

/// `sluice validate DIR`: its exit code and what it printed on standard error.
fn validate(dir: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::new(bin())
        .args(["validate", &dir.display().to_string()])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const ECHO: &str = "flow: echo\nnodes:\n  in: { type: HTTPInput, path: /echo, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";

#[test]
fn run_exits_2_with_file_and_line_for_a_bad_flow() {
    let p = project(
        "",
        &[(
            "bad.yaml",
            "flow: bad\nnodes:\n  in: { type: HTTPInptu, path: /x }\n",
        )],
    );
    let out = Command::new(bin())
        .args(["run", &p.path().display().to_string(), "--http-port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:3:"), "{err}");
    assert!(err.contains("did you mean `HTTPInput`?"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ready"));
}

#[test]
fn validate_reports_bad_settings_with_place() {
    let p = project("http:\n  max_request_byts: 10\n", &[("echo.yaml", ECHO)]);
    let (code, err) = validate(p.path());
    assert_eq!(code, Some(2));
    assert!(
        err.contains("sluice.yaml:2:") && err.contains("did you mean `max_request_bytes`?"),
        "{err}"
    );
}

#[test]
fn oversized_request_gets_413() {
    let p = project("http:\n  max_request_bytes: 1000\n", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    assert_eq!(s.post("/echo", &[b'x'; 999]).status, 200);
    assert_eq!(s.post("/echo", &[b'x'; 1001]).status, 413);
}

#[test]
fn a_body_that_arrives_in_pieces_comes_back_whole() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    let body: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let parts = [&body[..1], &body[1..100_000], &body[100_000..]];
    // With Content-Length, and chunked without it.
    for chunked in [false, true] {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", s.http_port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let head = if chunked {
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
        } else {
            format!(
                "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
        };
        c.write_all(head.as_bytes()).unwrap();
        for part in parts {
            if chunked {
                c.write_all(format!("{:x}\r\n", part.len()).as_bytes())
                    .unwrap();
                c.write_all(part).unwrap();
                c.write_all(b"\r\n").unwrap();
            } else {
                c.write_all(part).unwrap();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if chunked {
            c.write_all(b"0\r\n\r\n").unwrap();
        }
        let r = common::read_response(&mut c);
        assert_eq!(r.status, 200, "chunked: {chunked}");
        assert!(
            r.body == body,
            "chunked: {chunked}: {} bytes back",
            r.body.len()
        );
    }
}

#[test]
fn slow_client_gets_408() {
    let p = project("http:\n  request_timeout_secs: 1\n", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.http_port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
        .unwrap();
    let started = Instant::now();
    let r = common::read_response(&mut c);
    assert_eq!(r.status, 408);
    assert!(started.elapsed() < Duration::from_secs(8));
}

#[test]
fn sigterm_drains_and_exits_0() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let mut s = Server::start(p.path());
    assert_eq!(s.post("/echo", b"hi").status, 200);
    let status = s.terminate();
    assert_eq!(status.code(), Some(0), "{}", s.log());
    // A log written to a file is plain text, and ends saying the server stopped.
    let log = s.log();
    assert!(!log.contains('\u{1b}'), "{log}");
    assert!(log.trim_end().ends_with("Sluice stopped."), "{log}");
}

#[test]
fn changed_flow_file_is_redeployed_without_failing_requests() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    let port = s.http_port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let load = std::thread::spawn(move || {
        let mut statuses = Vec::new();
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            statuses.push(common::request(port, "POST", "/echo", &[], b"x").status);
        }
        statuses
    });
    std::thread::sleep(Duration::from_millis(300));
    let changed = ECHO.replace(
        "reply: { type: HTTPReply }",
        "reply: { type: HTTPReply, status: 201 }",
    );
    std::fs::write(p.path().join("flows/echo.yaml"), changed).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while s.post("/echo", b"x").status != 201 {
        assert!(
            Instant::now() < deadline,
            "the changed flow was not redeployed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let statuses = load.join().unwrap();
    assert!(statuses.len() > 10);
    assert!(
        statuses.iter().all(|&st| st == 200 || st == 201),
        "{statuses:?}"
    );
}

#[test]
fn a_changed_esql_file_redeploys_the_flows_and_a_broken_one_keeps_them() {
    let flow = "flow: hello\nnodes:\n  in: { type: HTTPInput, path: /hello, wires: { out: [c] } }\n  c: { type: Compute, module: Hello, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";
    let esql = |text: &str| {
        format!(
            "CREATE COMPUTE MODULE Hello\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  SET OutputRoot.BLOB.BLOB = CAST('{text}' AS BLOB CCSID 1208);\n  RETURN TRUE;\n END;\nEND MODULE;\n"
        )
    };
    let p = project("", &[("hello.yaml", flow)]);
    std::fs::create_dir_all(p.path().join("esql")).unwrap();
    std::fs::write(p.path().join("esql/hello.esql"), esql("one")).unwrap();
    let s = Server::start(p.path());
    assert_eq!(s.post("/hello", b"").body, b"one");
    std::fs::write(p.path().join("esql/hello.esql"), esql("two, longer")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while s.post("/hello", b"").body != b"two, longer" {
        assert!(
            Instant::now() < deadline,
            "the changed ESQL was not redeployed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::write(
        p.path().join("esql/hello.esql"),
        "CREATE COMPUTE MODULE Hello\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(s.post("/hello", b"").body, b"two, longer");
    assert!(s.log().contains("does not compile"), "{}", s.log());
}

#[test]
fn a_broken_edit_keeps_the_running_flow() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    std::fs::write(
        p.path().join("flows/echo.yaml"),
        "nodes:\n  in: { type: Nope }\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(s.post("/echo", b"x").status, 200);
    assert!(s.log().contains("echo.yaml:2:"), "{}", s.log());
}

#[test]
fn a_changed_subflow_redeploys_the_flows_using_it_and_a_broken_one_keeps_them() {
    let flow = "flow: answer\nnodes:\n  in: { type: HTTPInput, path: /answer, wires: { out: [a] } }\n  a: { type: Answer }\n";
    let subflow = |status: &str| {
        format!(
            "subflow: Answer\nnodes:\n  in: {{ type: Input, wires: {{ out: [reply] }} }}\n  reply: {{ type: HTTPReply, status: {status} }}\n"
        )
    };
    let p = project("", &[("answer.yaml", flow)]);
    std::fs::create_dir_all(p.path().join("subflows")).unwrap();
    let file = p.path().join("subflows/answer.yaml");
    std::fs::write(&file, subflow("201")).unwrap();
    let s = Server::start(p.path());
    assert_eq!(s.post("/answer", b"x").status, 201);
    std::fs::write(&file, subflow("202")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while s.post("/answer", b"x").status != 202 {
        assert!(
            Instant::now() < deadline,
            "the flow using the changed subflow was not redeployed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A subflow with an error is reported; the flow goes on as it was.
    std::fs::write(&file, subflow("202").replace("HTTPReply", "HTTPReplyy")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while !s.log().contains("HTTPReplyy") {
        assert!(
            Instant::now() < deadline,
            "the broken subflow was not reported"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(s.post("/answer", b"x").status, 202);
}

#[test]
fn run_refuses_an_admin_api_beyond_loopback_without_credentials() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let out = Command::new(bin())
        .args(["run", &p.path().display().to_string()])
        .args(["--admin-bind", "0.0.0.0", "--http-port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--admin-bind 0.0.0.0") && err.contains("allow_anonymous: false"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ready"));
}

#[test]
fn the_admin_api_asks_for_the_queue_managers_credentials_when_anonymous_is_off() {
    let p = project(
        "queue_manager:\n  allow_anonymous: false\n  users: { admin: s3cret }\n",
        &[("echo.yaml", ECHO)],
    );
    let s = Server::start(p.path());
    let anonymous = common::request(s.admin_port, "GET", "/api/v1/flows", &[], b"");
    assert_eq!(anonymous.status, 401, "{}", anonymous.text());
    assert!(anonymous.header("www-authenticate").is_some());
    // "admin:s3cret" in base64.
    let basic = [("Authorization", "Basic YWRtaW46czNjcmV0")];
    let authed = common::request(s.admin_port, "GET", "/api/v1/flows", &basic, b"");
    assert_eq!(authed.status, 200, "{}", authed.text());
    assert!(authed.text().contains("echo"));
}

#[test]
fn a_port_in_use_is_named_with_the_option_that_moves_it() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let data = TempDir::new("data");
    let out = Command::new(bin())
        .args([
            "run",
            &p.path().display().to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .args(["--admin-port", "0", "--qm-port", &port])
        .args(["--data-dir", &data.path().display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{port} (queue manager)"))
            && err.contains("another `sluice run`")
            && err.contains("--qm-port"),
        "{err}"
    );
}

#[test]
fn statistics_go_on_across_a_redeploy_and_a_changed_node_starts_from_zero() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    for _ in 0..3 {
        assert_eq!(s.post("/echo", b"x").status, 200);
    }
    let changed = ECHO.replace(
        "reply: { type: HTTPReply }",
        "reply: { type: HTTPReply, status: 201 }",
    );
    std::fs::write(p.path().join("flows/echo.yaml"), changed).unwrap();
    let (mut total, mut created) = (3, 0);
    let deadline = Instant::now() + Duration::from_secs(15);
    while created == 0 {
        assert!(Instant::now() < deadline, "not redeployed");
        total += 1;
        if s.post("/echo", b"x").status == 201 {
            created += 1;
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let r = common::request(s.admin_port, "GET", "/api/v1/flows/echo", &[], b"");
    let flow: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let count = |v: &serde_json::Value| v["statistics"]["invocations"].as_u64().unwrap();
    let node = |label: &str| {
        flow["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["label"] == label)
            .cloned()
            .unwrap()
    };
    assert_eq!(count(&flow), total, "{flow}");
    assert_eq!(count(&node("in")), total, "{flow}");
    assert_eq!(count(&node("reply")), created, "{flow}");
}

#[test]
fn two_flows_on_one_http_path_fail_validation_naming_both() {
    let other = ECHO.replace("flow: echo", "flow: echo2");
    let p = project("", &[("echo.yaml", ECHO), ("echo2.yaml", &other)]);
    let (code, err) = validate(p.path());
    assert_eq!(code, Some(2));
    assert!(
        err.contains("echo2.yaml:3:")
            && err.contains("HTTP path /echo is already served by ")
            && err.contains("flows/echo.yaml:3 (node `in`)"),
        "{err}"
    );
}

#[test]
fn a_new_flow_on_a_path_already_served_is_refused_and_the_first_keeps_it() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    let thief = ECHO.replace("flow: echo", "flow: thief").replace(
        "reply: { type: HTTPReply }",
        "reply: { type: HTTPReply, status: 201 }",
    );
    std::fs::write(p.path().join("flows/thief.yaml"), thief).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let log = std::fs::read_to_string(&s.stderr).unwrap_or_default();
        if log.contains("is already served by") {
            assert!(log.contains("thief.yaml:3:"), "{log}");
            break;
        }
        assert!(Instant::now() < deadline, "no error reported: {log}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(s.post("/echo", b"x").status, 200);
}

#[test]
fn a_misspelt_node_type_is_one_problem_and_a_missing_folder_has_no_line() {
    let flow = "flow: d\nnodes:\n  in: { type: HTTPInput, path: /d, wires: { out: [check] } }\n  check: { type: Filtre, expression: \"true\" }\n";
    let p = project("", &[("d.yaml", flow)]);
    let (_, err) = validate(p.path());
    assert!(
        err.contains("d.yaml:4:18: error: unknown node type `Filtre`"),
        "{err}"
    );
    assert!(err.ends_with("error: 1 problem\n"), "{err}");
    let (_, err) = validate(std::path::Path::new("/nonexistent-project"));
    assert!(
        err.starts_with("/nonexistent-project: error: the project folder does not exist"),
        "{err}"
    );
}

#[test]
fn a_new_flow_file_is_deployed_and_logged_as_new() {
    let p = project("", &[("echo.yaml", ECHO)]);
    let s = Server::start(p.path());
    let other = ECHO
        .replace("flow: echo", "flow: second")
        .replace("/echo", "/second");
    std::fs::write(p.path().join("flows/second.yaml"), other).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while s.post("/second", b"x").status != 200 {
        assert!(Instant::now() < deadline, "the new flow was not deployed");
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = s.log();
    assert!(log.contains("Deploying a new flow"), "{log}");
    assert!(!log.contains("Redeploying"), "{log}");
}

#[test]
fn a_flow_names_a_datasource_of_sluice_yaml_and_its_file_is_in_wal_mode() {
    let flow = "flow: store\nnodes:\n  in: { type: HTTPInput, path: /store, wires: { out: [c] } }\n  c: { type: Compute, module: Store, datasource: ORDERS, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";
    let esql = "CREATE COMPUTE MODULE Store\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  PASSTHRU('CREATE TABLE IF NOT EXISTS orders(id TEXT)');\n  INSERT INTO Database.orders(id) VALUES('A-1');\n  SET OutputRoot.XMLNSC.R.N = THE(SELECT ITEM COUNT(*) FROM Database.orders AS O);\n  SET OutputRoot.XMLNSC.R.Mode[] = PASSTHRU('PRAGMA journal_mode');\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    let p = project(
        "datasources:\n  ORDERS: { sqlite: data/orders.sqlite }\n",
        &[("store.yaml", flow)],
    );
    std::fs::create_dir_all(p.path().join("data")).unwrap();
    std::fs::create_dir_all(p.path().join("esql")).unwrap();
    std::fs::write(p.path().join("esql/store.esql"), esql).unwrap();
    let s = Server::start(p.path());
    let r = s.post("/store", b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<N>1</N>"), "{}", r.text());
    assert!(
        r.text().contains("<journal_mode>wal</journal_mode>"),
        "{}",
        r.text()
    );
    assert!(p.path().join("data/orders.sqlite").exists());
}

#[test]
fn a_datasource_without_a_file_is_a_problem_at_its_line() {
    let p = project(
        "datasources:\n  ORDERS: { sqlite: '' }\n  STOCK: { postgres: 'x' }\n",
        &[("echo.yaml", ECHO)],
    );
    let (code, err) = validate(p.path());
    assert_eq!(code, Some(2));
    assert!(
        err.contains("sluice.yaml:2:") && err.contains("datasource `ORDERS` needs `sqlite: PATH`"),
        "{err}"
    );
    assert!(
        err.contains("sluice.yaml:3:")
            && err.contains("datasource `STOCK`: bad PostgreSQL connection string"),
        "{err}"
    );
}

#[test]
fn an_http_flow_inserts_into_postgres_and_reads_back_with_passthru() {
    let Some(pg) = sluice_flow_testing::PgServer::start() else {
        return;
    };
    let flow = "flow: store\nnodes:\n  in: { type: HTTPInput, path: /store, domain: XMLNSC, wires: { out: [c] } }\n  c: { type: Compute, module: Store, datasource: ORDERS, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";
    let esql = "CREATE COMPUTE MODULE Store\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  INSERT INTO Database.orders(id, amount) VALUES(InputRoot.XMLNSC.O.Id, CAST(InputRoot.XMLNSC.O.Amount AS DECIMAL));\n  SET OutputRoot.XMLNSC.R.Row[] = PASSTHRU('SELECT id, amount FROM orders ORDER BY id');\n  RETURN TRUE;\n END;\nEND MODULE;\n";
    sluice_db_setup(&pg);
    let p = project(
        &format!("datasources:\n  ORDERS: {{ postgres: '{}' }}\n", pg.url()),
        &[("store.yaml", flow)],
    );
    std::fs::create_dir_all(p.path().join("esql")).unwrap();
    std::fs::write(p.path().join("esql/store.esql"), esql).unwrap();
    let s = Server::start(p.path());
    let r = s.post("/store", b"<O><Id>A-1</Id><Amount>10.10</Amount></O>");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = s.post("/store", b"<O><Id>A-2</Id><Amount>0.1</Amount></O>");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().contains(
            "<R><Row><id>A-1</id><amount>10.10</amount></Row><Row><id>A-2</id><amount>0.10</amount></Row></R>"
        ),
        "{}",
        r.text()
    );
    // The same id again breaks the primary key: the flow fails and the HTTP client hears it.
    let r = s.post("/store", b"<O><Id>A-1</Id><Amount>1</Amount></O>");
    assert_ne!(r.status, 200, "{}", r.text());
}

/// The table the flow writes, made on a connection of the test's own.
fn sluice_db_setup(pg: &sluice_flow_testing::PgServer) {
    sluice_db::Datasource::postgres("setup", &pg.url(), None)
        .expect("datasource")
        .statement()
        .expect("connection")
        .execute_batch("CREATE TABLE orders(id TEXT PRIMARY KEY, amount NUMERIC(10,2))")
        .expect("table");
}
