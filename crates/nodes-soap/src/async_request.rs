//! SOAPAsyncRequest: sends a request to an operation of a SOAP service with WS-Addressing
//! naming the paired SOAPAsyncResponse node as ReplyTo, and goes on as soon as the service has
//! accepted it; the reply is processed by the SOAPAsyncResponse node's flow.

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::http_listener::HttpRouter;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, terminals,
};
use sluice_nodes_core::terminals::{FAILURE_DOC, In};
use sluice_nodes_core::validation::{ValidationProps, Validator};
use sluice_tree::Tree;

use crate::client::{SoapClient, new_client, post};
use crate::request::{MtomProps, Target, call_error, request_body, url_override};
use crate::validation::wsdl_validator;
use crate::wsa::{self, Addressing};
use crate::wsdl::Operation;
use sluice_nodes_http::async_pair::{
    Delivery, InFlight, Pairing, folder, pairing, set_field, user_context,
};

terminals! {
    /// SOAPAsyncRequest's outputs.
    pub enum SoapAsyncRequestOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The request message, once the service has accepted the request; \
                      `LocalEnvironment.WrittenDestination.SOAP.Request` names its URL and MessageID.",
    }
}

properties! {
    /// SOAPAsyncRequest's properties.
    pub struct SoapAsyncRequestProps {
        /// The name that pairs this node with the SOAPAsyncResponse node (in this flow or
        /// another of the server) that receives the replies.
        unique_identifier: String,
        /// The WSDL 1.1 file describing the service, relative to the project folder.
        wsdl_file: String,
        /// The operation called; a one-way operation has no reply to wait for and is refused.
        operation: String,
        /// The SOAP binding of the operation; needed only when the WSDL has more than one.
        binding: Option<String>,
        /// The service's URL; by default the binding's `soap:address`.
        /// `LocalEnvironment.Destination.SOAP.Request.Transport.HTTP.WebServiceURL` overrides it.
        url: Option<String>,
        /// How long the reply may take, from the moment the request is sent; a request not
        /// answered by then goes to the SOAPAsyncResponse node's `failure` terminal. The
        /// service's acknowledgement must come within it too.
        timeout_secs: u64 = "120",
        /// The product's "Allow MTOM", as on SOAPRequest: the request is written as MTOM when
        /// this node validates, the message has no `Attachment` children, and Body elements
        /// the WSDL's schemas declare as base64Binary hold at least 1000 bytes;
        /// `LocalEnvironment.Destination.SOAP.Request.AllowMTOM` and `.MTOMThreshold` override
        /// it per message.
        allow_mtom: bool = "false",
        /// `content_and_value` validates the request's body against the schemas of the WSDL's
        /// types before it is sent (`failure_action` as on other nodes).
        ..validation: ValidationProps,
    }
}

pub static SOAP_ASYNC_REQUEST: NodeSpec = NodeSpec {
    type_name: "SOAPAsyncRequest",
    summary: "Sends a request to an operation of a SOAP service described by a WSDL 1.1 in the project and \
              goes on without waiting for the reply. The request always carries WS-Addressing: a new \
              MessageID, and ReplyTo naming the endpoint of the SOAPAsyncResponse node with the same \
              `unique_identifier`, whose flow receives the reply with this request's \
              `LocalEnvironment.Destination.SOAP.Request.UserContext`. A service that answers on the same \
              connection instead has its answer delivered to that node too.",
    inputs: In::SPECS,
    outputs: SoapAsyncRequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Without its SOAPAsyncResponse node running, a request is not sent",
        properties: "unique_identifier: orders, wsdl_file: services/echo.wsdl, operation: echo",
        esql: "",
        input: ExampleInput::xml("<echo><text>hi</text></echo>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises(
            "no SOAPAsyncResponse node with unique_identifier `orders` is running",
        ),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SoapAsyncRequestProps>(),
};

/// A unique identifier names a path segment of the response node's endpoint: keep it to
/// characters that need no escaping.
pub(crate) fn check_unique_identifier(id: &str) -> Result<(), ConfigError> {
    if id.is_empty()
        || !id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        return Err(ConfigError::property(
            "unique_identifier",
            format!("`{id}` is not a valid identifier"),
        )
        .with_hint("use letters, digits, `-`, `_` and `.`"));
    }
    Ok(())
}

impl BuildNode for SoapAsyncRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        check_unique_identifier(&self.unique_identifier)?;
        let target = Target::resolve(
            b,
            &self.wsdl_file,
            self.binding.as_deref(),
            &self.operation,
            self.url,
        )?;
        if target.op.one_way {
            return Err(ConfigError::property(
                "operation",
                format!(
                    "`{}` is a one-way operation: it has no reply for a SOAPAsyncResponse node",
                    target.op.name
                ),
            )
            .with_hint("call it with SOAPRequest"));
        }
        let validator = wsdl_validator(
            &self.validation,
            &target.wsdl,
            std::iter::once(&target.op),
            b.project_dir,
        )?;
        if self.timeout_secs == 0 {
            return Err(ConfigError::property("timeout_secs", "must be at least 1"));
        }
        Ok(NodeImpl::Process(Arc::new(SoapAsyncRequest {
            unique_id: self.unique_identifier.clone(),
            pairing: pairing("SOAP", &self.unique_identifier),
            router: Arc::clone(&b.services.http),
            action: request_action(&target.op),
            op: target.op,
            url: target.url,
            timeout: Duration::from_secs(self.timeout_secs),
            allow_mtom: self.allow_mtom,
            binary_elements: target.wsdl.binary_elements.clone(),
            validator,
            runtime: b.services.runtime.clone(),
            client: std::sync::OnceLock::new(),
        })))
    }
}

struct SoapAsyncRequest {
    unique_id: String,
    pairing: Arc<Pairing>,
    router: Arc<HttpRouter>,
    op: Operation,
    action: String,
    url: String,
    timeout: Duration,
    allow_mtom: bool,
    binary_elements: std::collections::HashSet<(String, String)>,
    validator: Option<Arc<Validator>>,
    runtime: Option<tokio::runtime::Handle>,
    client: std::sync::OnceLock<Result<SoapClient, String>>,
}

/// The WS-Addressing Action of the request: its SOAPAction, or WS-Addressing's default.
fn request_action(op: &Operation) -> String {
    if op.soap_action.is_empty() {
        op.default_action("Request")
    } else {
        op.soap_action.clone()
    }
}

/// The text of `LocalEnvironment.Destination.SOAP.Request.WSA.<name>`, the flow's override of
/// an addressing property.
fn wsa_override(le: &mut Tree, name: &str) -> Result<Option<String>, NodeError> {
    let r = le.root();
    Ok(le
        .path(r, &["Destination", "SOAP", "Request", "WSA", name])?
        .and_then(|u| le.value_bytes(u))
        .map(|b| String::from_utf8_lossy(b).trim().to_string())
        .filter(|s| !s.is_empty()))
}

/// `LocalEnvironment.WrittenDestination.SOAP.Request`: where the request went and its MessageID.
fn written_destination(le: &mut Tree, url: &str, message_id: &str) -> Result<(), NodeError> {
    let r = le.root();
    let w = folder(le, r, "WrittenDestination")?;
    let s = folder(le, w, "SOAP")?;
    let req = folder(le, s, "Request")?;
    let t = folder(le, req, "Transport")?;
    let h = folder(le, t, "HTTP")?;
    set_field(le, h, "WebServiceURL", url)?;
    let a = folder(le, req, "WSA")?;
    set_field(le, a, "MessageID", message_id)
}

impl SoapAsyncRequest {
    fn client(&self) -> Result<SoapClient, NodeError> {
        self.client
            .get_or_init(|| new_client().map_err(|e| e.to_string()))
            .clone()
            .map_err(NodeError::recoverable)
    }
}

impl Node for SoapAsyncRequest {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let reply_to = self.pairing.reply_to(&self.router).ok_or_else(|| {
            NodeError::recoverable(format!(
                "no SOAPAsyncResponse node with unique_identifier `{}` is running in this server \
                 (or the HTTP listener it receives replies on is not up yet)",
                self.unique_id
            ))
        })?;
        let url = url_override(msg)?.unwrap_or_else(|| self.url.clone());
        let le = &mut msg.local_environment;
        let message_id = wsa_override(le, "MessageID")?.unwrap_or_else(wsa::new_message_id);
        let addressing = Addressing {
            message_id: Some(message_id.clone()),
            action: Some(wsa_override(le, "Action")?.unwrap_or_else(|| self.action.clone())),
            to: Some(wsa_override(le, "To")?.unwrap_or_else(|| url.clone())),
            // The product ignores a ReplyTo the flow sets: the reply must reach the pair.
            reply_to: Some(reply_to),
            ..Addressing::default()
        };
        let context = user_context(le, "SOAP")?;
        let mtom = MtomProps {
            allow: self.allow_mtom,
            elements: &self.binary_elements,
        };
        let (body, headers) = request_body(
            msg,
            &self.op,
            self.validator.as_deref(),
            Some(&mtom),
            |t, id| wsa::write_request(t, id, &addressing).map_err(NodeError::from),
        )?;
        let runtime = self.runtime.clone().ok_or_else(|| {
            NodeError::recoverable(
                "no runtime to call the service on (this is a bug, please report it)",
            )
        })?;
        let client = self.client()?;
        // Recorded before sending: the reply can arrive before the acknowledgement.
        self.pairing.expect(
            message_id.clone(),
            InFlight::new(context, url.clone(), self.timeout),
            &runtime,
        );
        let answer = match runtime.block_on(post(&client, &url, &headers, body, self.timeout)) {
            Ok(a) => a,
            Err(e) => {
                self.pairing.take(&message_id);
                return Err(call_error(e));
            }
        };
        // 202 Accepted is the acknowledgement, whatever body comes with it.
        let answered = !answer.body.is_empty()
            && answer.status != 202
            && (answer.status < 300 || answer.status == 500);
        if answered {
            // A service that does not call back answers here: its answer is the reply. When it
            // both called back and answered, the first to arrive is processed.
            if let Some(request) = self.pairing.take(&message_id) {
                self.pairing.deliver(Delivery::Answer {
                    message_id: message_id.clone(),
                    request,
                    status: answer.status,
                    headers: answer.headers,
                    body: answer.body,
                });
            }
        } else if answer.status >= 300 {
            self.pairing.take(&message_id);
            return Err(NodeError::new(
                ExceptionKind::Socket,
                3151,
                format!(
                    "{url} refused the request with status {}: {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.body[..answer.body.len().min(200)])
                ),
            ));
        }
        written_destination(&mut msg.local_environment, &url, &message_id)?;
        ctx.propagate(SoapAsyncRequestOutput::Out, msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_unique_identifier_refuses_a_slash() {
        assert!(check_unique_identifier("a/b").is_err());
        assert!(check_unique_identifier("").is_err());
        assert!(check_unique_identifier("orders-1.v2_x").is_ok());
    }
}
