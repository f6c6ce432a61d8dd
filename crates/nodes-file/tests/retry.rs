//! FileInput's retry properties: a record whose flow fails is propagated again before (or,
//! with long retries, instead of) going to the failure path.

mod common;

use std::time::Duration;

use common::{DataDir, build, labels};

fn flow(retry: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, {retry}, wires: {{ out: [rec], failure: [failed] }} }}\n  rec: {{ type: Capture, raise: boom }}\n  failed: {{ type: Capture }}\n"
    )
}

#[test]
fn short_retry_propagates_a_failing_record_threshold_times_more_then_fails_it() {
    let d = DataDir::new("retry-short");
    d.write("in/a.txt", b"1\n", 0);
    let run = build(
        &flow("retry_mechanism: short_retry, retry_threshold: 2, short_retry_interval_ms: 10"),
        &d.0,
    );
    let got = run.until("the archive", || d.path("in/mqsiarchive/a.txt").exists());
    assert_eq!(labels(&got), ["rec", "rec", "rec", "failed"]);
}

#[test]
fn failure_mechanism_fails_a_record_without_retry_whatever_the_threshold() {
    let d = DataDir::new("retry-none");
    d.write("in/a.txt", b"1\n", 0);
    let run = build(&flow("retry_threshold: 5"), &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/a.txt").exists());
    assert_eq!(labels(&got), ["rec", "failed"]);
}

#[test]
fn long_retry_goes_on_without_failing_and_leaves_the_file_in_transit_when_stopped() {
    let d = DataDir::new("retry-long");
    d.write("in/a.txt", b"1\n", 0);
    let run = build(
        &flow(
            "retry_mechanism: short_and_long_retry, retry_threshold: 1, short_retry_interval_ms: 10, long_retry_interval_ms: 100",
        ),
        &d.0,
    );
    let running = run.flow.start();
    std::thread::sleep(Duration::from_millis(700));
    running.stop();
    let got = run.harness.take_captured();
    let l = labels(&got);
    assert!(l.len() >= 4 && l.iter().all(|l| *l == "rec"), "{l:?}");
    assert!(d.path("in/mqsitransitin/a.txt").exists());
}
