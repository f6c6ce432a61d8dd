//! The SOAP samples over real sockets against the real binary: the echo service (dispatch,
//! `?wsdl`, faults), WS-Addressing (synchronous and to a ReplyTo address), the consumer sample
//! calling the echo service, and Python's zeep as a client generated from our `?wsdl`.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use common::{Response, Server, call_at, samples_dir};

const ECHO_NS: &str = "http://sluice.example/samples/echo";
const ECHO_ACTION: &str = "\"http://sluice.example/samples/echo/echo\"";

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let s = Server::start(&samples_dir());
        common::stop_at_exit(&s);
        s
    })
}

fn envelope(header: &str, text: &str) -> String {
    format!(
        concat!(
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:e="{ns}">"#,
            "<soapenv:Header>{header}</soapenv:Header>",
            "<soapenv:Body><e:echo><e:text>{text}</e:text></e:echo></soapenv:Body></soapenv:Envelope>"
        ),
        ns = ECHO_NS,
        header = header,
        text = text
    )
}

/// A request with the Host header naming the server's real address.
fn call(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    call_at(server().http_port, method, path, headers, body)
}

fn soap11(path: &str, action: &str, body: &str) -> Response {
    call(
        "POST",
        path,
        &[
            ("Content-Type", "text/xml; charset=utf-8"),
            ("SOAPAction", action),
        ],
        body.as_bytes(),
    )
}

#[test]
fn soap_echo_returns_the_request_envelope_when_dispatched_by_soapaction() {
    let req = envelope("", "hello");
    let r = soap11("/samples/soap-echo", ECHO_ACTION, &req);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.text(), req);
    assert!(
        r.header("Content-Type")
            .is_some_and(|c| c.starts_with("text/xml"))
    );
}

#[test]
fn soap_echo_dispatches_by_body_element_when_soapaction_is_empty() {
    let req = envelope("", "by element");
    let r = soap11("/samples/soap-echo", "\"\"", &req);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("by element"));
}

#[test]
fn soap_echo_serves_its_wsdl_with_the_endpoint_address() {
    let r = call("GET", "/samples/soap-echo?wsdl", &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let port = server().http_port;
    let want = format!(r#"location="http://127.0.0.1:{port}/samples/soap-echo""#);
    assert!(r.text().contains(&want), "{}", r.text());
    assert!(r.text().contains("wsdl:definitions"));
}

#[test]
fn soap_echo_answers_malformed_xml_with_a_client_fault() {
    let r = soap11(
        "/samples/soap-echo",
        ECHO_ACTION,
        r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><oops></soapenv:Body>"#,
    );
    assert_eq!(r.status, 500);
    let t = r.text();
    assert!(t.contains("<faultcode>soapenv:Client</faultcode>"), "{t}");
    assert!(t.contains("offset"), "{t}");
}

#[test]
fn soap_echo_answers_an_unknown_operation_with_a_client_fault() {
    let body = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><nothing/></s:Body></s:Envelope>"#;
    let r = soap11("/samples/soap-echo", "\"urn:none\"", body);
    assert_eq!(r.status, 500);
    assert!(r.text().contains("no operation"), "{}", r.text());
}

#[test]
fn soap_echo_answers_a_12_envelope_with_version_mismatch() {
    let body = r#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><x:echo xmlns:x="http://sluice.example/samples/echo"/></e:Body></e:Envelope>"#;
    let r = call(
        "POST",
        "/samples/soap-echo",
        &[("Content-Type", "application/soap+xml; charset=utf-8")],
        body.as_bytes(),
    );
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(r.text().contains("VersionMismatch"), "{}", r.text());
}

const WSA: &str = "http://www.w3.org/2005/08/addressing";

/// The seeds' SaleRequest, as `/samples/soap-wsa` (services/sale.wsdl) takes it.
fn sale(header: &str, text: &str) -> String {
    format!(
        concat!(
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="http://WssSale.miwssoap.broker.mqst.ibm.com">"#,
            "<soapenv:Header>{header}</soapenv:Header>",
            "<soapenv:Body><tns:SaleRequest><SaleEnvelope><Last>{text}</Last></SaleEnvelope></tns:SaleRequest>",
            "</soapenv:Body></soapenv:Envelope>"
        ),
        header = header,
        text = text
    )
}

fn wsa_header(message_id: &str, reply_to: &str) -> String {
    format!(
        concat!(
            r#"<wsa:MessageID xmlns:wsa="{wsa}">{id}</wsa:MessageID>"#,
            r#"<wsa:Action xmlns:wsa="{wsa}">SummerSale</wsa:Action>"#,
            r#"<wsa:ReplyTo xmlns:wsa="{wsa}"><wsa:Address>{to}</wsa:Address></wsa:ReplyTo>"#
        ),
        wsa = WSA,
        id = message_id,
        to = reply_to
    )
}

#[test]
fn soap_wsa_reply_relates_to_the_request_when_reply_to_is_anonymous() {
    let req = sale(
        &wsa_header(
            "urn:uuid:req-1",
            "http://www.w3.org/2005/08/addressing/anonymous",
        ),
        "wsa",
    );
    let r = soap11("/samples/soap-wsa", "\"SummerSale\"", &req);
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(t.contains(">urn:uuid:req-1</wsa:RelatesTo>"), "{t}");
    assert!(t.contains("<wsa:MessageID>urn:uuid:"), "{t}");
    assert!(t.contains(">SummerSaleResponse</wsa:Action>"), "{t}");
    assert!(t.contains("<Last>wsa</Last>"), "{t}");
}

#[test]
fn soap_wsa_sends_the_reply_to_a_reply_to_address_and_accepts_the_request() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let to = format!("http://127.0.0.1:{port}/replies");
    let req = sale(&wsa_header("urn:uuid:req-async", &to), "later");
    let r = soap11("/samples/soap-wsa", "\"SummerSale\"", &req);
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty());
    listener.set_nonblocking(false).expect("blocking");
    let (mut s, _) = listener.accept().expect("the reply arrives");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while !String::from_utf8_lossy(&got).contains("</soapenv:Envelope>") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let _ = std::io::Write::write_all(
        &mut s,
        b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
    );
    let t = String::from_utf8_lossy(&got);
    assert!(t.starts_with("POST /replies"), "{t}");
    assert!(t.contains(">urn:uuid:req-async</wsa:RelatesTo>"), "{t}");
    assert!(t.contains(&format!(">{to}</wsa:To>")), "{t}");
    assert!(t.contains("later"), "{t}");
}

#[test]
fn soap_consumer_calls_the_echo_service_and_returns_its_payload() {
    let body = format!(r#"<echo xmlns="{ECHO_NS}"><text>via consumer</text></echo>"#);
    let r = call(
        "POST",
        "/samples/soap-consumer",
        &[("Content-Type", "text/xml")],
        body.as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(t.contains("via consumer") && t.contains("echo"), "{t}");
    assert!(!t.contains("Envelope"), "{t}");
}

/// The seeds' SaleRequest with `lists` SaleLists in a whole SaleEnvelope, as
/// services/sale-validated.wsdl declares it; `breach` is put into the first Invoice's place of a
/// Surname when given (a second Surname breaks the schema).
fn full_sale(lists: usize, breach: Option<&str>) -> String {
    let parent = String::from_utf8(common::sale_list(lists)).expect("utf-8");
    let start = parent.find("<SaleList>").expect("a SaleList");
    let end = parent.rfind("</SaleList>").expect("a SaleList") + "</SaleList>".len();
    let mut lists_xml = parent[start..end].to_string();
    if let Some(b) = breach {
        lists_xml = lists_xml.replacen("<Surname>", &format!("{b}<Surname>"), 1);
    }
    format!(
        concat!(
            r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="http://WssSale.miwssoap.broker.mqst.ibm.com">"#,
            "<soapenv:Body><tns:SaleRequest><SaleEnvelope><Header><SaleListCount>{n}</SaleListCount></Header>",
            "{lists}<Trailer><CompletionTime>12.00.00</CompletionTime></Trailer></SaleEnvelope></tns:SaleRequest>",
            "</soapenv:Body></soapenv:Envelope>"
        ),
        n = lists,
        lists = lists_xml
    )
}

#[test]
fn soap_validate_echoes_a_request_that_matches_the_wsdls_schemas() {
    let r = soap11(
        "/samples/soap-validate",
        "\"SummerSale\"",
        &full_sale(2, None),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(t.contains("<Surname>Braithwaite1</Surname>"), "{t}");
    assert!(!t.contains("Fault"), "{t}");
}

#[test]
fn soap_validate_answers_a_request_that_breaks_the_schema_with_a_client_fault() {
    let r = soap11(
        "/samples/soap-validate",
        "\"SummerSale\"",
        &full_sale(1, Some("<Surname>Extra</Surname>")),
    );
    assert_eq!(r.status, 500, "{}", r.text());
    let t = r.text();
    assert!(t.contains("Client"), "{t}");
    assert!(
        t.contains("services/sale-validated.wsdl"),
        "the schema named: {t}"
    );
    assert!(t.contains("Surname"), "the violation named: {t}");
    assert!(t.contains("<Label>in</Label>"), "the node named: {t}");
}

#[test]
fn soap_consumer_validated_sends_a_valid_request_and_returns_the_providers_response() {
    let r = soap11(
        "/samples/soap-consumer-validated",
        "\"SummerSale\"",
        &full_sale(3, None),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    assert!(t.contains("<Surname>Braithwaite2</Surname>"), "{t}");
    assert!(t.contains("<SaleListCount>3</SaleListCount>"), "{t}");
}

#[test]
fn soap_consumer_validated_refuses_to_send_a_request_that_breaks_the_schema() {
    let r = soap11(
        "/samples/soap-consumer-validated",
        "\"SummerSale\"",
        &full_sale(1, Some("<Bogus/>")),
    );
    assert_eq!(r.status, 500, "{}", r.text());
    let t = r.text();
    // The caller's request is at fault, whichever node found it.
    assert!(t.contains("soapenv:Client"), "{t}");
    assert!(t.contains("<Label>call</Label>"), "{t}");
    assert!(t.contains("does not match the XML Schema"), "{t}");
    assert!(t.contains("Bogus"), "the violation named: {t}");
}

const BREAK_REPLY_ESQL: &str = "CREATE COMPUTE MODULE BreakReply
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		SET OutputRoot.SOAP.Body.*:SaleRequest.SaleEnvelope.Header.SaleListCount = 'many';
		RETURN TRUE;
	END;
END MODULE;
";

const BREAK_REPLY_FLOW: &str = "flow: break-reply
nodes:
  in:    { type: SOAPInput, wsdl_file: services/sale-validated.wsdl, path: /break, validation: content_and_value, wires: { out: [break] } }
  break: { type: Compute, module: BreakReply, wires: { out: [reply] } }
  reply: { type: SOAPReply }
";

#[test]
fn soap_reply_fails_with_a_server_fault_when_the_reply_breaks_the_wsdls_schemas() {
    let dir = common::tempdir::TempDir::new("soap-reply-validation");
    let p = dir.path();
    for sub in ["flows", "esql", "services", "models"] {
        std::fs::create_dir_all(p.join(sub)).expect("folder");
    }
    let samples = samples_dir();
    for f in ["services/sale-validated.wsdl", "models/sale-types.xsd"] {
        std::fs::copy(samples.join(f), p.join(f)).expect("copy");
    }
    std::fs::write(p.join("esql/break.esql"), BREAK_REPLY_ESQL).expect("esql");
    std::fs::write(p.join("flows/break-reply.yaml"), BREAK_REPLY_FLOW).expect("flow");
    std::fs::write(p.join("sluice.yaml"), "").expect("settings");
    let s = Server::start(p);
    let r = call_at(
        s.http_port,
        "POST",
        "/break",
        &[
            ("Content-Type", "text/xml; charset=utf-8"),
            ("SOAPAction", "\"SummerSale\""),
        ],
        full_sale(1, None).as_bytes(),
    );
    let t = r.text();
    assert_eq!(r.status, 500, "{t}");
    assert!(t.contains("<Label>reply</Label>"), "the node named: {t}");
    assert!(t.contains("SaleListCount"), "the violation named: {t}");
    assert!(!t.contains("Braithwaite"), "no reply sent: {t}");
}

const SWA_CT: &str =
    "multipart/related; type=\"text/xml\"; start=\"<env@test>\"; boundary=\"TestBoundary\"";

/// A SOAP with Attachments request: the envelope (second, found by `start`) and a binary
/// attachment (first, base64 on the wire).
fn swa_request() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"--TestBoundary\r\nContent-Type: application/octet-stream\r\nContent-ID: <salelist>\r\nContent-Transfer-Encoding: base64\r\n\r\n");
    b.extend_from_slice(b"AAEC/f7/YXR0YWNoZWQ=");
    b.extend_from_slice(b"\r\n--TestBoundary\r\nContent-Type: text/xml; charset=utf-8\r\nContent-ID: <env@test>\r\n\r\n");
    b.extend_from_slice(sale("", "swa").as_bytes());
    b.extend_from_slice(b"\r\n--TestBoundary--\r\n");
    b
}

#[test]
fn soap_swa_echoes_the_envelope_and_its_attachments_as_multipart_related() {
    let r = call(
        "POST",
        "/samples/soap-swa",
        &[("Content-Type", SWA_CT), ("SOAPAction", "\"SummerSale\"")],
        &swa_request(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let ct = r
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    assert!(ct.starts_with("multipart/related;"), "{ct}");
    let boundary = ct
        .split("boundary=\"")
        .nth(1)
        .and_then(|b| b.split('"').next())
        .expect("a boundary");
    let body = &r.body;
    let delimiter = format!("--{boundary}");
    let parts: Vec<&[u8]> = body
        .windows(delimiter.len())
        .enumerate()
        .filter(|(_, w)| *w == delimiter.as_bytes())
        .map(|(i, _)| i)
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| &body[w[0]..w[1]])
        .collect();
    assert_eq!(parts.len(), 2, "{}", r.text());
    let root = String::from_utf8_lossy(parts[0]);
    assert!(root.contains("<Last>swa</Last>"), "{root}");
    let att = parts[1];
    let head_end = att
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("part headers")
        + 4;
    let head = String::from_utf8_lossy(&att[..head_end]);
    assert!(head.contains("Content-ID: <salelist>"), "{head}");
    assert!(
        head.contains("Content-Type: application/octet-stream"),
        "{head}"
    );
    // The decoded bytes, sent back in binary, then the CR LF before the next delimiter.
    assert_eq!(&att[head_end..], b"\x00\x01\x02\xfd\xfe\xffattached\r\n");
}

#[test]
fn soap_swa_answers_a_multipart_body_that_does_not_parse_with_a_client_fault() {
    let r = call(
        "POST",
        "/samples/soap-swa",
        &[("Content-Type", SWA_CT), ("SOAPAction", "\"SummerSale\"")],
        b"no delimiter anywhere",
    );
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(r.text().contains("Client"), "{}", r.text());
    assert!(r.text().contains("multipart/related"), "{}", r.text());
}

#[test]
fn soap_echo_reads_an_mtom_request_with_the_binary_part_inline_as_base64() {
    let envelope = envelope(
        "",
        r#"<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:bin%40test"/>"#,
    );
    let mut b = Vec::new();
    b.extend_from_slice(b"--MtomBoundary\r\nContent-Type: application/xop+xml; charset=utf-8; type=\"text/xml\"\r\nContent-ID: <root@test>\r\n\r\n");
    b.extend_from_slice(envelope.as_bytes());
    b.extend_from_slice(b"\r\n--MtomBoundary\r\nContent-Type: application/octet-stream\r\nContent-ID: <bin@test>\r\nContent-Transfer-Encoding: binary\r\n\r\nhi\x00there\r\n--MtomBoundary--\r\n");
    let r = call(
        "POST",
        "/samples/soap-echo",
        &[
            (
                "Content-Type",
                "multipart/related; type=\"application/xop+xml\"; start=\"<root@test>\"; start-info=\"text/xml\"; boundary=MtomBoundary",
            ),
            ("SOAPAction", ECHO_ACTION),
        ],
        &b,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.text();
    // base64 of "hi\0there"
    assert!(t.contains(">aGkAdGhlcmU=</"), "{t}");
    assert!(!t.contains("Include"), "{t}");
    assert!(
        !t.contains("MtomBoundary"),
        "no attachment left to send: {t}"
    );
}

const ZEEP_CLIENT: &str = r#"
import sys
import zeep
client = zeep.Client(sys.argv[1])
print(client.service.echo(text=sys.argv[2]))
"#;

#[test]
fn zeep_client_from_our_wsdl_calls_soap_echo() {
    let Some(python) = common::zeep_python() else {
        return;
    };
    let url = format!(
        "http://127.0.0.1:{}/samples/soap-echo?wsdl",
        server().http_port
    );
    let out = std::process::Command::new(python)
        .args(["-c", ZEEP_CLIENT, &url, "hello from zeep"])
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "hello from zeep");
}
