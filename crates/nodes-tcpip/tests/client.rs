//! TCP/IP client nodes against real sockets: a remote server played by the test on a std
//! listener, and flows started in process.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

use common::{captured, connect, exception_text, le_text, read_n, start};

/// A remote server that answers each line with the line in capitals, on every connection.
fn upper_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut w = s.try_clone().unwrap();
                for line in BufReader::new(s).lines().map_while(Result::ok) {
                    if w.write_all(format!("{}\n", line.to_uppercase()).as_bytes())
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn request_and_reply_use_the_same_pooled_connection_when_clients_run_at_once() {
    let remote = upper_server();
    let r = start(&format!(
        "flow: relay\ninstances: 4\nnodes:\n  in: {{ type: TCPIPServerInput, record_detection: delimited, wires: {{ out: [ask] }} }}\n  ask: {{ type: TCPIPClientOutput, connection_details: '127.0.0.1:{remote}', max_connections: 2, output_record: delimited, wires: {{ out: [answer] }} }}\n  answer: {{ type: TCPIPClientReceive, connection_details: '127.0.0.1:{remote}', record_detection: delimited, read_timeout_secs: 5, wires: {{ out: [back] }} }}\n  back: {{ type: TCPIPServerOutput, output_record: delimited }}\n"
    ));
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let addr = r.addr;
            std::thread::spawn(move || {
                let mut c = connect(addr);
                for i in 0..10 {
                    let line = format!("client{k} line{i:02}\n");
                    c.write_all(line.as_bytes()).unwrap();
                    let got = read_n(&mut c, line.len());
                    assert_eq!(String::from_utf8(got).unwrap(), line.to_uppercase());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn client_input_propagates_what_the_server_sends_unasked() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let _ = s.write_all(b"tick 1\ntick 2\n");
            std::thread::sleep(Duration::from_secs(5));
        }
    });
    let r = start(&format!(
        "flow: ticks\nnodes:\n  in: {{ type: TCPIPClientInput, connection_details: '127.0.0.1:{port}', record_detection: delimited, wires: {{ out: [cap] }} }}\n  cap: {{ type: Capture }}\n"
    ));
    let mut got = captured(&r, 2);
    assert_eq!(common::body_text(&mut got[0]), "tick 1");
    assert_eq!(common::body_text(&mut got[1]), "tick 2");
    let ty = le_text(
        &mut got[0],
        &["TCPIP", "Input", "ConnectionDetails", "Type"],
    );
    assert_eq!(ty.as_deref(), Some("TCPIPClient"));
    let p = le_text(
        &mut got[0],
        &["TCPIP", "Input", "ConnectionDetails", "Hostname"],
    );
    assert_eq!(p.as_deref(), Some("127.0.0.1"));
}

#[test]
fn client_output_fails_after_its_retries_when_nothing_listens() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = start(&format!(
        "flow: refused\nnodes:\n  in: {{ type: TCPIPServerInput, record_detection: delimited, wires: {{ out: [ask] }} }}\n  ask: {{ type: TCPIPClientOutput, connection_details: '127.0.0.1:{closed}', retry_attempts: 2, retry_interval_ms: 50, wires: {{ failure: [cap] }} }}\n  cap: {{ type: Capture }}\n"
    ));
    let mut c = connect(r.addr);
    c.write_all(b"hello\n").unwrap();
    let got = captured(&r, 1);
    let ex = exception_text(&got[0]);
    assert!(
        ex.contains(&format!("cannot connect to 127.0.0.1:{closed}")),
        "{ex}"
    );
}

#[test]
fn client_receive_takes_the_timeout_terminal_when_the_server_never_answers() {
    // A server that reads everything and answers nothing.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let remote = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s, &mut std::io::sink());
            });
        }
    });
    let r = start(&format!(
        "flow: silent\nnodes:\n  in: {{ type: TCPIPServerInput, record_detection: delimited, wires: {{ out: [ask] }} }}\n  ask: {{ type: TCPIPClientOutput, connection_details: '127.0.0.1:{remote}', max_connections: 1, output_record: delimited, wires: {{ out: [answer] }} }}\n  answer: {{ type: TCPIPClientReceive, connection_details: '127.0.0.1:{remote}', record_detection: delimited, read_timeout_secs: 1, wires: {{ timeout: [back] }} }}\n  back: {{ type: TCPIPServerOutput, output_delimiter: custom, output_record: delimited, output_custom_delimiter: \" (no answer)\\n\" }}\n"
    ));
    let mut c = connect(r.addr);
    // Twice: the one pooled connection is given back after the first invocation timed out.
    for word in ["ping", "pong"] {
        let started = std::time::Instant::now();
        c.write_all(format!("{word}\n").as_bytes()).unwrap();
        let expected = format!("{word} (no answer)\n");
        assert_eq!(read_n(&mut c, expected.len()), expected.as_bytes());
        assert!(started.elapsed() >= Duration::from_millis(900));
    }
}
