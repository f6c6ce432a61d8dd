//! MQInput batches (`commit_count`, `commit_interval_ms`) on a queue manager with a real log:
//! one log record per batch, a failure backing out the whole batch without pushing its good
//! messages to the backout queue, and no message held uncommitted while the queue is idle.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Bench;
use sluice_qm::{
    BrowseCursor, GetOptions, Message, Persistence, PropertyValue, PutOptions, QmConfig, QueueDef,
    QueueManager,
};

/// A queue manager stored in a fresh directory, removed on drop.
struct Stored {
    qm: Arc<QueueManager>,
    dir: PathBuf,
}

impl Drop for Stored {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn stored(name: &str, queues: &[QueueDef]) -> Stored {
    let dir = std::env::temp_dir().join(format!("sluice-mq-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let qm = QueueManager::open(&dir, QmConfig::default()).expect("open the queue manager");
    for q in queues {
        qm.define(q.clone()).expect("define a queue");
    }
    Stored { qm, dir }
}

/// `Q.IN` (backed out to `Q.BACKOUT` after `threshold` backouts), `Q.OUT` and `Q.BACKOUT`.
fn with_backout(name: &str, q: &str, threshold: u32) -> Stored {
    let mut input = QueueDef::local(&format!("{q}.IN"));
    input.backout_threshold = threshold;
    input.backout_requeue_queue = format!("{q}.BACKOUT");
    let (out, backout) = (format!("{q}.OUT"), format!("{q}.BACKOUT"));
    stored(
        name,
        &[input, QueueDef::local(&out), QueueDef::local(&backout)],
    )
}

/// Put `bodies` persistent, in order, under one unit of work (so all are there at once).
fn put_all(qm: &Arc<QueueManager>, queue: &str, bodies: &[String]) {
    let mut uow = qm.begin();
    for b in bodies {
        let mut m = Message::new(b.clone().into_bytes());
        m.md.persistence = Persistence::Persistent;
        uow.put(queue, m, &PutOptions::default()).expect("put");
    }
    uow.commit().expect("commit the puts");
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn drain(qm: &Arc<QueueManager>, queue: &str) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(m) = qm.get(queue, &GetOptions::new()).expect("get") {
        out.push(String::from_utf8_lossy(&m.body).into_owned());
    }
    out
}

fn records(qm: &Arc<QueueManager>) -> u64 {
    qm.log_stats().expect("a log").records
}

#[test]
fn a_batch_commits_many_messages_with_one_log_record() {
    let s = stored(
        "batch",
        &[QueueDef::local("B.IN"), QueueDef::local("B.OUT")],
    );
    let bodies: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
    put_all(&s.qm, "B.IN", &bodies);
    let before = records(&s.qm);
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: B.IN, domain: BLOB, commit_count: 25, wires: { out: [out] } }\n  out: { type: MQOutput, queue: B.OUT }\n",
        s.qm.clone(),
    );
    let running = b.flow.start();
    wait_for("the flow to move every message", || {
        s.qm.depth("B.OUT").unwrap() == 100
    });
    running.stop();
    // 100 messages in batches of 25: four commit records, where one per message made 100.
    let used = records(&s.qm) - before;
    assert_eq!(used, 4, "log records for 100 messages");
    assert_eq!(s.qm.depth("B.IN").unwrap(), 0);
    assert_eq!(drain(&s.qm, "B.OUT"), bodies, "each message once, in order");
}

#[test]
fn a_failure_backs_out_the_batch_and_only_the_bad_message_reaches_the_backout_queue() {
    // Threshold 1: a good message backed out with the batch would go to the backout queue
    // at once if the failure counted against it.
    let s = with_backout("poison", "P", 1);
    let bodies: Vec<String> = (1..=10)
        .map(|i| match i {
            5 => "<m>poison</m>".to_string(),
            i => format!("<m>{i}</m>"),
        })
        .collect();
    put_all(&s.qm, "P.IN", &bodies);
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: P.IN, domain: XMLNSC, commit_count: 10, wires: { out: [check] } }\n  check: { type: Filter, expression: \"$Body/m = 'poison'\", wires: { 'true': [boom], 'false': [out] } }\n  boom: { type: Throw, message_text: bad message }\n  out: { type: MQOutput, queue: P.OUT }\n",
        s.qm.clone(),
    );
    let running = b.flow.start();
    wait_for("the input queue to empty", || {
        s.qm.depth("P.IN").unwrap() == 0 && s.qm.depth("P.BACKOUT").unwrap() == 1
    });
    wait_for("the good messages", || s.qm.depth("P.OUT").unwrap() == 9);
    running.stop();
    let good: Vec<String> = bodies
        .iter()
        .filter(|b| !b.contains("poison"))
        .cloned()
        .collect();
    assert_eq!(
        drain(&s.qm, "P.OUT"),
        good,
        "each good message once, in order"
    );
    assert_eq!(drain(&s.qm, "P.BACKOUT"), ["<m>poison</m>"]);
}

#[test]
fn automatic_mode_batches_persistent_messages_and_takes_the_others_outside_syncpoint() {
    let s = stored("auto", &[QueueDef::local("A.IN"), QueueDef::local("A.OUT")]);
    let bodies: Vec<String> = (0..30).map(|i| format!("m{i}")).collect();
    let mut uow = s.qm.begin();
    for (i, b) in bodies.iter().enumerate() {
        let mut m = Message::new(b.clone().into_bytes());
        // Runs of persistent messages broken by non-persistent ones.
        if i % 7 != 3 {
            m.md.persistence = Persistence::Persistent;
        }
        uow.put("A.IN", m, &PutOptions::default()).expect("put");
    }
    uow.commit().expect("commit the puts");
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: A.IN, domain: BLOB, transaction_mode: automatic, commit_count: 10, wires: { out: [out] } }\n  out: { type: MQOutput, queue: A.OUT }\n",
        s.qm.clone(),
    );
    let running = b.flow.start();
    wait_for("every message", || s.qm.depth("A.OUT").unwrap() == 30);
    running.stop();
    assert_eq!(s.qm.depth("A.IN").unwrap(), 0);
    assert_eq!(drain(&s.qm, "A.OUT"), bodies, "each message once, in order");
}

#[test]
fn a_poison_message_whose_backout_queue_is_missing_goes_to_the_dead_letter_queue_with_why() {
    let mut input = QueueDef::local("D.IN");
    input.backout_threshold = 1;
    input.backout_requeue_queue = "NO.SUCH.QUEUE".into();
    let s = stored("dead", &[input]);
    put_all(&s.qm, "D.IN", &["<m>poison</m>".to_string()]);
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: D.IN, domain: XMLNSC, wires: { out: [boom] } }\n  boom: { type: Throw, message_text: bad message }\n",
        s.qm.clone(),
    );
    let running = b.flow.start();
    let dlq = "SYSTEM.DEAD.LETTER.QUEUE";
    wait_for("the dead-letter queue", || s.qm.depth(dlq).unwrap() == 1);
    running.stop();
    assert_eq!(s.qm.depth("D.IN").unwrap(), 0);
    let m = s.qm.get(dlq, &GetOptions::new()).unwrap().unwrap();
    assert_eq!(m.property("dlh.reason"), Some(&PropertyValue::Int(2362)));
    let Some(PropertyValue::String(why)) = m.property("dlh.text") else {
        panic!("no dlh.text");
    };
    assert!(
        why.contains("NO.SUCH.QUEUE") && why.contains("backed out 1 times"),
        "{why}"
    );
}

#[test]
fn a_body_that_does_not_parse_is_backed_out_to_the_backout_queue_and_the_next_message_goes_on() {
    let s = with_backout("unparsable", "J", 2);
    put_all(
        &s.qm,
        "J.IN",
        &[r#"{"a":"#.to_string(), r#"{"ok":1}"#.to_string()],
    );
    let b = Bench::new(
        "nodes:\n  in: { type: MQInput, queue: J.IN, domain: JSON, parse_timing: immediate, wires: { out: [out] } }\n  out: { type: MQOutput, queue: J.OUT }\n",
        s.qm.clone(),
    );
    let running = b.flow.start();
    wait_for("both messages to leave the input queue", || {
        s.qm.depth("J.OUT").unwrap() == 1 && s.qm.depth("J.BACKOUT").unwrap() == 1
    });
    running.stop();
    assert_eq!(s.qm.depth("J.IN").unwrap(), 0);
    assert_eq!(drain(&s.qm, "J.OUT"), [r#"{"ok":1}"#]);
    let m = s.qm.get("J.BACKOUT", &GetOptions::new()).unwrap().unwrap();
    assert_eq!(&m.body[..], br#"{"a":"#, "the bytes as they came");
    assert_eq!(
        m.md.backout_count, 0,
        "a new message on the backout queue (MQ's MQPUT)"
    );
}

#[test]
fn a_batch_is_committed_when_the_queue_is_idle_or_its_interval_ends_or_the_flow_stops() {
    let s = stored(
        "idle",
        &[
            QueueDef::local("I.IN"),
            QueueDef::local("I.OUT"),
            QueueDef::local("J.IN"),
            QueueDef::local("J.OUT"),
            QueueDef::local("K.IN"),
            QueueDef::local("K.OUT"),
        ],
    );
    let flow = |q: &str, interval: u32| {
        Bench::new(
            &format!(
                "nodes:\n  in: {{ type: MQInput, queue: {q}.IN, domain: BLOB, commit_count: 1000, commit_interval_ms: {interval}, wires: {{ out: [out] }} }}\n  out: {{ type: MQOutput, queue: {q}.OUT }}\n"
            ),
            s.qm.clone(),
        )
    };
    // No interval: a batch far from full is committed as soon as the queue has nothing ready.
    let idle = flow("I", 0);
    let running = idle.flow.start();
    put_all(&s.qm, "I.IN", &["one".to_string()]);
    wait_for("the lone message", || s.qm.depth("I.OUT").unwrap() == 1);
    running.stop();

    // With an interval the batch waits that long for more messages, then is committed.
    let timed = flow("J", 2000);
    let running = timed.flow.start();
    put_all(&s.qm, "J.IN", &["two".to_string()]);
    wait_for("the message to be taken", || {
        s.qm.depth("J.IN").unwrap() == 0
    });
    let visible = || {
        s.qm.browse("J.OUT", &GetOptions::new(), &mut BrowseCursor::new())
            .unwrap()
            .is_some()
    };
    assert!(!visible(), "held until the interval ends");
    wait_for("the interval's commit", visible);
    running.stop();

    // A flow that stops commits what it has processed.
    let stopping = flow("K", 60_000);
    let running = stopping.flow.start();
    put_all(
        &s.qm,
        "K.IN",
        &["a".to_string(), "b".to_string(), "c".to_string()],
    );
    wait_for("the messages to be taken", || {
        s.qm.depth("K.IN").unwrap() == 0
    });
    running.stop();
    assert_eq!(drain(&s.qm, "K.OUT"), ["a", "b", "c"]);
}
