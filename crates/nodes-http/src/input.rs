//! HTTPInput: receives requests for a path from the server's shared listener and starts a flow
//! invocation for each.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::http_listener::{HttpRequest, HttpResponse, HttpRouter, RequestQueue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Resource,
    ResourceError, Runs, Terminal, Terminals, properties,
};
use sluice_tree::{Text, Tree, Value, field_type};

use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::InputOutputs;

pub static HTTP_INPUT: NodeSpec = NodeSpec {
    type_name: "HTTPInput",
    summary: "Receives HTTP requests for a path on the server's HTTP listener. The request headers go to \
              `Root.HTTPInputHeader`, the body is parsed in the chosen domain, and the request stays open \
              until an HTTPReply node answers it.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A POST to `/orders` starts the flow with the request body",
        properties: "path: /orders, domain: XMLNSC",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::No("only an HTTP request to the server's listener starts it."),
    }],
    builder: NodeBuilder::of::<HttpInputProps>(),
};

properties! {
    /// HTTPInput's properties.
    pub struct HttpInputProps {
        /// The URL path served, such as `/orders`; a trailing `*` serves every path below it.
        path: String,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

/// The open request of an invocation, answered by HTTPReply. It holds no work to commit; it
/// is in the unit of work so that HTTPReply finds it, and HTTPInput answers it when the flow
/// ended without a reply.
pub struct PendingReply {
    pub id: u64,
    pub sender: tokio::sync::oneshot::Sender<HttpResponse>,
}

impl PendingReply {
    /// Its key in the unit of work: one request per invocation.
    pub const KEY: &str = "http";
}

impl Resource for PendingReply {
    fn commit(&mut self) -> Result<(), ResourceError> {
        Ok(())
    }

    fn rollback(&mut self) {}
}

struct HttpInput {
    flow: String,
    label: String,
    path: String,
    router: Arc<HttpRouter>,
    queue: Arc<RequestQueue>,
    owner: u64,
    parsing: BodyParsing,
}

impl BuildNode for HttpInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        build_http_input(self, b)
    }

    fn claims(&self) -> Vec<String> {
        vec![format!("HTTP path {}", self.path)]
    }
}

fn build_http_input(c: HttpInputProps, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let path = c.path.as_str();
    if !path.starts_with('/') {
        return Err(
            ConfigError::property("path", format!("`{path}` is not a URL path"))
                .with_hint("paths start with `/`"),
        );
    }
    let services = b.services;
    let (queue, owner) = services.http.queue();
    Ok(NodeImpl::Input(Arc::new(HttpInput {
        flow: b.flow.to_string(),
        label: b.label.to_string(),
        path: path.to_string(),
        router: Arc::clone(&services.http),
        queue,
        owner,
        parsing: BodyParsing::with_model(&c.parsing, &c.model, b.project_dir)?,
    })))
}

/// The names of the HTTP headers as the product writes them in HTTPInputHeader.
pub(crate) fn header_tree(root: &mut Tree, req: &HttpRequest) -> Result<(), NodeError> {
    let r = root.root();
    let h = root.create_last_child(
        r,
        field_type::NAME,
        Text::from_static("HTTPInputHeader"),
        Value::Null,
    )?;
    let command = format!("{} {} {}", req.method, req.uri, req.version);
    let v = root.alloc_text(command.as_bytes());
    root.create_last_child(
        h,
        field_type::NAME_VALUE,
        Text::from_static("X-Original-HTTP-Command"),
        Value::Character(v),
    )?;
    for (name, value) in &req.headers {
        let n = root.alloc_text(name.as_bytes());
        let v = root.alloc_text(value);
        root.create_last_child(h, field_type::NAME_VALUE, n, Value::Character(v))?;
    }
    Ok(())
}

pub(crate) fn properties(root: &mut Tree, content_type: Option<&Bytes>) -> Result<(), NodeError> {
    let r = root.root();
    let Some(p) = root.first_child(r)? else {
        return Ok(());
    };
    let field = |root: &mut Tree, name: &'static str, v: Value| {
        root.create_last_child(p, field_type::NAME_VALUE, Text::from_static(name), v)
    };
    field(root, "Encoding", Value::Integer(546))?;
    field(root, "CodedCharSetId", Value::Integer(1208))?;
    if let Some(ct) = content_type {
        let t = root.alloc_text(ct);
        field(root, "ContentType", Value::Character(t))?;
    }
    Ok(())
}

impl HttpInput {
    fn handle(&self, runner: &mut dyn InstanceRunner, req: HttpRequest, id: u64) {
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
            .and_then(|_| set_request_identifier(&mut msg.local_environment, id));
        let HttpRequest { body, reply, .. } = req;
        inv.unit_of_work
            .join(PendingReply::KEY, PendingReply { id, sender: reply });
        let result = built.and_then(|_| {
            self.parsing
                .attach(&mut msg.root, body)
                .map(|_| ())
                .map_err(NodeError::from)
        });
        let result = match result {
            // Failure before the message was propagated: the failure terminal.
            Err(mut e) => {
                e.exception.label.clone_from(&self.label);
                e.exception.node_type = "HTTPInput".into();
                self.input_failed(runner, &mut inv, &mut msg, e, InputOutputs::Failure)
            }
            Ok(()) => match runner.invoke(&mut inv, InputOutputs::Out.into(), &mut msg) {
                Ok(()) => Ok(()),
                Err(e) => self.input_failed(runner, &mut inv, &mut msg, e, InputOutputs::Catch),
            },
        };
        // The request is taken out first, so that it can still be answered whatever the rest
        // of the unit of work does.
        let pending = inv.unit_of_work.leave::<PendingReply>(PendingReply::KEY);
        match result {
            Ok(()) => match inv.unit_of_work.commit() {
                Err(e) => reply_error(
                    pending,
                    500,
                    &format!("the unit of work failed to commit: {e}"),
                ),
                Ok(()) => reply_error(
                    pending,
                    500,
                    &format!(
                        "flow '{}' completed without replying (no HTTPReply node was reached)",
                        self.flow
                    ),
                ),
            },
            Err(e) => {
                inv.unit_of_work.rollback();
                tracing::warn!(error = %e, flow = %self.flow, "Message processing failed.");
                let status = if e.exception.kind == sluice_node_api::ExceptionKind::Parser {
                    400
                } else {
                    500
                };
                reply_error(pending, status, &e.exception.describe());
            }
        }
    }

    /// Send `msg` with the ExceptionList to `terminal` if it is wired; otherwise give the error back.
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

pub(crate) fn set_request_identifier(le: &mut Tree, id: u64) -> Result<(), NodeError> {
    let r = le.root();
    let d = le.create_last_child(
        r,
        field_type::NAME,
        Text::from_static("Destination"),
        Value::Null,
    )?;
    let h = le.create_last_child(d, field_type::NAME, Text::from_static("HTTP"), Value::Null)?;
    let hex = format!("{id:016X}");
    let t = le.alloc_text(hex.as_bytes());
    le.create_last_child(
        h,
        field_type::NAME_VALUE,
        Text::from_static("RequestIdentifier"),
        Value::Character(t),
    )?;
    Ok(())
}

/// Answer the request with an error, if it is still pending.
fn reply_error(pending: Option<PendingReply>, status: u16, text: &str) {
    if let Some(p) = pending {
        let _ = p.sender.send(HttpResponse::error(status, text));
    }
}

impl InputNode for HttpInput {
    fn start(&self) {
        self.queue.open();
        self.router
            .register(&self.path, Arc::clone(&self.queue), self.owner);
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        loop {
            match self.queue.pop(Duration::from_millis(100)) {
                Some(req) => {
                    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    self.handle(runner, req, id);
                }
                // Requests already queued when the flow stops are still processed.
                None if runner.stop().is_stopped() => return,
                None => {}
            }
        }
    }

    fn stopped(&self) {
        self.router.unregister(&self.path, self.owner);
        // Anything that arrived after the instances finished is answered rather than dropped.
        for req in self.queue.close() {
            let _ = req.reply.send(HttpResponse::error(
                503,
                format!("flow '{}' is stopping", self.flow),
            ));
        }
    }
}
