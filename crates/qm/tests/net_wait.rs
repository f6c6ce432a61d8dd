//! Gets that wait over the network: answered by the put that satisfies them, by the
//! deadline, by the queue going away, and dropped cleanly when their client leaves.

use std::io::Write;
use std::time::{Duration, Instant};

mod raw;

use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

use raw::{connected, frame, get_payload, read_answer};

fn server() -> (std::sync::Arc<QueueManager>, Server) {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    let s = Server::bind("127.0.0.1:0", qm.clone(), AuthConfig::anonymous()).expect("bind");
    (qm, s)
}

fn client(s: &Server) -> Client {
    Client::connect(&s.local_addr().to_string(), Credentials::default()).expect("connect")
}

#[test]
fn a_waiting_get_times_out_no_earlier_than_asked() {
    let (qm, s) = server();
    qm.define(QueueDef::local("Q")).expect("define");
    let mut c = client(&s);
    let t = Instant::now();
    let got = c
        .get("Q", &GetOptions::new().wait(Duration::from_millis(300)))
        .expect("get");
    let took = t.elapsed();
    assert!(got.is_none());
    assert!(
        took >= Duration::from_millis(300),
        "returned after {took:?}"
    );
    assert!(took < Duration::from_secs(3), "returned after {took:?}");
    // The connection goes on normally after a wait ran out.
    c.put("Q", &Message::new("next"), &PutOptions::default())
        .expect("put");
    assert_eq!(c.depth("Q").expect("depth"), 1);
}

#[test]
fn waiting_gets_are_answered_by_puts_from_other_connections() {
    let (qm, s) = server();
    qm.define(QueueDef::local("Q")).expect("define");
    qm.define(QueueDef::local("P")).expect("define");
    let addr = s.local_addr().to_string();
    // 16 waiters by CorrelId on one queue and 4 plain waiters on another, each on its own
    // connection.
    let correl: Vec<_> = (0..16u8)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
                let mut id = [0u8; 24];
                id[0] = i + 1;
                let o = GetOptions::new()
                    .correl_id(id)
                    .wait(Duration::from_secs(20));
                let m = c.get("Q", &o).expect("get").expect("message");
                assert_eq!(m.md.correl_id, id);
                assert_eq!(&m.body[..], format!("for {i}").as_bytes());
            })
        })
        .collect();
    let plain: Vec<_> = (0..4)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
                let o = GetOptions::new().wait(Duration::from_secs(20));
                let m = c.get("P", &o).expect("get").expect("message");
                assert_eq!(&m.body[..], b"plain");
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut p = client(&s);
    for i in 0..16u8 {
        let mut m = Message::new(format!("for {i}"));
        m.md.correl_id[0] = i + 1;
        p.put("Q", &m, &PutOptions::default()).expect("put");
    }
    for _ in 0..4 {
        p.put("P", &Message::new("plain"), &PutOptions::default())
            .expect("put");
    }
    for h in correl.into_iter().chain(plain) {
        h.join().expect("waiter");
    }
    assert_eq!(qm.depth("Q").expect("depth"), 0);
    assert_eq!(qm.depth("P").expect("depth"), 0);
}

#[test]
fn a_client_leaving_during_a_wait_does_not_swallow_the_next_message() {
    let (qm, s) = server();
    qm.define(QueueDef::local("Q")).expect("define");
    let mut raw = connected(&s);
    raw.write_all(&frame(2, 10, &get_payload("Q", 0, 60_000)))
        .expect("waiting get");
    std::thread::sleep(Duration::from_millis(100));
    drop(raw);
    std::thread::sleep(Duration::from_millis(200));
    qm.put("Q", Message::new("kept"), &PutOptions::default())
        .expect("put");
    let m = client(&s)
        .get("Q", &GetOptions::new().wait(Duration::from_secs(5)))
        .expect("get")
        .expect("the message is still there");
    assert_eq!(&m.body[..], b"kept");
}

#[test]
fn a_request_sent_behind_a_waiting_get_is_answered_after_it() {
    let (qm, s) = server();
    qm.define(QueueDef::local("Q")).expect("define");
    let mut raw = connected(&s);
    let mut two = frame(2, 10, &get_payload("Q", 0, 300));
    two.extend(frame(3, 7, &[1, 0, b'Q'])); // DEPTH Q
    raw.write_all(&two).expect("get then depth");
    let t = Instant::now();
    assert_eq!(read_answer(&mut raw), (2, 0));
    assert!(t.elapsed() >= Duration::from_millis(250));
    assert_eq!(read_answer(&mut raw), (3, 0));
}

#[test]
fn a_get_sent_behind_a_waiting_get_is_run_after_it_and_finds_what_came_meanwhile() {
    let (qm, s) = server();
    qm.define(QueueDef::local("Q")).expect("define");
    qm.define(QueueDef::local("P")).expect("define");
    let mut raw = connected(&s);
    // A get on P without waiting, sent behind a get on Q that waits: it runs only once the
    // first is answered, so it finds the message put on P in between.
    let mut two = frame(2, 10, &get_payload("Q", 0, 300));
    two.extend(frame(3, 10, &get_payload("P", 0, 0)));
    raw.write_all(&two).expect("get then get");
    std::thread::sleep(Duration::from_millis(100));
    qm.put("P", Message::new("meanwhile"), &PutOptions::default())
        .expect("put");
    assert_eq!(read_answer(&mut raw), (2, 0));
    assert_eq!(read_answer(&mut raw), (3, 0));
    assert_eq!(qm.depth("P").expect("depth"), 0, "the second get took it");
    // The connection goes on.
    raw.write_all(&frame(4, 7, &[1, 0, b'P'])).expect("depth");
    assert_eq!(read_answer(&mut raw), (4, 0));
}

#[test]
fn deleting_or_shutting_down_answers_waiting_gets() {
    let (qm, s) = server();
    qm.define(QueueDef::local("GONE")).expect("define");
    qm.define(QueueDef::local("STAY")).expect("define");
    let addr = s.local_addr().to_string();
    let waiter = |q: &'static str| {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
            c.get(q, &GetOptions::new().wait(Duration::from_secs(60)))
                .map_err(|e| e.reason_code())
        })
    };
    let (gone, stay) = (waiter("GONE"), waiter("STAY"));
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    qm.delete("GONE", false).expect("delete");
    assert_eq!(gone.join().expect("join"), Err(2085));
    qm.shutdown();
    assert!(stay.join().expect("join").is_err());
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_persistent_message_given_to_a_waiting_get_does_not_come_back_after_restart() {
    let dir = std::env::temp_dir().join(format!("sluice-qm-net-wait-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let qm = QueueManager::open(&dir, QmConfig::default()).expect("open");
        qm.define(QueueDef::local("Q")).expect("define");
        let s = Server::bind("127.0.0.1:0", qm.clone(), AuthConfig::anonymous()).expect("bind");
        let addr = s.local_addr().to_string();
        let waiter = std::thread::spawn(move || {
            let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
            c.get("Q", &GetOptions::new().wait(Duration::from_secs(20)))
                .expect("get")
                .expect("message")
        });
        std::thread::sleep(Duration::from_millis(200));
        let mut m = Message::new("durable");
        m.md.persistence = Persistence::Persistent;
        client(&s)
            .put("Q", &m, &PutOptions::default())
            .expect("put");
        let got = waiter.join().expect("waiter");
        assert_eq!(&got.body[..], b"durable");
        assert_eq!(got.md.persistence, Persistence::Persistent);
        drop(s);
        qm.shutdown();
    }
    let qm = QueueManager::open(&dir, QmConfig::default()).expect("reopen");
    assert_eq!(
        qm.depth("Q").expect("depth"),
        0,
        "the get's removal was logged"
    );
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
