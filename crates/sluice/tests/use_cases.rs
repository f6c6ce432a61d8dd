//! The seeds' use cases over the embedded queue manager (samples/flows/request-reply*.yaml,
//! warehouse.yaml, large-messaging*.yaml, routing*.yaml, transform-mq.yaml): each answers a
//! request put as the bench puts it, with the reply matched by CorrelId.

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::{Server, sale_list, samples_dir};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, MsgId, PutOptions};

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let s = Server::start(&samples_dir());
        common::stop_at_exit(&s);
        s
    })
}

fn client() -> Client {
    Client::connect(
        &format!("127.0.0.1:{}", server().qm_port),
        Credentials::default(),
    )
    .expect("connect")
}

/// A CorrelId no other test uses.
fn correl(tag: &str) -> MsgId {
    sluice_qm::id_from_str(tag)
}

/// Puts `body` to `input` with CorrelId `tag` and waits for the message with that CorrelId on
/// `output`.
fn round_trip(input: &str, output: &str, body: Vec<u8>, tag: &str, persistent: bool) -> Message {
    let mut c = client();
    let mut m = Message::new(body);
    m.md.correl_id = correl(tag);
    if persistent {
        m.md.persistence = sluice_qm::Persistence::Persistent;
    }
    c.put(input, &m, &PutOptions::default()).expect("put");
    let wait = GetOptions::new()
        .correl_id(correl(tag))
        .wait(Duration::from_secs(20));
    c.get(output, &wait)
        .expect("get")
        .unwrap_or_else(|| panic!("no reply on {output} for {tag}"))
}

fn text(m: &Message) -> String {
    String::from_utf8_lossy(&m.body).into_owned()
}

#[test]
fn request_reply_answers_in_xml_after_a_round_trip_through_the_cwf_back_end() {
    for (i, persistent) in [false, true].into_iter().enumerate() {
        let reply = round_trip(
            "CRR.IN",
            "CRR.OUT",
            sale_list(2),
            &format!("crr {i}"),
            persistent,
        );
        let t = text(&reply);
        assert!(t.starts_with("<Parent><First>1</First><SaleList>"), "{t}");
        assert!(t.contains("<Surname>Braithwaite1</Surname>"), "{t}");
        assert!(t.contains("<Price>0.30</Price>"), "{t}");
        assert!(
            t.contains("<Processed>Modified 20"),
            "the back-end's note: {t}"
        );
        assert!(t.ends_with("<Last>Test</Last></Parent>"), "{t}");
        assert_eq!(reply.md.msg_type, sluice_qm::msg_type::REPLY);
        assert_eq!(
            reply.md.persistence,
            if persistent {
                sluice_qm::Persistence::Persistent
            } else {
                sluice_qm::Persistence::NotPersistent
            }
        );
    }
    // Another test's request may be in flight on the same flow: its state is gone once it
    // has been answered, so wait for the queue to drain rather than read it once.
    let mut c = client();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut depth = c.depth("CRR.STATE").expect("depth");
    while depth != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        depth = c.depth("CRR.STATE").expect("depth");
    }
    assert_eq!(depth, 0, "state left behind");
}

#[test]
fn request_reply_answers_on_the_requests_reply_to_queue_with_its_msg_id_as_correl_id() {
    let mut c = client();
    c.define(&sluice_qm::QueueDef::local("TEST.CRR.REPLIES"))
        .expect("define");
    let mut m = Message::new(sale_list(1));
    m.md.reply_to_q = "TEST.CRR.REPLIES".into();
    m.md.msg_type = sluice_qm::msg_type::REQUEST;
    let id = c.put("CRR.IN", &m, &PutOptions::default()).expect("put");
    let wait = GetOptions::new()
        .correl_id(id)
        .wait(Duration::from_secs(20));
    let reply = c
        .get("TEST.CRR.REPLIES", &wait)
        .expect("get")
        .expect("a reply");
    assert!(text(&reply).contains("Braithwaite0"), "{}", text(&reply));
}

#[test]
fn warehouse_archives_each_message_and_confirms_it() {
    let body = sale_list(1);
    let reply = round_trip("WAREHOUSE.IN", "WAREHOUSE.OUT", body.clone(), "dw", true);
    let t = text(&reply);
    assert!(
        t.starts_with(&format!(
            "<Archived><Bytes>{}</Bytes><PutDate>20",
            body.len()
        )),
        "{t}"
    );
    assert!(
        samples_dir().join("data/samples.sqlite").exists(),
        "the SAMPLES database"
    );
}

#[test]
fn large_messaging_splits_every_sale_list_and_sends_the_count() {
    let reply = round_trip("LARGE.IN", "LARGE.OUT", sale_list(25), "large", false);
    assert_eq!(
        text(&reply),
        "<SplitResult><SaleListCount>25</SaleListCount></SplitResult>"
    );
}

#[test]
fn routing_sends_each_message_to_the_queue_its_key_names() {
    let reply = round_trip("ROUTING.IN", "ROUTING.OUT", sale_list(1), "route 1", false);
    assert_eq!(reply.body, sale_list(1));
    let two = String::from_utf8(sale_list(1))
        .expect("utf-8")
        .replace("<First>1</First>", "<First>2</First>");
    let reply = round_trip(
        "ROUTING.IN",
        "ROUTING.OUT2",
        two.into_bytes(),
        "route 2",
        false,
    );
    assert!(text(&reply).contains("<First>2</First>"));
    let other = String::from_utf8(sale_list(1))
        .expect("utf-8")
        .replace("<First>1</First>", "<First>9</First>");
    let reply = round_trip(
        "ROUTING.IN",
        "ROUTING.DEFAULT",
        other.into_bytes(),
        "route 9",
        false,
    );
    assert!(text(&reply).contains("<First>9</First>"));
    let refreshed = round_trip(
        "ROUTING.REFRESH.IN",
        "ROUTING.REFRESH.OUT",
        b"<Refresh/>".to_vec(),
        "refresh",
        false,
    );
    assert_eq!(
        text(&refreshed),
        "<Refreshed><Routes>2</Routes></Refreshed>"
    );
}

#[test]
fn transform_mq_writes_a_statement_per_invoice() {
    let reply = round_trip(
        "TRANSFORM.IN",
        "TRANSFORM.OUT",
        sale_list(1),
        "transform",
        true,
    );
    let t = text(&reply);
    assert_eq!(t.matches("<Statement ").count(), 2, "{t}");
    assert!(t.contains("<Name>Braithwaite0</Name>"), "{t}");
}
