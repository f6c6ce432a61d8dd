//! SOAPRequest: calls an operation of a SOAP service described by a WSDL in the project and
//! continues with its response in the SOAP domain; a fault response goes to `fault`.
//!
//! The call blocks the flow instance's thread, as the product's node does, while the I/O runs
//! on the server's runtime over pooled, kept-alive connections.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, terminals,
};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};
use sluice_nodes_core::validation::{ValidationProps, Validator};
use sluice_parsers::soap::{self, SoapParser, SoapVersion, fault};
use sluice_tree::Position;

use crate::attachments;
use crate::client::{Answer, CallError, SoapClient, new_client, post};
use crate::envelope::body_as_soap;
use crate::input::choose_binding;
use crate::mtom::{self, Mtom};
use crate::must_understand::{self, Understood};
use crate::validation::{check_body, wsdl_validator};
use crate::wsdl::{Operation, Wsdl};

terminals! {
    /// SOAPRequest's outputs.
    pub enum SoapRequestOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        Fault = "fault": "The service answered with a SOAP fault (the fault envelope in the SOAP domain).",
    }
}

properties! {
    /// SOAPRequest's properties.
    pub struct SoapRequestProps {
        /// The WSDL 1.1 file describing the service, relative to the project folder.
        wsdl_file: String,
        /// The operation called.
        operation: String,
        /// The SOAP binding of the operation; needed only when the WSDL has more than one.
        binding: Option<String>,
        /// The service's URL; by default the binding's `soap:address`.
        /// `LocalEnvironment.Destination.SOAP.Request.Transport.HTTP.WebServiceURL` overrides it.
        url: Option<String>,
        /// How long to wait for the whole response.
        timeout_secs: u64 = "120",
        /// The header blocks this flow processes itself, each `{namespace}localName`: a
        /// response with a block marked `mustUnderstand` for this node that is not listed here
        /// is not propagated; the node raises, naming the block.
        understood_headers: Vec<String> = "[]",
        /// The product's "Allow MTOM": the request is written as MTOM (XOP) when this node
        /// validates, the message has no `Attachment` children (those go as SwA), and Body
        /// elements the WSDL's schemas declare as base64Binary hold at least 1000 bytes.
        /// `LocalEnvironment.Destination.SOAP.Request.AllowMTOM` and `.MTOMThreshold` (bytes)
        /// override it per message. MTOM responses are read whatever this says.
        allow_mtom: bool = "false",
        /// `content_and_value` validates the request's body against the schemas of the WSDL's
        /// types before it is sent, and the response's body when it is not a fault; a
        /// violation raises, naming it (`failure_action` as on other nodes).
        ..validation: ValidationProps,
    }
}

pub static SOAP_REQUEST: NodeSpec = NodeSpec {
    type_name: "SOAPRequest",
    summary: "Calls an operation of a SOAP service described by a WSDL 1.1 in the project: the body (SOAP \
              domain, or XMLNSC put into an envelope of the binding's version) is sent with the operation's \
              SOAPAction, and the response continues in the SOAP domain. A fault response goes to `fault`; \
              a transport failure or timeout raises.",
    inputs: In::SPECS,
    outputs: SoapRequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A service that refuses the connection makes it raise",
        properties: "wsdl_file: services/echo.wsdl, operation: echo, url: 'http://127.0.0.1:1/echo', timeout_secs: 2",
        esql: "",
        input: ExampleInput::xml("<echo><text>hi</text></echo>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises("the request to http://127.0.0.1:1/echo failed"),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SoapRequestProps>(),
};

impl BuildNode for SoapRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let target = Target::resolve(
            b,
            &self.wsdl_file,
            self.binding.as_deref(),
            &self.operation,
            self.url,
        )?;
        let validator = wsdl_validator(
            &self.validation,
            &target.wsdl,
            std::iter::once(&target.op),
            b.project_dir,
        )?;
        let understood = Understood::from_property(&self.understood_headers, false)
            .map_err(|e| ConfigError::property("understood_headers", e))?;
        if self.timeout_secs == 0 {
            return Err(ConfigError::property("timeout_secs", "must be at least 1"));
        }
        Ok(NodeImpl::Process(Arc::new(SoapRequest {
            op: target.op,
            url: target.url,
            timeout: Duration::from_secs(self.timeout_secs),
            understood,
            allow_mtom: self.allow_mtom,
            binary_elements: target.wsdl.binary_elements.clone(),
            validator,
            runtime: b.services.runtime.clone(),
            client: std::sync::OnceLock::new(),
        })))
    }
}

/// The operation a request node calls and where: what SOAPRequest and SOAPAsyncRequest resolve
/// from their WSDL properties when the flow is deployed.
pub(crate) struct Target {
    pub wsdl: Wsdl,
    pub op: Operation,
    pub url: String,
}

impl Target {
    pub(crate) fn resolve(
        b: &BuildContext,
        wsdl_file: &str,
        binding: Option<&str>,
        operation: &str,
        url: Option<String>,
    ) -> Result<Target, ConfigError> {
        let wsdl = Wsdl::load(b.project_dir, wsdl_file)
            .map_err(|e| ConfigError::property("wsdl_file", e.to_string()))?;
        let binding = choose_binding(&wsdl, binding)?;
        let op = wsdl
            .operations_of(Some(&binding))
            .find(|o| o.name == operation)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = wsdl
                    .operations_of(Some(&binding))
                    .map(|o| o.name.as_str())
                    .collect();
                ConfigError::property(
                    "operation",
                    format!("binding `{binding}` has no operation `{operation}`"),
                )
                .with_hint(format!("its operations: {}", names.join(", ")))
            })?;
        let url = match url {
            Some(u) => u,
            None => wsdl
                .ports
                .iter()
                .find(|p| p.binding == binding)
                .map(|p| p.address.clone())
                .ok_or_else(|| {
                    ConfigError::property(
                        "url",
                        format!("{} gives no address for binding `{binding}`", wsdl.file),
                    )
                })?,
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::property(
                "url",
                format!("`{url}` is not an http:// or https:// URL"),
            ));
        }
        Ok(Target { wsdl, op, url })
    }
}

struct SoapRequest {
    op: Operation,
    url: String,
    timeout: Duration,
    understood: Understood,
    allow_mtom: bool,
    binary_elements: std::collections::HashSet<(String, String)>,
    validator: Option<Arc<Validator>>,
    runtime: Option<tokio::runtime::Handle>,
    client: std::sync::OnceLock<Result<SoapClient, String>>,
}

pub(crate) fn url_override(msg: &mut Message) -> Result<Option<String>, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    Ok(le
        .path(
            r,
            &[
                "Destination",
                "SOAP",
                "Request",
                "Transport",
                "HTTP",
                "WebServiceURL",
            ],
        )?
        .and_then(|u| le.value_bytes(u))
        .map(|b| String::from_utf8_lossy(b).into_owned()))
}

pub(crate) fn call_error(e: CallError) -> NodeError {
    match e {
        CallError::Timeout { .. } => {
            NodeError::new(ExceptionKind::SocketTimeout, 3162, e.to_string())
        }
        _ => NodeError::new(ExceptionKind::Socket, 3152, e.to_string()),
    }
}

impl SoapRequest {
    fn client(&self) -> Result<SoapClient, NodeError> {
        self.client
            .get_or_init(|| new_client().map_err(|e| e.to_string()))
            .clone()
            .map_err(NodeError::recoverable)
    }
}

/// A request node's MTOM settings: its `allow_mtom` and the WSDL's base64Binary elements.
pub(crate) struct MtomProps<'a> {
    pub allow: bool,
    pub elements: &'a std::collections::HashSet<(String, String)>,
}

/// The request `msg` holds for `op` as an HTTP body with its headers: the body put into an
/// envelope of the operation's version (when it is not in the SOAP domain already), validated,
/// changed by `edit` (which gets the SOAP domain element), and serialised, with any attachments
/// as multipart/related.
pub(crate) fn request_body(
    msg: &mut Message,
    op: &Operation,
    validator: Option<&Validator>,
    mtom: Option<&MtomProps<'_>>,
    edit: impl FnOnce(&mut sluice_tree::Tree, sluice_tree::NodeId) -> Result<(), NodeError>,
) -> Result<(Bytes, Vec<(String, String)>), NodeError> {
    let version = op.version;
    let soap_id = body_as_soap(msg, version)?;
    if let Some(v) = validator {
        check_body(&mut msg.root, soap_id, v)?;
    }
    edit(&mut msg.root, soap_id)?;
    // The product writes MTOM only when the node validates, as it knows the types then.
    let mtom = match mtom {
        Some(m) if validator.is_some() => {
            let (allow, threshold) =
                mtom::settings(&mut msg.local_environment, "Request", m.allow)?;
            allow.then_some(Mtom {
                elements: m.elements,
                threshold,
            })
        }
        _ => None,
    };
    let (out, multipart) = mtom::write(&mut msg.root, soap_id, version, mtom)?;
    let ct = if let Some(ct) = multipart {
        ct
    } else {
        match version {
            SoapVersion::V11 => version.content_type().to_string(),
            SoapVersion::V12 => {
                format!("{}; action=\"{}\"", version.content_type(), op.soap_action)
            }
        }
    };
    let mut headers = vec![("Content-Type".to_string(), ct)];
    if version == SoapVersion::V11 {
        headers.push(("SOAPAction".to_string(), format!("\"{}\"", op.soap_action)));
    }
    Ok((Bytes::from(out), headers))
}

/// Put the envelope of `answer` (plain, or the root part of a multipart/related body with the
/// other parts as attachments) under Root of `msg` in the SOAP domain, parsed; gives the SOAP
/// domain element. `url` names the service in errors.
pub(crate) fn attach_answer(
    msg: &mut Message,
    url: &str,
    answer: &Answer,
) -> Result<sluice_tree::NodeId, NodeError> {
    let answer_type = answer
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default();
    let (envelope, attached) = if attachments::is_related(&answer_type) {
        let r = attachments::split(&answer_type, &answer.body).map_err(|e| {
            NodeError::new(ExceptionKind::Parser, 3160, format!("{url} answered: {e}"))
        })?;
        (r.root, r.attachments)
    } else {
        (answer.body.clone(), Vec::new())
    };
    let r = msg.root.root();
    let id = soap::attach(&mut msg.root, r, envelope, SoapParser::shared());
    msg.root.expand_all(id).map_err(|e| {
        NodeError::new(
            ExceptionKind::Parser,
            3160,
            format!(
                "{url} answered with status {} and no SOAP envelope: {e}",
                answer.status
            ),
        )
    })?;
    attachments::read_into_tree(&mut msg.root, id, attached)?;
    Ok(id)
}

impl Node for SoapRequest {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let url = url_override(msg)?.unwrap_or_else(|| self.url.clone());
        let (body, headers) = request_body(
            msg,
            &self.op,
            self.validator.as_deref(),
            Some(&MtomProps {
                allow: self.allow_mtom,
                elements: &self.binary_elements,
            }),
            |_, _| Ok(()),
        )?;
        let runtime = self.runtime.clone().ok_or_else(|| {
            NodeError::recoverable(
                "no runtime to call the service on (this is a bug, please report it)",
            )
        })?;
        let client = self.client()?;
        let answer = runtime
            .block_on(post(&client, &url, &headers, body, self.timeout))
            .map_err(call_error)?;
        if answer.body.is_empty() {
            if answer.status < 300 {
                // A one-way operation's acknowledgement: the flow goes on with what it sent.
                return ctx.propagate(SoapRequestOutput::Out, msg);
            }
            return Err(NodeError::new(
                ExceptionKind::Socket,
                3151,
                format!(
                    "{url} answered with status {} and no envelope",
                    answer.status
                ),
            ));
        }
        let mut response = Message::new();
        let r = response.root.root();
        if let Some(p) = msg.root.first_child(msg.root.root())? {
            msg.root.expand_all(p)?;
            if let Some(old) = response.root.first_child(r)? {
                response.root.delete(old)?;
            }
            response
                .root
                .copy_from(&msg.root, p, r, Position::FirstChild)?;
        }
        let id = attach_answer(&mut response, &url, &answer)?;
        let version = soap::version_of(&mut response.root, id)?;
        let refused =
            must_understand::not_understood(&mut response.root, id, version, &self.understood)?;
        if !refused.is_empty() {
            return Err(NodeError::new(
                ExceptionKind::Socket,
                3151,
                format!(
                    "{url} answered with header block(s) marked mustUnderstand that this node does not understand: {} (list them in understood_headers to process them)",
                    must_understand::display(&refused)
                ),
            ));
        }
        response.local_environment = msg.local_environment.clone();
        response.exception_list = msg.exception_list.clone();
        if let Some(f) = fault::read(&mut response.root, id)? {
            if !ctx.is_wired(SoapRequestOutput::Fault) {
                return Err(NodeError::new(
                    ExceptionKind::Socket,
                    3151,
                    format!("{url} answered with a SOAP fault: {} {}", f.code, f.reason),
                ));
            }
            return ctx.propagate(SoapRequestOutput::Fault, &mut response);
        }
        if let Some(v) = &self.validator {
            check_body(&mut response.root, id, v)?;
        }
        ctx.propagate(SoapRequestOutput::Out, &mut response)
    }
}
