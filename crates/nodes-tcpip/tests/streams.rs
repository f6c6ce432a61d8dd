//! What nodes do to a connection's streams: reservations by a flow thread, closing after a
//! record or a timeout, broadcasts, the output nodes' close terminal, the server port's
//! connection limit, the Reply ID, and a client's destination from LocalEnvironment.

mod common;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{body_text, captured, connect, exception_text, le_text, read_n, start};
use sluice_node_api::Message;
use sluice_nodes_core::domains::BodyParsing;
use sluice_tree::{Text, Value, field_type};

/// A BLOB message whose LocalEnvironment has `fields` (paths under LocalEnvironment).
fn message(body: &str, fields: &[(&[&'static str], &str)]) -> Message {
    let mut msg = Message::new();
    BodyParsing::blob()
        .attach(&mut msg.root, Bytes::copy_from_slice(body.as_bytes()))
        .unwrap();
    let le = &mut msg.local_environment;
    for (path, value) in fields {
        let mut at = le.root();
        for (i, name) in path.iter().enumerate() {
            let leaf = i + 1 == path.len();
            let found = le.child_named(at, None, name.as_bytes(), 0).unwrap();
            at = match found {
                Some(n) if !leaf => n,
                _ => {
                    let (kind, v) = if leaf {
                        let t = le.alloc_text(value.as_bytes());
                        (field_type::NAME_VALUE, Value::Character(t))
                    } else {
                        (field_type::NAME, Value::Null)
                    };
                    le.create_last_child(at, kind, Text::from_static(name), v)
                        .unwrap()
                }
            };
        }
    }
    msg
}

/// The connection Id a capture of an input node's event carries.
fn input_id(r: &common::Running) -> String {
    let mut c = captured(r, 1).remove(0);
    le_text(&mut c, &["TCPIP", "Input", "ConnectionDetails", "Id"]).expect("an Id")
}

/// Whether the peer closed: end of stream (or a reset) within a few seconds.
fn reads_end(c: &mut TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 64];
    match c.read(&mut b) {
        Ok(0) => true,
        Err(e) => e.kind() == ErrorKind::ConnectionReset,
        Ok(_) => false,
    }
}

/// Whether nothing arrives within half a second.
fn reads_nothing(c: &mut TcpStream) -> bool {
    c.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut b = [0u8; 64];
    matches!(c.read(&mut b), Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

#[test]
fn reply_goes_to_the_receive_node_not_the_input_node_when_the_output_reserves_the_input() {
    let r = start(
        "flow: ask\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, idle_timeout_secs: 30, wires: { open: [opened], out: [unasked] } }\n  opened: { type: Capture }\n  unasked: { type: Capture }\n  inj: { type: Inject, until_stopped: true, wires: { out: [ask] } }\n  ask: { type: TCPIPServerOutput, output_record: delimited, input_stream_modification: reserve_and_release_at_end, wires: { out: [rx] } }\n  rx: { type: TCPIPServerReceive, record_detection: delimited, read_timeout_secs: 5, wires: { out: [reply] } }\n  reply: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    let id = input_id(&r);
    r.harness.inject(message(
        "question",
        &[
            (&["Destination", "TCPIP", "Output", "Id"], &id),
            (&["Destination", "TCPIP", "Receive", "Id"], &id),
        ],
    ));
    assert_eq!(read_n(&mut c, 9), b"question\n");
    // The input node reads the connection as it waits for records (with an idle timeout, its
    // read is under way all along); the reservation keeps the answer for the receive node.
    c.write_all(b"answer\n").unwrap();
    let mut got = captured(&r, 1);
    assert_eq!(got[0].label, "reply");
    assert_eq!(body_text(&mut got[0]), "answer");
    // Released at the end of the invocation: the input node reads the next line.
    c.write_all(b"later\n").unwrap();
    let mut got = captured(&r, 1);
    assert_eq!(got[0].label, "unasked");
    assert_eq!(body_text(&mut got[0]), "later");
}

#[test]
fn a_reserved_output_stream_is_waited_for_by_other_threads_until_its_holder_releases_it() {
    // The connection's first record reserves its output stream for the input node's thread;
    // the second releases it. Meanwhile a send from the Inject thread waits, then fails.
    let r = start(
        "flow: hold\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, wires: { open: [opened], out: [route] } }\n  opened: { type: Capture }\n  route: { type: Route, rules: { first: \"$LocalEnvironment/TCPIP/Input/ConnectionDetails/SequenceNumber = 1\" }, wires: { first: [hold], default: [free] } }\n  hold: { type: TCPIPServerOutput, output_record: delimited, output_stream_modification: reserve }\n  free: { type: TCPIPServerOutput, output_record: delimited, output_stream_modification: release }\n  inj: { type: Inject, until_stopped: true, wires: { out: [other] } }\n  other: { type: TCPIPServerOutput, output_record: delimited, write_timeout_secs: 1, wires: { out: [sent], failure: [refused] } }\n  sent: { type: Capture }\n  refused: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    let id = input_id(&r);
    c.write_all(b"one\n").unwrap();
    assert_eq!(read_n(&mut c, 4), b"one\n");
    let started = Instant::now();
    r.harness.inject(message(
        "intruder",
        &[(&["Destination", "TCPIP", "Output", "Id"], &id)],
    ));
    let got = captured(&r, 1);
    assert_eq!(got[0].label, "refused");
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert!(
        exception_text(&got[0]).contains("reserved"),
        "{}",
        exception_text(&got[0])
    );
    c.write_all(b"two\n").unwrap();
    assert_eq!(read_n(&mut c, 4), b"two\n");
    r.harness.inject(message(
        "welcome",
        &[(&["Destination", "TCPIP", "Output", "Id"], &id)],
    ));
    assert_eq!(read_n(&mut c, 8), b"welcome\n");
    assert_eq!(captured(&r, 1)[0].label, "sent");
}

#[test]
fn input_node_closes_the_input_stream_at_once_or_the_connection_after_the_flow() {
    let r = start(
        "flow: close-in\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, close_after_record: input_stream, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: delimited }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"a\nb\n").unwrap();
    assert_eq!(read_n(&mut c, 2), b"a\n");
    assert!(reads_nothing(&mut c), "the second line was read");
    drop(r);

    let r = start(
        "flow: close-conn\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, close_after_record: connection, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: delimited }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"a\n").unwrap();
    assert_eq!(read_n(&mut c, 2), b"a\n");
    assert!(reads_end(&mut c));
}

#[test]
fn receive_node_closes_the_connection_after_its_record_or_on_timeout_when_told() {
    let r = start(
        "flow: rx-close\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, wires: { out: [rx] } }\n  rx: { type: TCPIPServerReceive, record_detection: fixed_length, record_length_bytes: 3, close_after_record: connection, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"go\nabc").unwrap();
    assert_eq!(read_n(&mut c, 3), b"abc");
    assert!(reads_end(&mut c));
    drop(r);

    let r = start(
        "flow: rx-timeout\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, wires: { out: [rx] } }\n  rx: { type: TCPIPServerReceive, record_detection: delimited, read_timeout_secs: 1, close_on_timeout: true, wires: { timeout: [late] } }\n  late: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"go\n").unwrap();
    assert!(reads_end(&mut c));
    assert_eq!(captured(&r, 1)[0].label, "late");
}

#[test]
fn broadcast_reaches_every_connection_and_the_close_terminal_closes_them_all() {
    let r = start(
        "flow: bc\nnodes:\n  tcp: { type: TCPIPServerInput, wires: { open: [opened] } }\n  opened: { type: Capture }\n  inj: { type: Inject, until_stopped: true, wires: { out: [route] } }\n  route: { type: Route, rules: { close: \"$LocalEnvironment/Close = 'yes'\" }, wires: { close: [all.close], default: [all] } }\n  all: { type: TCPIPServerOutput, send_to: all, output_record: delimited }\n",
    );
    let mut a = connect(r.addr);
    let mut b = connect(r.addr);
    captured(&r, 2);
    r.harness.inject(message("news", &[]));
    assert_eq!(read_n(&mut a, 5), b"news\n");
    assert_eq!(read_n(&mut b, 5), b"news\n");
    r.harness.inject(message("", &[(&["Close"], "yes")]));
    assert!(reads_end(&mut a));
    assert!(reads_end(&mut b));
}

#[test]
fn a_port_closes_connections_beyond_its_maximum_and_accepts_again_when_one_left() {
    let r = start(
        "flow: max\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, max_connections: 1, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: delimited }\n",
    );
    let mut first = connect(r.addr);
    first.write_all(b"1\n").unwrap();
    assert_eq!(read_n(&mut first, 2), b"1\n");
    let mut second = connect(r.addr);
    assert!(reads_end(&mut second), "a second connection was kept");
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut third = connect(r.addr);
        let _ = third.write_all(b"3\n");
        third
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut buf = [0u8; 2];
        if third.read_exact(&mut buf).is_ok() {
            assert_eq!(&buf, b"3\n");
            break;
        }
        assert!(Instant::now() < deadline, "no room came free");
    }
}

#[test]
fn reply_id_stored_by_a_send_is_in_the_details_of_what_the_connection_sends_next() {
    let r = start(
        "flow: reply-id\nnodes:\n  tcp: { type: TCPIPServerInput, record_detection: delimited, wires: { open: [opened], out: [back] } }\n  opened: { type: Capture }\n  back: { type: Capture }\n  inj: { type: Inject, until_stopped: true, wires: { out: [ask] } }\n  ask: { type: TCPIPServerOutput, output_record: delimited }\n",
    );
    let mut c = connect(r.addr);
    let id = input_id(&r);
    r.harness.inject(message(
        "request",
        &[
            (&["Destination", "TCPIP", "Output", "Id"], &id),
            (&["Destination", "TCPIP", "Output", "ReplyId"], "MSG-42"),
        ],
    ));
    assert_eq!(read_n(&mut c, 8), b"request\n");
    c.write_all(b"response\n").unwrap();
    let mut got = captured(&r, 1);
    assert_eq!(
        le_text(
            &mut got[0],
            &["TCPIP", "Input", "ConnectionDetails", "ReplyId"]
        )
        .as_deref(),
        Some("MSG-42")
    );
}

#[test]
fn client_nodes_connect_where_local_environment_says_instead_of_their_details() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut w = s.try_clone().unwrap();
            for line in BufReader::new(s).lines().map_while(Result::ok) {
                let _ = w.write_all(format!("echo {line}\n").as_bytes());
            }
        }
    });
    // The node's own details name a port nothing listens on.
    let nowhere = common::free_addr().port();
    let r = start(&format!(
        "flow: override\nnodes:\n  inj: {{ type: Inject, until_stopped: true, wires: {{ out: [ask] }} }}\n  ask: {{ type: TCPIPClientOutput, connection_details: '{nowhere}', retry_attempts: 0, output_record: delimited, wires: {{ out: [rx] }} }}\n  rx: {{ type: TCPIPClientReceive, connection_details: '{nowhere}', record_detection: delimited, read_timeout_secs: 5, wires: {{ out: [reply] }} }}\n  reply: {{ type: Capture }}\n"
    ));
    let p = port.to_string();
    r.harness.inject(message(
        "hi",
        &[
            (&["Destination", "TCPIP", "Output", "Hostname"], "127.0.0.1"),
            (&["Destination", "TCPIP", "Output", "Port"], &p),
            (
                &["Destination", "TCPIP", "Receive", "Hostname"],
                "127.0.0.1",
            ),
            (&["Destination", "TCPIP", "Receive", "Port"], &p),
        ],
    ));
    let mut got = captured(&r, 1);
    assert_eq!(body_text(&mut got[0]), "echo hi");
}
