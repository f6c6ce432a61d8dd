//! Sequence numbers per group, kept in the queue manager: in order, given again after a
//! rollback, continued after a restart.

mod common;

use std::path::Path;
use std::sync::Arc;

use sluice_flow::load_flow;
use sluice_flow_testing::Harness;
use sluice_node_api::Message;
use sluice_qm::{QmConfig, QueueManager};
use sluice_tree::Value;

use common::{registry, services, xml_message};

fn order(customer: &str) -> Message {
    xml_message(format!("<order><customer>{customer}</customer></order>"))
}

/// Run `customers` through Inject → Sequence → Capture and return the numbers given (none
/// for a message whose invocation failed).
fn run(qm: &Arc<QueueManager>, customers: &[&str], capture: &str) -> Vec<i64> {
    let src = format!(
        "flow: numbering
nodes:
  in:  {{ type: Inject, wires: {{ out: [seq] }} }}
  seq: {{ type: Sequence, sequence_group_path: '$Body/order/customer', sequence_name: ORDERS, wires: {{ out: [cap] }} }}
  cap: {{ type: Capture{capture} }}
"
    );
    let def = load_flow("numbering.yaml", &src, &registry()).unwrap();
    let services = services(qm);
    let h = Harness::new();
    let flow = h.build(&def, Path::new("."), &services).unwrap();
    for c in customers {
        h.inject(order(c));
    }
    h.run(&flow);
    h.take_captured()
        .into_iter()
        .map(|mut c| {
            let le = &mut c.message.local_environment;
            let r = le.root();
            let n = le.path(r, &["Sequence", "Number"]).unwrap().unwrap();
            match le.value(n) {
                Value::Integer(i) => i,
                other => panic!("{other:?}"),
            }
        })
        .collect()
}

#[test]
fn sequence_numbers_each_group_from_one_when_groups_interleave() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
    assert_eq!(run(&qm, &["A", "B", "A", "A", "B"], ""), [1, 1, 2, 3, 2]);
}

#[test]
fn sequence_gives_a_number_again_when_the_invocation_rolls_back() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
    assert_eq!(run(&qm, &["A"], ""), [1]);
    // Captured, then the flow raises: the invocation rolls back with its number.
    assert_eq!(run(&qm, &["A"], ", raise: refused"), [2]);
    assert_eq!(run(&qm, &["A"], ""), [2]);
}

#[test]
fn sequence_continues_after_a_restart_when_numbers_were_committed() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!("sluice-seq-{}-{nanos}", std::process::id()));
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert_eq!(run(&qm, &["A", "A", "B"], ""), [1, 2, 1]);
    qm.shutdown();
    drop(qm);
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert_eq!(run(&qm, &["A", "B"], ""), [3, 2]);
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}
