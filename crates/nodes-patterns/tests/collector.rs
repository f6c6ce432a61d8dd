//! Collector: collections by quantity, correlation, terminal timeout and expiry, released at once
//! or by control messages, and kept in the queue manager across a restart.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_flow::RunningFlow;
use sluice_flow::{Registry, load_flow};
use sluice_flow_testing::{Captured, Harness};
use sluice_qm::{QmConfig, QueueManager};

use common::{services, xml_message};

fn registry() -> Registry {
    let mut r = common::registry();
    sluice_nodes_core::register(&mut |s| r.register(s));
    r
}

/// A flow that routes `<a>`, `<b>` and `<go>` messages to the Collector's terminals `a`, `b`
/// and `control`, and captures `out` and `expiry`.
fn flow(qm: &Arc<QueueManager>, props: &str) -> (Arc<Harness>, Arc<sluice_flow::Flow>) {
    let src = format!(
        "flow: collect
nodes:
  in:      {{ type: Inject, wires: {{ out: [route] }} }}
  route:   {{ type: Route, rules: {{ a: '$Body/a', b: '$Body/b', go: '$Body/go' }}, wires: {{ a: [collect.a], b: [collect.b], go: [collect.control] }} }}
  collect: {{ type: Collector, collector_name: TEST{props}, wires: {{ out: [out], expiry: [expiry] }} }}
  out:     {{ type: Capture }}
  expiry:  {{ type: Capture }}
"
    );
    let def = load_flow("collect.yaml", &src, &registry()).unwrap();
    let h = Harness::new();
    let flow = h.build(&def, Path::new("."), &services(qm)).unwrap();
    (h, flow)
}

/// Run `xmls` through a flow built now (as a server would after a redeploy) to completion.
fn run(qm: &Arc<QueueManager>, props: &str, xmls: &[&str]) -> Vec<Captured> {
    let (h, f) = flow(qm, props);
    for x in xmls {
        h.inject(xml_message(x.to_string()));
    }
    h.run(&f);
    h.take_captured()
}

/// Run `xmls`, keeping the flow running until `n` captures arrived (or 10 s passed).
fn run_until(qm: &Arc<QueueManager>, props: &str, xmls: &[&str], n: usize) -> Vec<Captured> {
    let (h, flow) = flow(qm, props);
    for x in xmls {
        h.inject(xml_message(x.to_string()));
    }
    let running: RunningFlow = flow.start();
    let start = Instant::now();
    let mut got = Vec::new();
    while got.len() < n && start.elapsed() < Duration::from_secs(10) {
        got.extend(h.take_captured());
        std::thread::sleep(Duration::from_millis(20));
    }
    running.stop();
    got.extend(h.take_captured());
    got
}

/// A capture as `terminal name: folder=value folder=value …`.
fn show(c: &mut Captured) -> String {
    let label = c.label.clone();
    let t = &mut c.message.root;
    let r = t.root();
    let coll = t
        .path(r, &["Collection"])
        .unwrap()
        .expect("a Collection folder");
    let mut parts = Vec::new();
    for f in t.children(coll).unwrap() {
        let name = String::from_utf8_lossy(t.name_bytes(f)).into_owned();
        if name == "CollectionName" {
            let v = t
                .value_bytes(f)
                .map(|b| String::from_utf8_lossy(b).into_owned());
            parts.push(format!("name={}", v.unwrap_or_default()));
            continue;
        }
        let body = t.path(f, &["XMLNSC"]).unwrap().expect("a body");
        let elem = t.first_child(body).unwrap().expect("an element");
        let value = t
            .path(elem, &["v"])
            .unwrap()
            .and_then(|v| t.value_bytes(v))
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        parts.push(format!("{name}={value}"));
    }
    format!("{label}: {}", parts.join(" "))
}

fn shown(mut cs: Vec<Captured>) -> Vec<String> {
    cs.iter_mut().map(show).collect()
}

fn memory_qm() -> Arc<QueueManager> {
    QueueManager::open_in_memory(QmConfig::default()).unwrap()
}

#[test]
fn collector_propagates_a_collection_when_each_terminal_has_its_quantity() {
    let qm = memory_qm();
    let props = ", quantity: { a: 2, b: 1 }, collection_name: C";
    let got = run(
        &qm,
        props,
        &[
            "<a><v>1</v></a>",
            "<b><v>x</v></b>",
            "<a><v>2</v></a>",
            "<a><v>3</v></a>",
        ],
    );
    assert_eq!(shown(got), ["out: name=C a=1 b=x a=2"]);
    // The third `a` started a new collection, which a `b` and another `a` complete.
    let got = run(&qm, props, &["<b><v>y</v></b>", "<a><v>4</v></a>"]);
    assert_eq!(shown(got), ["out: name=C a=3 b=y a=4"]);
}

#[test]
fn collector_keeps_collections_apart_when_their_correlations_differ() {
    let qm = memory_qm();
    let got = run(
        &qm,
        ", correlation_path: { a: '$Body/*/@key', b: '$Body/*/@key' }, correlation_pattern: { a: 'K-*', b: 'K-*' }, collection_name: 'order *'",
        &[
            "<a key='K-1'><v>a1</v></a>",
            "<a key='K-2'><v>a2</v></a>",
            "<b key='K-2'><v>b2</v></b>",
            "<b key='K-1'><v>b1</v></b>",
        ],
    );
    assert_eq!(
        shown(got),
        ["out: name=order 2 a=a2 b=b2", "out: name=order 1 a=a1 b=b1"]
    );
}

#[test]
fn collector_raises_an_exception_when_a_correlation_does_not_match_the_pattern() {
    let qm = memory_qm();
    let (h, f) = flow(
        &qm,
        ", correlation_path: { a: '$Body/*/@key' }, correlation_pattern: { a: 'K-*' }",
    );
    h.inject(xml_message("<a key='X-1'><v>1</v></a>".into()));
    h.run(&f);
    assert!(h.take_captured().is_empty());
    let errors: Vec<String> = h
        .take_outcomes()
        .into_iter()
        .filter_map(|o| o.err().map(|e| e.exception.describe()))
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("correlation pattern")),
        "{errors:?}"
    );
}

#[test]
fn collector_sends_an_incomplete_collection_to_expiry_when_its_time_passed() {
    let qm = memory_qm();
    let got = run_until(&qm, ", collection_expiry_secs: 1", &["<a><v>1</v></a>"], 1);
    assert_eq!(shown(got), ["expiry: name= a=1"]);
}

#[test]
fn collector_completes_a_terminal_by_its_timeout_when_its_quantity_is_zero() {
    let qm = memory_qm();
    let got = run_until(
        &qm,
        ", quantity: { a: 0 }, timeout_secs: { a: 1 }",
        &["<a><v>1</v></a>", "<a><v>2</v></a>", "<b><v>x</v></b>"],
        1,
    );
    assert_eq!(shown(got), ["out: name= a=1 a=2 b=x"]);
}

#[test]
fn collector_holds_complete_collections_until_a_control_message_when_coordinating_all() {
    let qm = memory_qm();
    let props = ", event_coordination: all_complete";
    let got = run(
        &qm,
        props,
        &[
            "<a><v>1</v></a>",
            "<b><v>x</v></b>",
            "<a><v>2</v></a>",
            "<b><v>y</v></b>",
        ],
    );
    assert!(got.is_empty());
    assert_eq!(
        shown(run(&qm, props, &["<go/>"])),
        ["out: name= a=1 b=x", "out: name= a=2 b=y"]
    );
}

#[test]
fn collector_releases_the_next_collection_at_once_when_a_control_message_came_first() {
    let qm = memory_qm();
    let props = ", event_coordination: first_complete";
    let got = run(&qm, props, &["<go/>", "<a><v>1</v></a>", "<b><v>x</v></b>"]);
    assert_eq!(shown(got), ["out: name= a=1 b=x"]);
    let got = run(
        &qm,
        props,
        &[
            "<a><v>2</v></a>",
            "<b><v>y</v></b>",
            "<a><v>3</v></a>",
            "<b><v>z</v></b>",
        ],
    );
    assert!(got.is_empty());
    assert_eq!(shown(run(&qm, props, &["<go/>"])), ["out: name= a=2 b=y"]);
}

#[test]
fn collector_ignores_control_messages_when_coordination_is_disabled() {
    let qm = memory_qm();
    let got = run(&qm, "", &["<go/>", "<a><v>1</v></a>", "<go/>"]);
    assert!(got.is_empty());
    assert_eq!(
        shown(run(&qm, "", &["<b><v>x</v></b>"])),
        ["out: name= a=1 b=x"]
    );
}

#[test]
fn collector_completes_a_collection_after_a_restart_when_it_was_persisted() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!("sluice-collect-{}-{nanos}", std::process::id()));
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert!(run(&qm, "", &["<a><v>before</v></a>"]).is_empty());
    qm.shutdown();
    drop(qm);
    let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
    assert_eq!(
        shown(run(&qm, "", &["<b><v>after</v></b>"])),
        ["out: name= a=before b=after"]
    );
    qm.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn collector_fails_to_build_when_a_setting_names_no_wired_terminal() {
    let src = "flow: collect
nodes:
  in:      { type: Inject, wires: { out: [collect.a] } }
  collect: { type: Collector, quantity: { z: 2 }, wires: { out: [out] } }
  out:     { type: Capture }
";
    let def = load_flow("collect.yaml", src, &registry()).unwrap();
    let h = Harness::new();
    let Err(problems) = h.build(&def, Path::new("."), &services(&memory_qm())) else {
        panic!("a setting for an unwired terminal built");
    };
    assert!(problems[0].to_string().contains("`z`"), "{}", problems[0]);
}

#[test]
fn collector_wire_must_name_a_terminal_when_it_reaches_the_node() {
    let src = "flow: collect
nodes:
  in:      { type: Inject, wires: { out: [collect] } }
  collect: { type: Collector, wires: { out: [out] } }
  out:     { type: Capture }
";
    let Err(problems) = load_flow("collect.yaml", src, &registry()) else {
        panic!("a wire without a terminal loaded");
    };
    assert!(
        problems[0].to_string().contains("must name one"),
        "{}",
        problems[0]
    );
}
