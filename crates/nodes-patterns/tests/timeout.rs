//! TimeoutControl and TimeoutNotification: timers set and cancelled, fired with their stored
//! message, kept across a restart (a timeout missed while down fires once), and the automatic
//! mode. Tests wait for the captures they expect, with a generous limit, never a fixed time.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_flow::load_flow;
use sluice_flow_testing::{Captured, Harness};
use sluice_nodes_patterns::timeout::TIMEOUT_QUEUE;
use sluice_qm::{QmConfig, QueueManager};
use sluice_tree::{Text, Value, field_type};

use common::{registry, services, xml_message};

/// `<reminder>` with a TimeoutRequest of these character fields in its LocalEnvironment.
fn request(fields: &[(&str, &str)]) -> sluice_node_api::Message {
    let mut msg = xml_message("<reminder>call back</reminder>".into());
    let t = &mut msg.local_environment;
    let r = t.root();
    let f = t
        .create_last_child(
            r,
            field_type::NAME,
            Text::from_static("TimeoutRequest"),
            Value::Null,
        )
        .unwrap();
    for (n, v) in fields {
        let name = t.alloc_text(n.as_bytes());
        let v = Value::Character(t.alloc_text(v.as_bytes()));
        t.create_last_child(f, field_type::NAME_VALUE, name, v)
            .unwrap();
    }
    msg
}

/// Run `msgs` through a flow of TimeoutControl (and, with `notify`, a controlled
/// TimeoutNotification) until `n` timeouts were captured; the outcomes of the inputs and the
/// captures.
fn run(
    qm: &Arc<QueueManager>,
    msgs: Vec<sluice_node_api::Message>,
    notify: bool,
    n: usize,
) -> (Vec<Result<(), String>>, Vec<Captured>) {
    let mut src = "flow: reminders
nodes:
  in:     { type: Inject, wires: { out: [ctl] } }
  ctl:    { type: TimeoutControl, unique_identifier: REMINDERS }
"
    .to_string();
    if notify {
        src.push_str(
            "  notify: { type: TimeoutNotification, unique_identifier: REMINDERS, operation_mode: controlled, wires: { out: [out] } }
  out:    { type: Capture }
",
        );
    }
    let def = load_flow("reminders.yaml", &src, &registry()).unwrap();
    let h = Harness::new();
    let flow = h.build(&def, Path::new("."), &services(qm)).unwrap();
    for m in msgs {
        h.inject(m);
    }
    let running = flow.start();
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < n && start.elapsed() < Duration::from_secs(10) {
        got.extend(h.take_captured());
        std::thread::sleep(Duration::from_millis(20));
    }
    running.stop();
    got.extend(h.take_captured());
    let outcomes = h
        .take_outcomes()
        .into_iter()
        .map(|o| o.map_err(|e| e.exception.describe()))
        .collect();
    (outcomes, got)
}

/// The Count left that a timeout's LocalEnvironment gives.
fn count_left(c: &mut Captured) -> i64 {
    let t = &mut c.message.local_environment;
    let r = t.root();
    let id = t
        .path(r, &["TimeoutRequest", "Count"])
        .unwrap()
        .expect("TimeoutRequest.Count");
    match t.value(id) {
        Value::Integer(i) => i,
        v => panic!("Count is {v:?}"),
    }
}

fn body(c: &mut Captured) -> String {
    let t = &mut c.message.root;
    let r = t.root();
    let id = t
        .path(r, &["XMLNSC", "reminder"])
        .unwrap()
        .expect("the stored body");
    String::from_utf8_lossy(t.value_bytes(id).unwrap_or_default()).into_owned()
}

fn memory_qm() -> Arc<QueueManager> {
    QueueManager::open_in_memory(QmConfig::default()).unwrap()
}

fn timers(qm: &QueueManager) -> usize {
    qm.depth(TIMEOUT_QUEUE).unwrap_or(0)
}

#[test]
fn notification_propagates_the_stored_message_at_each_timeout_when_control_set_a_count() {
    let qm = memory_qm();
    let req = request(&[
        ("Action", "SET"),
        ("Identifier", "R1"),
        ("Interval", "1"),
        ("Count", "2"),
    ]);
    let (outcomes, mut got) = run(&qm, vec![req], true, 2);
    assert_eq!(outcomes, [Ok(())]);
    assert_eq!(got.len(), 2);
    assert_eq!(body(&mut got[0]), "call back");
    assert_eq!(count_left(&mut got[0]), 1);
    assert_eq!(count_left(&mut got[1]), 0);
    assert_eq!(timers(&qm), 0, "the timer ends with its last timeout");
}

#[test]
fn control_removes_a_timer_when_the_request_cancels_it() {
    let qm = memory_qm();
    let set = request(&[
        ("Action", "SET"),
        ("Identifier", "R2"),
        ("StartDate", "2999-01-01"),
    ]);
    let (outcomes, _) = run(&qm, vec![set], false, 0);
    assert_eq!(outcomes, [Ok(())]);
    assert_eq!(timers(&qm), 1);
    let cancel = request(&[("Action", "CANCEL"), ("Identifier", "R2")]);
    let (outcomes, _) = run(&qm, vec![cancel], false, 0);
    assert_eq!(outcomes, [Ok(())]);
    assert_eq!(timers(&qm), 0);
    let again = request(&[("Action", "CANCEL"), ("Identifier", "R2")]);
    let (outcomes, _) = run(&qm, vec![again], false, 0);
    assert!(
        outcomes[0]
            .as_ref()
            .is_err_and(|e| e.contains("no timeout 'R2'")),
        "{outcomes:?}"
    );
}

#[test]
fn control_keeps_the_timer_when_a_set_may_not_overwrite_it() {
    let qm = memory_qm();
    let set = |overwrite: &str| {
        request(&[
            ("Action", "SET"),
            ("Identifier", "R3"),
            ("StartDate", "2999-01-01"),
            ("AllowOverwrite", overwrite),
        ])
    };
    let (outcomes, _) = run(&qm, vec![set("TRUE"), set("FALSE")], false, 0);
    assert_eq!(outcomes[0], Ok(()));
    assert!(
        outcomes[1]
            .as_ref()
            .is_err_and(|e| e.contains("does not allow overwriting")),
        "{outcomes:?}"
    );
    assert_eq!(timers(&qm), 1);
}

#[test]
fn notification_fires_once_after_a_restart_when_timeouts_fell_due_while_down() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!("sluice-timeout-{}-{nanos}", std::process::id()));
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    // Due every second since 2020: every timeout but the last fell due "while down".
    let req = request(&[
        ("Action", "SET"),
        ("Identifier", "R4"),
        ("StartDate", "2020-01-01"),
        ("StartTime", "00:00:00"),
        ("Interval", "1"),
        ("Count", "5"),
    ]);
    let (outcomes, _) = run(&qm, vec![req], false, 0);
    assert_eq!(outcomes, [Ok(())]);
    qm.shutdown();
    drop(qm);
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    let (_, mut got) = run(&qm, Vec::new(), true, 1);
    assert_eq!(got.len(), 1);
    assert_eq!(count_left(&mut got[0]), 0);
    assert_eq!(timers(&qm), 0);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn notification_propagates_on_its_own_when_its_mode_is_automatic() {
    let qm = memory_qm();
    let src = "flow: ticker
nodes:
  tick: { type: TimeoutNotification, unique_identifier: TICK, timeout_interval_secs: 1, wires: { out: [out] } }
  out:  { type: Capture }
";
    let def = load_flow("ticker.yaml", src, &registry()).unwrap();
    let h = Harness::new();
    let flow = h.build(&def, Path::new("."), &services(&qm)).unwrap();
    let running = flow.start();
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < 2 && start.elapsed() < Duration::from_secs(10) {
        got.extend(h.take_captured());
        std::thread::sleep(Duration::from_millis(20));
    }
    running.stop();
    assert!(got.len() >= 2, "{} timeouts", got.len());
}
