//! The server survives kill -9: `sluice run` is SIGKILLed at random moments (also while it
//! starts) under concurrent persistent put/get load over the client protocol, restarted on the
//! same data folder, and at the end the queue is drained and checked by message id: every
//! committed put delivered exactly once, nothing rolled back or uncommitted at a kill delivered,
//! no duplicates, every body intact (the load and checks are in `crates/qm/tests/crash_load/mod.rs`, shared with the queue manager's own crash test).
//! A second test puts to the input queue of a flow that moves the messages on in batches
//! (MQInput `commit_count`), killed the same way: each still arrives exactly once.
//!
//! Short form (in the normal suite, a few seconds): `cargo test -p sluice --test crash`.
//! Long form: `SLUICE_CRASH_CYCLES=200 cargo test -p sluice --release --test crash -- --nocapture`.
//! Replay a run's random moments and unit sizes with `SLUICE_CRASH_SEED=<the seed it printed>`.

mod common;
#[path = "../../qm/tests/crash_load/mod.rs"]
mod crash_load;

use std::process::Command;

use common::{bin, free_port};
use crash_load::{Plan, Process};

/// Kills in the short form: enough to land in units of work, recovery and restarts.
const DEFAULT_CYCLES: u64 = 5;

/// The project: the load's queue, persistent and deep, and a trivial flow (a project needs one).
const SLUICE_YAML: &str =
    "queues:\n  - { name: CRASH.Q, max_depth: 10000000, default_persistence: persistent }\n";
const FLOW_YAML: &str = "nodes:\n  in: { type: HTTPInput, path: /ping, wires: { out: [r] } }\n  r: { type: HTTPReply }\n";

/// The project of the flow variant: producers put to CRASH.IN, a flow moves each message to
/// CRASH.Q in batches of up to 20 under one unit of work, consumers get from CRASH.Q.
const FLOW_SLUICE_YAML: &str = "queues:\n  - { name: CRASH.IN, max_depth: 10000000, default_persistence: persistent }\n  - { name: CRASH.Q, max_depth: 10000000, default_persistence: persistent }\n";
const MOVE_FLOW_YAML: &str = "instances: 2\nnodes:\n  in: { type: MQInput, queue: CRASH.IN, domain: BLOB, commit_count: 20, wires: { out: [out] } }\n  out: { type: MQOutput, queue: CRASH.Q }\n";

#[test]
fn sluice_run_killed_under_load_delivers_every_committed_put_exactly_once() {
    crash_test(
        "sluice run crash test",
        SLUICE_YAML,
        FLOW_YAML,
        crash_load::QUEUE,
    );
}

#[test]
fn a_batching_flow_killed_under_load_moves_every_committed_put_exactly_once() {
    crash_test(
        "sluice run crash test through a batching flow",
        FLOW_SLUICE_YAML,
        MOVE_FLOW_YAML,
        "CRASH.IN",
    );
}

fn crash_test(test: &str, sluice_yaml: &str, flow_yaml: &str, put_queue: &'static str) {
    let mut plan = Plan::from_env(test, DEFAULT_CYCLES);
    plan.put_queue = put_queue;
    // Kept when the test fails, for the data folder and the server log.
    let work = std::env::temp_dir().join(format!(
        "sluice-crash-{}-{put_queue}-{}",
        std::process::id(),
        plan.seed
    ));
    let _ = std::fs::remove_dir_all(&work);
    let (project, data, log) = (
        work.join("project"),
        work.join("data"),
        work.join("server.log"),
    );
    std::fs::create_dir_all(project.join("flows")).expect("create the project");
    std::fs::write(project.join("sluice.yaml"), sluice_yaml).expect("write sluice.yaml");
    std::fs::write(project.join("flows/flow.yaml"), flow_yaml).expect("write the flow");

    let outcome = crash_load::run(plan, |what| {
        // Fresh ports every start: a killed server's ports may linger.
        let qm_port = free_port();
        let mut cmd = Command::new(bin());
        cmd.arg("run")
            .arg(&project)
            .args(["--bind", "127.0.0.1"])
            .args(["--http-port", &free_port().to_string()])
            .args(["--admin-port", &free_port().to_string()])
            .args(["--qm-port", &qm_port.to_string()])
            .arg("--data-dir")
            .arg(&data);
        let addr = format!("127.0.0.1:{qm_port}");
        Process::spawn(
            &mut cmd,
            &log,
            what,
            Box::new(move |line| (line.trim() == "ready").then(|| addr.clone())),
        )
    });
    // Each restart starts a new segment and folds the surviving ones into a checkpoint, so the
    // log folder holds a handful of files however many kills there were.
    outcome.check(test, &data.join("qm/log"), 8, &work);
}
