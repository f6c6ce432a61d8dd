//! The admin listener: flows and their statistics as JSON, node types, health, Prometheus
//! metrics at `/metrics`, and (in [`crate::control`]) the requests that change the server.

use std::convert::Infallible;
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use serde_json::{Value, json};
use sluice_flow::stats::Snapshot;
use sluice_flow::{Flow, Registry};

use crate::control::{self, Matched};
use crate::deploy::{Deployment, FlowState};
use crate::settings::{AdminSettings, Role};
use crate::ui;

/// Extra admin routes offered by other parts of the server (the queue manager's messaging API).
pub trait AdminRoutes: Send + Sync {
    /// Whether the path is this extension's.
    fn serves(&self, path: &str) -> bool;

    /// Answer a request for one of its paths. Runs on a blocking thread: it may wait for the
    /// disk, but a request that waits for something to happen answers with
    /// [`RouteResponse::retry_until`] instead, and is asked again.
    fn handle(
        &self,
        method: &str,
        path_and_query: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> RouteResponse;
}

/// An extension's answer.
pub struct RouteResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// Nothing yet: the same request is made again until then (a get that waits for a
    /// message). Meanwhile no thread is held, and a client that leaves ends the wait.
    pub retry_until: Option<Instant>,
}

/// First pause between two tries of a waiting request; it doubles up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(1);
const RETRY_MAX: Duration = Duration::from_millis(50);

/// Run `ext` for the request until it answers or its wait is over.
async fn extension(
    ext: Arc<dyn AdminRoutes>,
    method: String,
    pq: String,
    headers: Vec<(String, String)>,
    body: Bytes,
) -> RouteResponse {
    let headers = Arc::new(headers);
    let mut until = None;
    let mut pause = RETRY_FIRST;
    loop {
        let (e, m, p, h, b) = (
            Arc::clone(&ext),
            method.clone(),
            pq.clone(),
            Arc::clone(&headers),
            body.clone(),
        );
        let r = match tokio::task::spawn_blocking(move || e.handle(&m, &p, &h, b)).await {
            Ok(r) => r,
            Err(e) => {
                return RouteResponse {
                    status: 500,
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    body: Bytes::from(
                        json!({"error": format!("the request failed: {e}")}).to_string(),
                    ),
                    retry_until: None,
                };
            }
        };
        let Some(deadline) = until.or(r.retry_until) else {
            return r;
        };
        until = Some(deadline);
        let now = Instant::now();
        if r.retry_until.is_none() || now >= deadline {
            return r;
        }
        // Dropped here, with the future, when the client goes away.
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(RETRY_MAX);
    }
}

/// A Prometheus metric family: name suffix, help text, and the statistic it reports.
type Family = (&'static str, &'static str, fn(&Snapshot) -> f64);

pub struct AdminState {
    pub deployment: Arc<Deployment>,
    pub registry: Arc<Registry>,
    pub extensions: Vec<Arc<dyn AdminRoutes>>,
    /// Who may call the API without `admin:`: the queue manager's clients (`queue_manager:`
    /// in sluice.yaml), with every right.
    pub auth: sluice_qm::net::AuthConfig,
    /// `admin:` of sluice.yaml: users and tokens with roles, instead of `auth`.
    pub admin: Option<AdminSettings>,
    /// Requests being answered (the server lets them finish when it stops).
    pub in_flight: Arc<AtomicUsize>,
    /// The queue manager, for the admin API's queue routes.
    pub qm: Arc<sluice_qm::QueueManager>,
    /// When the server started, for its uptime.
    pub started: Instant,
    /// What settling in-doubt transactions at start did (shown by `/health` when it did
    /// anything).
    pub in_doubt: crate::indoubt::Report,
}

/// Counts a request as in flight until dropped (also when its client goes away).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(n: &Arc<AtomicUsize>) -> InFlight {
        n.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(n))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn stats_json(s: &Snapshot) -> Value {
    let per = |total: u64| {
        if s.invocations == 0 {
            0.0
        } else {
            total as f64 / s.invocations as f64 / 1000.0
        }
    };
    json!({
        "invocations": s.invocations,
        "errors": s.errors,
        "elapsed_ns": s.elapsed_ns,
        "cpu_ns": s.cpu_ns,
        "input_bytes": s.input_bytes,
        "avg_elapsed_us": per(s.elapsed_ns),
        "avg_cpu_us": per(s.cpu_ns),
        "max_elapsed_us": s.max_elapsed_ns as f64 / 1000.0,
    })
}

fn prop_json(v: &sluice_node_api::PropValue) -> Value {
    use sluice_node_api::PropValue as P;
    match v {
        P::String(s) => json!(s),
        P::Integer(i) => json!(i),
        P::Boolean(b) => json!(b),
        P::Float(f) => json!(f),
        P::List(l) => json!(l),
        P::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), json!(v))).collect()),
    }
}

fn flow_json(f: &Flow, state: FlowState) -> Value {
    let nodes: Vec<Value> = f
        .node_info()
        .zip(f.stats.nodes.iter())
        .map(|(n, c)| {
            let props: serde_json::Map<String, Value> = n.properties.iter().map(|(k, v)| (k.to_string(), prop_json(v))).collect();
            json!({"label": n.label, "type": n.type_name, "properties": props, "statistics": stats_json(&c.snapshot())})
        })
        .collect();
    json!({
        "name": f.name,
        "file": f.file,
        "instances": f.instances,
        "state": state.as_str(),
        "statistics": stats_json(&f.stats.flow.snapshot()),
        "nodes": nodes,
    })
}

/// A flow's nodes with their terminals and counts, and its wires: what the UI draws.
fn graph_json(f: &Flow, state: FlowState) -> Value {
    let nodes: Vec<Value> = f
        .node_info()
        .zip(f.stats.nodes.iter())
        .map(|(n, c)| {
            json!({
                "label": n.label,
                "type": n.type_name,
                "inputs": n.inputs,
                "outputs": n.outputs,
                "statistics": stats_json(&c.snapshot()),
            })
        })
        .collect();
    let labels: Vec<&str> = f.node_info().map(|n| n.label).collect();
    let label = |i: usize| labels.get(i).copied().unwrap_or_default();
    let wires: Vec<Value> = f
        .wire_info()
        .map(|w| json!({"from": label(w.from), "terminal": w.terminal, "to": label(w.to), "input": w.input}))
        .collect();
    json!({"name": f.name, "state": state.as_str(), "nodes": nodes, "wires": wires})
}

/// The server as a whole: version, uptime, memory, and the flows' totals; `role` is the
/// caller's, so that a client shows only what it may do.
fn server_json(state: &AdminState, flows: &[(Arc<Flow>, FlowState)], role: Role) -> Value {
    let (mut invocations, mut errors, mut running) = (0u64, 0u64, 0usize);
    for (f, s) in flows {
        let snap = f.stats.flow.snapshot();
        invocations += snap.invocations;
        errors += snap.errors;
        running += usize::from(s.as_str() == "running");
    }
    let storage = state.qm.storage_stats();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_secs": state.started.elapsed().as_secs(),
        "memory": {
            "rss_bytes": storage.process_rss,
            "queue_bytes": storage.queue_memory_bytes,
            "log_disk_bytes": storage.log_disk_bytes,
        },
        "flows": flows.len(),
        "flows_running": running,
        "invocations": invocations,
        "errors": errors,
        "queue_manager": state.qm.name(),
        "queues": state.qm.list().len(),
        "role": role.as_str(),
    })
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Every flow's and node's statistics in the Prometheus text format.
pub fn metrics_text(flows: &[Arc<Flow>]) -> String {
    let mut out = String::new();
    let families: [Family; 5] = [
        ("invocations_total", "Messages processed.", |s| {
            s.invocations as f64
        }),
        (
            "errors_total",
            "Invocations that ended in an exception.",
            |s| s.errors as f64,
        ),
        ("elapsed_seconds_total", "Elapsed time.", |s| {
            s.elapsed_ns as f64 / 1e9
        }),
        (
            "cpu_seconds_total",
            "CPU time (estimated from sampled invocations).",
            |s| s.cpu_ns as f64 / 1e9,
        ),
        ("input_bytes_total", "Bytes received by input nodes.", |s| {
            s.input_bytes as f64
        }),
    ];
    for (name, help, get) in families {
        let _ = writeln!(
            out,
            "# HELP sluice_flow_{name} {help}\n# TYPE sluice_flow_{name} counter"
        );
        for f in flows {
            let _ = writeln!(
                out,
                "sluice_flow_{name}{{flow=\"{}\"}} {}",
                esc(&f.name),
                get(&f.stats.flow.snapshot())
            );
        }
        let _ = writeln!(
            out,
            "# HELP sluice_node_{name} {help}\n# TYPE sluice_node_{name} counter"
        );
        for f in flows {
            for (n, c) in f.node_info().zip(f.stats.nodes.iter()) {
                let _ = writeln!(
                    out,
                    "sluice_node_{name}{{flow=\"{}\",node=\"{}\",type=\"{}\"}} {}",
                    esc(&f.name),
                    esc(n.label),
                    n.type_name,
                    get(&c.snapshot())
                );
            }
        }
    }
    out
}

fn respond(status: u16, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

fn json_response(status: u16, v: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", v.to_string())
}

pub async fn handle(
    state: Arc<AdminState>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let _counted = InFlight::new(&state.in_flight);
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let pq = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| path.clone());
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(json_response(
                400,
                &json!({"error": format!("cannot read the request: {e}")}),
            ));
        }
    };
    if ui::serves(&path) {
        let inm = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("if-none-match"))
            .map(|(_, v)| v.as_str());
        let a = ui::serve(&method, &path, inm);
        let mut r = Response::new(Full::new(a.body));
        *r.status_mut() =
            hyper::StatusCode::from_u16(a.status).unwrap_or(hyper::StatusCode::NOT_FOUND);
        for (n, v) in a.headers {
            if let Ok(v) = hyper::header::HeaderValue::from_str(&v) {
                r.headers_mut().insert(n, v);
            }
        }
        return Ok(r);
    }
    if let Some(ext) = state.extensions.iter().find(|e| e.serves(&path)) {
        let RouteResponse {
            status,
            headers: hs,
            body: b,
            ..
        } = extension(Arc::clone(ext), method, pq, headers, body).await;
        let mut r = respond(status, "application/octet-stream", b);
        for (n, v) in hs {
            if let (Ok(n), Ok(v)) = (
                hyper::header::HeaderName::from_bytes(n.as_bytes()),
                hyper::header::HeaderValue::from_str(&v),
            ) {
                r.headers_mut().insert(n, v);
            }
        }
        return Ok(r);
    }
    let Some(role) = control::role_of(&state, &headers) else {
        let mut r = json_response(
            401,
            &json!({"error": if state.admin.is_some() {
                "this server's admin API needs credentials: HTTP basic (a user of admin.users in \
                 sluice.yaml) or a bearer token (admin.tokens)"
            } else {
                "this server's admin API needs credentials: HTTP basic (a user of \
                 queue_manager.users in sluice.yaml) or a bearer token (queue_manager.tokens)"
            }}),
        );
        // The web UI asks for credentials with its own form: the browser's dialog would
        // come first and could not offer a token.
        let from_ui = headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("x-requested-with") && v == "sluice-ui");
        if !from_ui {
            r.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Basic realm=\"sluice\""),
            );
        }
        return Ok(r);
    };
    let (route, name) = match control::find(&method, &path) {
        Matched::Route(r, name) => (r, name),
        Matched::OtherMethod => {
            return Ok(json_response(
                405,
                &json!({"error": format!("{method} is not supported on {path}")}),
            ));
        }
        Matched::None => {
            return Ok(json_response(
                404,
                &json!({"error": format!("no such resource: {path}")}),
            ));
        }
    };
    if role < route.role {
        return Ok(json_response(
            403,
            &json!({"error": format!(
                "{method} {path} needs the {} role; these credentials have {}",
                route.role.as_str(),
                role.as_str()
            )}),
        ));
    }
    if route.path.starts_with("/api/v1/queues") {
        let qm = Arc::clone(&state.qm);
        let template = route.path;
        let query = pq
            .split_once('?')
            .map(|(_, q)| q.to_string())
            .unwrap_or_default();
        let user = control::principal(&headers);
        let answer = tokio::task::spawn_blocking(move || {
            crate::queue_admin::answer(
                &qm,
                &method,
                template,
                name.as_deref(),
                &query,
                &body,
                &user,
            )
        })
        .await;
        return Ok(match answer {
            Ok((status, v)) => json_response(status, &v),
            Err(e) => json_response(500, &json!({"error": format!("the request failed: {e}")})),
        });
    }
    if method != "GET" {
        let st = Arc::clone(&state);
        let template = route.path;
        let answer = tokio::task::spawn_blocking(move || {
            control::change(&st, template, name.as_deref(), &body)
        })
        .await;
        return Ok(match answer {
            Ok((status, v)) => json_response(status, &v),
            Err(e) => json_response(500, &json!({"error": format!("the request failed: {e}")})),
        });
    }
    let flows = state.deployment.flow_states();
    Ok(match route.path {
        "/health" | "/api/v1/health" => {
            let mut health = json!({"status": "ok", "flows": flows.len()});
            if state.in_doubt != crate::indoubt::Report::default() {
                health["in_doubt"] = state.in_doubt.to_json();
            }
            json_response(200, &health)
        }
        "/metrics" => {
            let flows: Vec<Arc<Flow>> = flows.into_iter().map(|(f, _)| f).collect();
            respond(200, "text/plain; version=0.0.4", metrics_text(&flows))
        }
        "/api/v1/openapi.json" => respond(200, "application/json", control::OPENAPI),
        "/api/v1/server" => json_response(200, &server_json(&state, &flows, role)),
        "/api/v1/flows" => json_response(
            200,
            &Value::Array(flows.iter().map(|(f, s)| flow_json(f, *s)).collect()),
        ),
        "/api/v1/nodes" => {
            let types: Vec<Value> = state
                .registry
                .specs()
                .map(|s| {
                    json!({
                        "type": s.type_name,
                        "summary": s.summary,
                        "inputs": s.inputs.iter().map(|t| t.name).collect::<Vec<_>>(),
                        "outputs": s.outputs.iter().map(|t| t.name).collect::<Vec<_>>(),
                        "properties": s.properties().iter().map(|p| json!({"name": p.name, "kind": p.kind.describe(), "default": p.default, "required": p.required, "doc": p.doc_text()})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json_response(200, &Value::Array(types))
        }
        template => {
            let name = name.unwrap_or_default();
            let graph = template.ends_with("/graph");
            match flows.iter().find(|(f, _)| f.name == name) {
                Some((f, s)) if graph => json_response(200, &graph_json(f, *s)),
                Some((f, s)) => json_response(200, &flow_json(f, *s)),
                None => json_response(404, &json!({"error": format!("no flow named '{name}'")})),
            }
        }
    })
}
