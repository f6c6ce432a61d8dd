//! The admin API's control half over real HTTP on a running server: stop and start, instances,
//! statistics reset, deploying an archive and rolling back, roles, and `sluice admin`.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::tempdir::TempDir;
use common::{Response, Server, bin, request};
use serde_json::Value;

const ECHO: &str = "flow: echo\nnodes:\n  in: { type: HTTPInput, path: /echo, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";
const NEW: &str = "flow: new\nnodes:\n  in: { type: HTTPInput, path: /new, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";
const BROKEN: &str = "flow: broken\nnodes:\n  in: { type: HTTPInput, path: /broken, wires: { out: [x] } }\n  x: { type: NoSuchNode }\n";

/// sha256 of "secret", "opsecret" and "viewtoken" (`printf %s … | sha256sum`).
const ADMIN_YAML: &str = "admin:\n  users:\n    alice: { password_sha256: 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b, role: admin }\n    olga: { password_sha256: cc1d52afa7d09960a87a8954694674d6b7b70df96582aa99e358e90a6cd86e26, role: operator }\n  tokens:\n    - { sha256: 9e785187de10f64c5a369e4491d9a6fffd072fa23317cbd6e5d0f1f1f3883da6, role: viewer }\n";

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

fn admin(s: &Server, method: &str, path: &str, auth: Option<&str>, body: &[u8]) -> Response {
    let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
    request(s.admin_port, method, path, &headers, body)
}

fn flow<'v>(flows: &'v Value, name: &str) -> &'v Value {
    flows
        .as_array()
        .and_then(|a| a.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("no flow {name} in {flows}"))
}

fn tar_gz(files: &[(&str, &[u8])], raw_names: bool) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        if raw_names {
            // set_path refuses `..`: written as a hostile client would.
            h.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
        } else {
            h.set_path(path).expect("path");
        }
        h.set_cksum();
        b.append(&h, *data).expect("append");
    }
    let t = b.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &t).expect("gzip");
    gz.finish().expect("gzip")
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// Wait until `f` holds (the server polls flow files once a second).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(15);
    while !f() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn stopped_flow_answers_503_and_stays_stopped_across_a_file_change_until_started() {
    let p = project("admin-stop", "");
    let s = Server::start(p.path());
    assert_eq!(s.post("/echo", b"hi").status, 200);

    let r = admin(&s, "POST", "/api/v1/flows/echo/stop", None, b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(json(&r)["state"], "stopped");
    let r = s.post("/echo", b"hi");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("stopped"), "{}", r.text());
    assert_eq!(s.post("/nothing", b"").status, 404);
    assert_eq!(
        flow(&json(&s.admin_get("/api/v1/flows")), "echo")["state"],
        "stopped"
    );
    assert_eq!(
        json(&admin(&s, "POST", "/api/v1/flows/echo/stop", None, b""))["changed"],
        false
    );

    // A changed file while stopped: still stopped, and the change applies at start.
    std::fs::write(
        p.path().join("flows/echo.yaml"),
        format!("instances: 2\n{ECHO}"),
    )
    .expect("rewrite");
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(s.post("/echo", b"hi").status, 503);
    assert_eq!(
        flow(&json(&s.admin_get("/api/v1/flows")), "echo")["state"],
        "stopped"
    );

    let r = admin(&s, "POST", "/api/v1/flows/echo/start", None, b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.post("/echo", b"hi").status, 200);
    let f = json(&s.admin_get("/api/v1/flows/echo"));
    assert_eq!(
        (f["state"].as_str(), f["instances"].as_u64()),
        (Some("running"), Some(2))
    );

    let r = admin(
        &s,
        "PUT",
        "/api/v1/flows/echo/instances",
        None,
        br#"{"instances": 3}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        flow(&json(&s.admin_get("/api/v1/flows")), "echo")["instances"],
        3
    );
    let r = admin(&s, "POST", "/api/v1/flows/echo/restart", None, b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(json(&s.admin_get("/api/v1/flows/echo"))["instances"], 3);
    assert_eq!(s.post("/echo", b"hi").status, 200);

    assert!(json(&s.admin_get("/api/v1/flows/echo"))["statistics"]["invocations"] != 0);
    let r = admin(&s, "POST", "/api/v1/flows/echo/statistics/reset", None, b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        json(&s.admin_get("/api/v1/flows/echo"))["statistics"]["invocations"],
        0
    );

    let r = admin(&s, "POST", "/api/v1/flows/nope/stop", None, b"");
    assert_eq!(r.status, 404);
    assert!(
        json(&r)["error"]
            .as_str()
            .is_some_and(|e| e.contains("nope"))
    );
    let r = admin(&s, "PUT", "/api/v1/flows/echo/instances", None, b"{}");
    assert_eq!(r.status, 400);
    assert_eq!(
        admin(&s, "DELETE", "/api/v1/flows/echo", None, b"").status,
        405
    );
    let doc = json(&s.admin_get("/api/v1/openapi.json"));
    assert!(doc["paths"]["/api/v1/deploy"]["post"].is_object(), "{doc}");
}

#[test]
fn deploy_validates_swaps_and_rolls_back_with_roles_checked() {
    let p = project("admin-deploy", ADMIN_YAML);
    let s = Server::start(p.path());
    let alice = basic("alice", "secret");
    let olga = basic("olga", "opsecret");
    let viewer = "Bearer viewtoken";
    let good = tar_gz(
        &[
            ("proj/flows/echo.yaml", ECHO.as_bytes()),
            ("proj/flows/new.yaml", NEW.as_bytes()),
        ],
        false,
    );

    // Roles.
    let r = s.admin_get("/api/v1/flows");
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some());
    assert_eq!(
        admin(
            &s,
            "GET",
            "/api/v1/flows",
            Some(&basic("alice", "wrong")),
            b""
        )
        .status,
        401
    );
    assert_eq!(
        admin(&s, "GET", "/api/v1/flows", Some(viewer), b"").status,
        200
    );
    let r = admin(&s, "POST", "/api/v1/flows/echo/stop", Some(viewer), b"");
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        json(&r)["error"]
            .as_str()
            .is_some_and(|e| e.contains("operator"))
    );
    assert_eq!(
        admin(&s, "POST", "/api/v1/deploy", Some(&olga), &good).status,
        403
    );
    assert_eq!(
        admin(&s, "POST", "/api/v1/flows/echo/stop", Some(&olga), b"").status,
        200
    );
    assert_eq!(
        admin(&s, "POST", "/api/v1/flows/echo/start", Some(&olga), b"").status,
        200
    );
    assert_eq!(s.post("/new", b"").status, 404);

    // A good archive.
    let r = admin(&s, "POST", "/api/v1/deploy", Some(&alice), &good);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(json(&r)["flows"], 2);
    assert_eq!(s.post("/new", b"x").status, 200);
    assert_eq!(s.post("/echo", b"x").status, 200);
    assert!(s.data_dir.join("deploy/previous/flows/echo.yaml").is_file());
    assert!(!p.path().join(".sluice-deploy-new").exists());

    // A bad one changes nothing.
    let bad = tar_gz(
        &[
            ("flows/new.yaml", NEW.as_bytes()),
            ("flows/broken.yaml", BROKEN.as_bytes()),
        ],
        false,
    );
    let r = admin(&s, "POST", "/api/v1/deploy", Some(&alice), &bad);
    assert_eq!(r.status, 400, "{}", r.text());
    let problems = json(&r)["problems"].to_string();
    assert!(problems.contains("flows/broken.yaml:4:"), "{problems}");
    assert!(problems.contains("NoSuchNode"), "{problems}");
    assert_eq!(s.post("/new", b"x").status, 200);
    assert_eq!(s.post("/echo", b"x").status, 200);
    let evil = tar_gz(&[("../flows/evil.yaml", NEW.as_bytes())], true);
    let r = admin(&s, "POST", "/api/v1/deploy", Some(&alice), &evil);
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(json(&r)["error"].as_str().is_some_and(|e| e.contains("..")));
    assert!(!p.path().join("evil.yaml").exists());
    assert!(!p.path().join("flows/evil.yaml").exists());

    // Rollback: the project before the deploy.
    let r = admin(&s, "POST", "/api/v1/deploy/rollback", Some(&alice), b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(s.post("/new", b"x").status, 404);
    assert_eq!(s.post("/echo", b"x").status, 200);
    assert!(!p.path().join("flows/new.yaml").exists());
    assert_eq!(
        admin(&s, "POST", "/api/v1/deploy/rollback", Some(&olga), b"").status,
        403
    );
}

fn cli(s: &Server, args: &[&str], auth: &[&str]) -> (bool, String, String) {
    let server = format!("http://127.0.0.1:{}", s.admin_port);
    let out = Command::new(bin())
        .arg("admin")
        .args(args)
        .args(["--server", &server])
        .args(auth)
        .env_remove("SLUICE_ADMIN_TOKEN")
        .output()
        .expect("run sluice admin");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sluice_admin_commands_deploy_control_and_report_when_run() {
    let p = project("admin-cli", ADMIN_YAML);
    let s = Server::start(p.path());
    let alice = ["--user", "alice", "--password", "secret"];
    let op = ["--user", "olga", "--password", "opsecret"];

    let (ok, out, err) = cli(&s, &["flows"], &alice);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("FLOW") && out.contains("echo") && out.contains("running"),
        "{out}"
    );

    // A project folder is tarred and deployed.
    let next = TempDir::new("admin-cli-next");
    std::fs::create_dir_all(next.path().join("flows")).expect("flows");
    std::fs::write(next.path().join("flows/echo.yaml"), ECHO).expect("echo");
    std::fs::write(next.path().join("flows/new.yaml"), NEW).expect("new");
    let dir = next.path().display().to_string();
    let (ok, _, err) = cli(&s, &["deploy", &dir], &op);
    assert!(!ok && err.contains("403") && err.contains("admin"), "{err}");
    let (ok, out, err) = cli(&s, &["deploy", &dir], &alice);
    assert!(ok, "{err}");
    assert!(out.contains("deployed: 2 flows"), "{out}");
    assert_eq!(s.post("/new", b"x").status, 200);

    // An archive file with a problem: the server's message, and a failure.
    let bad = next.path().join("bad.tar.gz");
    std::fs::write(
        &bad,
        tar_gz(&[("flows/broken.yaml", BROKEN.as_bytes())], false),
    )
    .expect("archive");
    let (ok, _, err) = cli(&s, &["deploy", &bad.display().to_string()], &alice);
    assert!(
        !ok && err.contains("400") && err.contains("flows/broken.yaml:"),
        "{err}"
    );

    let (ok, out, err) = cli(&s, &["stop", "new"], &op);
    assert!(ok && out.contains("new: stopped"), "{out}{err}");
    assert_eq!(s.post("/new", b"x").status, 503);
    let (ok, out, err) = cli(&s, &["stats"], &["--token", "viewtoken"]);
    assert!(ok, "{err}");
    let new_row = out
        .lines()
        .find(|l| l.starts_with("new"))
        .unwrap_or_default();
    assert_eq!(new_row.split_whitespace().nth(1), Some("stopped"), "{out}");
    assert!(
        out.starts_with("FLOW") && out.contains("AVG CPU µs"),
        "{out}"
    );
    let (ok, _, err) = cli(&s, &["start", "new"], &["--token", "viewtoken"]);
    assert!(!ok && err.contains("403"), "{err}");
    let (ok, _, err) = cli(&s, &["start", "new"], &op);
    assert!(ok, "{err}");
    assert_eq!(s.post("/new", b"x").status, 200);
    let (ok, _, err) = cli(&s, &["instances", "new", "2"], &op);
    assert!(ok, "{err}");
    let (ok, out, err) = cli(&s, &["stats", "new", "--json"], &op);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v[0]["instances"], 2, "{out}");
    let (ok, _, err) = cli(&s, &["restart", "new"], &op);
    assert!(ok, "{err}");
    let (ok, _, err) = cli(&s, &["stop", "nope"], &op);
    assert!(!ok && err.contains("no flow named 'nope'"), "{err}");

    let (ok, out, err) = cli(&s, &["rollback"], &alice);
    assert!(ok && out.contains("rolled back"), "{out}{err}");
    eventually("the new flow to go", || s.post("/new", b"x").status == 404);
    let (ok, _, err) = cli(&s, &["flows"], &[]);
    assert!(!ok && err.contains("401"), "{err}");
    assert!(Path::new(&dir).join("flows/new.yaml").exists());
}
