//! MQOutput's MsgId: kept from `Root.MQMD` by default (the product's "New message ID" off),
//! generated with `new_msg_id: true`.

mod common;

use std::time::{Duration, Instant};

use common::Bench;
use sluice_qm::{GetOptions, Message, PutOptions, QmConfig, QueueDef, QueueManager};

#[test]
fn mq_output_keeps_the_msg_id_unless_asked_for_a_new_one() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("a queue manager");
    for q in ["O.IN", "O.KEPT", "O.NEW"] {
        qm.define(QueueDef::local(q)).expect("define");
    }
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: O.IN, wires: { out: [kept] } }\n  kept: { type: MQOutput, queue: O.KEPT, wires: { out: [new] } }\n  new: { type: MQOutput, queue: O.NEW, new_msg_id: true, wires: { out: [seen] } }\n  seen: { type: Capture }\n",
        qm.clone(),
    );
    let mut m = Message::new("x");
    m.md.msg_id = sluice_qm::id_from_str("CHOSEN BY THE SENDER");
    qm.put("O.IN", m, &PutOptions::default()).expect("put");
    let running = b.flow.start();
    let deadline = Instant::now() + Duration::from_secs(10);
    while qm.depth("O.NEW").expect("depth") == 0 {
        assert!(Instant::now() < deadline, "the flow never put");
        std::thread::sleep(Duration::from_millis(10));
    }
    running.stop();
    let get = |q: &str| {
        qm.get(q, &GetOptions::new())
            .expect("get")
            .expect("a message")
    };
    let chosen = sluice_qm::id_from_str("CHOSEN BY THE SENDER");
    assert_eq!(get("O.KEPT").md.msg_id, chosen);
    let fresh = get("O.NEW").md.msg_id;
    assert!(fresh != chosen && fresh != sluice_qm::ID_NONE);
    // Where each put went, as the product records it in the LocalEnvironment.
    let seen = b.harness.take_captured();
    let le =
        sluice_flow_testing::dump_tree(&seen[0].message.local_environment, &Default::default());
    for field in [
        "queueName = 'O.NEW'",
        "queueManagerName = 'SLUICE'",
        "replyIdentifier",
        "correlId",
        "GroupId",
    ] {
        assert!(le.contains(field), "{field} missing from {le}");
    }
}

#[test]
fn text_bodies_are_read_and_written_in_the_descriptors_ccsid() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("a queue manager");
    for q in ["C.IN", "C.OUT", "C.MISREAD"] {
        qm.define(QueueDef::local(q)).expect("define");
    }
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: C.IN, domain: XMLNSC, wires: { out: [check] } }\n  check: { type: Filter, expression: \"$Body/a = 'café'\", wires: { 'true': [out], 'false': [misread] } }\n  out: { type: MQOutput, queue: C.OUT }\n  misread: { type: MQOutput, queue: C.MISREAD }\n",
        qm.clone(),
    );
    // ISO-8859-1: é is the single byte E9.
    let mut m = Message::new(&b"<a>caf\xe9</a>"[..]);
    m.md.coded_char_set_id = 819;
    m.md.format = "MQSTR   ".into();
    qm.put("C.IN", m, &PutOptions::default()).expect("put");
    let running = b.flow.start();
    let deadline = Instant::now() + Duration::from_secs(10);
    while qm.depth("C.OUT").expect("depth") + qm.depth("C.MISREAD").expect("depth") == 0 {
        assert!(Instant::now() < deadline, "the flow never put");
        std::thread::sleep(Duration::from_millis(10));
    }
    running.stop();
    assert_eq!(
        qm.depth("C.MISREAD").expect("depth"),
        0,
        "the body was read as UTF-8"
    );
    let out = qm
        .get("C.OUT", &GetOptions::new())
        .expect("get")
        .expect("a message");
    assert_eq!(out.md.coded_char_set_id, 819);
    assert_eq!(
        &out.body[..],
        b"<a>caf\xe9</a>",
        "written back in ISO-8859-1"
    );
}

#[test]
fn a_message_without_an_mqmd_is_put_as_the_server() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("a queue manager");
    qm.define(QueueDef::local("N.OUT")).expect("define");
    let b = Bench::new(
        "nodes:\n  in: { type: Inject, wires: { out: [out] } }\n  out: { type: MQOutput, queue: N.OUT }\n",
        qm.clone(),
    );
    b.harness.inject(sluice_tree::Message::new());
    b.harness.run(&b.flow);
    let m = qm
        .get("N.OUT", &GetOptions::new())
        .expect("get")
        .expect("a message");
    let me = sluice_qm::PutContext::of_this_process();
    assert!(!me.user().is_empty() && !me.appl_name().is_empty());
    assert_eq!(m.md.user_identifier, me.user());
    assert_eq!(m.md.put_appl_name, me.appl_name());
}

#[test]
fn transaction_mode_yes_puts_under_syncpoint_when_nothing_transactional_started_the_flow() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("a queue manager");
    for q in ["Y.OK", "Y.FAILED", "Y.AT_ONCE"] {
        qm.define(QueueDef::local(q)).expect("define");
    }
    // The first message's flow completes; the second's raises after its puts.
    let b = Bench::new(
        "nodes:\n  in: { type: Inject, wires: { out: [ok] } }\n  ok: { type: MQOutput, queue: Y.OK, transaction_mode: 'yes', wires: { out: [at_once] } }\n  at_once: { type: MQOutput, queue: Y.AT_ONCE, transaction_mode: 'no', wires: { out: [check] } }\n  check: { type: Filter, expression: \"$Body/a = 'fail'\", wires: { 'true': [failed] } }\n  failed: { type: MQOutput, queue: Y.FAILED, transaction_mode: 'yes', wires: { out: [raise] } }\n  raise: { type: Throw }\n",
        qm.clone(),
    );
    for body in ["<a>fine</a>", "<a>fail</a>"] {
        let mut m = sluice_tree::Message::new();
        let parsing = sluice_nodes::domains::BodyParsing::from_props(
            &sluice_nodes::domains::BodyParsingProps {
                domain: sluice_nodes::domains::Domain::Xmlnsc,
                parse_timing: sluice_nodes::domains::ParseTiming::OnDemand,
                opaque_elements: Vec::new(),
            },
        )
        .expect("parsing");
        parsing
            .attach(&mut m.root, bytes::Bytes::from_static(body.as_bytes()))
            .expect("attach");
        b.harness.inject(m);
    }
    b.harness.run(&b.flow);
    let outcomes = b.harness.take_outcomes();
    assert!(outcomes[0].is_ok() && outcomes[1].is_err(), "{outcomes:?}");
    // Committed with the first flow, backed out with the second; `no` is put at once.
    assert_eq!(qm.depth("Y.OK").expect("depth"), 1);
    assert_eq!(qm.depth("Y.FAILED").expect("depth"), 0);
    assert_eq!(qm.depth("Y.AT_ONCE").expect("depth"), 2);
}
