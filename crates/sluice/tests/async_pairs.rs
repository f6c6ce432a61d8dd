//! The asynchronous request/response pairs against the real binary. SOAPAsyncRequest in one
//! flow calls SOAP services of the same server (one honouring WS-Addressing ReplyTo, one
//! answering on the connection, one that accepts and never answers), and a second flow puts
//! what its SOAPAsyncResponse node received, from which terminal, on a queue; also the
//! samples' pair calling `/samples/soap-echo`; and SOAPAsyncRequest writing MTOM. RESTAsyncRequest and RESTAsyncResponse the same
//! way, calling an OpenAPI operation served by an HTTPInput flow.

mod common;

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::tempdir::TempDir;
use common::{Response, Server, request, samples_dir};

const SETTINGS: &str = "queues:\n  - { name: ASYNC.OUT, max_depth: 1000 }\n";

const ESQL: &str = r#"
CREATE COMPUTE MODULE Target
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.SOAP.Request.Transport.HTTP.WebServiceURL =
			COALESCE(InputRoot.HTTPInputHeader."X-Target-Url",
				'http://' || InputRoot.HTTPInputHeader.Host || InputRoot.HTTPInputHeader."X-Target-Path");
		SET OutputLocalEnvironment.Destination.SOAP.Request.UserContext.requestId =
			InputRoot.HTTPInputHeader."X-Request-Id";
		SET OutputLocalEnvironment.Destination.SOAP.Request.UserContext.extra.deep = 'kept';
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE Accepted
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.accepted.messageId =
			InputLocalEnvironment.WrittenDestination.SOAP.Request.WSA.MessageID;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FromOut
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'out';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.SOAP.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.deep = InputLocalEnvironment.SOAP.Response.UserContext.extra.deep;
		SET OutputRoot.XMLNSC.r.relatesTo = InputLocalEnvironment.SOAP.Response.WSA.RelatesTo;
		SET OutputRoot.XMLNSC.r.text = InputRoot.SOAP.Body.*:echo.*:text;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FilesMark
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputRoot.SOAP.Body.*:upload.*:name = COALESCE(InputRoot.HTTPInputHeader."Content-Type", InputRoot.HTTPInputHeader."content-type");
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FromFiles
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'out';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.SOAP.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.text = InputRoot.SOAP.Body.*:upload.*:name;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FromFault
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'fault';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.SOAP.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.text = InputRoot.SOAP.Body.*:Fault.faultstring;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE RestTarget
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.REST.Request.BaseURL =
			COALESCE(InputRoot.HTTPInputHeader."X-Base-Url",
				'http://' || InputRoot.HTTPInputHeader.Host || '/rest');
		SET OutputLocalEnvironment.Destination.REST.Request.UserContext.requestId =
			InputRoot.HTTPInputHeader."X-Request-Id";
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE RestOut
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'out';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.REST.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.text = InputRoot.JSON.Data.text;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE RestError
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'error';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.REST.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.text = InputRoot.HTTPResponseHeader."X-Original-HTTP-Status-Code";
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE RestFailure
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'failure';
		SET OutputRoot.XMLNSC.r.requestId = InputLocalEnvironment.REST.Response.UserContext.requestId;
		SET OutputRoot.XMLNSC.r.text = InputExceptionList.*[1].Text;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FromFailure
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.r.terminal = 'failure';
		SET OutputRoot.XMLNSC.r.requestId =
			COALESCE(InputLocalEnvironment.SOAP.Response.UserContext.requestId, 'none');
		SET OutputRoot.XMLNSC.r.text = InputExceptionList.*[1].Text;
		RETURN TRUE;
	END;
END MODULE;
"#;

const API: &str = r#"openapi: 3.0.3
info: { title: Echo, version: "1" }
servers:
  - url: http://127.0.0.1:1/rest
paths:
  /echo:
    post:
      operationId: echo
      requestBody: { content: { application/json: { schema: { type: object } } } }
      responses: { "200": { description: the body it was sent } }
"#;

const FLOWS: &[(&str, &str)] = &[
    (
        "rest-echo",
        "flow: rest-echo\nnodes:\n  in: { type: HTTPInput, path: /rest/echo, domain: JSON, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n",
    ),
    (
        "rest-call",
        "flow: rest-call\nnodes:\n  in: { type: HTTPInput, path: /rest-call, domain: JSON, wires: { out: [target] } }\n  target: { type: Compute, module: RestTarget, compute_mode: message_local_environment, wires: { out: [send] } }\n  send: { type: RESTAsyncRequest, unique_identifier: r, api: clients/echo.yaml, operation: echo, timeout_secs: 5, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n",
    ),
    (
        "rest-receive",
        "flow: rest-receive\nnodes:\n  in: { type: RESTAsyncResponse, unique_identifier: r, domain: JSON, wires: { out: [o], error: [e], failure: [x] } }\n  o: { type: Compute, module: RestOut, wires: { out: [put] } }\n  e: { type: Compute, module: RestError, wires: { out: [put] } }\n  x: { type: Compute, module: RestFailure, wires: { out: [put] } }\n  put: { type: MQOutput, queue: ASYNC.OUT }\n",
    ),
    (
        "echo-wsa",
        "flow: echo-wsa\nnodes:\n  in: { type: SOAPInput, wsdl_file: services/echo.wsdl, path: /echo-wsa, use_wsa: true, wires: { out: [reply] } }\n  reply: { type: SOAPReply }\n",
    ),
    (
        "echo-sync",
        "flow: echo-sync\nnodes:\n  in: { type: SOAPInput, wsdl_file: services/echo.wsdl, path: /echo-sync, wires: { out: [reply] } }\n  reply: { type: SOAPReply }\n",
    ),
    (
        "black-hole",
        "flow: black-hole\nnodes:\n  in: { type: HTTPInput, path: /black-hole, domain: BLOB, wires: { out: [reply] } }\n  reply: { type: HTTPReply, status: 202 }\n",
    ),
    (
        "call",
        "flow: call\ninstances: 2\nnodes:\n  in: { type: HTTPInput, path: /call, domain: XMLNSC, wires: { out: [target] } }\n  target: { type: Compute, module: Target, compute_mode: message_local_environment, wires: { out: [send] } }\n  send: { type: SOAPAsyncRequest, unique_identifier: t, wsdl_file: services/echo.wsdl, operation: echo, timeout_secs: 2, wires: { out: [ack] } }\n  ack: { type: Compute, module: Accepted, wires: { out: [reply] } }\n  reply: { type: HTTPReply, status: 202 }\n",
    ),
    (
        "files-provider",
        "flow: files-provider\nnodes:\n  in: { type: SOAPInput, wsdl_file: services/files.wsdl, path: /files-provider, validation: content_and_value, wires: { out: [mark] } }\n  mark: { type: Compute, module: FilesMark, wires: { out: [reply] } }\n  reply: { type: SOAPReply }\n",
    ),
    (
        "call-files",
        "flow: call-files\nnodes:\n  in: { type: HTTPInput, path: /call-files, domain: XMLNSC, wires: { out: [target] } }\n  target: { type: Compute, module: Target, compute_mode: message_local_environment, wires: { out: [send] } }\n  send: { type: SOAPAsyncRequest, unique_identifier: f, wsdl_file: services/files.wsdl, operation: upload, timeout_secs: 5, validation: content_and_value, allow_mtom: true, wires: { out: [ack] } }\n  ack: { type: Compute, module: Accepted, wires: { out: [reply] } }\n  reply: { type: HTTPReply, status: 202 }\n",
    ),
    (
        "receive-files",
        "flow: receive-files\nnodes:\n  in: { type: SOAPAsyncResponse, unique_identifier: f, wires: { out: [o], failure: [x] } }\n  o: { type: Compute, module: FromFiles, wires: { out: [put] } }\n  x: { type: Compute, module: FromFailure, wires: { out: [put] } }\n  put: { type: MQOutput, queue: ASYNC.OUT }\n",
    ),
    (
        "receive",
        "flow: receive\ninstances: 2\nnodes:\n  in: { type: SOAPAsyncResponse, unique_identifier: t, wires: { out: [o], fault: [f], failure: [x] } }\n  o: { type: Compute, module: FromOut, wires: { out: [put] } }\n  f: { type: Compute, module: FromFault, wires: { out: [put] } }\n  x: { type: Compute, module: FromFailure, wires: { out: [put] } }\n  put: { type: MQOutput, queue: ASYNC.OUT }\n",
    ),
];

fn server() -> &'static Server {
    static S: OnceLock<(TempDir, Server)> = OnceLock::new();
    &S.get_or_init(|| {
        let p = TempDir::new("soap-async");
        for d in ["flows", "services", "esql", "clients"] {
            std::fs::create_dir_all(p.path().join(d)).expect("dir");
        }
        std::fs::copy(
            samples_dir().join("services/echo.wsdl"),
            p.path().join("services/echo.wsdl"),
        )
        .expect("wsdl");
        std::fs::write(p.path().join("services/files.wsdl"), common::FILES_WSDL).expect("wsdl");
        std::fs::write(p.path().join("sluice.yaml"), SETTINGS).expect("settings");
        std::fs::write(p.path().join("esql/async.esql"), ESQL).expect("esql");
        std::fs::write(p.path().join("clients/echo.yaml"), API).expect("api");
        for (name, text) in FLOWS {
            std::fs::write(p.path().join(format!("flows/{name}.yaml")), text).expect("flow");
        }
        let s = Server::start(p.path());
        common::stop_at_exit(&s);
        (p, s)
    })
    .1
}

/// The cases share one reply queue: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn qm(s: &Server) -> sluice_qm::net::Client {
    sluice_qm::net::Client::connect(&format!("127.0.0.1:{}", s.qm_port), Default::default())
        .expect("qm client")
}

/// The next message on `queue` whose body names `request_id`, skipping others a failed case left.
fn reply_for(s: &Server, queue: &str, request_id: &str, wait: Duration) -> String {
    let mut c = qm(s);
    let deadline = std::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let m = c
            .get(queue, &sluice_qm::GetOptions::new().wait(left))
            .expect("get");
        let Some(m) = m else {
            panic!("no message for {request_id} on {queue}; log:\n{}", s.log());
        };
        let text = String::from_utf8_lossy(&m.body).into_owned();
        if text.contains(&format!(">{request_id}<")) {
            return text;
        }
    }
}

/// A POST with the Host header naming the server's real address, which the flows call back on.
fn post(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let host = format!("127.0.0.1:{port}");
    let mut all = vec![("Host", host.as_str())];
    all.extend_from_slice(headers);
    request(port, "POST", path, &all, body)
}

fn call(target: (&str, &str), request_id: &str, body: &str) -> Response {
    post(
        server().http_port,
        "/call",
        &[
            ("Content-Type", "text/xml"),
            (target.0, target.1),
            ("X-Request-Id", request_id),
        ],
        body.as_bytes(),
    )
}

fn between<'a>(text: &'a str, tag: &str) -> &'a str {
    let open = format!("<{tag}>");
    let start = text.find(&open).map_or(0, |i| i + open.len());
    let end = text[start..].find('<').map_or(text.len(), |i| start + i);
    &text[start..end]
}

#[test]
fn soap_async_reply_reaches_the_response_flow_with_the_user_context_when_the_provider_calls_back() {
    let _g = serial();
    let r = call(
        ("X-Target-Path", "/echo-wsa"),
        "r-wsa",
        "<echo><text>called back</text></echo>",
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let message_id = between(&r.text(), "messageId").to_string();
    assert!(message_id.starts_with("urn:uuid:"), "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "r-wsa", Duration::from_secs(20));
    assert!(got.contains("<terminal>out</terminal>"), "{got}");
    assert!(got.contains("<text>called back</text>"), "{got}");
    assert!(got.contains("<deep>kept</deep>"), "{got}");
    assert_eq!(between(&got, "relatesTo"), message_id, "{got}");
}

#[test]
fn soap_async_answer_on_the_connection_reaches_the_response_flow_when_the_provider_ignores_reply_to()
 {
    let _g = serial();
    let r = call(
        ("X-Target-Path", "/echo-sync"),
        "r-sync",
        "<echo><text>answered at once</text></echo>",
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "r-sync", Duration::from_secs(20));
    assert!(got.contains("<terminal>out</terminal>"), "{got}");
    assert!(got.contains("<text>answered at once</text>"), "{got}");
}

#[test]
fn soap_async_request_sends_mtom_when_it_validates_and_allows_it() {
    use base64::Engine as _;
    let _g = serial();
    let data: Vec<u8> = (0..3000).map(|i| (i % 251) as u8).collect();
    let body = format!(
        r#"<f:upload xmlns:f="urn:test:files"><f:name>x</f:name><f:data>{}</f:data></f:upload>"#,
        base64::engine::general_purpose::STANDARD.encode(&data)
    );
    let r = post(
        server().http_port,
        "/call-files",
        &[
            ("Content-Type", "text/xml"),
            ("X-Target-Path", "/files-provider"),
            ("X-Request-Id", "r-mtom"),
        ],
        body.as_bytes(),
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "r-mtom", Duration::from_secs(20));
    assert!(got.contains("<terminal>out</terminal>"), "{got}");
    // The provider names the Content-Type the request came in.
    assert!(got.contains("multipart/related"), "{got}");
    assert!(got.contains("application/xop+xml"), "{got}");
}

#[test]
fn soap_async_fault_goes_to_the_fault_terminal_when_the_provider_answers_one() {
    let _g = serial();
    let fault = concat!(
        r#"<soapenv:Fault xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">"#,
        "<faultcode>soapenv:Server</faultcode><faultstring>boom</faultstring></soapenv:Fault>"
    );
    let r = call(("X-Target-Path", "/echo-wsa"), "r-fault", fault);
    assert_eq!(r.status, 202, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "r-fault", Duration::from_secs(20));
    assert!(got.contains("<terminal>fault</terminal>"), "{got}");
    assert!(got.contains("<text>boom</text>"), "{got}");
}

#[test]
fn soap_async_timeout_goes_to_the_failure_terminal_when_no_reply_comes() {
    let _g = serial();
    let r = call(
        ("X-Target-Path", "/black-hole"),
        "r-timeout",
        "<echo><text>lost</text></echo>",
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "r-timeout", Duration::from_secs(20));
    assert!(got.contains("<terminal>failure</terminal>"), "{got}");
    assert!(got.contains("within 2 seconds"), "{got}");
}

#[test]
fn soap_async_request_raises_when_the_endpoint_is_unreachable() {
    let _g = serial();
    let r = call(
        ("X-Target-Url", "http://127.0.0.1:1/echo"),
        "r-unreachable",
        "<echo><text>nowhere</text></echo>",
    );
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(
        r.text()
            .contains("the request to http://127.0.0.1:1/echo failed"),
        "{}",
        r.text()
    );
}

#[test]
fn soap_async_response_sends_a_reply_nobody_waits_for_to_failure() {
    let _g = serial();
    let s = server();
    let envelope = concat!(
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:a="http://www.w3.org/2005/08/addressing">"#,
        "<s:Header><a:RelatesTo>urn:uuid:nobody-waits</a:RelatesTo></s:Header>",
        "<s:Body><echo><text>stray</text></echo></s:Body></s:Envelope>"
    );
    let r = post(
        s.http_port,
        "/soap-async/t",
        &[("Content-Type", "text/xml")],
        envelope.as_bytes(),
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let got = reply_for(s, "ASYNC.OUT", "none", Duration::from_secs(20));
    assert!(got.contains("<terminal>failure</terminal>"), "{got}");
    assert!(got.contains("urn:uuid:nobody-waits"), "{got}");
}

fn rest_call(base_url: Option<&str>, request_id: &str, body: &str) -> Response {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("X-Request-Id", request_id),
    ];
    if let Some(b) = base_url {
        headers.push(("X-Base-Url", b));
    }
    post(server().http_port, "/rest-call", &headers, body.as_bytes())
}

#[test]
fn rest_async_response_reaches_the_response_flow_with_the_user_context() {
    let _g = serial();
    let r = rest_call(None, "rest-ok", r#"{"text":"hi rest"}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "rest-ok", Duration::from_secs(20));
    assert!(got.contains("<terminal>out</terminal>"), "{got}");
    assert!(got.contains("<text>hi rest</text>"), "{got}");
}

#[test]
fn rest_async_error_status_goes_to_the_error_terminal() {
    let _g = serial();
    let base = format!("http://127.0.0.1:{}/nowhere", server().http_port);
    let r = rest_call(Some(&base), "rest-404", r#"{"text":"lost"}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "rest-404", Duration::from_secs(20));
    assert!(got.contains("<terminal>error</terminal>"), "{got}");
    assert!(got.contains("<text>404</text>"), "{got}");
}

#[test]
fn rest_async_failure_reaches_the_response_flow_when_the_api_is_unreachable() {
    let _g = serial();
    let r = rest_call(
        Some("http://127.0.0.1:1/rest"),
        "rest-down",
        r#"{"text":"x"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let got = reply_for(server(), "ASYNC.OUT", "rest-down", Duration::from_secs(20));
    assert!(got.contains("<terminal>failure</terminal>"), "{got}");
    assert!(
        got.contains("the request to http://127.0.0.1:1/rest/echo failed"),
        "{got}"
    );
}

fn samples() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let s = Server::start(&samples_dir());
        common::stop_at_exit(&s);
        s
    })
}

#[test]
fn soap_async_sample_puts_the_echo_reply_with_the_request_id_on_its_queue() {
    let s = samples();
    let r = post(
        s.http_port,
        "/samples/soap-async",
        &[("Content-Type", "text/xml"), ("X-Request-Id", "sample-1")],
        b"<echo><text>hello async</text></echo>",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("<messageId>urn:uuid:"), "{}", r.text());
    let got = reply_for(
        s,
        "SAMPLES.SOAP.ASYNC.OUT",
        "sample-1",
        Duration::from_secs(20),
    );
    assert!(got.contains("<text>hello async</text>"), "{got}");
}
