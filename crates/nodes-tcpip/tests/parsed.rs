//! Parsed record sequence on TCP/IP server nodes against real sockets: records found by
//! parsing with the node's domain.

mod common;

use std::io::Write;
use std::time::Duration;

use common::{body_text, captured, connect, exception_text, read_n, start};

#[test]
fn xml_records_split_across_writes_are_echoed_whole_when_parsed_as_a_sequence() {
    let r = start(
        "flow: xml\nnodes:\n  in: { type: TCPIPServerInput, record_detection: parsed_record_sequence, domain: XMLNSC, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"<a><b>1</b>").unwrap();
    c.flush().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    c.write_all(b"</a>\n  <c x='>'/><d>").unwrap();
    let two = b"<a><b>1</b></a><c x='>'/>";
    assert_eq!(read_n(&mut c, two.len()), two);
    c.write_all(b"2</d>").unwrap();
    assert_eq!(read_n(&mut c, 8), b"<d>2</d>");
}

#[test]
fn json_values_are_records_and_parsed_when_the_domain_is_json() {
    let r = start(
        "flow: json\nnodes:\n  in: { type: TCPIPServerInput, record_detection: parsed_record_sequence, domain: JSON, wires: { out: [cap] } }\n  cap: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(br#"{"n":1}{"n":"}"} [2]"#).unwrap();
    let mut got = captured(&r, 3);
    let bodies: Vec<_> = got.iter_mut().map(body_text).collect();
    assert_eq!(bodies, [r#"{"n":1}"#, r#"{"n":"}"}"#, "[2]"]);
}

#[test]
fn malformed_xml_record_goes_to_failure_with_the_parse_error() {
    let r = start(
        "flow: bad\nnodes:\n  in: { type: TCPIPServerInput, record_detection: parsed_record_sequence, domain: XMLNSC, wires: { out: [ok], failure: [bad] } }\n  ok: { type: Capture }\n  bad: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"<a>1</a><a>1</b>").unwrap();
    let mut got = captured(&r, 2);
    assert_eq!(got[0].label, "ok");
    assert_eq!(got[1].label, "bad");
    let ex = exception_text(&got[1]);
    assert!(ex.contains("does not match"), "{ex}");
    assert_eq!(body_text(&mut got[1]), "<a>1</b>");
}

#[test]
fn partial_xml_record_goes_to_failure_when_the_client_closes() {
    let r = start(
        "flow: half\nnodes:\n  in: { type: TCPIPServerInput, record_detection: parsed_record_sequence, domain: XMLNSC, wires: { out: [ok], failure: [bad] } }\n  ok: { type: Capture }\n  bad: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"<a/>\n<b><c>").unwrap();
    drop(c);
    let mut got = captured(&r, 2);
    assert_eq!(got[1].label, "bad");
    assert_eq!(body_text(&mut got[1]), "<b><c>");
    let ex = exception_text(&got[1]);
    assert!(ex.contains("in the middle of a XMLNSC record"), "{ex}");
}

#[test]
fn sample_parsed_flow_echoes_xml_records() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/flows/tcpip-parsed.yaml"
    ))
    .unwrap();
    let port = common::free_addr().port();
    let r = start(&src.replace("port: 7804", &format!("port: {port}")));
    let mut c = connect(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    let msg = b"<order><id>1</id></order>\n<order><id>2</id></order>";
    c.write_all(msg).unwrap();
    let echo = b"<order><id>1</id></order>\n<order><id>2</id></order>\n";
    assert_eq!(read_n(&mut c, echo.len()), echo);
    drop(r);
}
