//! Client/server integration over TCP.

use std::collections::HashMap;
use std::time::{Duration, Instant};

mod raw;

use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

use raw::{frame, get_payload};

fn server(auth: AuthConfig) -> (std::sync::Arc<QueueManager>, Server) {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    let s = Server::bind("127.0.0.1:0", qm.clone(), auth).expect("bind");
    (qm, s)
}

fn client(s: &Server) -> Client {
    Client::connect(&s.local_addr().to_string(), Credentials::default()).expect("connect")
}

#[test]
fn admin_put_get_browse_over_the_wire() {
    let (_qm, s) = server(AuthConfig::anonymous());
    let mut c = client(&s);
    assert_eq!(c.qmgr_name(), "SLUICE");
    c.define(&QueueDef {
        max_depth: 10,
        ..QueueDef::local("Q")
    })
    .expect("define");
    assert_eq!(c.show("Q").expect("show").max_depth, 10);
    assert!(c.list().expect("list").iter().any(|d| d.name == "Q"));
    let mut m = Message::new("hello");
    m.md.correl_id = id_from_str("C1");
    m.md.reply_to_q = "R".into();
    m.set_property("k", PropertyValue::String("v".into()));
    let id = c.put("Q", &m, &PutOptions::default()).expect("put");
    c.put("Q", &Message::new("second"), &PutOptions::default())
        .expect("put");
    assert_eq!(c.depth("Q").expect("depth"), 2);
    let mut cur = BrowseCursor::new();
    let b1 = c
        .browse("Q", &GetOptions::new(), &mut cur)
        .expect("browse")
        .expect("msg");
    let b2 = c
        .browse("Q", &GetOptions::new(), &mut cur)
        .expect("browse")
        .expect("msg");
    assert!(
        c.browse("Q", &GetOptions::new(), &mut cur)
            .expect("browse")
            .is_none()
    );
    assert_eq!(
        (&b1.body[..], &b2.body[..]),
        (&b"hello"[..], &b"second"[..])
    );
    let g = c
        .get("Q", &GetOptions::new().correl_id(id_from_str("C1")))
        .expect("get")
        .expect("msg");
    assert_eq!(g.md.msg_id, id);
    assert_eq!(g.md.reply_to_q, "R");
    assert_eq!(g.property("k"), Some(&PropertyValue::String("v".into())));
    assert_eq!(c.clear("Q").expect("clear"), 1);
    let e = c.get("NOPE", &GetOptions::new()).expect_err("unknown");
    assert_eq!(e.reason_code(), 2085);
    c.alter(&QueueDef {
        put_inhibited: true,
        ..QueueDef::local("Q")
    })
    .expect("alter");
    assert_eq!(
        c.put("Q", &m, &PutOptions::default())
            .expect_err("inhibited")
            .reason_code(),
        2051
    );
    c.delete("Q", false).expect("delete");
}

#[test]
fn units_of_work_and_disconnect_backs_out() {
    let (qm, s) = server(AuthConfig::anonymous());
    qm.define(QueueDef::local("Q")).expect("define");
    let mut c = client(&s);
    c.begin().expect("begin");
    c.put_syncpoint("Q", &Message::new("1"), &PutOptions::default())
        .expect("put");
    assert_eq!(
        qm.depth("Q").expect("depth"),
        1,
        "CURDEPTH counts an uncommitted put"
    );
    assert!(qm.get("Q", &GetOptions::new()).expect("get").is_none());
    c.commit().expect("commit");
    assert_eq!(qm.depth("Q").expect("depth"), 1);
    let m = c
        .get_syncpoint("Q", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(m.md.backout_count, 0);
    c.rollback().expect("rollback");
    let m = c
        .get_syncpoint("Q", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(m.md.backout_count, 1);
    drop(c); // disconnect inside the unit: backed out
    let t = Instant::now();
    while qm.depth("Q").expect("depth") == 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        qm.get("Q", &GetOptions::new())
            .expect("get")
            .expect("msg")
            .md
            .backout_count,
        2
    );
}

#[test]
fn waiting_get_does_not_block_other_clients_and_request_reply_works() {
    let (qm, s) = server(AuthConfig::anonymous());
    qm.define(QueueDef::local("REQ")).expect("define");
    qm.define(QueueDef::model("SYSTEM.DEFAULT.MODEL.QUEUE"))
        .expect("model");
    let addr = s.local_addr().to_string();
    let responder = std::thread::spawn(move || {
        let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
        for _ in 0..50 {
            let req = c
                .get("REQ", &GetOptions::new().wait(Duration::from_secs(10)))
                .expect("get")
                .expect("request");
            let mut reply = Message::new(req.body.clone());
            reply.md.correl_id = req.md.msg_id;
            reply.md.msg_type = msg_type::REPLY;
            c.put(&req.md.reply_to_q, &reply, &PutOptions::default())
                .expect("reply");
        }
    });
    let mut c = client(&s);
    let reply_q = c
        .create_dynamic("SYSTEM.DEFAULT.MODEL.QUEUE", "")
        .expect("dynamic");
    for i in 0..50 {
        let mut m = Message::new(format!("req{i}"));
        m.md.reply_to_q = reply_q.clone();
        m.md.msg_type = msg_type::REQUEST;
        let id = c.put("REQ", &m, &PutOptions::default()).expect("put");
        let r = c
            .get(
                &reply_q,
                &GetOptions::new()
                    .correl_id(id)
                    .wait(Duration::from_secs(10)),
            )
            .expect("get");
        assert_eq!(r.expect("reply").body, format!("req{i}"));
    }
    responder.join().expect("responder");
    drop(c);
    let t = Instant::now();
    while qm.queue_def(&reply_q).is_ok() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        qm.queue_def(&reply_q).is_err(),
        "dynamic queue deleted at disconnect"
    );
}

#[test]
fn the_queue_manager_sets_who_put_a_message_unless_the_client_sets_all_context() {
    let auth = AuthConfig {
        allow_anonymous: true,
        users: HashMap::from([("app".to_string(), "secret".to_string())]),
        tokens: Vec::new(),
    };
    let (qm, s) = server(auth);
    qm.define(QueueDef::local("Q")).expect("define");
    let creds = Credentials {
        user: "app".into(),
        password: "secret".into(),
        token: String::new(),
    };
    let mut c = Client::connect(&s.local_addr().to_string(), creds).expect("connect");
    let mut m = Message::new("x");
    m.md.user_identifier = "mqm".into();
    m.md.put_appl_name = "forged".into();
    m.md.appl_identity_data = "forged".into();
    m.md.reply_to_q = "REPLIES".into();
    c.put("Q", &m, &PutOptions::default()).expect("put");
    let all = PutOptions {
        set_all_context: true,
        ..PutOptions::default()
    };
    c.put("Q", &m, &all).expect("put setting all context");
    let got = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    let program = std::env::current_exe().expect("exe");
    let program: String = program
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .chars()
        .take(28)
        .collect();
    assert_eq!(got.md.user_identifier, "app", "the authenticated user");
    assert_eq!(got.md.put_appl_name, program);
    assert_eq!(got.md.appl_identity_data, "");
    assert_eq!(
        got.md.reply_to_qmgr, "SLUICE",
        "filled in by the queue manager"
    );
    let kept = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(
        (
            kept.md.user_identifier.as_str(),
            kept.md.put_appl_name.as_str()
        ),
        ("mqm", "forged"),
        "set all context keeps what the application gave"
    );
    // Without credentials, the user the client runs as.
    let mut anon = client(&s);
    anon.put("Q", &Message::new("y"), &PutOptions::default())
        .expect("put");
    let got = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert!(!got.md.user_identifier.is_empty());
}

#[test]
fn authentication_by_password_and_token() {
    let auth = AuthConfig {
        allow_anonymous: false,
        users: HashMap::from([("app".to_string(), "secret".to_string())]),
        tokens: vec!["tok123".into()],
    };
    let (_qm, s) = server(auth);
    let addr = s.local_addr().to_string();
    let e = Client::connect(&addr, Credentials::default())
        .err()
        .expect("anonymous refused");
    assert_eq!(e.reason_code(), 2035);
    let wrong = Credentials {
        user: "app".into(),
        password: "nope".into(),
        token: String::new(),
    };
    assert!(Client::connect(&addr, wrong).is_err());
    let ok = Credentials {
        user: "app".into(),
        password: "secret".into(),
        token: String::new(),
    };
    Client::connect(&addr, ok)
        .expect("password")
        .depth("SYSTEM.DEAD.LETTER.QUEUE")
        .expect("depth");
    let tok = Credentials {
        token: "tok123".into(),
        ..Credentials::default()
    };
    Client::connect(&addr, tok)
        .expect("token")
        .list()
        .expect("list");
}

#[test]
fn client_reconnects_after_server_restart() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    qm.define(QueueDef::local("Q")).expect("define");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut s = Server::start(listener, qm.clone(), AuthConfig::anonymous()).expect("start");
    let mut c = Client::connect(&addr.to_string(), Credentials::default()).expect("connect");
    c.put("Q", &Message::new("a"), &PutOptions::default())
        .expect("put");
    s.stop();
    drop(s);
    // Existing connection threads keep serving; a new server on the same port also works.
    let s2 = Server::bind(&addr.to_string(), qm.clone(), AuthConfig::anonymous());
    if let Ok(_s2) = s2 {
        c.reconnect().expect("reconnect");
        assert_eq!(c.depth("Q").expect("depth"), 1);
    }
}

#[test]
fn large_message_over_the_wire() {
    let (_qm, s) = server(AuthConfig::anonymous());
    let mut c = client(&s);
    c.define(&QueueDef::local("BIG")).expect("define");
    let body = bytes::Bytes::from(vec![7u8; 20 << 20]);
    c.put("BIG", &Message::new(body.clone()), &PutOptions::default())
        .expect("put");
    assert_eq!(
        c.get("BIG", &GetOptions::new())
            .expect("get")
            .expect("msg")
            .body,
        body
    );
}

#[test]
fn pipelined_request_reply_in_one_round_trip() {
    let (qm, s) = server(AuthConfig::anonymous());
    qm.define(QueueDef::local("REQ")).expect("define");
    qm.define(QueueDef::local("REPLY")).expect("define");
    let addr = s.local_addr().to_string();
    let responder = std::thread::spawn(move || {
        let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
        let wait = GetOptions::new().wait(Duration::from_secs(10));
        let mut req = c.get("REQ", &wait).expect("get").expect("first request");
        for i in 0..20 {
            let mut reply = Message::new(req.body.clone());
            reply.md.correl_id = req.md.msg_id;
            if i == 19 {
                c.put(&req.md.reply_to_q, &reply, &PutOptions::default())
                    .expect("last reply");
                break;
            }
            let (p, g) = c.put_then_get(
                &req.md.reply_to_q,
                &reply,
                &PutOptions::default(),
                "REQ",
                &wait,
            );
            p.expect("reply put");
            req = g.expect("get").expect("next request");
        }
    });
    let mut c = client(&s);
    for i in 0..20 {
        let r = c
            .request(
                "REQ",
                &Message::new(format!("r{i}")),
                "REPLY",
                Duration::from_secs(10),
            )
            .expect("request")
            .expect("reply");
        assert_eq!(r.body, format!("r{i}"));
    }
    responder.join().expect("responder");
    // A failed put makes the pipelined get fail at once instead of waiting.
    let t = Instant::now();
    let (p, g) = c.put_then_get(
        "NOPE",
        &Message::new("x"),
        &PutOptions::default(),
        "REPLY",
        &GetOptions::new().wait(Duration::from_secs(30)),
    );
    assert_eq!(p.expect_err("unknown").reason_code(), 2085);
    assert!(g.is_err());
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[cfg(feature = "tls")]
#[test]
fn tls_connection_works_and_plain_client_is_refused() {
    use sluice_qm::net::tls;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tls");
    let read = |f: &str| std::fs::read(dir.join(f)).expect("test certificate");
    let scfg = tls::server_config(&read("server.pem"), &read("server.key")).expect("server config");
    let ccfg = tls::client_config(&read("ca.pem")).expect("client config");
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let _s = Server::start_tls(listener, qm.clone(), AuthConfig::anonymous(), scfg).expect("start");
    let t = tls::ClientTls {
        config: ccfg.clone(),
        server_name: "localhost".into(),
    };
    let mut c = Client::connect_tls(&addr, Credentials::default(), t).expect("tls connect");
    c.define(&QueueDef::local("SECURE")).expect("define");
    let body = bytes::Bytes::from(vec![3u8; 300_000]);
    c.put(
        "SECURE",
        &Message::new(body.clone()),
        &PutOptions::default(),
    )
    .expect("put");
    assert_eq!(
        c.get("SECURE", &GetOptions::new())
            .expect("get")
            .expect("msg")
            .body,
        body
    );
    assert!(
        Client::connect(&addr, Credentials::default()).is_err(),
        "plain client refused"
    );
    let wrong = tls::ClientTls {
        config: ccfg,
        server_name: "other.example".into(),
    };
    assert!(
        Client::connect_tls(&addr, Credentials::default(), wrong).is_err(),
        "name checked"
    );
    assert!(tls::server_config(b"not pem", b"nope").is_err());
}

#[test]
fn a_client_leaving_during_a_long_wait_frees_its_unit_of_work() {
    use std::io::{Read, Write};
    let (qm, s) = server(AuthConfig::anonymous());
    qm.define(QueueDef::local("Q")).expect("define");
    qm.define(QueueDef::local("EMPTY")).expect("define");
    qm.put("Q", Message::new("held"), &PutOptions::default())
        .expect("put");
    let mut raw = std::net::TcpStream::connect(s.local_addr()).expect("connect");
    raw.write_all(&frame(1, 1, &[0, 0, 0, 0, 0, 0, 1, 0]))
        .expect("connect frame");
    raw.write_all(&frame(2, 10, &get_payload("Q", 1, 0)))
        .expect("syncpoint get");
    let mut buf = [0u8; 512];
    let t = Instant::now();
    let mut got = 0;
    while qm.depth("Q").expect("depth") != 0 || got == 0 {
        got += raw.read(&mut buf).expect("read");
        assert!(t.elapsed() < Duration::from_secs(5), "no answer");
    }
    raw.write_all(&frame(3, 10, &get_payload("EMPTY", 0, 3_600_000)))
        .expect("long wait");
    std::thread::sleep(Duration::from_millis(100));
    drop(raw); // the client goes away in the middle of the wait
    let t = Instant::now();
    while qm.depth("Q").expect("depth") == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "unit of work never backed out"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let m = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(m.md.backout_count, 1);
}

/// Random bytes sent to the server (each on its own connection, some after a valid CONNECT,
/// some as a frame with a valid header around a random body): every connection is answered
/// or closed without waiting for more than was sent, and the server keeps serving, on every
/// poll thread.
#[test]
fn random_bytes_over_the_socket_never_stop_the_server() {
    use std::io::{Read, Write};
    let (qm, s) = server(AuthConfig::anonymous());
    qm.define(QueueDef::local("Q")).expect("define");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let mut bytes = Vec::new();
        if round % 2 == 0 {
            bytes.extend(frame(1, 1, &[0, 0, 0, 0, 0, 0, 1, 0]));
        }
        let body: Vec<u8> = (0..next() % 64).map(|_| next() as u8).collect();
        if round % 3 == 0 {
            // A well-formed header (PUT or GET of one of the polled kinds) around junk.
            let op = [9u8, 10][(next() % 2) as usize];
            let mut p = vec![1, 0, b'Q', (next() % 8) as u8];
            p.extend_from_slice(&body);
            bytes.extend(frame(2, op, &p));
        } else {
            bytes.extend_from_slice(&body);
        }
        let mut raw = std::net::TcpStream::connect(s.local_addr()).expect("connect");
        raw.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        raw.write_all(&bytes).expect("send");
        raw.shutdown(std::net::Shutdown::Write).expect("half close");
        let mut answers = Vec::new();
        let r = raw.read_to_end(&mut answers);
        assert!(
            r.is_ok(),
            "round {round}: the server neither answered nor closed: {r:?} after {bytes:?}"
        );
    }
    // Still serving, on every poll thread (connections are dealt to them in turn).
    for _ in 0..4 {
        let mut c = client(&s);
        c.put("Q", &Message::new("still here"), &PutOptions::default())
            .expect("put");
        assert!(c.get("Q", &GetOptions::new()).expect("get").is_some());
    }
}
