//! RESTInput: serves the operations of an OpenAPI document (a REST API project's `apis/NAME.yaml`)
//! on the server's shared listener. Each request is matched to its operation by method and path
//! template and propagated to the output terminal named after the operationId, with its
//! parameters in `LocalEnvironment.REST.Input.Parameters`. The document itself is served at
//! `/NAME/openapi.json` and `/NAME/openapi.yaml`.
//!
//! The reply goes through HTTPReply as for HTTPInput, but RESTInput hands the flow a reply
//! channel of its own, so that it sees the response before the client does: to check it against
//! the document (validation on) and to add the CORS headers.

mod request;
mod response;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::http_listener::{HttpRequest, HttpResponse, HttpRouter, RequestQueue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::InputOutputs;
use sluice_openapi::Api;

use crate::input::{PendingReply, header_tree, properties, set_request_identifier};

pub static REST_INPUT: NodeSpec = NodeSpec {
    type_name: "RESTInput",
    summary: "Serves the operations of a REST API described by an OpenAPI 3.0/3.1 or Swagger 2.0 document \
              under `base_path` on the server's HTTP listener. A request goes to the output terminal named \
              after its operation's operationId (or to `out` when that is not wired) with \
              `LocalEnvironment.REST.Input` holding Method, Operation, Path, URI and the typed Parameters; \
              unknown paths get 404 and unknown methods 405 with `Allow`. The document is served at \
              `/NAME/openapi.json` and `.yaml`. A REST API project's `apis/NAME.yaml` deploys as a flow \
              of this node and one subflow per operation (docs/rest-apis.md).",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: true,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A GET of `/api/orders/7` goes to terminal `getOrder` with `REST.Input.Parameters.id` = 7",
        properties: "api: apis/orders.yaml, base_path: /api, domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: "{}",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("getOrder", "{}")]),
        runs: Runs::No("only an HTTP request to the server's listener starts it."),
    }],
    builder: NodeBuilder::of::<RestInputProps>(),
};

properties! {
    /// RESTInput's properties.
    pub struct RestInputProps {
        /// The OpenAPI document, relative to the project folder (`apis/orders.yaml`); its file
        /// name without extension names the API.
        api: String,
        /// The URL path the operations are served under (a REST API project uses the document's
        /// `servers[0].url` or `basePath`); `""` serves them at the root.
        base_path: String,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

/// Where the node types' examples (and the compliance check) find their OpenAPI document, relative
/// to the project folder.
pub const EXAMPLE_DOCUMENT_PATH: &str = "apis/orders.yaml";

/// The document the examples name: the orders API with `createOrder` and `getOrder`.
pub const EXAMPLE_DOCUMENT: &str = r##"openapi: 3.0.3
info: { title: Orders, version: "1" }
servers: [{ url: "http://shop.example/api/v1" }]
paths:
  /orders:
    post:
      operationId: createOrder
      requestBody: { content: { application/json: { schema: { type: object } } } }
      responses: { "201": { description: created } }
  /orders/{id}:
    get:
      operationId: getOrder
      parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
      responses: { "200": { description: the order } }
"##;

fn api_name(api: &str) -> String {
    Path::new(api)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn doc_paths(api: &str) -> [String; 2] {
    let n = api_name(api);
    [format!("/{n}/openapi.json"), format!("/{n}/openapi.yaml")]
}

/// The paths RESTInput registers: the document's two, every path below the base path, and the
/// base path itself (where an operation on `/` is).
fn served_paths(api: &str, base_path: &str) -> Vec<String> {
    let base = base_path.trim_end_matches('/');
    let [json, yaml] = doc_paths(api);
    let mut paths = vec![json, yaml, format!("{base}/*")];
    if !base.is_empty() {
        paths.push(base.to_string());
    }
    paths
}

impl BuildNode for RestInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if !(self.base_path.is_empty() || self.base_path.starts_with('/')) {
            return Err(ConfigError::property(
                "base_path",
                format!("`{}` is not a URL path", self.base_path),
            ));
        }
        let mut api = sluice_openapi::load_file(&self.api, &b.project_dir.join(&self.api))
            .map_err(|e| ConfigError::property("api", e.to_string()))?;
        api.base_path = self.base_path.trim_end_matches('/').to_string();
        let mut terminals = Vec::with_capacity(api.operations.len());
        for op in &api.operations {
            terminals.push(b.output(&op.id));
        }
        if let Some(extra) = b
            .named_outputs(InputOutputs::SPECS.len())
            .find(|o| !api.operations.iter().any(|op| op.id == *o))
        {
            return Err(ConfigError::property(
                "api",
                format!("terminal `{extra}` is wired but the document has no operation `{extra}`"),
            ));
        }
        let services = b.services;
        let (queue, owner) = services.http.queue();
        Ok(NodeImpl::Input(Arc::new(RestInput {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            paths: served_paths(&self.api, &self.base_path),
            api,
            terminals,
            router: Arc::clone(&services.http),
            queue,
            owner,
            parsing: BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?,
        })))
    }

    fn claims(&self) -> Vec<String> {
        served_paths(&self.api, &self.base_path)
            .into_iter()
            .map(|p| format!("HTTP path {p}"))
            .collect()
    }
}

struct RestInput {
    flow: String,
    label: String,
    api: Api,
    /// The terminal of each operation, in the order of `api.operations`.
    terminals: Vec<Option<Terminal>>,
    /// The document's two paths, then the operations' ([`served_paths`]).
    paths: Vec<String>,
    router: Arc<HttpRouter>,
    queue: Arc<RequestQueue>,
    owner: u64,
    parsing: BodyParsing,
}

impl RestInput {
    /// Answer what RESTInput answers itself (the document, preflights); gives back the others.
    fn answer_itself(&self, req: HttpRequest) -> Option<HttpRequest> {
        let origin = || {
            let host = request::header(&req, "host").unwrap_or("localhost");
            format!("http://{host}")
        };
        let served = if req.path == self.paths[0] && req.method == "GET" {
            Some(response::document(
                sluice_openapi::render_json(&self.api, &origin()),
                "application/json",
            ))
        } else if req.path == self.paths[1] && req.method == "GET" {
            Some(response::document(
                sluice_openapi::render_yaml(&self.api, &origin()),
                "application/yaml",
            ))
        } else if req.path == self.paths[0] || req.path == self.paths[1] {
            let mut r = response::problem(405, "the document is read with GET", None);
            r.headers
                .push(("Allow".into(), bytes::Bytes::from_static(b"GET")));
            Some(r)
        } else if req.method == "OPTIONS"
            && let Some(cors) = &self.api.options.cors
            && let Some(o) = request::header(&req, "origin")
            && request::header(&req, "access-control-request-method").is_some()
        {
            let found = self.api.operations_at(&req.path);
            if found.is_empty() {
                Some(response::problem(
                    404,
                    &format!("no operation of the API serves {}", req.path),
                    None,
                ))
            } else {
                Some(response::preflight(cors, o, &request::methods(&found)))
            }
        } else {
            None
        };
        match served {
            Some(r) => {
                let _ = req.reply.send(r);
                None
            }
            None => Some(req),
        }
    }

    fn handle(&self, runner: &mut dyn InstanceRunner, req: HttpRequest, id: u64) {
        let Some(req) = self.answer_itself(req) else {
            return;
        };
        let validation = self.api.options.validation;
        let origin = request::header(&req, "origin").map(str::to_string);
        let cors = self.api.options.cors.as_ref();
        let send = |req: HttpRequest, mut r: HttpResponse| {
            response::add_cors(&mut r, cors, origin.as_deref());
            let _ = req.reply.send(r);
        };
        let matched = request::route(&self.api, &req, validation).and_then(|m| {
            if validation {
                request::check_body(&self.api, m.op, &req.body)?;
            }
            Ok(m)
        });
        let m = match matched {
            Ok(m) => m,
            Err(r) => return send(req, r),
        };
        let index = self
            .api
            .operations
            .iter()
            .position(|o| std::ptr::eq(o, m.op))
            .unwrap_or_default();
        let terminal = match self.terminals.get(index).copied().flatten() {
            Some(t) => t,
            None if runner.is_wired(InputOutputs::Out.into()) => InputOutputs::Out.into(),
            None => {
                let r = response::problem(
                    501,
                    &format!("operation {} is not implemented", m.op.id),
                    None,
                );
                return send(req, r);
            }
        };
        runner.record_input_bytes(req.body.len() as u64);
        let mut inv = Invocation::new();
        let mut msg = Message::new();
        let content_type = req
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone());
        let built = properties(&mut msg.root, content_type.as_ref())
            .and_then(|_| header_tree(&mut msg.root, &req))
            .and_then(|_| set_request_identifier(&mut msg.local_environment, id))
            .and_then(|_| request::write_input(&mut msg.local_environment, &req, &m));
        let op = m.op;
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        inv.unit_of_work
            .join(PendingReply::KEY, PendingReply { id, sender: tx });
        let body = req.body.clone();
        let result = built.and_then(|_| {
            self.parsing
                .attach(&mut msg.root, body)
                .map(|_| ())
                .map_err(NodeError::from)
        });
        let result = match result {
            Err(mut e) => {
                e.exception.label.clone_from(&self.label);
                e.exception.node_type = "RESTInput".into();
                self.input_failed(runner, &mut inv, &mut msg, e, InputOutputs::Failure)
            }
            Ok(()) => match runner.invoke(&mut inv, terminal, &mut msg) {
                Ok(()) => Ok(()),
                Err(e) => self.input_failed(runner, &mut inv, &mut msg, e, InputOutputs::Catch),
            },
        };
        // Dropping the flow's side of the reply channel, so that no reply still to come is
        // waited for.
        drop(inv.unit_of_work.leave::<PendingReply>(PendingReply::KEY));
        let outcome = match result {
            Ok(()) => inv.unit_of_work.commit().map_err(|e| {
                response::problem(
                    500,
                    &format!("the unit of work failed to commit: {e}"),
                    None,
                )
            }),
            Err(e) => {
                inv.unit_of_work.rollback();
                tracing::warn!(error = %e, flow = %self.flow, "Message processing failed.");
                let status = if e.exception.kind == sluice_node_api::ExceptionKind::Parser {
                    400
                } else {
                    500
                };
                Err(response::problem(status, &e.exception.describe(), None))
            }
        };
        let reply = match (outcome, rx.try_recv()) {
            (Err(problem), _) => problem,
            (Ok(()), Ok(r)) if validation => match request::check_response(&self.api, op, &r) {
                Ok(()) => r,
                Err(problem) => {
                    tracing::warn!(flow = %self.flow, operation = %op.id, "The response does not match the API document.");
                    problem
                }
            },
            (Ok(()), Ok(r)) => r,
            (Ok(()), Err(_)) => response::problem(
                500,
                &format!(
                    "operation {} completed without replying (no HTTPReply node was reached)",
                    op.id
                ),
                None,
            ),
        };
        send(req, reply);
    }

    fn input_failed(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut Message,
        e: NodeError,
        terminal: InputOutputs,
    ) -> Result<(), NodeError> {
        let terminal: Terminal = terminal.into();
        if !runner.is_wired(terminal) {
            return Err(e);
        }
        e.exception.write_to(&mut msg.exception_list)?;
        runner.invoke(inv, terminal, msg)
    }
}

impl InputNode for RestInput {
    fn start(&self) {
        self.queue.open();
        for p in &self.paths {
            self.router.register(p, Arc::clone(&self.queue), self.owner);
        }
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        loop {
            match self.queue.pop(Duration::from_millis(100)) {
                Some(req) => {
                    // Identifiers distinct from HTTPInput's, which count from 1.
                    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) | 1 << 62;
                    self.handle(runner, req, id);
                }
                None if runner.stop().is_stopped() => return,
                None => {}
            }
        }
    }

    fn stopped(&self) {
        for p in &self.paths {
            self.router.unregister(p, self.owner);
        }
        for req in self.queue.close() {
            let _ = req.reply.send(response::problem(
                503,
                &format!("flow '{}' is stopping", self.flow),
                None,
            ));
        }
    }
}
