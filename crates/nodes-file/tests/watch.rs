//! FileInput noticing new files by directory events, long before its polling interval.

mod common;

use std::time::{Duration, Instant};

use common::{DataDir, build, labels};

fn flow(watch: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 60000, watch: {watch}, directory: in, wires: {{ out: [rec] }} }}\n  rec: {{ type: Capture }}\n"
    )
}

/// Start the flow, let its first look find nothing, write a file and wait up to `limit` for it.
fn picked_up_within(watch: &str, limit: Duration) -> bool {
    let d = DataDir::new(&format!("watch-{watch}"));
    std::fs::create_dir_all(d.path("in")).unwrap();
    let run = build(&flow(watch), &d.0);
    let running = run.flow.start();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(d.path("in/new.txt"), b"fresh").unwrap();
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    while got.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        got.extend(run.harness.take_captured());
    }
    running.stop();
    labels(&got) == ["rec"]
}

#[test]
fn file_input_takes_a_new_file_at_once_when_watching_the_directory() {
    assert!(picked_up_within("inotify", Duration::from_secs(5)));
}

#[test]
fn file_input_waits_for_the_polling_interval_when_told_to_poll() {
    assert!(!picked_up_within("poll", Duration::from_millis(1500)));
}
