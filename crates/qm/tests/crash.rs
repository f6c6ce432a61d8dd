//! The queue manager's log under kill -9 with tiny segments and a memory window of 16
//! messages: the same load, kills and checks
//! as the server's crash test (`crates/sluice/tests/crash.rs`, which includes this test's
//! `crash_load` module), against `qm-crashd` with 256 KiB log segments, so that segment rolls, recycling
//! and size-triggered checkpoints happen many times per cycle and kills land in them. The
//! server's `sluice.yaml` has no log tuning, and with its 64 MiB segments a kill mid-roll or
//! mid-checkpoint is out of reach of a test of seconds.
//!
//! Short form: `cargo test -p sluice-qm --test crash`.
//! Long form: `SLUICE_CRASH_CYCLES=200 cargo test -p sluice-qm --release --test crash -- --nocapture`.
//! Replay with `SLUICE_CRASH_SEED=<the seed it printed>`.

#[path = "crash_load/mod.rs"]
mod crash_load;

use std::process::Command;

use crash_load::{Plan, Process};

const DEFAULT_CYCLES: u64 = 5;
/// Log segment size given to qm-crashd: a few hundred messages per segment.
const SEGMENT_BYTES: &str = "262144";
/// Memory window given to qm-crashd: the queue's backlog is deeper, so kills also land while
/// messages are paged out and read back.
const WINDOW_MSGS: &str = "16";

#[test]
fn queue_manager_killed_under_load_with_tiny_log_segments_loses_and_duplicates_nothing() {
    let test = "qm-crashd crash test";
    let plan = Plan::from_env(test, DEFAULT_CYCLES);
    let work = std::env::temp_dir().join(format!(
        "sluice-qm-crash-{}-{}",
        std::process::id(),
        plan.seed
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the work folder");
    let (data, log) = (work.join("qm"), work.join("qm-crashd.log"));

    let outcome = crash_load::run(plan, |what| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_qm-crashd"));
        cmd.arg(&data).arg("0").arg(SEGMENT_BYTES).arg(WINDOW_MSGS);
        Process::spawn(
            &mut cmd,
            &log,
            what,
            Box::new(|line| {
                line.trim()
                    .strip_prefix("READY ")
                    .map(|port| format!("127.0.0.1:{port}"))
            }),
        )
    });
    // Checkpoints bound the log: a few segments, spares and one checkpoint at any time.
    outcome.check(test, &data.join("log"), 12, &work);
}
