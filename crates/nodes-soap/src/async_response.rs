//! SOAPAsyncResponse: receives the replies to the requests its paired SOAPAsyncRequest nodes
//! sent, correlated by WS-Addressing RelatesTo, and starts its flow with each, with the
//! request's UserContext; a request not answered in time starts it at `failure`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::http_listener::{HttpRequest, HttpResponse, HttpRouter, RequestQueue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, ExceptionKind, InputNode,
    InstanceRunner, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs,
    Terminals, properties, terminals,
};
use sluice_nodes_core::terminals::{CATCH_DOC, FAILURE_DOC};
use sluice_nodes_http::async_pair::{
    self, Delivery, InFlight, Pairing, ResponseFlow, dropped, folder, is_wake_up, pairing,
    set_field,
};
use sluice_parsers::soap::SoapVersion;
use sluice_parsers::soap::fault::{self, Fault, FaultCode};
use sluice_tree::{NodeId, Tree};

use crate::async_request::check_unique_identifier;
use crate::client::Answer;
use crate::input::http_header_tree;
use crate::pending::fault_response;
use crate::request::attach_answer;
use crate::wsa;

terminals! {
    /// SOAPAsyncResponse's outputs.
    pub enum SoapAsyncResponseOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The reply, in the SOAP domain, with the request's UserContext in \
                      `LocalEnvironment.SOAP.Response.UserContext`.",
        Fault = "fault": "The reply when it is a SOAP fault.",
        Catch = "catch": CATCH_DOC,
    }
}

properties! {
    /// SOAPAsyncResponse's properties.
    pub struct SoapAsyncResponseProps {
        /// The name that pairs this node with the SOAPAsyncRequest nodes whose replies it
        /// receives; one SOAPAsyncResponse node per name in a server.
        unique_identifier: String,
        /// The path of the server's HTTP listener the replies are sent to; by default
        /// `/soap-async/<unique_identifier>`.
        path: Option<String>,
        /// The ReplyTo address requests give, when services reach this server by another
        /// name than its listener's address (a proxy, a host name); by default the listener's
        /// URL and `path`.
        reply_to_url: Option<String>,
    }
}

pub static SOAP_ASYNC_RESPONSE: NodeSpec = NodeSpec {
    type_name: "SOAPAsyncResponse",
    summary: "Receives the replies to the requests of the SOAPAsyncRequest nodes with the same \
              `unique_identifier`, at a path of the server's HTTP listener that the requests name as their \
              WS-Addressing ReplyTo. A reply is matched to its request by RelatesTo, acknowledged with \
              `202 Accepted`, and starts the flow in the SOAP domain with the request's UserContext in \
              `LocalEnvironment.SOAP.Response.UserContext`; a fault goes to `fault`. A request not answered \
              within its timeout, and a reply that matches no request, start the flow at `failure`.",
    inputs: &[],
    outputs: SoapAsyncResponseOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A reply to a request of the paired SOAPAsyncRequest node starts the flow",
        properties: "unique_identifier: orders",
        esql: "",
        input: ExampleInput::xml("<echoResponse><text>hi</text></echoResponse>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<echoResponse><text>hi</text></echoResponse>",
        )]),
        runs: Runs::No("only a reply to a request that a SOAPAsyncRequest node sent starts it."),
    }],
    builder: NodeBuilder::of::<SoapAsyncResponseProps>(),
};

impl SoapAsyncResponseProps {
    fn path(&self) -> String {
        self.path
            .clone()
            .unwrap_or_else(|| format!("/soap-async/{}", self.unique_identifier))
    }
}

impl BuildNode for SoapAsyncResponseProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        check_unique_identifier(&self.unique_identifier)?;
        let path = self.path();
        if !path.starts_with('/') || path.ends_with('*') {
            return Err(
                ConfigError::property("path", format!("`{path}` is not a URL path"))
                    .with_hint("paths start with `/` and name one path"),
            );
        }
        if let Some(u) = &self.reply_to_url
            && !(u.starts_with("http://") || u.starts_with("https://"))
        {
            return Err(ConfigError::property(
                "reply_to_url",
                format!("`{u}` is not an http:// or https:// URL"),
            ));
        }
        let (queue, owner) = b.services.http.queue();
        Ok(NodeImpl::Input(Arc::new(SoapAsyncResponse {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            path,
            reply_to_url: self.reply_to_url,
            router: Arc::clone(&b.services.http),
            queue,
            owner,
            pairing: pairing("SOAP", &self.unique_identifier),
        })))
    }

    fn claims(&self) -> Vec<String> {
        vec![
            format!("HTTP path {}", self.path()),
            format!(
                "SOAPAsyncResponse unique_identifier {}",
                self.unique_identifier
            ),
        ]
    }
}

struct SoapAsyncResponse {
    flow: String,
    label: String,
    path: String,
    reply_to_url: Option<String>,
    router: Arc<HttpRouter>,
    queue: Arc<RequestQueue>,
    owner: u64,
    pairing: Arc<Pairing>,
}

fn accepted() -> HttpResponse {
    HttpResponse {
        status: 202,
        headers: Vec::new(),
        body: Bytes::new(),
    }
}

/// `LocalEnvironment.SOAP.Response`: the request's UserContext and the reply's correlation.
fn response_environment(
    le: &mut Tree,
    request: &mut InFlight,
    message_id: &str,
) -> Result<(), NodeError> {
    let resp = async_pair::response_environment(le, "SOAP", request)?;
    let w = folder(le, resp, "WSA")?;
    set_field(le, w, "RelatesTo", message_id)
}

impl SoapAsyncResponse {
    /// A reply the service sent to this node's path.
    fn serve(&self, runner: &mut dyn InstanceRunner, req: HttpRequest) {
        runner.record_input_bytes(req.body.len() as u64);
        if req.method != "POST" {
            let _ = req.reply.send(HttpResponse::error(
                405,
                "replies to asynchronous SOAP requests are sent by POST",
            ));
            return;
        }
        let mut msg = Message::new();
        let prepared = http_header_tree(&mut msg.root, &req);
        let HttpRequest {
            headers,
            body,
            reply,
            ..
        } = req;
        let answer = Answer {
            status: 200,
            headers,
            body,
        };
        let parsed = prepared.and_then(|_| attach_answer(&mut msg, "the reply", &answer));
        let version = |msg: &mut Message, id| {
            sluice_parsers::soap::version_of(&mut msg.root, id).unwrap_or(SoapVersion::V11)
        };
        let soap_id = match parsed {
            Ok(id) => id,
            Err(e) => {
                // Nothing to correlate: the sender hears why.
                let f = Fault::new(FaultCode::Client, SoapVersion::V11, e.exception.describe());
                let _ = reply.send(fault_response(SoapVersion::V11, &f, None));
                return;
            }
        };
        let relates_to = wsa::read(&mut msg.root, soap_id)
            .ok()
            .flatten()
            .and_then(|a| a.relates_to);
        let request = relates_to.as_deref().and_then(|id| self.pairing.take(id));
        let Some(mut request) = request else {
            let why = match &relates_to {
                Some(id) => format!("no request in flight has MessageID '{id}' (RelatesTo)"),
                None => "the reply has no WS-Addressing RelatesTo".to_string(),
            };
            let failure = SoapAsyncResponseOutput::Failure.into();
            if runner.is_wired(failure) {
                let _ = reply.send(accepted());
                let e = NodeError::new(ExceptionKind::Recoverable, 3170, why);
                self.run_failure(runner, &mut msg, e);
            } else {
                tracing::warn!(flow = %self.flow, reason = %why, "Refused a reply nobody waits for.");
                let v = version(&mut msg, soap_id);
                let f = Fault::new(FaultCode::Client, v, why);
                let _ = reply.send(fault_response(v, &f, None));
            }
            return;
        };
        let _ = reply.send(accepted());
        let message_id = relates_to.unwrap_or_default();
        self.run_reply(runner, msg, soap_id, &mut request, &message_id);
    }

    /// A delivery from the request side: an answer on the request's connection, a timeout or a
    /// failure.
    fn receive(&self, runner: &mut dyn InstanceRunner, d: Delivery) {
        match d {
            Delivery::Answer {
                message_id,
                mut request,
                status,
                headers,
                body,
            } => {
                runner.record_input_bytes(body.len() as u64);
                let answer = Answer {
                    status,
                    headers,
                    body,
                };
                let mut msg = Message::new();
                match attach_answer(&mut msg, &request.url, &answer) {
                    Ok(id) => self.run_reply(runner, msg, id, &mut request, &message_id),
                    Err(e) => self.fail_request(runner, &mut request, &message_id, e),
                }
            }
            Delivery::Timeout {
                message_id,
                mut request,
            } => {
                let e = NodeError::new(
                    ExceptionKind::SocketTimeout,
                    3162,
                    format!(
                        "no reply from {} within {} seconds to the request with MessageID '{message_id}'",
                        request.url,
                        request.timeout.as_secs()
                    ),
                );
                self.fail_request(runner, &mut request, &message_id, e);
            }
            Delivery::Failed {
                message_id,
                mut request,
                error,
            } => self.fail_request(runner, &mut request, &message_id, error),
        }
    }

    /// Run the flow from `failure` for a request that got no reply, with its UserContext.
    fn fail_request(
        &self,
        runner: &mut dyn InstanceRunner,
        request: &mut InFlight,
        message_id: &str,
        e: NodeError,
    ) {
        let mut msg = Message::new();
        match response_environment(&mut msg.local_environment, request, message_id) {
            Ok(()) => self.run_failure(runner, &mut msg, e),
            Err(le) => self.run_failure(runner, &mut msg, le),
        }
    }

    /// Run the flow with a reply: `fault` for a fault, `out` otherwise.
    fn run_reply(
        &self,
        runner: &mut dyn InstanceRunner,
        mut msg: Message,
        soap_id: NodeId,
        request: &mut InFlight,
        message_id: &str,
    ) {
        if let Err(e) = response_environment(&mut msg.local_environment, request, message_id) {
            return self.run_failure(runner, &mut msg, e);
        }
        let terminal = match fault::read(&mut msg.root, soap_id) {
            Err(e) => return self.run_failure(runner, &mut msg, e.into()),
            Ok(Some(f)) => {
                if !runner.is_wired(SoapAsyncResponseOutput::Fault.into()) {
                    let e = NodeError::new(
                        ExceptionKind::Socket,
                        3151,
                        format!(
                            "{} answered with a SOAP fault: {} {}",
                            request.url, f.code, f.reason
                        ),
                    );
                    return self.run_failure(runner, &mut msg, e);
                }
                SoapAsyncResponseOutput::Fault
            }
            Ok(None) => SoapAsyncResponseOutput::Out,
        };
        self.response_flow().run(runner, terminal.into(), &mut msg);
    }

    fn response_flow(&self) -> ResponseFlow<'_> {
        ResponseFlow {
            flow: &self.flow,
            label: &self.label,
            node_type: "SOAPAsyncResponse",
            failure: SoapAsyncResponseOutput::Failure.into(),
            catch: SoapAsyncResponseOutput::Catch.into(),
        }
    }

    /// Run the flow from `failure` with the exception in the ExceptionList.
    fn run_failure(&self, runner: &mut dyn InstanceRunner, msg: &mut Message, e: NodeError) {
        self.response_flow().fail(runner, msg, e);
    }
}

impl InputNode for SoapAsyncResponse {
    fn start(&self) {
        self.queue.open();
        self.router
            .register(&self.path, Arc::clone(&self.queue), self.owner);
        self.pairing.attach(
            self.owner,
            Arc::clone(&self.queue),
            self.path.clone(),
            self.reply_to_url.clone(),
        );
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        loop {
            match self.queue.pop(Duration::from_millis(100)) {
                Some(req) if is_wake_up(&req) => {
                    if let Some(d) = self.pairing.next_delivery() {
                        self.receive(runner, d);
                    }
                }
                Some(req) => self.serve(runner, req),
                None if runner.stop().is_stopped() => return,
                None => {}
            }
        }
    }

    fn stopped(&self) {
        self.router.unregister(&self.path, self.owner);
        for d in self.pairing.detach(self.owner) {
            dropped(&d, "the response node's flow stopped");
        }
        for req in self.queue.close() {
            if is_wake_up(&req) {
                continue;
            }
            let f = Fault::new(
                FaultCode::Server,
                SoapVersion::V11,
                format!("flow '{}' is stopping", self.flow),
            );
            let mut resp = fault_response(SoapVersion::V11, &f, None);
            resp.status = 503;
            let _ = req.reply.send(resp);
        }
    }
}
