//! Queue semantics tests (in memory).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::*;

fn qm() -> Arc<QueueManager> {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("open");
    qm.define(QueueDef::local("Q")).expect("define");
    qm
}

fn msg(body: &str) -> Message {
    Message::new(body.to_string())
}

fn put(qm: &QueueManager, q: &str, m: Message) -> MsgId {
    qm.put(q, m, &PutOptions::default()).expect("put")
}

fn body(m: Option<Message>) -> String {
    String::from_utf8(m.expect("a message").body.to_vec()).expect("utf8")
}

#[test]
fn fifo_within_priority_and_priority_first() {
    let qm = qm();
    for (b, p) in [("a", 0), ("b", 5), ("c", 0), ("d", 9), ("e", 5)] {
        let mut m = msg(b);
        m.md.priority = p;
        put(&qm, "Q", m);
    }
    let got: Vec<String> = (0..5)
        .map(|_| body(qm.get("Q", &GetOptions::new()).expect("get")))
        .collect();
    assert_eq!(got, ["d", "b", "e", "a", "c"]);
    assert!(qm.get("Q", &GetOptions::new()).expect("get").is_none());
}

#[test]
fn put_generates_unique_msg_ids_and_context() {
    let qm = qm();
    let a = put(&qm, "Q", msg("1"));
    let b = put(&qm, "Q", msg("2"));
    assert_ne!(a, b);
    assert_ne!(a, ID_NONE);
    let m = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(m.md.msg_id, a);
    assert_eq!(m.md.put_date.len(), 8);
    assert_eq!(m.md.put_time.len(), 8);
    let mut own = msg("3");
    own.md.msg_id = id_from_str("MINE");
    assert_eq!(put(&qm, "Q", own), id_from_str("MINE"));
}

#[test]
fn get_matches_correl_id_msg_id_and_group_id() {
    let qm = qm();
    for i in 0..100 {
        let mut m = msg(&format!("m{i}"));
        m.md.correl_id = id_from_str(&format!("c{}", i % 10));
        m.md.group_id = id_from_str(&format!("g{}", i % 7));
        put(&qm, "Q", m);
    }
    let m = qm
        .get("Q", &GetOptions::new().correl_id(id_from_str("c3")))
        .expect("get");
    assert_eq!(body(m), "m3");
    let m = qm
        .get("Q", &GetOptions::new().correl_id(id_from_str("c3")))
        .expect("get");
    assert_eq!(body(m), "m13");
    let m = qm
        .get("Q", &GetOptions::new().group_id(id_from_str("g2")))
        .expect("get");
    assert_eq!(body(m), "m2");
    let m = qm
        .get(
            "Q",
            &GetOptions::new()
                .correl_id(id_from_str("c4"))
                .group_id(id_from_str("g0")),
        )
        .expect("get");
    assert_eq!(body(m), "m14");
    assert!(
        qm.get("Q", &GetOptions::new().correl_id(id_from_str("nope")))
            .expect("get")
            .is_none()
    );
    let mut m = msg("byid");
    m.md.msg_id = id_from_str("X1");
    put(&qm, "Q", m);
    assert_eq!(
        body(
            qm.get("Q", &GetOptions::new().msg_id(id_from_str("X1")))
                .expect("get")
        ),
        "byid"
    );
}

#[test]
fn browse_first_next_leaves_messages() {
    let qm = qm();
    for b in ["a", "b", "c"] {
        put(&qm, "Q", msg(b));
    }
    let mut cur = BrowseCursor::new();
    let seen: Vec<String> = (0..3)
        .map(|_| {
            body(
                qm.browse("Q", &GetOptions::new(), &mut cur)
                    .expect("browse"),
            )
        })
        .collect();
    assert_eq!(seen, ["a", "b", "c"]);
    assert!(
        qm.browse("Q", &GetOptions::new(), &mut cur)
            .expect("browse")
            .is_none()
    );
    put(&qm, "Q", msg("d"));
    assert_eq!(
        body(
            qm.browse("Q", &GetOptions::new(), &mut cur)
                .expect("browse")
        ),
        "d"
    );
    assert_eq!(qm.depth("Q").expect("depth"), 4);
}

#[test]
fn get_waits_for_a_put_and_times_out() {
    let qm = qm();
    let t = Instant::now();
    assert!(
        qm.get("Q", &GetOptions::new().wait(Duration::from_millis(100)))
            .expect("get")
            .is_none()
    );
    assert!(t.elapsed() >= Duration::from_millis(100));
    let qm2 = qm.clone();
    let h = std::thread::spawn(move || {
        let mut m = msg("reply");
        m.md.correl_id = id_from_str("R1");
        std::thread::sleep(Duration::from_millis(50));
        put(&qm2, "Q", msg("other"));
        put(&qm2, "Q", m);
    });
    let got = qm
        .get(
            "Q",
            &GetOptions::new()
                .correl_id(id_from_str("R1"))
                .wait(Duration::from_secs(5)),
        )
        .expect("get");
    assert_eq!(body(got), "reply");
    h.join().expect("join");
}

#[test]
fn expired_messages_are_discarded_on_get() {
    let qm = qm();
    let mut m = msg("short");
    m.md.expiry = 1; // 100 ms
    put(&qm, "Q", m);
    let mut m = msg("long");
    m.md.expiry = 600;
    put(&qm, "Q", m);
    std::thread::sleep(Duration::from_millis(150));
    let got = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(&got.body[..], b"long");
    assert!(got.md.expiry > 0 && got.md.expiry <= 600);
    assert_eq!(qm.depth("Q").expect("depth"), 0);
}

#[test]
fn max_depth_and_max_length_refuse_puts() {
    let qm = qm();
    qm.define(QueueDef {
        max_depth: 2,
        max_msg_length: 4,
        ..QueueDef::local("SMALL")
    })
    .expect("define");
    put(&qm, "SMALL", msg("1"));
    let mut u = qm.begin();
    u.put("SMALL", msg("2"), &PutOptions::default())
        .expect("uow put");
    let e = qm
        .put("SMALL", msg("3"), &PutOptions::default())
        .expect_err("full");
    assert!(matches!(e, QmError::QueueFull { .. }));
    assert_eq!(e.reason_code(), 2053);
    u.rollback();
    put(&qm, "SMALL", msg("3"));
    let e = qm.put("Q", msg("x"), &PutOptions::default()).err();
    assert!(e.is_none());
    qm.clear("SMALL").expect("clear");
    let e = qm
        .put("SMALL", msg("12345"), &PutOptions::default())
        .expect_err("too big");
    assert_eq!(e.reason_code(), 2030);
    // MAXDEPTH(0): defined, and every put refused.
    qm.define(QueueDef {
        max_depth: 0,
        ..QueueDef::local("NONE")
    })
    .expect("define with max depth 0");
    let e = qm
        .put("NONE", msg("x"), &PutOptions::default())
        .expect_err("full at once");
    assert_eq!(e.reason_code(), 2053);
}

#[test]
fn inhibited_queues_refuse_with_reason_codes() {
    let qm = qm();
    qm.alter(QueueDef {
        put_inhibited: true,
        ..QueueDef::local("Q")
    })
    .expect("alter");
    assert_eq!(
        qm.put("Q", msg("x"), &PutOptions::default())
            .expect_err("inhibited")
            .reason_code(),
        2051
    );
    qm.alter(QueueDef {
        get_inhibited: true,
        ..QueueDef::local("Q")
    })
    .expect("alter");
    put(&qm, "Q", msg("x"));
    assert_eq!(
        qm.get("Q", &GetOptions::new())
            .expect_err("inhibited")
            .reason_code(),
        2016
    );
    assert_eq!(
        qm.get("NOPE", &GetOptions::new())
            .expect_err("unknown")
            .reason_code(),
        2085
    );
}

#[test]
fn alias_resolves_to_target_and_has_own_inhibit() {
    let qm = qm();
    qm.define(QueueDef::alias("A", "Q")).expect("alias");
    put(&qm, "A", msg("via alias"));
    assert_eq!(qm.depth("Q").expect("depth"), 1);
    assert_eq!(
        body(qm.get("Q", &GetOptions::new()).expect("get")),
        "via alias"
    );
    qm.alter(QueueDef {
        put_inhibited: true,
        ..QueueDef::alias("A", "Q")
    })
    .expect("alter");
    assert!(matches!(
        qm.put("A", msg("x"), &PutOptions::default()),
        Err(QmError::PutInhibited(_))
    ));
    put(&qm, "Q", msg("direct"));
    assert_eq!(
        body(qm.get("A", &GetOptions::new()).expect("get")),
        "direct"
    );
}

#[test]
fn dynamic_queues_come_from_models() {
    let qm = qm();
    qm.define(QueueDef {
        max_depth: 7,
        ..QueueDef::model("SYSTEM.DEFAULT.MODEL.QUEUE")
    })
    .expect("model");
    let n = qm
        .create_dynamic("SYSTEM.DEFAULT.MODEL.QUEUE", "")
        .expect("dynamic");
    assert!(n.starts_with("AMQ."), "{n}");
    let n2 = qm
        .create_dynamic("SYSTEM.DEFAULT.MODEL.QUEUE", "REPLY.*")
        .expect("dynamic");
    assert!(n2.starts_with("REPLY.") && n2 != n);
    let fixed = qm.create_dynamic("SYSTEM.DEFAULT.MODEL.QUEUE", "MY.REPLIES");
    assert_eq!(fixed.expect("a name without '*' as given"), "MY.REPLIES");
    assert!(
        qm.create_dynamic("SYSTEM.DEFAULT.MODEL.QUEUE", "MY.REPLIES")
            .is_err(),
        "exists"
    );
    let d = qm.queue_def(&n).expect("def");
    assert_eq!(d.max_depth, 7);
    assert!(d.temporary_dynamic);
    put(&qm, &n, msg("r"));
    let mut p = msg("p");
    p.md.persistence = Persistence::Persistent;
    assert_eq!(
        qm.put(&n, p, &PutOptions::default())
            .expect_err("persistent")
            .reason_code(),
        2048
    );
    assert!(
        qm.put(
            "SYSTEM.DEFAULT.MODEL.QUEUE",
            msg("x"),
            &PutOptions::default()
        )
        .is_err()
    );
    assert!(qm.create_dynamic("Q", "").is_err());
}

#[test]
fn uow_puts_invisible_until_commit() {
    let qm = qm();
    qm.define(QueueDef::local("Q2")).expect("define");
    let mut u = qm.begin();
    u.put("Q", msg("1"), &PutOptions::default()).expect("put");
    u.put("Q2", msg("2"), &PutOptions::default()).expect("put");
    assert_eq!(
        qm.depth("Q").expect("d"),
        1,
        "CURDEPTH counts uncommitted puts"
    );
    assert!(qm.get("Q", &GetOptions::new()).expect("get").is_none());
    u.commit().expect("commit");
    assert_eq!(qm.depth("Q").expect("d"), 1);
    assert_eq!(qm.depth("Q2").expect("d"), 1);
    let mut u = qm.begin();
    u.put("Q", msg("gone"), &PutOptions::default())
        .expect("put");
    drop(u);
    assert_eq!(qm.depth("Q").expect("d"), 1);
}

#[test]
fn a_queue_with_uncommitted_work_cannot_be_deleted_or_cleared() {
    let qm = qm();
    put(&qm, "Q", msg("a"));
    let mut u = qm.begin();
    u.put("Q", msg("b"), &PutOptions::default()).expect("put");
    for e in [qm.delete("Q", true).err(), qm.clear("Q").err()] {
        let e = e.expect("refused while a put is uncommitted");
        assert_eq!(e.reason_code(), 2042, "{e}");
        assert!(e.to_string().contains("1 put(s)"), "{e}");
    }
    u.commit().expect("commit");
    let mut u = qm.begin();
    assert_eq!(body(u.get("Q", &GetOptions::new()).expect("get")), "a");
    let e = qm
        .clear("Q")
        .expect_err("refused while a get is uncommitted");
    assert!(e.to_string().contains("1 get(s)"), "{e}");
    u.rollback();
    assert_eq!(qm.depth("Q").expect("d"), 2, "nothing lost");
    // A get outside syncpoint holds nothing once it has returned.
    assert_eq!(body(qm.get("Q", &GetOptions::new()).expect("get")), "a");
    assert_eq!(qm.clear("Q").expect("clear once committed"), 1);
    qm.delete("Q", false).expect("delete once empty");
}

#[test]
fn uow_rollback_restores_gets_with_backout_count() {
    let qm = qm();
    put(&qm, "Q", msg("a"));
    put(&qm, "Q", msg("b"));
    for round in 1..=3u32 {
        let mut u = qm.begin();
        let m = u.get("Q", &GetOptions::new()).expect("get").expect("msg");
        assert_eq!(&m.body[..], b"a");
        assert_eq!(m.md.backout_count, round - 1);
        assert_eq!(
            qm.depth("Q").expect("d"),
            1,
            "an uncommitted get does not count"
        );
        u.rollback();
    }
    let mut u = qm.begin();
    let m = u.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(m.md.backout_count, 3);
    u.commit().expect("commit");
    assert_eq!(body(qm.get("Q", &GetOptions::new()).expect("get")), "b");
}

#[test]
fn a_released_get_returns_untouched_and_the_rest_of_the_unit_commits() {
    let qm = qm();
    put(&qm, "Q", msg("a"));
    put(&qm, "Q", msg("b"));
    let mut u = qm.begin();
    assert_eq!(body(u.get("Q", &GetOptions::new()).expect("get")), "a");
    assert_eq!(body(u.get("Q", &GetOptions::new()).expect("get")), "b");
    u.release_last_get();
    assert_eq!(qm.depth("Q").expect("depth"), 1, "b is back at once");
    u.commit().expect("commit");
    let b = qm.get("Q", &GetOptions::new()).expect("get").expect("b");
    assert_eq!(&b.body[..], b"b");
    assert_eq!(b.md.backout_count, 0, "not counted as backed out");
    assert!(
        qm.get("Q", &GetOptions::new()).expect("get").is_none(),
        "a stays got"
    );
}

#[test]
fn a_rollback_charging_from_a_mark_counts_the_backout_only_from_there() {
    let qm = qm();
    put(&qm, "Q", msg("innocent"));
    put(&qm, "Q", msg("guilty"));
    let mut u = qm.begin();
    u.get("Q", &GetOptions::new()).expect("get");
    let mark = u.gets_len();
    u.get("Q", &GetOptions::new()).expect("get");
    u.rollback_charging_from(mark);
    let a = qm.get("Q", &GetOptions::new()).expect("get").expect("a");
    let b = qm.get("Q", &GetOptions::new()).expect("get").expect("b");
    assert_eq!((&a.body[..], a.md.backout_count), (&b"innocent"[..], 0));
    assert_eq!((&b.body[..], b.md.backout_count), (&b"guilty"[..], 1));
}

#[test]
fn out_of_range_fields_are_refused_with_mqs_reason_for_each() {
    let qm = qm();
    let code = |m: Message| {
        qm.put("Q", m, &PutOptions::default())
            .expect_err("refused")
            .reason_code()
    };
    let mut m = msg("x");
    m.md.expiry = 0;
    assert_eq!(code(m), 2013);
    let mut m = msg("x");
    m.md.priority = 10;
    assert_eq!(code(m), 2050);
    let e = qm
        .define(QueueDef::local("BAD NAME"))
        .expect_err("bad name");
    assert_eq!(e.reason_code(), 2152);
}

#[test]
fn a_queue_open_for_input_cannot_be_deleted_until_closed() {
    let qm = qm();
    let h = qm.open_input("Q", "flow F node in").expect("open");
    match qm.delete("Q", true) {
        Err(e @ QmError::InUse { .. }) => {
            assert_eq!(e.reason_code(), 2042);
            assert!(e.to_string().contains("flow F node in"), "{e}");
        }
        other => panic!("deleted a queue open for input: {other:?}"),
    }
    drop(h);
    // Through an alias, both the alias and its target are in use.
    qm.define(QueueDef::alias("A", "Q")).expect("alias");
    let h = qm
        .open_input("A", "flow G node in")
        .expect("open the alias");
    for name in ["A", "Q"] {
        let e = qm.delete(name, true).expect_err("in use");
        assert_eq!(e.reason_code(), 2042, "{name}: {e}");
    }
    drop(h);
    qm.delete("A", true).expect("delete the alias once closed");
    qm.delete("Q", true).expect("delete once closed");
}

#[test]
fn dead_letter_header_is_stored_as_properties() {
    let qm = qm();
    let id = qm
        .put_dead_letter_from(msg("bad"), "Q", 2053, "queue full")
        .expect("dlq");
    let m = qm
        .get("SYSTEM.DEAD.LETTER.QUEUE", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(m.md.msg_id, id);
    assert_eq!(m.property("dlh.reason"), Some(&PropertyValue::Int(2053)));
    assert_eq!(
        m.property("dlh.dest_q"),
        Some(&PropertyValue::String("Q".into()))
    );
    assert_eq!(
        m.property("dlh.text"),
        Some(&PropertyValue::String("queue full".into()))
    );
}

#[test]
fn admin_define_alter_delete_list() {
    let qm = qm();
    assert!(matches!(
        qm.define(QueueDef::local("Q")),
        Err(QmError::QueueExists(_))
    ));
    assert!(qm.define(QueueDef::local("bad name")).is_err());
    put(&qm, "Q", msg("x"));
    assert!(matches!(
        qm.delete("Q", false),
        Err(QmError::QueueNotEmpty(_))
    ));
    qm.delete("Q", true).expect("delete");
    assert!(qm.queue_def("Q").is_err());
    let names: Vec<String> = qm.list().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["SYSTEM.DEAD.LETTER.QUEUE"]);
}

#[test]
fn concurrent_producers_and_consumers_lose_nothing() {
    let qm = qm();
    qm.alter(QueueDef {
        max_depth: 1_000_000,
        ..QueueDef::local("Q")
    })
    .expect("alter");
    let mut hs = Vec::new();
    for t in 0..4 {
        let qm = qm.clone();
        hs.push(std::thread::spawn(move || {
            for i in 0..2000 {
                put(&qm, "Q", msg(&format!("{t}-{i}")));
            }
        }));
    }
    let mut cs = Vec::new();
    for _ in 0..4 {
        let qm = qm.clone();
        cs.push(std::thread::spawn(move || {
            let mut n = 0;
            while qm
                .get("Q", &GetOptions::new().wait(Duration::from_millis(300)))
                .expect("get")
                .is_some()
            {
                n += 1;
            }
            n
        }));
    }
    for h in hs {
        h.join().expect("join");
    }
    let total: usize = cs.into_iter().map(|c| c.join().expect("join")).sum();
    assert_eq!(total, 8000);
}

#[test]
fn queue_def_json_matches_the_protocol_document() {
    let j = r#"{"name": "APP.IN", "kind": {"type": "local"}, "max_depth": 5000,
        "default_persistence": "Persistent", "backout_threshold": 3,
        "backout_requeue_queue": "APP.BACKOUT"}"#;
    let d: QueueDef = serde_json::from_str(j).expect("parses");
    assert_eq!(d.backout_threshold, 3);
    assert_eq!(d.default_persistence, Persistence::Persistent);
    assert_eq!(d.max_msg_length, 100 * 1024 * 1024);
    let a: QueueDef =
        serde_json::from_str(r#"{"name":"A","kind":{"type":"alias","target":"APP.IN"}}"#)
            .expect("alias");
    assert_eq!(
        a.kind,
        QueueKind::Alias {
            target: "APP.IN".into()
        }
    );
    let back: QueueDef =
        serde_json::from_str(&serde_json::to_string(&d).expect("json")).expect("parses");
    assert_eq!(back, d);
}

#[test]
fn backout_threshold_requeues_to_backout_queue_else_dead_letter_queue() {
    let qm = qm();
    qm.define(QueueDef::local("IN.BO")).expect("boq");
    qm.define(QueueDef {
        backout_threshold: 2,
        backout_requeue_queue: "IN.BO".into(),
        ..QueueDef::local("IN")
    })
    .expect("in");
    qm.define(QueueDef {
        backout_threshold: 1,
        ..QueueDef::local("NOBO")
    })
    .expect("nobo");
    put(&qm, "IN", msg("poison"));
    // The consumer rolls back twice; the third get sees the threshold reached and requeues.
    for _ in 0..2 {
        let mut u = qm.begin();
        let m = u.get("IN", &GetOptions::new()).expect("get").expect("msg");
        assert!(!qm.backout_threshold_reached("IN", &m).expect("check"));
        u.rollback();
    }
    let mut u = qm.begin();
    let m = u.get("IN", &GetOptions::new()).expect("get").expect("msg");
    assert!(qm.backout_threshold_reached("IN", &m).expect("check"));
    assert_eq!(u.requeue_backout("IN", m, "").expect("requeue"), "IN.BO");
    u.commit().expect("commit");
    assert_eq!(qm.depth("IN").expect("d"), 0);
    let bo = qm
        .get("IN.BO", &GetOptions::new())
        .expect("get")
        .expect("msg");
    // On the backout queue it is a new message there: its count starts again (MQ's MQPUT).
    assert_eq!((&bo.body[..], bo.md.backout_count), (&b"poison"[..], 0));
    // No backout queue: the dead-letter queue, with the reason in the header.
    put(&qm, "NOBO", msg("p2"));
    let mut u = qm.begin();
    u.get("NOBO", &GetOptions::new()).expect("get");
    u.rollback();
    let mut u = qm.begin();
    let m = u
        .get("NOBO", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(
        u.requeue_backout("NOBO", m, "").expect("requeue"),
        "SYSTEM.DEAD.LETTER.QUEUE"
    );
    u.commit().expect("commit");
    let d = qm
        .get("SYSTEM.DEAD.LETTER.QUEUE", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(d.property("dlh.reason"), Some(&PropertyValue::Int(2362)));
    assert_eq!(
        d.property("dlh.dest_q"),
        Some(&PropertyValue::String("NOBO".into()))
    );
}

#[test]
fn a_backout_or_dead_letter_queue_that_is_the_input_queue_refuses_the_message() {
    let qm = QueueManager::open_in_memory(QmConfig {
        dead_letter_queue: "LOOP".into(),
        ..QmConfig::default()
    })
    .expect("open");
    // The dead-letter queue exists from the start; it becomes an input queue too.
    qm.alter(QueueDef {
        backout_threshold: 1,
        backout_requeue_queue: "LOOP.ALIAS".into(),
        ..QueueDef::local("LOOP")
    })
    .expect("alter");
    qm.define(QueueDef::alias("LOOP.ALIAS", "LOOP"))
        .expect("alias");
    let mut m = msg("poison");
    m.md.backout_count = 7;
    put(&qm, "LOOP", m);
    let mut u = qm.begin();
    let m = u
        .get("LOOP", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(m.md.backout_count, 0, "a put starts the count at 0");
    let e = u.requeue_backout("LOOP", m, "").expect_err("nowhere to go");
    assert!(e.to_string().contains("is the input queue itself"), "{e}");
    u.rollback();
    assert_eq!(qm.depth("LOOP").expect("depth"), 1, "the message stays");
}
