//! The queue manager through the server: MQ flows, the `sluice qm` CLI, the client protocol and the
//! REST messaging API, units of work and backout.

mod common;

use std::process::Command;
use std::time::Duration;

use common::tempdir::TempDir;
use common::{Server, bin, samples_dir};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, PutOptions};

fn client(s: &Server) -> Client {
    Client::connect(&format!("127.0.0.1:{}", s.qm_port), Credentials::default()).expect("connect")
}

fn qm(s: &Server, args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .arg("qm")
        .args(args)
        .args(["--server", &format!("127.0.0.1:{}", s.qm_port)])
        .output()
        .expect("run sluice qm")
}

/// The next message on `queue`, waiting up to 20 s for it.
fn wait_for_message(c: &mut Client, queue: &str) -> Message {
    c.get(queue, &GetOptions::new().wait(Duration::from_secs(20)))
        .unwrap()
        .unwrap_or_else(|| panic!("no message on {queue}"))
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn mq_blob_echo_moves_messages_from_in_to_out_through_the_cli() {
    let s = Server::start(&samples_dir());
    let dir = TempDir::new("msgs");
    let f = dir.path().join("m.bin");
    std::fs::write(&f, common::sale_list(2)).unwrap();
    let o = qm(
        &s,
        &[
            "put",
            "SAMPLES.IN",
            "--file",
            &f.display().to_string(),
            "--count",
            "5",
            "--persistent",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.path().join("out");
    let mut got = 0;
    for _ in 0..50 {
        let o = qm(
            &s,
            &[
                "get",
                "SAMPLES.OUT",
                "--wait",
                "1",
                "--all",
                "--out",
                &out.display().to_string(),
            ],
        );
        if o.status.success() {
            got = std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0);
            if got == 5 {
                break;
            }
        }
    }
    assert_eq!(got, 5);
    for e in std::fs::read_dir(&out).unwrap() {
        assert_eq!(
            std::fs::read(e.unwrap().path()).unwrap(),
            common::sale_list(2)
        );
    }
    let o = qm(&s, &["depth", "SAMPLES.IN"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0");
}

#[test]
fn local_applications_connect_through_the_data_dirs_socket() {
    let s = Server::start(&samples_dir());
    let sock = s.data_dir.join("qm.sock").display().to_string();
    let mut c = Client::connect(&sock, Credentials::default()).expect("connect locally");
    c.put(
        "SAMPLES.IN",
        &Message::new("over the local socket"),
        &PutOptions::default(),
    )
    .expect("put");
    let reply = c
        .get(
            "SAMPLES.OUT",
            &GetOptions::new().wait(Duration::from_secs(10)),
        )
        .expect("get")
        .expect("the echo flow moved it");
    assert_eq!(&reply.body[..], b"over the local socket");
    let o = Command::new(bin())
        .args(["qm", "depth", "SAMPLES.OUT", "--server", &sock])
        .output()
        .expect("run sluice qm");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0");
}

#[test]
fn a_queue_a_flow_reads_cannot_be_deleted() {
    let s = Server::start(&samples_dir());
    let o = qm(&s, &["delete", "SAMPLES.IN", "--purge"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("2042"), "{}", text(&o));
    assert!(text(&o).contains("mq-blob-echo"), "{}", text(&o));
}

#[test]
fn cli_defines_shows_and_clears_queues() {
    let s = Server::start(&samples_dir());
    let o = qm(
        &s,
        &[
            "define",
            "TEST.Q",
            "--max-depth",
            "7",
            "--backout-threshold",
            "2",
            "--backout-queue",
            "TEST.BO",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = qm(&s, &["show", "TEST.Q", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["max_depth"], 7);
    assert_eq!(v["backout_threshold"], 2);
    assert_eq!(v["depth"], 0);
    let o = Command::new(bin())
        .args([
            "qm",
            "put",
            "TEST.Q",
            "--count",
            "3",
            "--server",
            &format!("127.0.0.1:{}", s.qm_port),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&qm(&s, &["depth", "TEST.Q"]).stdout).trim(),
        "3"
    );
    let o = qm(&s, &["browse", "TEST.Q"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 3);
    assert!(qm(&s, &["clear", "TEST.Q"]).status.success());
    assert_eq!(
        String::from_utf8_lossy(&qm(&s, &["depth", "TEST.Q"]).stdout).trim(),
        "0"
    );
    let o = qm(&s, &["get", "TEST.Q"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no message"), "{}", text(&o));
    // Each command says what it did as JSON under --json.
    let json = |args: &[&str]| -> serde_json::Value {
        let o = qm(&s, args);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
    };
    let v = json(&["define", "TEST.J", "--max-depth", "9", "--json"]);
    assert_eq!(v["defined"]["max_depth"], 9);
    let v = json(&["alter", "TEST.J", "--max-depth", "11", "--json"]);
    assert_eq!(v["altered"]["max_depth"], 11);
    assert_eq!(json(&["clear", "TEST.J", "--json"])["cleared"], 0);
    assert_eq!(json(&["delete", "TEST.J", "--json"])["deleted"], "TEST.J");
    // Alias and model queues, and HARDENBO, from the command line too.
    let v = json(&[
        "define", "TEST.A", "--type", "alias", "--target", "TEST.Q", "--json",
    ]);
    assert_eq!(v["defined"]["type"], "alias", "{v}");
    let v = json(&["define", "TEST.M", "--type", "model", "--json"]);
    assert_eq!(v["defined"]["type"], "model", "{v}");
    let v = json(&["alter", "TEST.Q", "--harden-get-backout", "true", "--json"]);
    assert_eq!(v["altered"]["harden_get_backout"], true, "{v}");
    let v = json(&["alter", "TEST.A", "--target", "TEST.J2", "--json"]);
    assert_eq!(v["altered"]["target"], "TEST.J2", "{v}");
    // What show --json prints is a queue entry of sluice.yaml as it is.
    let mut shown = json(&["show", "TEST.A", "--json"]);
    shown.as_object_mut().unwrap().remove("depth");
    let project = common::tempdir::TempDir::new("shown");
    std::fs::create_dir_all(project.path().join("flows")).unwrap();
    std::fs::write(
        project.path().join("flows/echo.yaml"),
        "flow: echo\nnodes:\n  in: { type: HTTPInput, path: /e, wires: { out: [r] } }\n  r: { type: HTTPReply }\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("sluice.yaml"),
        format!("queues:\n  - {{ name: TEST.J2 }}\n  - {shown}\n"),
    )
    .unwrap();
    let o = std::process::Command::new(common::bin())
        .args(["validate", &project.path().display().to_string()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{shown}: {}", text(&o));
    let o = qm(&s, &["alter", "TEST.Q", "--target", "X"]);
    assert!(
        !o.status.success() && text(&o).contains("alias"),
        "{}",
        text(&o)
    );
    let o = qm(&s, &["define", "TEST.B", "--type", "alias"]);
    assert!(
        !o.status.success() && text(&o).contains("--target"),
        "{}",
        text(&o)
    );
    let o = qm(&s, &["show", "TEST.Q"]);
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        table.contains("MAX LENGTH") && table.contains("INHIBIT"),
        "{table}"
    );
    let o = qm(&s, &["show", "TEST.A"]);
    let row = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        row.trim_end().ends_with("TEST.J2"),
        "the alias's target: {row}"
    );
}

/// Put `m` to SAMPLES.REQUEST and take its reply from TEST.REPLIES, matched by `correl` (by
/// default the request's MsgId); the request's MsgId and the reply.
fn request_reply(
    c: &mut Client,
    m: &Message,
    correl: Option<sluice_qm::MsgId>,
) -> (sluice_qm::MsgId, Message) {
    let id = c.put("SAMPLES.REQUEST", m, &PutOptions::default()).unwrap();
    let wait = GetOptions::new()
        .correl_id(correl.unwrap_or(id))
        .wait(Duration::from_secs(10));
    let reply = c.get("TEST.REPLIES", &wait).unwrap().expect("a reply");
    (id, reply)
}

#[test]
fn mq_reply_answers_with_the_request_msg_id_as_correl_id() {
    let s = Server::start(&samples_dir());
    let mut c = client(&s);
    c.define(&sluice_qm::QueueDef::local("TEST.REPLIES"))
        .unwrap();
    for i in 0..10 {
        let mut m = Message::new(format!("request {i}"));
        m.md.reply_to_q = "TEST.REPLIES".into();
        m.md.msg_type = sluice_qm::msg_type::REQUEST;
        let (_, reply) = request_reply(&mut c, &m, None);
        assert_eq!(&reply.body[..], format!("request {i}").as_bytes());
        assert_eq!(reply.md.msg_type, sluice_qm::msg_type::REPLY);
    }
    // A request whose Report asks for its own ids back (MQRO_PASS_CORREL_ID | MQRO_PASS_MSG_ID).
    let mut m = Message::new("pass my ids");
    m.md.reply_to_q = "TEST.REPLIES".into();
    m.md.correl_id = sluice_qm::id_from_str("MY CORREL");
    m.md.report = 64 | 128;
    let (id, reply) = request_reply(&mut c, &m, Some(m.md.correl_id));
    assert_eq!(reply.md.msg_id, id, "the request's MsgId passed on");
    // A reply for another queue manager has no route: it does not land on the local queue of
    // that name; the request goes to the dead-letter queue saying why.
    let mut m = Message::new("elsewhere");
    m.md.reply_to_q = "TEST.REPLIES".into();
    m.md.reply_to_qmgr = "OTHERQM".into();
    c.put("SAMPLES.REQUEST", &m, &PutOptions::default())
        .unwrap();
    let dead = wait_for_message(&mut c, "SYSTEM.DEAD.LETTER.QUEUE");
    assert_eq!(&dead.body[..], b"elsewhere");
    let Some(sluice_qm::PropertyValue::String(why)) = dead.property("dlh.text") else {
        panic!("no dlh.text: {:?}", dead.properties);
    };
    assert!(why.contains("OTHERQM"), "{why}");
    assert_eq!(c.depth("TEST.REPLIES").unwrap(), 0);
}

#[test]
fn rest_messaging_api_puts_and_gets() {
    let s = Server::start(&samples_dir());
    let url = "/ibmmq/rest/v1/messaging/qmgr/SLUICE/queue/SAMPLES.IN/message";
    let r = common::request(
        s.admin_port,
        "POST",
        url,
        &[
            ("Content-Type", "text/plain"),
            ("ibm-mq-md-persistence", "persistent"),
        ],
        b"via rest",
    );
    assert!(
        r.status == 201 || r.status == 200,
        "{} {}",
        r.status,
        r.text()
    );
    let out = "/ibmmq/rest/v1/messaging/qmgr/SLUICE/queue/SAMPLES.OUT/message?wait=10000";
    let r = common::request(s.admin_port, "DELETE", out, &[], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, b"via rest");
    assert!(r.header("ibm-mq-md-messageId").is_some(), "{:?}", r.headers);
}

const FAILING: &str = "flow: failing\nnodes:\n  in: { type: MQInput, queue: WORK.IN, wires: { out: [out] } }\n  out: { type: MQOutput, queue: WORK.OUT, wires: { out: [boom] } }\n  boom: { type: Throw, message_text: always fails }\n";

#[test]
fn failing_flow_rolls_back_its_puts_and_moves_the_message_to_the_backout_queue() {
    let p = TempDir::new("backout");
    std::fs::create_dir_all(p.path().join("flows")).unwrap();
    std::fs::write(p.path().join("flows/failing.yaml"), FAILING).unwrap();
    std::fs::write(
        p.path().join("sluice.yaml"),
        "queues:\n  - { name: WORK.IN, backout_threshold: 2, backout_queue: WORK.BACKOUT }\n  - { name: WORK.OUT }\n  - { name: WORK.BACKOUT }\n",
    )
    .unwrap();
    let s = Server::start(p.path());
    let mut c = client(&s);
    let mut m = Message::new("poison");
    m.md.persistence = sluice_qm::Persistence::Persistent;
    c.put("WORK.IN", &m, &PutOptions::default()).unwrap();
    let moved = wait_for_message(&mut c, "WORK.BACKOUT");
    assert_eq!(&moved.body[..], b"poison");
    assert_eq!(
        moved.md.backout_count, 0,
        "a new message there, as MQPUT makes it"
    );
    assert_eq!(
        c.depth("WORK.OUT").unwrap(),
        0,
        "the failed invocations' puts were rolled back"
    );
    assert_eq!(c.depth("WORK.IN").unwrap(), 0);
}

#[test]
fn persistent_messages_survive_a_restart_and_non_persistent_do_not() {
    let p = TempDir::new("restart");
    std::fs::create_dir_all(p.path().join("flows")).unwrap();
    std::fs::write(p.path().join("flows/echo.yaml"), "nodes:\n  in: { type: HTTPInput, path: /x, wires: { out: [r] } }\n  r: { type: HTTPReply }\n").unwrap();
    std::fs::write(
        p.path().join("sluice.yaml"),
        "queues:\n  - { name: KEEP }\n",
    )
    .unwrap();
    let data = TempDir::new("restart-data");
    let mut s = Server::start_with_data(p.path(), data.path());
    let mut c = client(&s);
    let mut durable = Message::new("durable");
    durable.md.persistence = sluice_qm::Persistence::Persistent;
    c.put("KEEP", &durable, &PutOptions::default()).unwrap();
    c.put("KEEP", &Message::new("fleeting"), &PutOptions::default())
        .unwrap();
    drop(c);
    assert_eq!(s.terminate().code(), Some(0));
    let s = Server::start_with_data(p.path(), data.path());
    let mut c = client(&s);
    assert_eq!(c.depth("KEEP").unwrap(), 1);
    let m = c.get("KEEP", &GetOptions::new()).unwrap().unwrap();
    assert_eq!(&m.body[..], b"durable");
}

#[test]
fn a_second_server_on_the_same_data_dir_is_refused_and_the_first_goes_on() {
    let data = TempDir::new("shared-data");
    let s = Server::start_with_data(&samples_dir(), data.path());
    let mut c = client(&s);
    let mut m = Message::new("kept");
    m.md.persistence = sluice_qm::Persistence::Persistent;
    c.put("SAMPLES.OUT", &m, &PutOptions::default()).unwrap();
    let Err(e) = Server::try_start_with_data(&samples_dir(), data.path()) else {
        panic!("a second server started on the same data folder");
    };
    assert!(e.contains("in use by process"), "{e}");
    assert_eq!(c.depth("SAMPLES.OUT").unwrap(), 1);
}

#[test]
fn cli_get_takes_a_message_only_once_it_is_written_and_selects_and_shows_binary_bodies() {
    let s = Server::start(&samples_dir());
    let dir = TempDir::new("cli-get");
    let mut c = client(&s);
    let mut m = Message::new(&b"\x00\xff\xfeabc"[..]);
    m.md.correl_id = sluice_qm::id_from_str("wanted");
    c.put(
        "SAMPLES.OUT",
        &Message::new("first"),
        &PutOptions::default(),
    )
    .unwrap();
    c.put("SAMPLES.OUT", &m, &PutOptions::default()).unwrap();
    // A file where the output folder should be: nothing is taken.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, "x").unwrap();
    let o = qm(
        &s,
        &[
            "get",
            "SAMPLES.OUT",
            "--out",
            &blocker.display().to_string(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not-a-folder"), "{}", text(&o));
    assert_eq!(c.depth("SAMPLES.OUT").unwrap(), 2);
    // The second message by its CorrelId, its binary body as hex.
    let o = qm(
        &s,
        &["get", "SAMPLES.OUT", "--correl-id", "text:wanted", "--json"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["body_hex"], "00fffe616263");
    assert!(v.get("body").is_none());
    let o = qm(&s, &["get", "SAMPLES.OUT", "--correl-id", "text:wanted"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(c.depth("SAMPLES.OUT").unwrap(), 1);
}

#[test]
fn cli_get_out_keeps_every_message_when_msg_ids_repeat() {
    let s = Server::start(&samples_dir());
    let dir = TempDir::new("cli-dup");
    let mut c = client(&s);
    let same = PutOptions {
        new_msg_id: false,
        ..PutOptions::default()
    };
    for body in ["first", "second", "third"] {
        let mut m = Message::new(body);
        m.md.msg_id = sluice_qm::id_from_str("SAME");
        c.put("SAMPLES.OUT", &m, &same).unwrap();
    }
    let out = dir.path().join("out");
    let o = qm(
        &s,
        &[
            "get",
            "SAMPLES.OUT",
            "--all",
            "--out",
            &out.display().to_string(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut bodies: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    bodies.sort();
    assert_eq!(bodies, ["first", "second", "third"]);
    assert_eq!(c.depth("SAMPLES.OUT").unwrap(), 0);
}

#[test]
fn cli_errors_are_json_objects_with_the_mq_reason_code_under_json() {
    let s = Server::start(&samples_dir());
    let json_error = |o: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&o.stderr)
            .unwrap_or_else(|e| panic!("stderr is not one JSON object ({e}): {}", text(o)))
    };
    let o = qm(&s, &["depth", "NO.SUCH.QUEUE", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = json_error(&o);
    assert_eq!(v["mqrc"], 2085, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("NO.SUCH.QUEUE"),
        "{v}"
    );
    // No message: exit 3, reason 2033, in both forms.
    let o = qm(&s, &["get", "SAMPLES.OUT", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert_eq!(json_error(&o)["mqrc"], 2033);
    let o = qm(&s, &["get", "SAMPLES.OUT"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("no message on SAMPLES.OUT (MQRC 2033)"));
    // An error that is not the queue manager's has no reason code.
    let o = qm(
        &s,
        &["put", "SAMPLES.OUT", "--file", "/no/such/file", "--json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = json_error(&o);
    assert!(v.get("mqrc").is_none(), "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("/no/such/file"),
        "{v}"
    );
}

#[test]
fn rest_gets_that_wait_hold_up_no_other_request_and_end_when_their_client_leaves() {
    let s = Server::start(&samples_dir());
    // v2, as IBM MQ's current clients call it (v1 and v3 are the same API).
    let q = "/ibmmq/rest/v2/messaging/qmgr/SLUICE/queue/SAMPLES.OUT/message";
    let mut waiting: Vec<std::net::TcpStream> = (0..16)
        .map(|_| {
            let mut t = std::net::TcpStream::connect(("127.0.0.1", s.admin_port)).unwrap();
            common::send(&mut t, "DELETE", &format!("{q}?wait=120000"), &[], b"");
            t
        })
        .collect();
    // With 16 gets waiting, the admin port still answers (a blocked one would not before
    // the waits end, 120 s from now, past the request's 60 s time-out).
    std::thread::sleep(Duration::from_millis(200));
    let health = common::request(s.admin_port, "GET", "/health", &[], b"");
    assert_eq!(health.status, 200);
    let put = common::request(
        s.admin_port,
        "POST",
        q,
        &[("Content-Type", "text/plain")],
        b"for one waiter",
    );
    assert_eq!(put.status, 201, "{}", put.text());
    // One waiting get takes it.
    let mut answered = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !answered && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        for t in &mut waiting {
            t.set_nonblocking(true).unwrap();
            answered |= std::io::Read::read(t, &mut [0u8; 1]).is_ok();
            t.set_nonblocking(false).unwrap();
        }
    }
    assert!(answered, "no waiting get took the message");
    // The clients of the other waits leave: a message put afterwards stays on the queue.
    drop(waiting);
    std::thread::sleep(Duration::from_millis(300));
    let mut c = client(&s);
    c.put(
        "SAMPLES.OUT",
        &Message::new("after"),
        &PutOptions::default(),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        c.depth("SAMPLES.OUT").unwrap(),
        1,
        "taken for a client that left"
    );
}

#[test]
fn the_client_protocol_port_serves_tls_when_sluice_yaml_gives_a_certificate() {
    let p = TempDir::new("qm-tls");
    let certs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../qm/tests/tls");
    std::fs::create_dir_all(p.path().join("flows")).unwrap();
    std::fs::create_dir_all(p.path().join("certs")).unwrap();
    for f in ["server.pem", "server.key"] {
        std::fs::copy(certs.join(f), p.path().join("certs").join(f)).unwrap();
    }
    std::fs::write(
        p.path().join("sluice.yaml"),
        "queue_manager:\n  tls: { cert_file: certs/server.pem, key_file: certs/server.key }\nqueues:\n  - { name: SECURE }\n",
    )
    .unwrap();
    std::fs::write(
        p.path().join("flows/ping.yaml"),
        "nodes:\n  in: { type: HTTPInput, path: /ping, wires: { out: [r] } }\n  r: { type: HTTPReply }\n",
    )
    .unwrap();
    let s = Server::start(p.path());
    let ca = certs.join("ca.pem").display().to_string();
    let body = p.path().join("m.txt");
    std::fs::write(&body, "over tls").unwrap();
    let o = qm(
        &s,
        &[
            "put",
            "SECURE",
            "--file",
            &body.display().to_string(),
            "--tls-ca",
            &ca,
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = qm(&s, &["get", "SECURE", "--tls-ca", &ca]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, b"over tls");
    // Without TLS the server does not answer the protocol.
    let o = qm(&s, &["depth", "SECURE"]);
    assert!(!o.status.success(), "{}", text(&o));
}

#[test]
fn a_rest_get_waiting_when_the_server_stops_is_answered_2162() {
    let mut s = Server::start(&samples_dir());
    let q = "/ibmmq/rest/v1/messaging/qmgr/SLUICE/queue/SAMPLES.OUT/message?wait=60000";
    let mut t = std::net::TcpStream::connect(("127.0.0.1", s.admin_port)).unwrap();
    t.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    common::send(&mut t, "DELETE", q, &[], b"");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(s.terminate().code(), Some(0));
    let r = common::read_response(&mut t);
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("2162"), "{}", r.text());
}
