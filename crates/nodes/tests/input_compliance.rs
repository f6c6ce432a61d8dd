//! The compliance checks for input nodes that need a transport, driven through the cheap local
//! ones: HTTPInput through the in-process router, MQInput through an in-memory queue manager. An
//! exception raised downstream must reach the input node's `catch` terminal with an
//! ExceptionList naming the node that raised it, and a body that does not parse must take the
//! `failure` terminal with a ParserException holding the byte offset.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::Bench;
use sluice_flow_testing::compliance::exception_labels;
use sluice_flow_testing::{Captured, dump_tree};
use sluice_node_api::http_listener::HttpRequest;

fn bench(src: &str) -> Bench {
    let qm = sluice_qm::QueueManager::open_in_memory(sluice_qm::QmConfig::default())
        .expect("an in-memory queue manager");
    qm.define(sluice_qm::QueueDef::local("INPUT.COMPLIANCE"))
        .expect("define a queue");
    Bench::new(src, qm)
}

/// Send one request and wait for its answer; the flow has finished with it when this returns.
fn post(b: &Bench, path: &str, body: &'static str) -> Vec<Captured> {
    let running = b.flow.start();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let request = HttpRequest {
        method: "POST".into(),
        uri: path.into(),
        path: path.into(),
        query: String::new(),
        version: "HTTP/1.1",
        headers: vec![("Content-Type".into(), Bytes::from_static(b"text/xml"))],
        body: Bytes::from_static(body.as_bytes()),
        reply: tx,
    };
    assert!(b.router.dispatch(request).is_ok(), "no flow serves {path}");
    let reply = rx.blocking_recv();
    running.stop();
    assert!(reply.is_ok(), "the request was never answered");
    b.harness.take_captured()
}

fn labels(c: &[Captured]) -> Vec<&str> {
    c.iter().map(|c| c.label.as_str()).collect()
}

#[test]
fn http_input_sends_a_downstream_exception_to_catch_naming_the_node() {
    let b = bench(
        "nodes:\n  in: { type: HTTPInput, path: /ic/throw, domain: XMLNSC, wires: { out: [t], catch: [caught] } }\n  t: { type: Throw, message_text: boom }\n  caught: { type: Capture }\n",
    );
    let got = post(&b, "/ic/throw", "<a>1</a>");
    assert_eq!(labels(&got), ["caught"]);
    assert_eq!(exception_labels(&got[0].message.exception_list), ["t"]);
}

#[test]
fn http_input_sends_an_unparsable_body_to_failure_with_the_offset() {
    let b = bench(
        "nodes:\n  in: { type: HTTPInput, path: /ic/parse, domain: XMLNSC, parse_timing: immediate, wires: { out: [ok], failure: [failed] } }\n  ok: { type: Capture }\n  failed: { type: Capture }\n",
    );
    let got = post(&b, "/ic/parse", "<a>1</b>");
    assert_eq!(labels(&got), ["failed"]);
    let list = dump_tree(&got[0].message.exception_list, &Default::default());
    assert!(list.contains("ParserException"), "{list}");
    // The end tag `</b>` starts at byte 4.
    assert!(list.contains("Text = '4' : CHARACTER"), "{list}");
    assert_eq!(exception_labels(&got[0].message.exception_list), ["in"]);
}

/// Put `body` to INPUT.COMPLIANCE, run the flow until a message is captured.
fn through_mq(b: &Bench, body: &'static [u8]) -> Vec<Captured> {
    b.qm.put(
        "INPUT.COMPLIANCE",
        sluice_qm::Message::new(Bytes::from_static(body)),
        &sluice_qm::PutOptions::default(),
    )
    .expect("put a message");
    let running = b.flow.start();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while got.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        got = b.harness.take_captured();
    }
    running.stop();
    got
}

#[test]
fn mq_input_sends_a_downstream_exception_to_catch_naming_the_node() {
    let b = bench(
        "nodes:\n  in: { type: MQInput, queue: INPUT.COMPLIANCE, domain: XMLNSC, wires: { out: [t], catch: [caught] } }\n  t: { type: Throw, message_text: boom }\n  caught: { type: Capture }\n",
    );
    let got = through_mq(&b, b"<a>1</a>");
    assert_eq!(labels(&got), ["caught"]);
    assert_eq!(exception_labels(&got[0].message.exception_list), ["t"]);
}

#[test]
fn mq_input_sends_an_unparsable_body_to_failure_as_blob_with_the_offset() {
    let b = bench(
        "nodes:\n  in: { type: MQInput, queue: INPUT.COMPLIANCE, domain: XMLNSC, parse_timing: immediate, wires: { out: [ok], failure: [failed] } }\n  ok: { type: Capture }\n  failed: { type: Capture }\n",
    );
    let mut got = through_mq(&b, b"<a>1</b>");
    assert_eq!(labels(&got), ["failed"]);
    let list = dump_tree(&got[0].message.exception_list, &Default::default());
    assert!(list.contains("ParserException"), "{list}");
    assert!(list.contains("Text = '4' : CHARACTER"), "{list}");
    assert_eq!(exception_labels(&got[0].message.exception_list), ["in"]);
    let m = &mut got[0].message;
    let body = m.body().expect("a body").expect("a body");
    assert_eq!(
        m.root.name_bytes(body),
        b"BLOB",
        "the body as it came, unparsed"
    );
    let tree = dump_tree(&m.root, &Default::default());
    assert!(tree.contains("MQMD"), "{tree}");
}
