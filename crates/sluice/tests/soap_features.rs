//! SOAP over real sockets against the real binary, for what a project of its own shows best:
//! mustUnderstand header blocks (SOAPInput's fault, `understood_headers`, SOAPRequest refusing a
//! response), `?xsd=` serving of a WSDL's imported files, and MTOM written by SOAPReply and
//! SOAPRequest.

mod common;

use std::path::Path;
use std::sync::OnceLock;

use common::{Response, Server, call_at, samples_dir};

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

/// A service split over files, as generators write them: the concrete WSDL imports the
/// abstract one, whose types import a schema file, which includes another.
const SPLIT_FILES: &[(&str, &str)] = &[
    (
        "services/parts.wsdl",
        r#"<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="urn:test:parts" xmlns:tns="urn:test:parts"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/">
  <wsdl:import namespace="urn:test:parts" location="parts-abstract.wsdl"/>
  <wsdl:binding name="PartsBinding" type="tns:PartsPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="lookup">
      <soap:operation soapAction="urn:test:parts/lookup"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input>
      <wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="PartsService">
    <wsdl:port name="PartsPort" binding="tns:PartsBinding">
      <soap:address location="http://localhost:7800/parts"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>
"#,
    ),
    (
        "services/parts-abstract.wsdl",
        r#"<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="urn:test:parts" xmlns:tns="urn:test:parts" xmlns:p="urn:test:parts:types"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <wsdl:types>
    <xsd:schema targetNamespace="urn:test:parts:wrapper">
      <xsd:import namespace="urn:test:parts:types" schemaLocation="../models/parts.xsd"/>
    </xsd:schema>
  </wsdl:types>
  <wsdl:message name="lookupRequest"><wsdl:part name="parameters" element="p:lookup"/></wsdl:message>
  <wsdl:message name="lookupResponse"><wsdl:part name="parameters" element="p:lookup"/></wsdl:message>
  <wsdl:portType name="PartsPortType">
    <wsdl:operation name="lookup">
      <wsdl:input message="tns:lookupRequest"/>
      <wsdl:output message="tns:lookupResponse"/>
    </wsdl:operation>
  </wsdl:portType>
</wsdl:definitions>
"#,
    ),
    (
        "models/parts.xsd",
        r#"<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema targetNamespace="urn:test:parts:types" xmlns:xsd="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xsd:include schemaLocation="parts-common.xsd"/>
  <xsd:element name="lookup">
    <xsd:complexType><xsd:sequence><xsd:element name="code" type="xsd:string"/></xsd:sequence></xsd:complexType>
  </xsd:element>
</xsd:schema>
"#,
    ),
    (
        "models/parts-common.xsd",
        r#"<?xml version="1.0" encoding="UTF-8"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <xsd:simpleType name="PartCode"><xsd:restriction base="xsd:string"/></xsd:simpleType>
</xsd:schema>
"#,
    ),
];

/// The provider names the Content-Type its request came in, so that a test sees whether the
/// consumer sent MTOM; the consumer calls the provider of its own server.
const FILES_ESQL: &str = "CREATE COMPUTE MODULE FilesMark
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputRoot.SOAP.Body.*:upload.*:name = COALESCE(InputRoot.HTTPInputHeader.\"Content-Type\", InputRoot.HTTPInputHeader.\"content-type\");
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FilesLowThreshold
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.SOAP.Reply.AllowMTOM = TRUE;
		SET OutputLocalEnvironment.Destination.SOAP.Reply.MTOMThreshold = 10;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE FilesAddress
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputLocalEnvironment = InputLocalEnvironment;
		SET OutputLocalEnvironment.Destination.SOAP.Request.Transport.HTTP.WebServiceURL =
			'http://' || InputRoot.HTTPInputHeader.Host || '/files';
		RETURN TRUE;
	END;
END MODULE;
";

const FLOWS: &[(&str, &str)] = &[
    (
        "files.yaml",
        "flow: files
nodes:
  in:    { type: SOAPInput, wsdl_file: services/files.wsdl, path: /files, validation: content_and_value, wires: { out: [mark] } }
  mark:  { type: Compute, module: FilesMark, wires: { out: [reply] } }
  reply: { type: SOAPReply, allow_mtom: true }
",
    ),
    (
        "files-low.yaml",
        "flow: files-low
nodes:
  in:    { type: SOAPInput, wsdl_file: services/files.wsdl, path: /files-low, validation: content_and_value, wires: { out: [low] } }
  low:   { type: Compute, module: FilesLowThreshold, compute_mode: message_local_environment, wires: { out: [reply] } }
  reply: { type: SOAPReply }
",
    ),
    (
        "files-unvalidated.yaml",
        "flow: files-unvalidated
nodes:
  in:    { type: SOAPInput, wsdl_file: services/files.wsdl, path: /files-unvalidated, wires: { out: [reply] } }
  reply: { type: SOAPReply, allow_mtom: true }
",
    ),
    (
        "files-call.yaml",
        "flow: files-call
nodes:
  in:      { type: HTTPInput, path: /files/call, domain: XMLNSC, wires: { out: [address] } }
  address: { type: Compute, module: FilesAddress, compute_mode: message_local_environment, wires: { out: [call] } }
  call:    { type: SOAPRequest, wsdl_file: services/files.wsdl, operation: upload, timeout_secs: 30, validation: content_and_value, allow_mtom: true, wires: { out: [extract] } }
  extract: { type: SOAPExtract, wires: { out: [reply] } }
  reply:   { type: HTTPReply }
",
    ),
    (
        "parts.yaml",
        "flow: parts
nodes:
  in:    { type: SOAPInput, wsdl_file: services/parts.wsdl, path: /parts, wires: { out: [reply] } }
  reply: { type: SOAPReply }
",
    ),
    (
        "mu-echo.yaml",
        "flow: mu-echo
nodes:
  in:    { type: SOAPInput, wsdl_file: services/echo.wsdl, path: /mu/echo, understood_headers: ['{urn:test:mu}ticket'], wires: { out: [reply] } }
  reply: { type: SOAPReply }
",
    ),
    (
        "mu-echo12.yaml",
        "flow: mu-echo12
nodes:
  in:    { type: SOAPInput, wsdl_file: services/echo12.wsdl, path: /mu/echo12, wires: { out: [reply] } }
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
        // The echo service bound to SOAP 1.2.
        let echo = std::fs::read_to_string(p.join("services/echo.wsdl")).expect("echo.wsdl");
        let echo12 = echo.replace(
            "http://schemas.xmlsoap.org/wsdl/soap/",
            "http://schemas.xmlsoap.org/wsdl/soap12/",
        );
        std::fs::write(p.join("services/echo12.wsdl"), echo12).expect("echo12.wsdl");
        for (name, text) in SPLIT_FILES {
            std::fs::write(p.join(name), text).expect("service file");
        }
        std::fs::write(p.join("esql/mu.esql"), ADDRESS_ESQL).expect("esql");
        std::fs::write(p.join("esql/files.esql"), FILES_ESQL).expect("esql");
        std::fs::write(p.join("services/files.wsdl"), common::FILES_WSDL).expect("wsdl");
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
    call_at(server().http_port, method, path, headers, body)
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
fn soap_input_answers_a_12_block_it_does_not_understand_with_not_understood_headers() {
    let env = |role: &str| {
        format!(
            concat!(
                r#"<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:e="{ns}" xmlns:m="{mu}">"#,
                r#"<env:Header><m:ticket env:mustUnderstand="true" {role}>t-1</m:ticket></env:Header>"#,
                "<env:Body><e:echo><e:text>twelve</e:text></e:echo></env:Body></env:Envelope>"
            ),
            ns = ECHO_NS,
            mu = MU_NS,
            role = role
        )
    };
    let post = |body: String| {
        call(
            "POST",
            "/mu/echo12",
            &[(
                "Content-Type",
                "application/soap+xml; charset=utf-8; action=\"http://sluice.example/samples/echo/echo\"",
            )],
            body.as_bytes(),
        )
    };
    let r = post(env(
        r#"env:role="http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver""#,
    ));
    let t = r.text();
    assert_eq!(r.status, 500, "{t}");
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/soap+xml")),
        "{:?}",
        r.headers
    );
    assert!(
        t.contains("<soapenv:Value>soapenv:MustUnderstand</soapenv:Value>"),
        "{t}"
    );
    assert!(
        t.contains(r#"<soapenv:NotUnderstood qname="nu0:ticket" xmlns:nu0="urn:test:mu"/>"#),
        "{t}"
    );
    assert!(!t.contains("twelve"), "{t}");
    // A block for a role this node does not play is left alone.
    let r = post(env(r#"env:role="urn:some-other-role""#));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("twelve"), "{}", r.text());
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

fn get(path: &str) -> Response {
    call("GET", path, &[], b"")
}

/// The value of every `attr="…"` in `text`.
fn attr_values<'a>(text: &'a str, attr: &str) -> Vec<&'a str> {
    let key = format!("{attr}=\"");
    text.match_indices(&key)
        .filter_map(|(i, _)| {
            let rest = &text[i + key.len()..];
            rest.find('"').map(|e| &rest[..e])
        })
        .collect()
}

#[test]
fn wsdl_query_rewrites_imports_and_xsd_query_serves_each_file_the_wsdl_reaches() {
    let base = format!("http://127.0.0.1:{}/parts", server().http_port);
    let r = get("/parts?wsdl");
    assert_eq!(r.status, 200, "{}", r.text());
    let wsdl = r.text();
    assert_eq!(
        attr_values(&wsdl, "location"),
        vec![
            format!("{base}?xsd=services/parts-abstract.wsdl"),
            base.clone()
        ],
        "{wsdl}"
    );
    // Each file is served with its own imports rewritten, down to the last include.
    let r = get("/parts?xsd=services/parts-abstract.wsdl");
    assert_eq!(r.status, 200, "{}", r.text());
    let abs = r.text();
    assert!(
        abs.contains("<wsdl:portType name=\"PartsPortType\">"),
        "{abs}"
    );
    assert_eq!(
        attr_values(&abs, "schemaLocation"),
        vec![format!("{base}?xsd=models/parts.xsd")],
        "{abs}"
    );
    let r = get("/parts?xsd=models%2Fparts.xsd");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        attr_values(&r.text(), "schemaLocation"),
        vec![format!("{base}?xsd=models/parts-common.xsd")],
        "{}",
        r.text()
    );
    let r = get("/parts?xsd=models/parts-common.xsd");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("PartCode"), "{}", r.text());
}

#[test]
fn xsd_query_is_not_found_for_a_file_the_wsdl_does_not_reach() {
    for name in [
        "services/echo.wsdl",
        "../sluice.yaml",
        "models/../../../etc/passwd",
        "/etc/passwd",
        "services/parts.wsdl",
        "",
    ] {
        let r = get(&format!("/parts?xsd={name}"));
        assert_eq!(r.status, 404, "{name}: {}", r.text());
        assert!(!r.text().contains("root:"), "{}", r.text());
    }
}

const ZEEP_PARTS: &str = r#"
import sys
import zeep
client = zeep.Client(sys.argv[1])
print(client.service.lookup(code=sys.argv[2]))
"#;

#[test]
fn zeep_client_generated_from_a_wsdl_with_imports_calls_the_service() {
    let Some(python) = common::zeep_python() else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/parts?wsdl", server().http_port);
    let out = std::process::Command::new(python)
        .args(["-c", ZEEP_PARTS, &url, "P-42"])
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "P-42");
}

/// Bytes of every value, `n` long.
fn binary(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 256) as u8).collect()
}

fn b64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// The parts of a multipart body: (headers, content) each.
fn parts(content_type: &str, body: &[u8]) -> Vec<(String, Vec<u8>)> {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .map(|b| b.trim_matches('"').split('"').next().unwrap_or(b))
        .expect("a boundary");
    let delimiter = format!("--{boundary}");
    let at: Vec<usize> = body
        .windows(delimiter.len())
        .enumerate()
        .filter(|(_, w)| *w == delimiter.as_bytes())
        .map(|(i, _)| i)
        .collect();
    at.windows(2)
        .map(|w| {
            let part = &body[w[0] + delimiter.len() + 2..w[1] - 2];
            let split = part
                .windows(4)
                .position(|x| x == b"\r\n\r\n")
                .expect("part headers");
            (
                String::from_utf8_lossy(&part[..split]).into_owned(),
                part[split + 4..].to_vec(),
            )
        })
        .collect()
}

fn upload_envelope(name: &str, data_xml: &str) -> String {
    format!(
        concat!(
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:f="urn:test:files">"#,
            "<soapenv:Body><f:upload><f:name>{name}</f:name><f:data>{data}</f:data></f:upload></soapenv:Body></soapenv:Envelope>"
        ),
        name = name,
        data = data_xml
    )
}

#[test]
fn soap_reply_answers_an_mtom_request_with_mtom_that_decodes_to_the_same_bytes() {
    let data = binary(4096);
    let env = upload_envelope(
        "in",
        r#"<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:data%40client"/>"#,
    );
    let mut b = Vec::new();
    b.extend_from_slice(b"--MtomB\r\nContent-Type: application/xop+xml; charset=utf-8; type=\"text/xml\"\r\nContent-ID: <root@client>\r\n\r\n");
    b.extend_from_slice(env.as_bytes());
    b.extend_from_slice(b"\r\n--MtomB\r\nContent-Type: application/octet-stream\r\nContent-ID: <data@client>\r\nContent-Transfer-Encoding: binary\r\n\r\n");
    b.extend_from_slice(&data);
    b.extend_from_slice(b"\r\n--MtomB--\r\n");
    let r = call(
        "POST",
        "/files",
        &[
            (
                "Content-Type",
                "multipart/related; type=\"application/xop+xml\"; start=\"<root@client>\"; start-info=\"text/xml\"; boundary=MtomB",
            ),
            ("SOAPAction", "\"urn:test:files/upload\""),
        ],
        &b,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let ct = r.header("content-type").unwrap_or_default().to_string();
    assert!(ct.starts_with("multipart/related;"), "{ct}");
    assert!(ct.contains("type=\"application/xop+xml\""), "{ct}");
    let ps = parts(&ct, &r.body);
    assert_eq!(ps.len(), 2, "{}", r.text());
    let (root_head, root) = &ps[0];
    assert!(root_head.contains("application/xop+xml"), "{root_head}");
    let root = String::from_utf8_lossy(root);
    let href = root
        .split("href=\"cid:")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .expect("an xop:Include");
    let (part_head, content) = &ps[1];
    assert!(
        part_head.contains(&format!("Content-ID: <{href}>")),
        "{part_head} / {href}"
    );
    assert_eq!(content, &data, "the same bytes back");
    assert!(!root.contains(&b64(&data)[..64]), "not inline as well");
}

#[test]
fn soap_reply_answers_inline_when_the_content_is_below_the_threshold() {
    let small = binary(100);
    let r = call(
        "POST",
        "/files",
        &[
            ("Content-Type", "text/xml; charset=utf-8"),
            ("SOAPAction", "\"urn:test:files/upload\""),
        ],
        upload_envelope("small", &b64(&small)).as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let ct = r.header("content-type").unwrap_or_default().to_string();
    assert!(ct.starts_with("text/xml"), "{ct}");
    assert!(r.text().contains(&b64(&small)), "{}", r.text());
}

fn post_upload(path: &str, data: &[u8]) -> Response {
    call(
        "POST",
        path,
        &[
            ("Content-Type", "text/xml; charset=utf-8"),
            ("SOAPAction", "\"urn:test:files/upload\""),
        ],
        upload_envelope("n", &b64(data)).as_bytes(),
    )
}

#[test]
fn soap_reply_writes_mtom_when_the_local_environment_allows_it_and_lowers_the_threshold() {
    let data = binary(50);
    let r = post_upload("/files-low", &data);
    assert_eq!(r.status, 200, "{}", r.text());
    let ct = r.header("content-type").unwrap_or_default().to_string();
    assert!(ct.contains("application/xop+xml"), "{ct}");
    let ps = parts(&ct, &r.body);
    assert_eq!(ps.len(), 2, "{}", r.text());
    assert_eq!(ps[1].1, data);
}

#[test]
fn soap_reply_answers_inline_when_the_soap_input_does_not_validate() {
    let data = binary(5000);
    let r = post_upload("/files-unvalidated", &data);
    assert_eq!(r.status, 200, "{}", r.text());
    let ct = r.header("content-type").unwrap_or_default().to_string();
    assert!(ct.starts_with("text/xml"), "{ct}");
    assert!(r.text().contains(&b64(&data)), "{}", r.text());
}

#[test]
fn soap_request_sends_mtom_to_soap_input_and_reads_its_mtom_reply() {
    let data = binary(3000);
    let body = format!(
        r#"<f:upload xmlns:f="urn:test:files"><f:name>x</f:name><f:data>{}</f:data></f:upload>"#,
        b64(&data)
    );
    let r = call(
        "POST",
        "/files/call",
        &[("Content-Type", "text/xml")],
        body.as_bytes(),
    );
    let t = r.text();
    assert_eq!(r.status, 200, "{t}");
    // The provider saw an MTOM request...
    assert!(t.contains("multipart/related"), "{t}");
    assert!(t.contains("application/xop+xml"), "{t}");
    // ...and its MTOM reply came back to the flow as the same bytes, inline.
    assert!(t.contains(&b64(&data)), "{t}");
}
