//! Persistent messages over the network, finished by the log writer: a put and the get
//! pipelined behind it share one log record, a put to a waiting getter logs the message's
//! removal in the put's own record, and after a restart exactly what was answered is
//! committed. A failing log fails the put, skips the pipelined get and loses nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sluice_qm::fs::FaultFs;
use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sluice-qm-netp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The queue manager in `d` (on `fs` when given), with local `queues` defined.
fn open(d: &Path, fs: Option<&FaultFs>, queues: &[&str]) -> Arc<QueueManager> {
    let mut cfg = QmConfig::default();
    if let Some(f) = fs {
        cfg.fs = Arc::new(f.clone());
    }
    let qm = QueueManager::open(d, cfg).expect("open");
    for q in queues {
        qm.define(QueueDef::local(q)).expect("define");
    }
    qm
}

/// A client protocol server for `qm` on an ephemeral port, and its address.
fn serve(qm: &Arc<QueueManager>) -> (Server, String) {
    let s = Server::bind("127.0.0.1:0", qm.clone(), AuthConfig::anonymous()).expect("bind");
    let addr = s.local_addr().to_string();
    (s, addr)
}

fn client(s: &Server) -> Client {
    Client::connect(&s.local_addr().to_string(), Credentials::default()).expect("connect")
}

fn persistent(body: &str) -> Message {
    let mut m = Message::new(body.to_string());
    m.md.persistence = Persistence::Persistent;
    m
}

fn records(qm: &QueueManager) -> u64 {
    qm.log_stats().expect("log").records
}

#[test]
fn put_then_get_of_persistent_messages_shares_one_log_record_and_survives_restart() {
    let d = dir("share");
    {
        let qm = open(&d, None, &["REQ", "REPLY"]);
        qm.put("REQ", persistent("request"), &PutOptions::default())
            .expect("put");
        let (s, _) = serve(&qm);
        let mut c = client(&s);
        let before = records(&qm);
        let (put, got) = c.put_then_get(
            "REPLY",
            &persistent("reply"),
            &PutOptions::default(),
            "REQ",
            &GetOptions::new(),
        );
        put.expect("put");
        let got = got.expect("get").expect("the request");
        assert_eq!(&got.body[..], b"request");
        assert_eq!(got.md.persistence, Persistence::Persistent);
        assert_eq!(
            records(&qm) - before,
            1,
            "the put and the get share a record"
        );
        drop(c);
        drop(s);
        qm.shutdown();
    }
    let qm = open(&d, None, &[]);
    assert_eq!(qm.depth("REQ").expect("depth"), 0, "the get is committed");
    assert_eq!(qm.depth("REPLY").expect("depth"), 1, "the put is committed");
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn persistent_put_to_a_waiting_getter_is_one_record_and_the_message_stays_consumed() {
    let d = dir("waiting");
    {
        let qm = open(&d, None, &["Q"]);
        let (s, addr) = serve(&qm);
        let mut correl = ID_NONE;
        correl[0] = 7;
        let getter = std::thread::spawn(move || {
            let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
            c.get(
                "Q",
                &GetOptions::new()
                    .correl_id(correl)
                    .wait(Duration::from_secs(20)),
            )
        });
        // Let the get reach the server and wait there.
        std::thread::sleep(Duration::from_millis(300));
        let before = records(&qm);
        let mut m = persistent("for the waiting get");
        m.md.correl_id = correl;
        client(&s)
            .put("Q", &m, &PutOptions::default())
            .expect("put");
        let got = getter
            .join()
            .expect("getter")
            .expect("get")
            .expect("message");
        assert_eq!(&got.body[..], b"for the waiting get");
        assert_eq!(records(&qm) - before, 1, "put and removal in one record");
        assert_eq!(qm.depth("Q").expect("depth"), 0);
        drop(s);
        qm.shutdown();
    }
    let qm = open(&d, None, &[]);
    assert_eq!(qm.depth("Q").expect("depth"), 0, "delivered means removed");
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn request_reply_with_persistent_messages_answers_every_request() {
    let d = dir("rr");
    let qm = open(&d, None, &["REQ", "REPLY"]);
    let (s, addr) = serve(&qm);
    let responder = std::thread::spawn(move || {
        let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
        let wait = GetOptions::new().wait(Duration::from_secs(5));
        let mut next = c.get("REQ", &wait).expect("get");
        let mut served = 0;
        while let Some(req) = next.take() {
            let mut r = persistent(&format!("re: {}", String::from_utf8_lossy(&req.body)));
            r.md.correl_id = req.md.msg_id;
            let (p, g) = c.put_then_get("REPLY", &r, &PutOptions::default(), "REQ", &wait);
            p.expect("reply put");
            next = g.expect("next get");
            served += 1;
            if served == 40 {
                break;
            }
        }
        served
    });
    let mut c = client(&s);
    let before = records(&qm);
    for i in 0..40 {
        let reply = c
            .request(
                "REQ",
                &persistent(&format!("q{i}")),
                "REPLY",
                Duration::from_secs(10),
            )
            .expect("request")
            .expect("reply");
        assert_eq!(
            String::from_utf8_lossy(&reply.body),
            format!("re: q{i}"),
            "each reply matches its request"
        );
    }
    assert_eq!(responder.join().expect("responder"), 40);
    // Two records per round trip: each put carries the removal of its message by the get
    // waiting for it (the responder's for a request, the requester's for its reply); one
    // more when the first request comes before the responder waits.
    let used = records(&qm) - before;
    assert!(used <= 81, "{used} log records for 40 round trips");
    assert_eq!(qm.depth("REQ").expect("depth"), 0);
    assert_eq!(qm.depth("REPLY").expect("depth"), 0);
    drop(s);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn failed_log_sync_fails_the_put_skips_the_pipelined_get_and_keeps_its_message() {
    let d = dir("failsync");
    let fs = FaultFs::new();
    let qm = open(&d, Some(&fs), &["REQ", "REPLY"]);
    qm.put("REQ", persistent("request"), &PutOptions::default())
        .expect("put");
    let (s, _) = serve(&qm);
    let mut c = client(&s);
    fs.faults().lock().fail_syncs = 1;
    let (put, got) = c.put_then_get(
        "REPLY",
        &persistent("reply"),
        &PutOptions::default(),
        "REQ",
        &GetOptions::new(),
    );
    assert!(put.is_err(), "the put fails with the log");
    assert!(got.is_err(), "the get behind it is skipped");
    assert_eq!(qm.depth("REQ").expect("depth"), 1, "the request is back");
    assert_eq!(
        qm.depth("REPLY").expect("depth"),
        0,
        "the reply never appears"
    );
    // The connection goes on; the log works again.
    let got = c
        .get("REQ", &GetOptions::new())
        .expect("get")
        .expect("the request is still there");
    assert_eq!(&got.body[..], b"request");
    drop(c);
    drop(s);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn failed_log_sync_leaves_a_waiting_getter_waiting_for_the_next_message() {
    let d = dir("failwait");
    let fs = FaultFs::new();
    let qm = open(&d, Some(&fs), &["Q"]);
    let (s, addr) = serve(&qm);
    let getter = std::thread::spawn(move || {
        let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
        c.get("Q", &GetOptions::new().wait(Duration::from_secs(20)))
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut p = client(&s);
    fs.faults().lock().fail_syncs = 1;
    assert!(
        p.put("Q", &persistent("lost"), &PutOptions::default())
            .is_err(),
        "the put fails with the log"
    );
    p.put("Q", &persistent("second"), &PutOptions::default())
        .expect("put");
    let got = getter
        .join()
        .expect("getter")
        .expect("get")
        .expect("message");
    assert_eq!(&got.body[..], b"second");
    assert_eq!(qm.depth("Q").expect("depth"), 0);
    drop(p);
    drop(s);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn large_persistent_messages_are_answered_whole_when_the_socket_cannot_take_them_at_once() {
    let d = dir("large");
    let qm = open(&d, None, &["BIG"]);
    let (s, addr) = serve(&qm);
    let body = bytes::Bytes::from((0..12u32 << 20).map(|i| i as u8).collect::<Vec<u8>>());
    // A get already waiting takes the message straight from the put...
    let getter = std::thread::spawn(move || {
        let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
        c.get("BIG", &GetOptions::new().wait(Duration::from_secs(20)))
    });
    std::thread::sleep(Duration::from_millis(300));
    let mut p = client(&s);
    let mut m = Message::new(body.clone());
    m.md.persistence = Persistence::Persistent;
    p.put("BIG", &m, &PutOptions::default()).expect("put");
    let got = getter
        .join()
        .expect("getter")
        .expect("get")
        .expect("message");
    assert!(got.body == body, "the waiting get receives the whole body");
    // ...and a get that finds one has its removal logged before the answer.
    p.put("BIG", &m, &PutOptions::default()).expect("put");
    let got = p
        .get("BIG", &GetOptions::new())
        .expect("get")
        .expect("message");
    assert!(got.body == body, "the get receives the whole body");
    assert_eq!(qm.depth("BIG").expect("depth"), 0);
    drop(p);
    drop(s);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&d);
}
