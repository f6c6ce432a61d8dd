//! SOAP over real sockets against the real binary, for what a project of its own shows best:
//! mustUnderstand header blocks (SOAPInput's fault, `understood_headers`, SOAPRequest refusing a
//! response).

mod common;

use std::net::TcpStream;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use common::{Response, Server, read_response, samples_dir};

const ECHO_NS: &str = "http://sluice.example/samples/echo";
const ECHO_ACTION: &str = "\"http://sluice.example/samples/echo/echo\"";
const MU_NS: &str = "urn:test:mu";

const ADDRESS_ESQL: &str = "CREATE COMPUTE MODULE MuEchoAddress
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.SOAP.Request.Transport.HTTP.WebServiceURL =
			'http://' || InputRoot.HTTPInputHeader.Host || '/mu/echo';
		RETURN TRUE;
	END;
END MODULE;
";

const FLOWS: &[(&str, &str)] = &[
    (
        "mu-echo.yaml",
        "flow: mu-echo
nodes:
  in:    { type: SOAPInput, wsdl_file: services/echo.wsdl, path: /mu/echo, understood_headers: ['{urn:test:mu}ticket'], wires: { out: [reply] } }
  reply: { type: SOAPReply }
",
    ),
    (
        "mu-plain.yaml",
        "flow: mu-plain
nodes:
  in:    { type: SOAPInput, wsdl_file: services/echo.wsdl, path: /mu/plain, wires: { out: [reply] } }
  reply: { type: SOAPReply }
",
    ),
    (
        "mu-call.yaml",
        "flow: mu-call
nodes:
  in:      { type: HTTPInput, path: /mu/call, domain: SOAP, wires: { out: [address] } }
  address: { type: Compute, module: MuEchoAddress, compute_mode: message_local_environment, wires: { out: [call] } }
  call:    { type: SOAPRequest, wsdl_file: services/echo.wsdl, operation: echo, timeout_secs: 30, wires: { out: [reply] } }
  reply:   { type: HTTPReply }
",
    ),
    (
        "mu-call-understood.yaml",
        "flow: mu-call-understood
nodes:
  in:      { type: HTTPInput, path: /mu/call-understood, domain: SOAP, wires: { out: [address] } }
  address: { type: Compute, module: MuEchoAddress, compute_mode: message_local_environment, wires: { out: [call] } }
  call:    { type: SOAPRequest, wsdl_file: services/echo.wsdl, operation: echo, timeout_secs: 30, understood_headers: ['{urn:test:mu}ticket'], wires: { out: [reply] } }
  reply:   { type: HTTPReply }
",
    ),
];

/// A project of its own: the echo WSDL served with and without declared header blocks, and
/// two consumers of it.
fn server() -> &'static Server {
    static S: OnceLock<(common::tempdir::TempDir, Server)> = OnceLock::new();
    &S.get_or_init(|| {
        let dir = common::tempdir::TempDir::new("soap-features");
        let p = dir.path();
        for sub in ["flows", "esql", "services", "models"] {
            std::fs::create_dir_all(p.join(sub)).expect("folder");
        }
        copy_samples(p, &["services/echo.wsdl"]);
        std::fs::write(p.join("esql/mu.esql"), ADDRESS_ESQL).expect("esql");
        for (name, text) in FLOWS {
            std::fs::write(p.join("flows").join(name), text).expect("flow");
        }
        std::fs::write(p.join("sluice.yaml"), "").expect("settings");
        let s = Server::start(p);
        common::stop_at_exit(&s);
        (dir, s)
    })
    .1
}

fn copy_samples(to: &Path, files: &[&str]) {
    let samples = samples_dir();
    for f in files {
        std::fs::copy(samples.join(f), to.join(f)).expect("copy");
    }
}

fn call(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let port = server().http_port;
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    std::io::Write::write_all(&mut s, head.as_bytes()).expect("write head");
    std::io::Write::write_all(&mut s, body).expect("write body");
    read_response(&mut s)
}

fn soap11(path: &str, body: &str) -> Response {
    call(
        "POST",
        path,
        &[
            ("Content-Type", "text/xml; charset=utf-8"),
            ("SOAPAction", ECHO_ACTION),
        ],
        body.as_bytes(),
    )
}

/// An echo request with the header block `<m:LOCAL>` carrying `attrs`.
fn with_block(local: &str, attrs: &str, text: &str) -> String {
    format!(
        concat!(
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:e="{ns}" xmlns:m="{mu}">"#,
            "<soapenv:Header><m:{local} {attrs}>t-1</m:{local}></soapenv:Header>",
            "<soapenv:Body><e:echo><e:text>{text}</e:text></e:echo></soapenv:Body></soapenv:Envelope>"
        ),
        ns = ECHO_NS,
        mu = MU_NS,
        local = local,
        attrs = attrs,
        text = text
    )
}

#[test]
fn soap_input_answers_a_block_it_does_not_understand_with_a_must_understand_fault() {
    let r = soap11(
        "/mu/plain",
        &with_block("ticket", r#"soapenv:mustUnderstand="1""#, "refused"),
    );
    let t = r.text();
    assert_eq!(r.status, 500, "{t}");
    assert!(
        t.contains("<faultcode>soapenv:MustUnderstand</faultcode>"),
        "{t}"
    );
    assert!(t.contains("{urn:test:mu}ticket"), "{t}");
    assert!(!t.contains("refused"), "the flow did not run: {t}");
}

#[test]
fn soap_input_runs_the_flow_when_the_block_is_optional_or_for_another_actor() {
    for attrs in [
        r#"soapenv:mustUnderstand="0""#,
        r#"soapenv:mustUnderstand="1" soapenv:actor="urn:somebody-else""#,
    ] {
        let r = soap11("/mu/plain", &with_block("ticket", attrs, "passed"));
        assert_eq!(r.status, 200, "{attrs}: {}", r.text());
        assert!(r.text().contains("passed"), "{}", r.text());
    }
}

#[test]
fn soap_input_runs_the_flow_when_the_block_is_in_understood_headers() {
    let r = soap11(
        "/mu/echo",
        &with_block("ticket", r#"soapenv:mustUnderstand="true""#, "understood"),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("understood"), "{}", r.text());
    let r = soap11(
        "/mu/echo",
        &with_block("other", r#"soapenv:mustUnderstand="1""#, "not this one"),
    );
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(r.text().contains("{urn:test:mu}other"), "{}", r.text());
}

#[test]
fn soap_request_raises_when_the_response_has_a_block_it_does_not_understand() {
    // The provider understands the block and echoes it back in its response.
    let req = with_block("ticket", r#"soapenv:mustUnderstand="1""#, "round trip");
    let r = call(
        "POST",
        "/mu/call",
        &[("Content-Type", "text/xml")],
        req.as_bytes(),
    );
    let t = r.text();
    assert!(r.status >= 500, "{} {t}", r.status);
    assert!(t.contains("mustUnderstand"), "{t}");
    assert!(t.contains("{urn:test:mu}ticket"), "{t}");
    let r = call(
        "POST",
        "/mu/call-understood",
        &[("Content-Type", "text/xml")],
        req.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("round trip"), "{}", r.text());
}

