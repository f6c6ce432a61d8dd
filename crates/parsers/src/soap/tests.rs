use super::fault::{self, Fault, FaultCode};
use super::*;

const REQ_11: &str = concat!(
    r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="urn:echo">"#,
    r#"<soapenv:Header><tns:Trace id="7">on</tns:Trace></soapenv:Header>"#,
    r#"<soapenv:Body><tns:echo><tns:text>hi</tns:text></tns:echo></soapenv:Body></soapenv:Envelope>"#
);

fn parse(xml: &str) -> (Tree, NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = attach(
        &mut t,
        r,
        Bytes::copy_from_slice(xml.as_bytes()),
        SoapParser::shared(),
    );
    (t, id)
}

fn names(t: &mut Tree, id: NodeId) -> Vec<String> {
    let cs = t.children(id).unwrap_or_default();
    cs.iter()
        .map(|&c| String::from_utf8_lossy(t.name_bytes(c)).into_owned())
        .collect()
}

#[test]
fn soap_parse_builds_context_header_body_when_envelope_is_11() {
    let (mut t, id) = parse(REQ_11);
    assert_eq!(names(&mut t, id), ["Context", "Header", "Body"]);
    assert_eq!(version_of(&mut t, id).ok(), Some(SoapVersion::V11));
    let ns = t.path(id, &["Context", "Namespace"]).ok().flatten();
    let ns = ns.map(|n| names(&mut t, n)).unwrap_or_default();
    assert_eq!(ns, ["soapenv", "tns"]);
    let text = t.path(id, &["Body", "echo", "text"]).ok().flatten();
    assert_eq!(text.and_then(|x| t.value_bytes(x)), Some(&b"hi"[..]));
    let trace = t.path(id, &["Header", "Trace"]).ok().flatten();
    assert!(trace.is_some_and(|x| t.namespace_bytes(x) == b"urn:echo"));
}

#[test]
fn soap_parse_reads_version_when_envelope_is_12() {
    let (mut t, id) = parse(
        r#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><a/></e:Body></e:Envelope>"#,
    );
    assert_eq!(version_of(&mut t, id).ok(), Some(SoapVersion::V12));
    assert_eq!(names(&mut t, id), ["Context", "Body"]);
}

#[test]
fn soap_parse_fails_when_not_an_envelope() {
    let (mut t, id) = parse("<echo/>");
    let e = t.expand_all(id);
    assert!(
        matches!(e, Err(TreeError::Parse { domain: "SOAP", .. })),
        "{e:?}"
    );
}

#[test]
fn soap_parse_fails_when_xml_is_malformed() {
    let (mut t, id) = parse(
        r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>"#,
    );
    assert!(matches!(
        t.expand_all(id),
        Err(TreeError::Parse { domain: "SOAP", .. })
    ));
}

#[test]
fn soap_parse_fails_when_body_is_missing() {
    let (mut t, id) = parse(
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header/></s:Envelope>"#,
    );
    assert!(t.expand_all(id).is_err());
}

#[test]
fn soap_serialise_copies_bytes_when_unchanged() {
    let (mut t, id) = parse(REQ_11);
    assert!(t.expand_all(id).is_ok());
    let mut out = Vec::new();
    assert!(serialize_to(&mut t, id, &mut out).is_ok());
    assert_eq!(String::from_utf8_lossy(&out), REQ_11);
}

fn reparse(t: &mut Tree, id: NodeId) -> (Tree, NodeId, String) {
    let mut out = Vec::new();
    let r = serialize_to(t, id, &mut out);
    assert!(r.is_ok(), "{r:?}");
    let s = String::from_utf8_lossy(&out).into_owned();
    let (mut t2, id2) = parse(&s);
    let r = t2.expand_all(id2);
    assert!(r.is_ok(), "{r:?} {s}");
    (t2, id2, s)
}

#[test]
fn soap_serialise_writes_12_envelope_when_version_changed() {
    let (mut t, id) = parse(REQ_11);
    let v = t.path(id, &["Context", "SOAP_Version"]).ok().flatten();
    assert!(v.is_some());
    if let Some(v) = v {
        t.set_str(v, "1.2");
    }
    let (mut t2, id2, s) = reparse(&mut t, id);
    assert!(s.contains(ENV_12), "{s}");
    assert_eq!(version_of(&mut t2, id2).ok(), Some(SoapVersion::V12));
    let text = t2.path(id2, &["Body", "echo", "text"]).ok().flatten();
    assert_eq!(text.and_then(|x| t2.value_bytes(x)), Some(&b"hi"[..]));
    assert!(s.contains("tns:echo"), "prefix kept: {s}");
}

#[test]
fn soap_serialise_writes_changed_body_when_edited() {
    let (mut t, id) = parse(REQ_11);
    let text = t.path(id, &["Body", "echo", "text"]).ok().flatten();
    if let Some(x) = text {
        t.set_str(x, "changed & more");
    }
    let (mut t2, id2, s) = reparse(&mut t, id);
    let text = t2.path(id2, &["Body", "echo", "text"]).ok().flatten();
    assert_eq!(
        text.and_then(|x| t2.value_bytes(x)),
        Some(&b"changed & more"[..]),
        "{s}"
    );
    assert!(t2.path(id2, &["Header", "Trace"]).ok().flatten().is_some());
}

#[test]
fn soap_serialise_writes_empty_envelope_when_tree_is_empty() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = attach(&mut t, r, Bytes::new(), SoapParser::shared());
    let (mut t2, id2, _) = reparse(&mut t, id);
    assert_eq!(names(&mut t2, id2), ["Context", "Body"]);
}

#[test]
fn fault_read_gives_code_and_reason_when_11() {
    let f = Fault::new(FaultCode::Client, SoapVersion::V11, "bad <input>");
    let xml = fault::envelope(SoapVersion::V11, &f, Some("<why>x</why>"));
    let (mut t, id) = parse(&xml);
    let got = fault::read(&mut t, id).ok().flatten();
    assert!(got.is_some(), "{xml}");
    let got = got.unwrap_or(f);
    assert_eq!(got.code, "soapenv:Client");
    assert_eq!(got.reason, "bad <input>");
    assert_eq!(got.detail.as_deref(), Some("x"));
    assert_eq!(got.class(), Some(FaultCode::Client));
}

#[test]
fn fault_read_maps_sender_when_12() {
    let f = Fault::new(FaultCode::Client, SoapVersion::V11, "bad");
    let xml = fault::envelope(SoapVersion::V12, &f, None);
    let (mut t, id) = parse(&xml);
    let got = fault::read(&mut t, id).ok().flatten();
    assert_eq!(
        got.as_ref().map(|g| g.code.as_str()),
        Some("soapenv:Sender")
    );
    assert_eq!(got.as_ref().map(|g| g.reason.as_str()), Some("bad"));
}

#[test]
fn fault_read_is_none_when_body_is_not_a_fault() {
    let (mut t, id) = parse(REQ_11);
    assert_eq!(fault::read(&mut t, id).ok(), Some(None));
}
