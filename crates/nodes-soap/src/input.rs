//! SOAPInput: serves the operations of a WSDL binding at a path of the server's shared HTTP
//! listener, dispatching each request to its operation by SOAPAction and body element.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::http_listener::{HttpRequest, HttpResponse, HttpRouter, RequestQueue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, ExceptionKind, InputNode,
    InstanceRunner, Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec,
    Runs, Terminal, Terminals, properties,
};
use sluice_nodes_core::terminals::InputOutputs;
use sluice_nodes_core::validation::{ValidationProps, Validator};
use sluice_parsers::soap::fault::{Fault, FaultCode};
use sluice_parsers::soap::{self, SoapParser, SoapVersion};
use sluice_parsers::xmlnsc::field_type as xft;
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

use crate::attachments;
use crate::must_understand::{self, Understood};
use crate::pending::{PendingSoapReply, fault_response};
use crate::validation::{check_body, wsdl_validator};
use crate::wsa;
use crate::wsdl::{Operation, Port, Wsdl};

pub static SOAP_INPUT: NodeSpec = NodeSpec {
    type_name: "SOAPInput",
    summary: "Serves the operations of a WSDL 1.1 SOAP binding (`services/NAME.wsdl` in the project) at a path \
              of the server's HTTP listener. Each request is dispatched to its operation by SOAPAction and \
              body element and parsed in the SOAP domain, with `SOAP.Context` naming the operation; the request \
              stays open until a SOAPReply answers it. `GET path?wsdl` serves the WSDL with its address \
              rewritten to this endpoint; malformed requests and failed flows are answered with SOAP faults.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A request for the echo operation starts the flow with the envelope in the SOAP domain",
        properties: "wsdl_file: services/echo.wsdl, path: /echo",
        // The WSDL is `EXAMPLE_WSDL`, the samples' SOAP Echo service.
        esql: "",
        input: ExampleInput::xml("<echo><text>hi</text></echo>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<echo><text>hi</text></echo>")]),
        runs: Runs::No("only an HTTP request to the server's listener starts it."),
    }],
    builder: NodeBuilder::of::<SoapInputProps>(),
};

properties! {
    /// SOAPInput's properties.
    pub struct SoapInputProps {
        /// The WSDL 1.1 file, relative to the project folder (`services/NAME.wsdl`); read with
        /// the files it imports when the flow is deployed.
        wsdl_file: String,
        /// The URL path served, such as `/services/echo` (the product's "path suffix for URL").
        path: String,
        /// The SOAP binding whose operations are served; needed only when the WSDL has more
        /// than one.
        binding: Option<String>,
        /// Whether WS-Addressing headers are processed: the request's MessageID, ReplyTo and
        /// Action go to `LocalEnvironment.Destination.SOAP.Reply.WSA`, and SOAPReply answers with
        /// RelatesTo, sending the reply to a non-anonymous ReplyTo address.
        use_wsa: bool = "false",
        /// The header blocks this flow processes itself, each `{namespace}localName`: a request
        /// with a block marked `mustUnderstand` for this node that is not listed here (nor a
        /// WS-Addressing block when `use_wsa` is on) is answered with a MustUnderstand fault
        /// and the flow does not run.
        understood_headers: Vec<String> = "[]",
        /// `content_and_value` validates each request's body against the schemas of the WSDL's
        /// types (a violation is answered with a Client fault naming it, before the flow runs)
        /// and the reply SOAPReply sends for it (a violation fails the flow: a Server fault);
        /// `failure_action` says what a violation does, as on other nodes.
        ..validation: ValidationProps,
    }
}

struct SoapInput {
    flow: String,
    label: String,
    path: String,
    router: Arc<HttpRouter>,
    queue: Arc<RequestQueue>,
    owner: u64,
    wsdl: Arc<Wsdl>,
    port: Option<Port>,
    version: SoapVersion,
    operations: Vec<Operation>,
    use_wsa: bool,
    understood: Understood,
    validator: Option<Arc<Validator>>,
    binary_elements: Arc<std::collections::HashSet<(String, String)>>,
    /// Numbers the requests of this node, for `ReplyIdentifier`.
    next_id: std::sync::atomic::AtomicU64,
}

impl BuildNode for SoapInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        build_soap_input(self, b)
    }

    fn claims(&self) -> Vec<String> {
        vec![format!("HTTP path {}", self.path)]
    }
}

fn build_soap_input(c: SoapInputProps, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    if !c.path.starts_with('/') {
        return Err(
            ConfigError::property("path", format!("`{}` is not a URL path", c.path))
                .with_hint("paths start with `/`"),
        );
    }
    let wsdl = Wsdl::load(b.project_dir, &c.wsdl_file)
        .map_err(|e| ConfigError::property("wsdl_file", e.to_string()))?;
    let binding = choose_binding(&wsdl, c.binding.as_deref())?;
    let operations: Vec<Operation> = wsdl.operations_of(Some(&binding)).cloned().collect();
    let port = wsdl.ports.iter().find(|p| p.binding == binding).cloned();
    let version = operations.first().map_or(SoapVersion::V11, |o| o.version);
    let validator = wsdl_validator(&c.validation, &wsdl, &operations, b.project_dir)?;
    let understood = Understood::from_property(&c.understood_headers, c.use_wsa)
        .map_err(|e| ConfigError::property("understood_headers", e))?;
    let services = b.services;
    let (queue, owner) = services.http.queue();
    Ok(NodeImpl::Input(Arc::new(SoapInput {
        flow: b.flow.to_string(),
        label: b.label.to_string(),
        path: c.path,
        router: Arc::clone(&services.http),
        queue,
        owner,
        binary_elements: Arc::new(wsdl.binary_elements.clone()),
        wsdl: Arc::new(wsdl),
        port,
        version,
        operations,
        use_wsa: c.use_wsa,
        understood,
        validator,
        next_id: std::sync::atomic::AtomicU64::new(1),
    })))
}

/// The binding named by the `binding` property, or the WSDL's only SOAP binding.
pub(crate) fn choose_binding(wsdl: &Wsdl, wanted: Option<&str>) -> Result<String, ConfigError> {
    let mut names: Vec<&str> = wsdl.operations.iter().map(|o| o.binding.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    match wanted {
        Some(w) if names.contains(&w) => Ok(w.to_string()),
        Some(w) => Err(ConfigError::property(
            "binding",
            format!("{} has no SOAP binding `{w}` with operations", wsdl.file),
        )
        .with_hint(format!("its SOAP bindings: {}", names.join(", ")))),
        None => match names.as_slice() {
            [one] => Ok(one.to_string()),
            [] => Err(ConfigError::property(
                "wsdl_file",
                format!(
                    "{} has no SOAP 1.1 or 1.2 binding with operations",
                    wsdl.file
                ),
            )),
            many => Err(ConfigError::property(
                "binding",
                format!(
                    "{} has several SOAP bindings: {}; name one",
                    wsdl.file,
                    many.join(", ")
                ),
            )),
        },
    }
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a [u8]> {
    req.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_ref())
}

/// The SOAPAction of a request: the SOAP 1.1 header, or SOAP 1.2's `action` media type parameter.
fn soap_action(req: &HttpRequest) -> String {
    if let Some(a) = header(req, "soapaction") {
        return String::from_utf8_lossy(a)
            .trim()
            .trim_matches('"')
            .to_string();
    }
    let ct = String::from_utf8_lossy(header(req, "content-type").unwrap_or_default()).into_owned();
    ct.split(';')
        .filter_map(|p| p.trim().strip_prefix("action="))
        .map(|a| a.trim_matches('"').to_string())
        .next()
        .unwrap_or_default()
}

fn is_wsdl_query(query: &str) -> bool {
    query
        .split('&')
        .any(|p| p.eq_ignore_ascii_case("wsdl") || p.to_ascii_lowercase().starts_with("wsdl="))
}

/// The file a `?xsd=NAME` query asks for, percent-decoded.
fn xsd_query(query: &str) -> Option<String> {
    query
        .split('&')
        .find_map(|p| p.strip_prefix("xsd="))
        .map(sluice_openapi::percent_decode)
}

/// The first element of the Body of the SOAP domain element `soap`.
fn body_element(tree: &mut Tree, soap: NodeId) -> Result<Option<(String, String)>, NodeError> {
    let Some(body) = tree.child_named(soap, None, b"Body", 0)? else {
        return Ok(None);
    };
    for c in tree.children(body)? {
        let t = tree.field_type(c);
        if t == xft::FOLDER || t == xft::FIELD || t == xft::CDATA_FIELD {
            return Ok(Some((
                String::from_utf8_lossy(tree.namespace_bytes(c)).into_owned(),
                String::from_utf8_lossy(tree.name_bytes(c)).into_owned(),
            )));
        }
    }
    Ok(None)
}

impl SoapInput {
    fn endpoint(&self, req: &HttpRequest) -> String {
        let host = header(req, "host").map_or_else(
            || "localhost".to_string(),
            |h| String::from_utf8_lossy(h).into_owned(),
        );
        format!("http://{host}{}", self.path)
    }

    fn serve_get(&self, req: HttpRequest) {
        let resp = if let Some(name) = xsd_query(&req.query) {
            match self.wsdl.imported_file(&name, &self.endpoint(&req)) {
                Some(text) => HttpResponse {
                    status: 200,
                    headers: vec![(
                        "Content-Type".into(),
                        Bytes::from_static(b"text/xml; charset=utf-8"),
                    )],
                    body: Bytes::from(text),
                },
                None => HttpResponse::error(
                    404,
                    format!("{} imports no file named `{name}`", self.wsdl.file),
                ),
            }
        } else if is_wsdl_query(&req.query) {
            let text = self.wsdl.with_address(&self.endpoint(&req));
            HttpResponse {
                status: 200,
                headers: vec![(
                    "Content-Type".into(),
                    Bytes::from_static(b"text/xml; charset=utf-8"),
                )],
                body: Bytes::from(text),
            }
        } else {
            HttpResponse::error(
                405,
                format!(
                    "{} takes SOAP requests by POST; GET {}?wsdl for its WSDL",
                    self.path, self.path
                ),
            )
        };
        let _ = req.reply.send(resp);
    }

    fn dispatch(&self, action: &str, body: Option<&(String, String)>) -> Option<&Operation> {
        if !action.is_empty()
            && let Some(op) = self.operations.iter().find(|o| o.soap_action == action)
        {
            return Some(op);
        }
        let body = body?;
        self.operations
            .iter()
            .find(|o| o.request_element.as_ref() == Some(body))
    }

    fn fill_context(&self, tree: &mut Tree, soap: NodeId, op: &Operation) -> Result<(), NodeError> {
        let Some(ctx) = tree.child_named(soap, None, b"Context", 0)? else {
            return Ok(());
        };
        let port = self.port.as_ref();
        let attrs = [
            ("operation", op.name.as_str()),
            ("portType", op.port_type.as_str()),
            ("portTypeNamespace", op.port_type_ns.as_str()),
            ("port", port.map_or("", |p| p.name.as_str())),
            ("service", port.map_or("", |p| p.service.as_str())),
            ("fileName", self.wsdl.file.as_str()),
            (
                "operationType",
                if op.one_way {
                    "ONE_WAY"
                } else {
                    "REQUEST_RESPONSE"
                },
            ),
        ];
        for (name, v) in attrs {
            let n = tree.alloc_text(name.as_bytes());
            let v = tree.alloc_text(v.as_bytes());
            // Built as the parser builds, so that an untouched envelope still goes back as it came.
            tree.push_parsed(ctx, xft::ATTRIBUTE, Text::EMPTY, n, Value::Character(v));
        }
        Ok(())
    }

    fn handle(&self, runner: &mut dyn InstanceRunner, req: HttpRequest, id: u64) {
        runner.record_input_bytes(req.body.len() as u64);
        if req.method == "GET" {
            return self.serve_get(req);
        }
        if req.method != "POST" {
            let _ = req
                .reply
                .send(HttpResponse::error(405, "SOAP requests are sent by POST"));
            return;
        }
        let raw_ct =
            String::from_utf8_lossy(header(&req, "content-type").unwrap_or_default()).into_owned();
        let related = attachments::is_related(&raw_ct);
        let mut transport_version = if raw_ct.to_ascii_lowercase().contains("application/soap+xml")
        {
            SoapVersion::V12
        } else {
            SoapVersion::V11
        };
        let action = soap_action(&req);
        let mut msg = Message::new();
        let prepared = http_header_tree(&mut msg.root, &req);
        let HttpRequest { body, reply, .. } = req;
        // SOAP with Attachments: the envelope is the root part; the others join the tree below.
        let (envelope, attached) = if related {
            match attachments::split(&raw_ct, &body) {
                Ok(r) => {
                    transport_version = r.version;
                    (r.root, r.attachments)
                }
                Err(e) => {
                    let f = Fault::new(FaultCode::Client, transport_version, e);
                    let _ = reply.send(fault_response(transport_version, &f, None));
                    return;
                }
            }
        } else {
            (body, Vec::new())
        };
        let r = msg.root.root();
        let soap_id = soap::attach(&mut msg.root, r, envelope, SoapParser::shared());
        // The envelope is read now: a malformed request is the client's fault, answered before
        // any flow logic runs.
        if let Err(e) = prepared.and_then(|_| msg.root.expand_all(soap_id).map_err(NodeError::from))
        {
            let f = Fault::new(FaultCode::Client, transport_version, e.exception.describe());
            let _ = reply.send(fault_response(transport_version, &f, None));
            return;
        }
        if let Err(e) = attachments::read_into_tree(&mut msg.root, soap_id, attached) {
            let f = Fault::new(FaultCode::Client, transport_version, e.to_string());
            let _ = reply.send(fault_response(transport_version, &f, None));
            return;
        }
        let version = soap::version_of(&mut msg.root, soap_id).unwrap_or(transport_version);
        if version != self.version {
            let f = Fault::new(
                FaultCode::VersionMismatch,
                version,
                format!("this service takes SOAP {} envelopes", self.version.word()),
            );
            let _ = reply.send(fault_response(version, &f, None));
            return;
        }
        match must_understand::not_understood(&mut msg.root, soap_id, version, &self.understood) {
            Ok(names) if names.is_empty() => {}
            Ok(names) => {
                let _ = reply.send(HttpResponse {
                    status: 500,
                    headers: vec![(
                        "Content-Type".into(),
                        Bytes::from_static(version.content_type().as_bytes()),
                    )],
                    body: Bytes::from(must_understand::fault_envelope(version, &names)),
                });
                return;
            }
            Err(e) => {
                let f = Fault::new(FaultCode::Client, version, e.to_string());
                let _ = reply.send(fault_response(version, &f, None));
                return;
            }
        }
        let first = body_element(&mut msg.root, soap_id).ok().flatten();
        let Some(op) = self.dispatch(&action, first.as_ref()) else {
            let (ns, local) = first.unwrap_or_default();
            let f = Fault::new(
                FaultCode::Client,
                version,
                format!(
                    "no operation of {} matches SOAPAction '{action}' or body element {{{ns}}}{local}",
                    self.wsdl.file
                ),
            );
            let _ = reply.send(fault_response(version, &f, None));
            return;
        };
        if let Some(v) = &self.validator
            && let Err(mut e) = check_body(&mut msg.root, soap_id, v)
        {
            e.exception.label.clone_from(&self.label);
            let f = Fault::new(FaultCode::Client, version, e.exception.describe());
            let detail = crate::pending::exception_detail(&e.exception);
            let _ = reply.send(fault_response(version, &f, Some(&detail)));
            return;
        }
        let mut inv = Invocation::new();
        let addressing = if self.use_wsa {
            wsa::read(&mut msg.root, soap_id).ok().flatten()
        } else {
            None
        };
        let prepared = self
            .fill_context(&mut msg.root, soap_id, op)
            .and_then(|_| local_environment(&mut msg.local_environment, id, addressing.as_ref()));
        if let Err(e) = prepared {
            let f = Fault::new(FaultCode::Server, version, e.exception.describe());
            let _ = reply.send(fault_response(version, &f, None));
            return;
        }
        let pending = if op.one_way {
            // A one-way operation is acknowledged at once; nothing answers it later.
            let _ = reply.send(HttpResponse {
                status: 202,
                headers: Vec::new(),
                body: Bytes::new(),
            });
            None
        } else {
            Some(PendingSoapReply {
                sender: reply,
                version,
                addressing,
                reply_action: reply_action(op),
                validator: self.validator.clone(),
                binary_elements: self
                    .validator
                    .as_ref()
                    .map(|_| Arc::clone(&self.binary_elements)),
            })
        };
        if let Some(p) = pending {
            inv.unit_of_work.join(PendingSoapReply::KEY, p);
        }
        let result = match runner.invoke(&mut inv, InputOutputs::Out.into(), &mut msg) {
            Ok(()) => Ok(()),
            Err(e) => self.input_failed(runner, &mut inv, &mut msg, e),
        };
        let pending = inv
            .unit_of_work
            .leave::<PendingSoapReply>(PendingSoapReply::KEY);
        match result {
            Ok(()) => {
                let committed = inv.unit_of_work.commit();
                if let Some(p) = pending {
                    let reason = match committed {
                        Err(e) => format!("the unit of work failed to commit: {e}"),
                        Ok(()) => format!(
                            "flow '{}' completed without replying (no SOAPReply node was reached)",
                            self.flow
                        ),
                    };
                    p.fault(&Fault::new(FaultCode::Server, version, reason), None);
                }
            }
            Err(e) => {
                inv.unit_of_work.rollback();
                tracing::warn!(error = %e, flow = %self.flow, "Message processing failed.");
                if let Some(p) = pending {
                    let f = Fault::new(
                        fault_code_of(e.exception.kind),
                        version,
                        e.exception.describe(),
                    );
                    p.fault(&f, Some(&crate::pending::exception_detail(&e.exception)));
                }
            }
        }
    }

    /// Send `msg` with the ExceptionList to `catch` if it is wired; otherwise give the error back.
    fn input_failed(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut Message,
        mut e: NodeError,
    ) -> Result<(), NodeError> {
        let terminal: Terminal = InputOutputs::Catch.into();
        if !runner.is_wired(terminal) {
            if e.exception.label.is_empty() {
                e.exception.label.clone_from(&self.label);
            }
            return Err(e);
        }
        e.exception.write_to(&mut msg.exception_list)?;
        runner.invoke(inv, terminal, msg)
    }
}

/// The Action of the operation's reply: WS-Addressing's default, `<input action>Response`.
fn reply_action(op: &Operation) -> String {
    if op.soap_action.is_empty() {
        op.default_action("Response")
    } else {
        format!("{}Response", op.soap_action)
    }
}

/// `Root.Properties` and `Root.HTTPInputHeader`, as HTTPInput writes them.
pub(crate) fn http_header_tree(root: &mut Tree, req: &HttpRequest) -> Result<(), NodeError> {
    let r = root.root();
    if let Some(p) = root.first_child(r)? {
        root.create_last_child(
            p,
            field_type::NAME_VALUE,
            Text::from_static("Encoding"),
            Value::Integer(546),
        )?;
        root.create_last_child(
            p,
            field_type::NAME_VALUE,
            Text::from_static("CodedCharSetId"),
            Value::Integer(1208),
        )?;
        let ct = header(req, "content-type").map(|v| root.alloc_text(v));
        if let Some(t) = ct {
            root.create_last_child(
                p,
                field_type::NAME_VALUE,
                Text::from_static("ContentType"),
                Value::Character(t),
            )?;
        }
    }
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

/// `LocalEnvironment.Destination.SOAP.Reply`: the reply identifier and the request's
/// WS-Addressing properties.
fn local_environment(
    le: &mut Tree,
    id: u64,
    wsa: Option<&wsa::Addressing>,
) -> Result<(), NodeError> {
    let r = le.root();
    let d = le.create_last_child(
        r,
        field_type::NAME,
        Text::from_static("Destination"),
        Value::Null,
    )?;
    let s = le.create_last_child(d, field_type::NAME, Text::from_static("SOAP"), Value::Null)?;
    let reply =
        le.create_last_child(s, field_type::NAME, Text::from_static("Reply"), Value::Null)?;
    let hex = format!("{id:016X}");
    let t = le.alloc_text(hex.as_bytes());
    le.create_last_child(
        reply,
        field_type::NAME_VALUE,
        Text::from_static("ReplyIdentifier"),
        Value::Character(t),
    )?;
    if let Some(a) = wsa {
        let w = le.create_last_child(
            reply,
            field_type::NAME,
            Text::from_static("WSA"),
            Value::Null,
        )?;
        for (name, v) in [
            ("MessageID", &a.message_id),
            ("Action", &a.action),
            ("To", &a.to),
            ("ReplyTo", &a.reply_to),
            ("FaultTo", &a.fault_to),
        ] {
            if let Some(v) = v {
                let t = le.alloc_text(v.as_bytes());
                le.create_last_child(
                    w,
                    field_type::NAME_VALUE,
                    Text::from_static(name),
                    Value::Character(t),
                )?;
            }
        }
    }
    Ok(())
}

impl InputNode for SoapInput {
    fn start(&self) {
        self.queue.open();
        self.router
            .register(&self.path, Arc::clone(&self.queue), self.owner);
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        loop {
            match self.queue.pop(Duration::from_millis(100)) {
                Some(req) => {
                    let id = self
                        .next_id
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    self.handle(runner, req, id);
                }
                None if runner.stop().is_stopped() => return,
                None => {}
            }
        }
    }

    fn stopped(&self) {
        self.router.unregister(&self.path, self.owner);
        for req in self.queue.close() {
            let f = Fault::new(
                FaultCode::Server,
                self.version,
                format!("flow '{}' is stopping", self.flow),
            );
            let mut resp = fault_response(self.version, &f, None);
            resp.status = 503;
            let _ = req.reply.send(resp);
        }
    }
}

/// The fault class of a flow's exception: a parser's failure is the client's, anything else
/// the service's.
pub(crate) fn fault_code_of(kind: ExceptionKind) -> FaultCode {
    match kind {
        ExceptionKind::Parser => FaultCode::Client,
        _ => FaultCode::Server,
    }
}
