//! RESTAsyncRequest and RESTAsyncResponse: a call of an OpenAPI operation made as RESTRequest
//! makes it, whose response — on the same connection — starts the flow of the RESTAsyncResponse
//! node with the same unique identifier, while the requesting flow has gone on.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sluice_node_api::http_listener::RequestQueue;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    InputNode, InstanceRunner, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl,
    NodeSpec, Runs, Terminal, Terminals, properties, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{CATCH_DOC, FAILURE_DOC, In};

use crate::async_pair::{
    Delivery, InFlight, Pairing, ResponseFlow, dropped, folder, is_wake_up, pairing,
    response_environment, set_field, user_context,
};
use crate::request::{Answer, CallOptions, Caller, response_message};
use crate::rest_request::RestCall;

/// The pairs' kind in the pairing registry.
const KIND: &str = "REST";

terminals! {
    /// RESTAsyncRequest's outputs.
    pub enum RestAsyncRequestOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The request message, as soon as the request is on its way; \
                      `LocalEnvironment.WrittenDestination.REST.Request` names its URL and identifier.",
    }
}

properties! {
    /// RESTAsyncRequest's properties.
    pub struct RestAsyncRequestProps {
        /// The name that pairs this node with the RESTAsyncResponse node (in this flow or
        /// another of the server) whose flow receives the responses.
        unique_identifier: String,
        /// The OpenAPI document of the API called, relative to the project folder.
        api: String,
        /// The operationId of the operation called.
        operation: String,
        /// The API's base URL (`http://host:port/base`); by default the document's first
        /// `servers[].url` (OpenAPI 3) or `schemes`/`host`/`basePath` (Swagger 2.0).
        /// `LocalEnvironment.Destination.REST.Request.BaseURL` overrides it per message.
        base_url: Option<String>,
        /// How long the whole response may take; a call not answered by then (or that fails)
        /// goes to the RESTAsyncResponse node's `failure` terminal.
        timeout_secs: u64 = "120",
    }
}

pub static REST_ASYNC_REQUEST: NodeSpec = NodeSpec {
    type_name: "RESTAsyncRequest",
    summary: "Calls an operation of a REST API described by an OpenAPI document as RESTRequest does, without \
              waiting for the response: the flow goes on at once, and the response starts the flow of the \
              RESTAsyncResponse node with the same `unique_identifier`, with this request's \
              `LocalEnvironment.Destination.REST.Request.UserContext`.",
    inputs: In::SPECS,
    outputs: RestAsyncRequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Without its RESTAsyncResponse node running, a request is not sent",
        properties: "unique_identifier: orders, api: apis/orders.yaml, operation: getOrder, base_url: 'http://127.0.0.1:1/api/v1'",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: "{}",
            local_environment: &[("Destination.REST.Request.Parameters.id", "7")],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises(
            "no RESTAsyncResponse node with unique_identifier `orders` is running",
        ),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<RestAsyncRequestProps>(),
};

/// A unique identifier, as the request and response nodes take it.
fn check_unique_identifier(id: &str) -> Result<(), ConfigError> {
    if id.trim().is_empty() {
        return Err(ConfigError::property(
            "unique_identifier",
            "must name the pair",
        ));
    }
    Ok(())
}

impl BuildNode for RestAsyncRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        check_unique_identifier(&self.unique_identifier)?;
        Ok(NodeImpl::Process(Arc::new(RestAsyncRequest {
            caller: Arc::new(Caller::new(b, self.timeout_secs, CallOptions::default())?),
            call: Arc::new(RestCall::resolve(
                b,
                &self.api,
                &self.operation,
                self.base_url,
            )?),
            timeout: Duration::from_secs(self.timeout_secs),
            pairing: pairing(KIND, &self.unique_identifier),
            unique_id: self.unique_identifier,
        })))
    }
}

struct RestAsyncRequest {
    caller: Arc<Caller>,
    call: Arc<RestCall>,
    timeout: Duration,
    pairing: Arc<Pairing>,
    unique_id: String,
}

/// Numbers the requests of this server, for logs and `WrittenDestination`.
static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

impl Node for RestAsyncRequest {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        if !self.pairing.is_attached() {
            return Err(NodeError::recoverable(format!(
                "no RESTAsyncResponse node with unique_identifier `{}` is running in this server",
                self.unique_id
            )));
        }
        let p = self.call.prepare(msg)?;
        let context = user_context(&mut msg.local_environment, KIND)?;
        let id = format!("{:016X}", NEXT_REQUEST.fetch_add(1, Ordering::Relaxed));
        let request = InFlight::new(context, p.url.clone(), self.timeout);
        let (caller, call, pairing) = (
            Arc::clone(&self.caller),
            Arc::clone(&self.call),
            Arc::clone(&self.pairing),
        );
        let (url, message_id) = (p.url.clone(), id.clone());
        self.caller.runtime().spawn(async move {
            let answer = caller
                .call_async(call.method(), &p.url, p.headers, p.body, &p.content_type)
                .await;
            pairing.deliver(match answer {
                Ok(a) => {
                    let (status, headers, body) = a.into_parts();
                    Delivery::Answer {
                        message_id,
                        request,
                        status,
                        headers,
                        body,
                    }
                }
                Err(error) => Delivery::Failed {
                    message_id,
                    request,
                    error,
                },
            });
        });
        let le = &mut msg.local_environment;
        let r = le.root();
        let w = folder(le, r, "WrittenDestination")?;
        let k = folder(le, w, KIND)?;
        let q = folder(le, k, "Request")?;
        set_field(le, q, "URL", &url)?;
        set_field(le, q, "RequestIdentifier", &id)?;
        ctx.propagate(RestAsyncRequestOutput::Out, msg)
    }
}

terminals! {
    /// RESTAsyncResponse's outputs.
    pub enum RestAsyncResponseOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The response (status below 400), as RESTRequest gives it, with the request's \
                      UserContext in `LocalEnvironment.REST.Response.UserContext`.",
        Error = "error": "The response when its status is 400 or more.",
        Catch = "catch": CATCH_DOC,
    }
}

properties! {
    /// RESTAsyncResponse's properties.
    pub struct RestAsyncResponseProps {
        /// The name that pairs this node with the RESTAsyncRequest nodes whose responses it
        /// receives; one RESTAsyncResponse node per name in a server.
        unique_identifier: String,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

pub static REST_ASYNC_RESPONSE: NodeSpec = NodeSpec {
    type_name: "RESTAsyncResponse",
    summary: "Receives the responses to the calls of the RESTAsyncRequest nodes with the same \
              `unique_identifier` and starts the flow with each: `Root.HTTPResponseHeader` and the body \
              parsed in the chosen domain, the request's UserContext in \
              `LocalEnvironment.REST.Response.UserContext`; a status of 400 or more goes to `error`. A call \
              that failed or timed out starts the flow at `failure`.",
    inputs: &[],
    outputs: RestAsyncResponseOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A response to a call of the paired RESTAsyncRequest node starts the flow",
        properties: "unique_identifier: orders, domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: "{\"id\":7,\"item\":\"pen\",\"quantity\":3}",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "{\"id\":7,\"item\":\"pen\",\"quantity\":3}",
        )]),
        runs: Runs::No("only a response to a call that a RESTAsyncRequest node made starts it."),
    }],
    builder: NodeBuilder::of::<RestAsyncResponseProps>(),
};

impl BuildNode for RestAsyncResponseProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        check_unique_identifier(&self.unique_identifier)?;
        let (queue, owner) = b.services.http.queue();
        Ok(NodeImpl::Input(Arc::new(RestAsyncResponse {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            queue,
            owner,
            pairing: pairing(KIND, &self.unique_identifier),
            parsing: BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?,
        })))
    }

    fn claims(&self) -> Vec<String> {
        vec![format!(
            "RESTAsyncResponse unique_identifier {}",
            self.unique_identifier
        )]
    }
}

struct RestAsyncResponse {
    flow: String,
    label: String,
    /// Carries only wake-ups: the node serves no path.
    queue: Arc<RequestQueue>,
    owner: u64,
    pairing: Arc<Pairing>,
    parsing: BodyParsing,
}

impl RestAsyncResponse {
    fn response_flow(&self) -> ResponseFlow<'_> {
        ResponseFlow {
            flow: &self.flow,
            label: &self.label,
            node_type: "RESTAsyncResponse",
            failure: RestAsyncResponseOutput::Failure.into(),
            catch: RestAsyncResponseOutput::Catch.into(),
        }
    }

    fn receive(&self, runner: &mut dyn InstanceRunner, d: Delivery) {
        let flow = self.response_flow();
        let (mut request, outcome) = match d {
            Delivery::Answer {
                request,
                status,
                headers,
                body,
                ..
            } => {
                runner.record_input_bytes(body.len() as u64);
                (request, Ok(Answer::new(status, headers, body)))
            }
            Delivery::Failed { request, error, .. } => (request, Err(error)),
            Delivery::Timeout {
                message_id,
                request,
            } => {
                let e = NodeError::new(
                    ExceptionKind::SocketTimeout,
                    3162,
                    format!(
                        "no response from {} within {} seconds (request {message_id})",
                        request.url,
                        request.timeout.as_secs()
                    ),
                );
                (request, Err(e))
            }
        };
        let mut msg = Message::new();
        let outcome = outcome.and_then(|a| {
            let status = a.status;
            let mut out = response_message(&self.parsing, &mut msg, a)?;
            response_environment(&mut out.local_environment, KIND, &mut request)?;
            Ok((status, out))
        });
        match outcome {
            Ok((status, mut out)) => {
                let terminal = if status < 400 {
                    RestAsyncResponseOutput::Out
                } else if runner.is_wired(RestAsyncResponseOutput::Error.into()) {
                    RestAsyncResponseOutput::Error
                } else {
                    let e = NodeError::new(
                        ExceptionKind::Socket,
                        3151,
                        format!("{} answered with status {status}", request.url),
                    );
                    return flow.fail(runner, &mut out, e);
                };
                flow.run(runner, terminal.into(), &mut out);
            }
            Err(e) => {
                if let Err(le) =
                    response_environment(&mut msg.local_environment, KIND, &mut request)
                {
                    return flow.fail(runner, &mut msg, le);
                }
                flow.fail(runner, &mut msg, e);
            }
        }
    }
}

impl InputNode for RestAsyncResponse {
    fn start(&self) {
        self.queue.open();
        self.pairing
            .attach(self.owner, Arc::clone(&self.queue), String::new(), None);
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        loop {
            match self.queue.pop(Duration::from_millis(100)) {
                Some(req) if is_wake_up(&req) => {
                    if let Some(d) = self.pairing.next_delivery() {
                        self.receive(runner, d);
                    }
                }
                // Nothing routes listener requests here; answer one rather than hang it.
                Some(req) => {
                    let _ = req
                        .reply
                        .send(sluice_node_api::http_listener::HttpResponse::error(
                            404,
                            "not found",
                        ));
                }
                None if runner.stop().is_stopped() => return,
                None => {}
            }
        }
    }

    fn stopped(&self) {
        for d in self.pairing.detach(self.owner) {
            dropped(&d, "the response node's flow stopped");
        }
        self.queue.close();
    }
}
