//! Golden flow tests: every folder under `tests/flows/` is a case — a flow (`flow.yaml`, with its
//! `esql/` when it has one), request bodies (`input*.xml|json|bin|txt|mime`, optional
//! `input.headers`, whose Content-Type replaces the extension's, optional `queues.txt` naming queues to define, one a line), and `expected/<output>.txt` holding what reached each output: the HTTP
//! reply, every `Capture` node (the serialised body and a dump of Root, LocalEnvironment,
//! Environment and ExceptionList), and every file the flow wrote into its project folder.
//!
//! The flow runs in-process: requests go to its HTTPInput node through the router, without
//! sockets. Values that vary between runs are masked before comparing. Re-bless with
//! `SLUICE_BLESS=1 cargo test -p sluice --test golden`; run one case with
//! `SLUICE_GOLDEN_CASE=<name>`. docs/testing.md describes the format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sluice_flow::{Registry, load_flow_with};
use sluice_flow_testing::{
    Captured, DumpOptions, Harness, Masker, bless_requested, check_outputs, dump_message,
};
use sluice_node_api::Services;
use sluice_node_api::http_listener::{HttpRequest, HttpRouter};

/// Elements whose values differ on every run: request and message ids, put times, the time a
/// file was written (`WrittenDestination.File.Timestamp`).
const MASKED_FIELDS: &[&str] = &[
    "RequestIdentifier",
    "MsgId",
    "CorrelId",
    "PutDate",
    "PutTime",
    "Timestamp",
];

/// The fewest cases the suite holds, so that a lost folder does not pass unnoticed.
const MIN_CASES: usize = 12;

fn cases_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/flows");
    // Canonical, so that messages name `…/tests/flows/…` rather than `crates/sluice/../..`.
    root.canonicalize().unwrap_or(root)
}

fn registry() -> Registry {
    let mut r = Registry::new();
    sluice_nodes::register(&mut |s| r.register(s));
    Harness::register(&mut r);
    r
}

/// One request body of a case, in file-name order.
struct Input {
    name: String,
    body: Bytes,
    content_type: &'static str,
}

fn inputs(case: &Path) -> Result<Vec<Input>, String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(case).map_err(|e| format!("{}: {e}", case.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = file_name(&path);
        if !name.starts_with("input") || name == "input.headers" || !path.is_file() {
            continue;
        }
        let content_type = match path.extension().and_then(|x| x.to_str()) {
            Some("xml") => "text/xml",
            Some("json") => "application/json",
            Some("txt") => "text/plain",
            _ => "application/octet-stream",
        };
        let body = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(Input {
            name,
            body: Bytes::from(body),
            content_type,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    if out.is_empty() {
        return Err("the case has no input file (input.xml, input.json, input.bin …)".into());
    }
    Ok(out)
}

/// `Name: value` lines of `input.headers`, sent with every request.
fn headers(case: &Path) -> Result<Vec<(String, Bytes)>, String> {
    let path = case.join("input.headers");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (n, v) = line
            .split_once(':')
            .ok_or_else(|| format!("{}:{}: expected `Name: value`", path.display(), i + 1))?;
        out.push((
            n.trim().to_string(),
            Bytes::copy_from_slice(v.trim().as_bytes()),
        ));
    }
    Ok(out)
}

/// The queues a case's flow uses, one a line in `queues.txt`, defined before it runs.
fn queue_names(case: &Path) -> Result<Vec<String>, String> {
    match std::fs::read_to_string(case.join("queues.txt")) {
        Ok(text) => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("queues.txt: {e}")),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Copy the case's project files (not its inputs or expected outputs) into a fresh folder, so
/// that files the flow writes land outside the source tree.
fn copy_project(from: &Path, to: &Path, top: bool) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = file_name(&path);
        if top && (name == "expected" || name.starts_with("input")) {
            continue;
        }
        let dest = to.join(&name);
        if path.is_dir() {
            copy_project(&path, &dest, false)?;
        } else {
            std::fs::copy(&path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Every file under `dir`, relative path → contents.
fn files_under(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = format!("{prefix}{}", file_name(&path));
        if path.is_dir() {
            files_under(&path, &format!("{rel}/"), out);
        } else if rel.ends_with("-wal") || rel.ends_with("-shm") {
            // SQLite's write-ahead log and its index: bookkeeping with random salts, not what
            // the flow wrote (that is in the database file once the log is checkpointed).
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.insert(rel, bytes);
        }
    }
}

/// Bytes as text when they are UTF-8, else as `hex:` and their hex digits.
fn show_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            format!("hex: {hex}")
        }
    }
}

fn render_capture(c: &Captured) -> String {
    let mut msg = c.message.clone();
    let body = match sluice_nodes::domains::serialize_body(&mut msg) {
        Ok((bytes, _)) => show_bytes(&bytes),
        Err(e) => format!("<the body does not serialise: {e}>"),
    };
    let opts = DumpOptions {
        masked_fields: MASKED_FIELDS.iter().map(|s| s.to_string()).collect(),
    };
    format!(
        "--- body ---\n{body}\n--- trees ---\n{}",
        dump_message(&c.message, Some(&c.environment), &opts)
    )
}

/// Run one case; its outputs by name.
fn run_case(case: &Path, project: &Path) -> Result<BTreeMap<String, String>, String> {
    copy_project(case, project, true)?;
    let src =
        std::fs::read_to_string(case.join("flow.yaml")).map_err(|e| format!("flow.yaml: {e}"))?;
    let registry = registry();
    let render = |d: Vec<sluice_flow::Diagnostic>| {
        d.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A case may bring subflows, as a project does.
    let (subflows, problems) = sluice_server::project::load_subflows(project, &registry);
    if !problems.is_empty() {
        return Err(render(problems));
    }
    let mut def = load_flow_with("flow.yaml", &src, &registry, &subflows).map_err(render)?;
    // One instance, so that captures come in the order the inputs were sent.
    def.instances = 1;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let router = Arc::new(HttpRouter::new());
    // A queue manager of the case's own, for nodes that keep state in it (Sequence …), and
    // the project folder as the data folder, so file nodes read and write inside the case.
    let qm = sluice_qm::QueueManager::open_in_memory(sluice_qm::QmConfig::default())
        .map_err(|e| e.to_string())?;
    for name in queue_names(case)? {
        qm.define(sluice_qm::QueueDef::local(&name))
            .map_err(|e| format!("queues.txt: {name}: {e}"))?;
    }
    let services = Services {
        http: Arc::clone(&router),
        runtime: Some(runtime.handle().clone()),
        queues: Some(qm),
        data_dir: Some(project.to_path_buf()),
        ..Services::none()
    };
    let harness = Harness::new();
    let flow = harness.build(&def, project, &services).map_err(render)?;
    let path = flow
        .node_info()
        .find(|n| n.type_name == "HTTPInput" || n.type_name == "SOAPInput")
        .and_then(|n| match n.properties.value("path") {
            Some(sluice_node_api::PropValue::String(p)) => {
                Some(p.trim_end_matches('*').to_string())
            }
            _ => None,
        })
        .ok_or("golden flows start at an HTTPInput or SOAPInput node")?;
    let extra_headers = headers(case)?;
    let before = {
        let mut m = BTreeMap::new();
        files_under(project, "", &mut m);
        m
    };

    let mut outputs: BTreeMap<String, String> = BTreeMap::new();
    for input in inputs(case)? {
        // A Content-Type in `input.headers` (a multipart boundary, say) replaces the one the
        // file's extension gives.
        let mut request_headers = Vec::new();
        if !extra_headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            request_headers.push((
                "Content-Type".to_string(),
                Bytes::from_static(input.content_type.as_bytes()),
            ));
        }
        request_headers.extend(extra_headers.iter().cloned());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let request = HttpRequest {
            method: "POST".into(),
            uri: path.clone(),
            path: path.clone(),
            query: String::new(),
            version: "HTTP/1.1",
            headers: request_headers,
            body: input.body.clone(),
            reply: tx,
        };
        // A flow run per input: stopping waits for the invocation to end, so that every capture
        // belongs to this input even when the flow goes on after replying.
        let running = flow.start();
        let dispatched = router.dispatch(request);
        let reply = match dispatched {
            Ok(()) => rx.blocking_recv().ok(),
            Err(_) => None,
        };
        running.stop();
        let heading = format!("=== {} ===\n", input.name);
        let text = match reply {
            Some(r) => {
                let mut t = format!("status: {}\n", r.status);
                let mut hs: Vec<_> = r.headers.iter().collect();
                hs.sort_by(|a, b| a.0.cmp(&b.0));
                for (n, v) in hs {
                    t.push_str(&format!("{n}: {}\n", show_bytes(v)));
                }
                t.push('\n');
                t.push_str(&show_bytes(&r.body));
                if !t.ends_with('\n') {
                    t.push('\n');
                }
                t
            }
            None => "no reply\n".to_string(),
        };
        outputs
            .entry("http-reply".into())
            .or_default()
            .push_str(&(heading.clone() + &text));
        for c in harness.take_captured() {
            outputs
                .entry(c.label.clone())
                .or_default()
                .push_str(&(heading.clone() + &render_capture(&c)));
        }
    }

    let mut after = BTreeMap::new();
    files_under(project, "", &mut after);
    for (rel, bytes) in after {
        if before.get(&rel) != Some(&bytes) {
            let name = format!("file-{}", rel.replace('/', "-"));
            outputs.insert(name, show_bytes(&bytes));
        }
    }
    drop(runtime);

    let masker = Masker::new().literal(project.display().to_string(), "<project>");
    Ok(outputs
        .into_iter()
        .map(|(k, v)| (k, masker.apply(&v)))
        .collect())
}

#[test]
fn golden_flows_match_their_expected_outputs() {
    let root = cases_root();
    let only = std::env::var("SLUICE_GOLDEN_CASE").ok();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("flow.yaml").is_file())
        .filter(|p| only.as_deref().is_none_or(|o| file_name(p) == o))
        .collect();
    cases.sort();
    if only.is_none() {
        assert!(
            cases.len() >= MIN_CASES,
            "{} holds {} cases; expected at least {MIN_CASES}",
            root.display(),
            cases.len()
        );
    }
    let bless = bless_requested();
    let scratch = std::env::temp_dir().join(format!("sluice-golden-{}", std::process::id()));
    let mut failures = Vec::new();
    for case in &cases {
        let name = file_name(case);
        let project = scratch.join(&name);
        let _ = std::fs::remove_dir_all(&project);
        let result = run_case(case, &project).and_then(|outputs| {
            check_outputs(&case.join("expected"), &outputs, bless).map_err(|e| e.to_string())
        });
        if let Err(e) = result {
            failures.push(format!("case `{name}`:\n{e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed (re-bless with SLUICE_BLESS=1 when the change is intended):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
