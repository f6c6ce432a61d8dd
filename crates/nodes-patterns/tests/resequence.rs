//! Resequence: messages released in the order of their numbers, early ones held in the queue
//! manager (across a restart), a gap given up after the missing-message timeout.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sluice_flow::load_flow;
use sluice_flow_testing::Harness;
use sluice_node_api::Message;
use sluice_qm::{QmConfig, QueueManager};

use common::{registry, services, xml_message};

fn part(n: i64) -> Message {
    xml_message(format!("<part><n>{n}</n></part>"))
}

/// Run `numbers` through Inject → Resequence → Capture (`out` and `missing`), keeping the flow
/// running `linger` after they were injected; returns (terminal, number) in propagation order.
fn run(
    qm: &Arc<QueueManager>,
    numbers: &[i64],
    props: &str,
    linger: Duration,
) -> Vec<(String, i64)> {
    let src = format!(
        "flow: reorder
nodes:
  in:    {{ type: Inject, wires: {{ out: [order] }} }}
  order: {{ type: Resequence, sequence_number_path: '$Body/part/n', sequence_name: PARTS{props}, wires: {{ out: [out], missing: [missing] }} }}
  out:     {{ type: Capture }}
  missing: {{ type: Capture }}
"
    );
    let def = load_flow("reorder.yaml", &src, &registry()).unwrap();
    let services = services(qm);
    let h = Harness::new();
    let flow = h.build(&def, Path::new("."), &services).unwrap();
    for &n in numbers {
        h.inject(part(n));
    }
    let running = flow.start();
    std::thread::sleep(linger);
    running.stop();
    h.take_captured()
        .into_iter()
        .map(|mut c| {
            let r = c.message.root.root();
            let body = c
                .message
                .root
                .path(r, &["XMLNSC", "part", "n"])
                .unwrap()
                .unwrap();
            let n = String::from_utf8_lossy(c.message.root.value_bytes(body).unwrap())
                .parse()
                .unwrap();
            (c.label, n)
        })
        .collect()
}

fn out(ns: &[i64]) -> Vec<(String, i64)> {
    ns.iter().map(|&n| ("out".to_string(), n)).collect()
}

#[test]
fn resequence_releases_messages_in_number_order_when_they_arrive_out_of_order() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
    let got = run(&qm, &[3, 1, 2, 5, 4], "", Duration::from_millis(300));
    assert_eq!(got, out(&[1, 2, 3, 4, 5]));
}

#[test]
fn resequence_starts_at_the_first_message_when_start_at_says_so() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
    let got = run(
        &qm,
        &[7, 9, 8],
        ", start_at: first_message",
        Duration::from_millis(300),
    );
    assert_eq!(got, out(&[7, 8, 9]));
}

#[test]
fn resequence_keeps_held_messages_across_a_restart() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!("sluice-reseq-{}-{nanos}", std::process::id()));
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert_eq!(run(&qm, &[3, 2], "", Duration::from_millis(300)), []);
    qm.shutdown();
    drop(qm);
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert_eq!(
        run(&qm, &[1], "", Duration::from_millis(300)),
        out(&[1, 2, 3])
    );
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resequence_gives_up_a_gap_to_missing_when_it_stays_open_past_the_timeout() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
    let got = run(
        &qm,
        &[1, 3, 4, 6],
        ", missing_message_timeout_secs: 1",
        Duration::from_millis(3500),
    );
    assert_eq!(
        got,
        [
            ("out".to_string(), 1),
            ("missing".to_string(), 3),
            ("out".to_string(), 4),
            ("missing".to_string(), 6),
        ]
    );
}
