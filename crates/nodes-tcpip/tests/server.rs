//! TCP/IP server nodes against real sockets: a flow is built and started in process on a free
//! port, and plain std clients talk to it.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{body_text, captured, connect, exception_text, le_text, read_n, start};

const FIXED_ECHO: &str = "flow: echo\nnodes:\n  in: { type: TCPIPServerInput, record_detection: fixed_length, record_length_bytes: 2048, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput }\n";

#[test]
fn fixed_length_records_are_echoed_on_their_connection_when_two_clients_interleave() {
    let r = start(FIXED_ECHO);
    let mut a = connect(r.addr);
    let mut b = connect(r.addr);
    for i in 0..20u8 {
        let ra = vec![b'a' + (i % 26); 2048];
        let rb = vec![i; 2048];
        // Half a record from each first, so that both connections hold partial records at once.
        a.write_all(&ra[..1000]).unwrap();
        b.write_all(&rb[..1500]).unwrap();
        a.write_all(&ra[1000..]).unwrap();
        b.write_all(&rb[1500..]).unwrap();
        assert_eq!(read_n(&mut a, 2048), ra);
        assert_eq!(read_n(&mut b, 2048), rb);
    }
}

#[test]
fn an_idle_connection_is_served_by_the_next_version_when_the_flow_is_redeployed() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = common::free_addr();
    let (_, old) = common::build(FIXED_ECHO, runtime.handle(), addr);
    let (_, new) = common::build(FIXED_ECHO, runtime.handle(), addr);
    let running = old.start();
    let mut c = connect(addr);
    c.write_all(&[1; 2048]).unwrap();
    assert_eq!(read_n(&mut c, 2048), vec![1; 2048]);
    // The connection now waits for its next record while the flow is replaced.
    running.stop();
    let running = new.start();
    c.write_all(&[2; 2048]).unwrap();
    assert_eq!(read_n(&mut c, 2048), vec![2; 2048]);
    running.stop();
}

#[test]
fn many_connections_sending_records_back_to_back_are_each_echoed_in_order() {
    let r = start(FIXED_ECHO);
    let clients: Vec<_> = (0..6u8)
        .map(|n| {
            let addr = r.addr;
            std::thread::spawn(move || {
                let mut c = connect(addr);
                let mut all = Vec::new();
                for i in 0..40u8 {
                    all.extend(std::iter::repeat_n(
                        n.wrapping_mul(50).wrapping_add(i),
                        2048,
                    ));
                }
                let sent = all.clone();
                let mut w = c.try_clone().unwrap();
                let writer = std::thread::spawn(move || w.write_all(&sent).unwrap());
                assert_eq!(read_n(&mut c, all.len()), all, "connection {n}");
                writer.join().unwrap();
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
}

#[test]
fn sample_flow_echoes_records_when_sent_in_one_write() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/flows/tcpip-fixed.yaml"
    ))
    .unwrap();
    let r = start(&src);
    let mut c = connect(r.addr);
    let mut all = Vec::new();
    for i in 0..8u8 {
        all.extend(std::iter::repeat_n(i, 2048));
    }
    c.write_all(&all).unwrap();
    assert_eq!(read_n(&mut c, all.len()), all, "in order, per connection");
}

#[test]
fn delimited_line_ends_give_records_with_connection_details() {
    let r = start(
        "flow: lines\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, wires: { out: [cap] } }\n  cap: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"first\r\nsecond\n").unwrap();
    let mut got = captured(&r, 2);
    let bodies: Vec<_> = got.iter_mut().map(body_text).collect();
    assert_eq!(bodies, ["first", "second"]);
    let ty = le_text(
        &mut got[0],
        &["TCPIP", "Input", "ConnectionDetails", "Type"],
    );
    assert_eq!(ty.as_deref(), Some("TCPIPServer"));
    let id0 = le_text(&mut got[0], &["TCPIP", "Input", "ConnectionDetails", "Id"]);
    let id1 = le_text(&mut got[1], &["TCPIP", "Input", "ConnectionDetails", "Id"]);
    assert!(id0.is_some() && id0 == id1);
    let seq = {
        let le = &mut got[1].message.local_environment;
        let root = le.root();
        let n = le
            .path(
                root,
                &["TCPIP", "Input", "ConnectionDetails", "SequenceNumber"],
            )
            .unwrap()
            .unwrap();
        le.value(n)
    };
    assert_eq!(seq, sluice_tree::Value::Integer(2));
}

#[test]
fn custom_hex_infix_delimiter_makes_the_tail_a_record_when_the_client_closes() {
    let r = start(
        "flow: infix\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, delimiter: custom, custom_delimiter_hex: '7c7c', delimiter_type: infix, wires: { out: [cap] } }\n  cap: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"a||b||c").unwrap();
    drop(c);
    let mut got = captured(&r, 3);
    let bodies: Vec<_> = got.iter_mut().map(body_text).collect();
    assert_eq!(bodies, ["a", "b", "c"]);
}

#[test]
fn length_prefixed_records_are_echoed_delimited_when_the_output_says_so() {
    let r = start(
        "flow: prefixed\nnodes:\n  in: { type: TCPIPServerInput, record_detection: length_prefixed, length_prefix: u16_be, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: delimited, output_delimiter: custom, output_custom_delimiter: '|' }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"\x00\x03abc\x00\x02de").unwrap();
    assert_eq!(read_n(&mut c, 7), b"abc|de|");
}

#[test]
fn connection_closed_record_is_answered_padded_before_the_connection_ends() {
    let r = start(
        "flow: whole\nnodes:\n  in: { type: TCPIPServerInput, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: fixed_length, output_length_bytes: 8, pad_byte_hex: '2e' }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"hello").unwrap();
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    assert_eq!(all, b"hello...");
}

#[test]
fn close_after_send_connection_ends_the_stream_after_one_record() {
    let r = start(
        "flow: once\nnodes:\n  in: { type: TCPIPServerInput, record_detection: fixed_length, record_length_bytes: 2, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, close_after_send: connection }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"hi").unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    assert_eq!(all, b"hi");
}

#[test]
fn half_a_record_goes_to_failure_when_the_client_goes_away_and_others_go_on() {
    let r = start(
        "flow: half\nnodes:\n  in: { type: TCPIPServerInput, record_detection: fixed_length, record_length_bytes: 100, wires: { out: [out], failure: [cap] } }\n  out: { type: TCPIPServerOutput }\n  cap: { type: Capture }\n",
    );
    let mut good = connect(r.addr);
    let mut bad = connect(r.addr);
    bad.write_all(&[7; 40]).unwrap();
    drop(bad);
    let mut got = captured(&r, 1);
    assert_eq!(body_text(&mut got[0]), "\u{7}".repeat(40));
    let ex = exception_text(&got[0]);
    assert!(
        ex.contains("in the middle of a 100-byte fixed-length record"),
        "{ex}"
    );
    good.write_all(&[1; 100]).unwrap();
    assert_eq!(read_n(&mut good, 100), vec![1; 100]);
}

#[test]
fn slowloris_goes_to_failure_after_the_read_timeout_and_others_go_on() {
    let r = start(
        "flow: slow\ninstances: 1\nnodes:\n  in: { type: TCPIPServerInput, record_detection: fixed_length, record_length_bytes: 10, read_timeout_secs: 1, wires: { out: [out], failure: [cap] } }\n  out: { type: TCPIPServerOutput }\n  cap: { type: Capture }\n",
    );
    let mut slow = connect(r.addr);
    let mut good = connect(r.addr);
    let started = Instant::now();
    slow.write_all(b"x").unwrap();
    // The good client is served while the slow one trickles.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(200));
        let _ = slow.write_all(b"x");
        good.write_all(b"0123456789").unwrap();
        assert_eq!(read_n(&mut good, 10), b"0123456789");
    }
    let mut got = captured(&r, 1);
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(exception_text(&got[0]).contains("did not arrive within 1 s"));
    assert_eq!(body_text(&mut got[0]), "xxxx");
    // And the slow connection was closed.
    let mut rest = Vec::new();
    assert_eq!(slow.read_to_end(&mut rest).unwrap_or(0), 0);
}

#[test]
fn a_client_that_never_reads_fails_the_output_after_the_write_timeout_and_others_go_on() {
    // Each 1-byte record is answered with 1 MB: a client that never reads fills its window.
    let r = start(
        "flow: flood\ninstances: 2\nnodes:\n  in: { type: TCPIPServerInput, record_detection: fixed_length, record_length_bytes: 1, wires: { out: [big] } }\n  big: { type: TCPIPServerOutput, output_record: fixed_length, output_length_bytes: 1048576, write_timeout_secs: 1, wires: { failure: [cap] } }\n  cap: { type: Capture }\n",
    );
    let mut stuck = connect(r.addr);
    stuck.write_all(b"abcdefgh").unwrap();
    let mut got = captured(&r, 1);
    assert!(
        exception_text(&got[0]).contains("the peer does not read"),
        "{}",
        exception_text(&got[0])
    );
    let _ = body_text(&mut got[0]);
    let mut good = connect(r.addr);
    good.write_all(b"z").unwrap();
    let echo = read_n(&mut good, 1048576);
    assert_eq!(echo[0], b'z');
    assert!(echo[1..].iter().all(|&b| b == b' '));
}

#[test]
fn receive_reads_the_next_record_of_the_invocations_connection_and_times_out() {
    // A line starts the flow; the receive node then waits for a 3-byte record on the same
    // connection, answered with it; with none in time, the timeout terminal answers the line.
    let r = start(
        "flow: rx\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, wires: { out: [rx] } }\n  rx: { type: TCPIPServerReceive, record_detection: fixed_length, record_length_bytes: 3, read_timeout_secs: 1, wires: { out: [out], timeout: [late] } }\n  out: { type: TCPIPServerOutput }\n  late: { type: TCPIPServerOutput, output_record: delimited, output_delimiter: custom, output_custom_delimiter: ' timed out' }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"go\nabc").unwrap();
    assert_eq!(read_n(&mut c, 3), b"abc");
    c.write_all(b"again\n").unwrap();
    assert_eq!(read_n(&mut c, 15), b"again timed out");
}

#[test]
fn open_and_close_terminals_see_the_connection_come_and_go() {
    let r = start(
        "flow: oc\nnodes:\n  in: { type: TCPIPServerInput, wires: { open: [opened], close: [closed] } }\n  opened: { type: Capture }\n  closed: { type: Capture }\n",
    );
    let c = connect(r.addr);
    let mut got = captured(&r, 1);
    assert_eq!(got[0].label, "opened");
    drop(c);
    got.extend(captured(&r, 1));
    assert_eq!(got[1].label, "closed");
    let id0 = le_text(&mut got[0], &["TCPIP", "Input", "ConnectionDetails", "Id"]);
    let id1 = le_text(&mut got[1], &["TCPIP", "Input", "ConnectionDetails", "Id"]);
    assert!(id0.is_some() && id0 == id1);
}

#[test]
fn a_port_in_use_is_reported_when_the_listener_opens() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    match sluice_nodes_tcpip::port::PortManager::acquire(addr, rt.handle()) {
        Err(e @ sluice_nodes_tcpip::TcpipError::Bind { .. }) => {
            assert!(e.to_string().contains(&addr.to_string()), "{e}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("bound a port in use"),
    }
}

#[test]
fn idle_connection_is_closed_after_the_idle_timeout_when_no_record_starts() {
    let r = start(
        "flow: idle\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, idle_timeout_secs: 1, wires: { out: [out], close: [closed] } }\n  out: { type: TCPIPServerOutput, output_record: delimited }\n  closed: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"still here\n").unwrap();
    assert_eq!(read_n(&mut c, 11), b"still here\n");
    let quiet = Instant::now();
    let mut rest = Vec::new();
    assert_eq!(c.read_to_end(&mut rest).unwrap(), 0);
    assert!(quiet.elapsed() >= Duration::from_millis(900));
    assert_eq!(captured(&r, 1)[0].label, "closed");
}

#[test]
fn close_after_send_output_stream_ends_what_the_peer_reads_but_not_what_it_sends() {
    let r = start(
        "flow: half-close\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, wires: { out: [out] } }\n  out: { type: TCPIPServerOutput, output_record: delimited, close_after_send: output_stream, wires: { failure: [cap] } }\n  cap: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"one\n").unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    assert_eq!(all, b"one\n");
    // The input stream is still read: the next record reaches the flow, whose send fails.
    c.write_all(b"two\n").unwrap();
    let got = captured(&r, 1);
    assert!(
        exception_text(&got[0]).contains("output stream"),
        "{}",
        exception_text(&got[0])
    );
}

#[test]
fn xml_records_are_parsed_and_a_malformed_one_goes_to_failure_when_parsing_is_immediate() {
    let r = start(
        "flow: xml\nnodes:\n  in: { type: TCPIPServerInput, record_detection: delimited, domain: XMLNSC, parse_timing: immediate, wires: { out: [ok], failure: [bad] } }\n  ok: { type: Capture }\n  bad: { type: Capture }\n",
    );
    let mut c = connect(r.addr);
    c.write_all(b"<a>1</a>\n<a>1</b>\n").unwrap();
    let got = captured(&r, 2);
    assert_eq!(got[0].label, "ok");
    assert_eq!(got[1].label, "bad");
    assert!(exception_text(&got[1]).contains("ParserException"));
}
