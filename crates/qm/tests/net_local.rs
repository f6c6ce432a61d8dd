//! The client protocol over a local (Unix domain) socket: the same requests as over TCP,
//! waiting gets answered by the putting thread and persistent request/reply finished by the
//! log writer; a socket file left by a process that is gone is replaced, a served one is not.

use std::path::PathBuf;
use std::time::Duration;

use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sluice-qm-local-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn socket(d: &std::path::Path) -> String {
    d.join("qm.sock").display().to_string()
}

/// Requesters and a responder through the local socket: `rounds` request/reply round trips
/// of `body` each (the responder replies and waits for the next request in one call).
fn request_reply(addr: &str, body: bytes::Bytes, persistence: Persistence, rounds: usize) {
    let a = addr.to_string();
    let responder = std::thread::spawn(move || {
        let mut c = Client::connect(&a, Credentials::default()).expect("connect");
        let wait = GetOptions::new().wait(Duration::from_secs(10));
        let mut next = c.get("REQ", &wait).expect("get");
        for i in 0..rounds {
            let req = next.take().expect("a request");
            let mut r = Message::new(req.body.clone());
            r.md.correl_id = req.md.msg_id;
            r.md.persistence = req.md.persistence;
            if i + 1 == rounds {
                c.put("REPLY", &r, &PutOptions::default()).expect("reply");
            } else {
                let (put, got) = c.put_then_get("REPLY", &r, &PutOptions::default(), "REQ", &wait);
                put.expect("reply");
                next = got.expect("get");
            }
        }
    });
    let mut c = Client::connect(addr, Credentials::default()).expect("connect");
    for i in 0..rounds {
        let mut body = body.to_vec();
        body.extend_from_slice(format!(" #{i}").as_bytes());
        let mut m = Message::new(body.clone());
        m.md.persistence = persistence;
        let reply = c
            .request("REQ", &m, "REPLY", Duration::from_secs(10))
            .expect("request")
            .expect("a reply");
        assert_eq!(reply.body, body, "round trip {i}");
        assert_eq!(reply.md.persistence, persistence);
    }
    responder.join().expect("responder");
}

#[test]
fn request_reply_over_a_local_socket() {
    let d = dir("rr");
    let qm = QueueManager::open(&d.join("qm"), QmConfig::default()).expect("open");
    for q in ["REQ", "REPLY"] {
        qm.define(QueueDef::local(q)).expect("define");
    }
    let s = Server::bind(&socket(&d), qm.clone(), AuthConfig::anonymous()).expect("bind");
    assert_eq!(s.address(), socket(&d));
    let small = bytes::Bytes::from(vec![b'x'; 2048]);
    request_reply(s.address(), small.clone(), Persistence::NotPersistent, 300);
    request_reply(s.address(), small, Persistence::Persistent, 100);
    // Larger than a socket takes at once: the answer is finished by a delivery thread.
    let big = bytes::Bytes::from(vec![b'y'; 12 << 20]);
    request_reply(s.address(), big.clone(), Persistence::NotPersistent, 2);
    request_reply(s.address(), big, Persistence::Persistent, 2);
    assert_eq!(qm.depth("REQ").expect("depth"), 0);
    assert_eq!(qm.depth("REPLY").expect("depth"), 0);
    drop(s);
    assert!(
        !d.join("qm.sock").exists(),
        "the socket file goes with the server"
    );
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_stale_socket_file_is_replaced_and_a_served_one_is_not() {
    let d = dir("stale");
    let path = socket(&d);
    // A listener that went away without removing its file, as after kill -9.
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
    assert!(d.join("qm.sock").exists());
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    qm.define(QueueDef::local("Q")).expect("define");
    let s = Server::bind(&path, qm.clone(), AuthConfig::anonymous()).expect("replaces it");
    let err = Server::bind(&path, qm.clone(), AuthConfig::anonymous())
        .err()
        .expect("a served socket is not taken over");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    // The first server still serves on it.
    let mut c = Client::connect(&path, Credentials::default()).expect("connect");
    c.put("Q", &Message::new("still here"), &PutOptions::default())
        .expect("put");
    assert_eq!(c.depth("Q").expect("depth"), 1);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_local_client_reconnects_after_the_server_restarts() {
    let d = dir("reconnect");
    let path = socket(&d);
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    qm.define(QueueDef::local("Q")).expect("define");
    let s = Server::bind(&path, qm.clone(), AuthConfig::anonymous()).expect("bind");
    let mut c = Client::connect(&path, Credentials::default()).expect("connect");
    c.put("Q", &Message::new("a"), &PutOptions::default())
        .expect("put");
    drop(s);
    assert!(Client::connect(&path, Credentials::default()).is_err());
    let _s2 = Server::bind(&path, qm.clone(), AuthConfig::anonymous()).expect("bind again");
    c.reconnect().expect("reconnect");
    assert_eq!(c.depth("Q").expect("depth"), 1);
    let _ = std::fs::remove_dir_all(&d);
}
