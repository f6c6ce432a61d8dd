//! A suite run against the floor only, and the server's start and stop
//! through a stand-in binary.

use std::path::{Path, PathBuf};

use std::sync::Mutex;

use sluice_bench::BenchError;
use sluice_bench::driver::TransportFactory;
use sluice_bench::floor::FloorServer;
use sluice_bench::http::{HttpFactory, HttpOptions};
use sluice_bench::report::write_report;
use sluice_bench::runner::{NoHooks, RunnerOptions, ServerHooks, run_suite};
use sluice_bench::server::ServerEndpoints;
use sluice_bench::suite::{Case, Suite, TransportSpec};

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sluice-bench-it-{}-{name}", std::process::id()))
}

fn options(binary: Option<PathBuf>, name: &str) -> RunnerOptions {
    let mut o = RunnerOptions::new(binary, temp(&format!("{name}-data")));
    o.progress = false;
    o.handle_ctrl_c = false;
    o
}

const FLOOR_SUITE: &str = r#"
warmup_secs: 0.2
duration_secs: 0.5
runs: 2
tests:
  - name: floor-xml
    transport: floor
    format: xml
    sizes: [2kB, 20kB]
    requesters: 2
  - name: floor-json-rated
    transport: floor
    format: json
    sizes: [2kB]
    requesters: 2
    rate: 200
    runs: 1
    seed: { file: ace11_containers.csv, platform: Linux, scenario: HTTP BLOB Echo, product: ACE 11.0.0.4, concurrency: "1" }
"#;

#[test]
fn suite_against_floor_measures_every_case() {
    let suite = Suite::parse(FLOOR_SUITE, Path::new("floor.yaml")).expect("suite");
    let outcome = run_suite(&suite, &options(None, "floor"), &NoHooks).expect("run");
    assert!(!outcome.interrupted);
    assert_eq!(outcome.rows.len(), 3);
    for row in &outcome.rows {
        assert_eq!(row.summary.failed_runs(), 0, "{}", row.test);
        let m = row.median().expect("median");
        assert!(m.messages > 0);
        assert!(m.driver_cpu_us_per_msg.is_some());
    }
    assert_eq!(outcome.rows[0].summary.runs.len(), 2);
    assert_eq!(outcome.rows[2].summary.runs.len(), 1);
    // The rated case cannot send more than its schedule allows since the
    // run began: 200/s over 0.2 s warm-up + 0.5 s, plus one per requester.
    let rated = outcome.rows[2].median().expect("median");
    assert!(rated.messages <= 142, "{}", rated.messages);
    let seed = outcome.rows[2].seed.as_ref().expect("seed row");
    assert_eq!(seed.rate, Some(2761.20));
    assert!(outcome.rows[2].rate_ratio().is_some());

    let dir = temp("floor-report");
    let files = write_report(&dir, &outcome, "Floor").expect("report");
    assert_eq!(files.len(), 2);
    let csv = std::fs::read_to_string(dir.join("report.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 4);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn suite_needing_server_without_binary_is_an_error() {
    let text = "tests: [{name: q, transport: {http: {path: /x}}, sizes: [2kB], requesters: 1}]\nfloor: false\n";
    let suite = Suite::parse(text, Path::new("s.yaml")).expect("suite");
    let err = run_suite(&suite, &options(None, "nobinary"), &NoHooks);
    assert!(matches!(err, Err(BenchError::Unsupported(_))));
}

/// A stand-in server: prints its arguments, then `ready`, then waits for SIGTERM.
fn fake_sluice(name: &str) -> PathBuf {
    let bin = temp(name);
    std::fs::write(&bin, "#!/bin/sh\necho \"$@\"\necho ready\nexec sleep 60\n").expect("script");
    let mut perms = std::fs::metadata(&bin).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&bin, perms).expect("chmod");
    bin
}

#[test]
fn suite_starts_server_and_reports_unavailable_transports() {
    let bin = fake_sluice("fake-sluice.sh");
    let text = r#"
floor: false
warmup_secs: 0
duration_secs: 0.2
runs: 1
tests:
  - name: queue
    transport: { qm: { in: IN, out: OUT } }
    sizes: [2kB]
    persistence: [NONE, FULL]
    requesters: 1
  - name: scaled
    transport: { http: { path: /x } }
    sizes: [2kB]
    instances: [2]
    requesters: 1
"#;
    let suite = Suite::parse(text, Path::new("s.yaml")).expect("suite");
    let started = std::time::Instant::now();
    let outcome = run_suite(&suite, &options(Some(bin.clone()), "fake"), &NoHooks).expect("run");
    let _ = std::fs::remove_file(&bin);
    let _ = std::fs::remove_dir_all(temp("fake-data"));
    assert_eq!(outcome.rows.len(), 3);
    assert!(
        outcome
            .rows
            .iter()
            .all(|r| r.median().is_none() && r.note.is_some())
    );
    assert!(
        outcome.rows[0]
            .note
            .as_deref()
            .unwrap_or("")
            .contains("queue-manager")
    );
    assert!(
        outcome.rows[2]
            .note
            .as_deref()
            .unwrap_or("")
            .contains("instances")
    );
    // The stand-in was stopped by SIGTERM, not left to its 60 s sleep.
    assert!(started.elapsed().as_secs() < 30);
}

/// Hooks that record instance changes and route queue tests to a floor
/// server, standing in for the queue-manager transport another crate adds.
struct RecordingHooks {
    floor_url: String,
    instances: Mutex<Vec<u32>>,
}

impl ServerHooks for RecordingHooks {
    fn set_instances(&self, server: &ServerEndpoints, _: &Case, n: u32) -> Result<(), BenchError> {
        assert!(server.pid > 0 && server.qm_port > 0);
        self.instances.lock().expect("lock").push(n);
        Ok(())
    }

    fn transport(
        &self,
        _: &ServerEndpoints,
        case: &Case,
    ) -> Result<Option<Box<dyn TransportFactory>>, BenchError> {
        match case.transport {
            TransportSpec::Qm { .. } => Ok(Some(Box::new(HttpFactory::new(
                &self.floor_url,
                HttpOptions::default(),
            )?))),
            _ => Ok(None),
        }
    }
}

#[test]
fn suite_uses_caller_hooks_for_instances_and_transports() {
    let bin = fake_sluice("fake-sluice-hooks.sh");
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let hooks = RecordingHooks {
        floor_url: floor.url("/"),
        instances: Mutex::new(Vec::new()),
    };
    let text = r#"
floor: false
warmup_secs: 0.1
duration_secs: 0.3
runs: 1
tests:
  - name: queue-scaling
    transport: { qm: { in: IN, out: OUT } }
    sizes: [2kB]
    instances: [1, 2, 3]
    requesters: 2
"#;
    let suite = Suite::parse(text, Path::new("s.yaml")).expect("suite");
    let outcome = run_suite(&suite, &options(Some(bin.clone()), "hooks"), &hooks).expect("run");
    let _ = std::fs::remove_file(&bin);
    let _ = std::fs::remove_dir_all(temp("hooks-data"));
    assert_eq!(*hooks.instances.lock().expect("lock"), vec![1, 2, 3]);
    assert_eq!(outcome.rows.len(), 3);
    let measured: u64 = outcome
        .rows
        .iter()
        .map(|r| r.median().map_or(0, |m| m.messages))
        .sum();
    assert!(measured > 0);
    assert!(
        measured
            <= floor
                .stats()
                .requests
                .load(std::sync::atomic::Ordering::SeqCst)
    );
    assert!(
        outcome
            .rows
            .iter()
            .all(|r| r.scaling && r.summary.failed_runs() == 0)
    );
}

#[test]
fn suite_reports_a_server_that_exits_instead_of_failing() {
    let bin = temp("fake-sluice-exits.sh");
    std::fs::write(&bin, "#!/bin/sh\necho ready\nexit 0\n").expect("script");
    let mut perms = std::fs::metadata(&bin).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&bin, perms).expect("chmod");
    let text = r#"
floor: false
warmup_secs: 0.1
duration_secs: 0.2
runs: 1
tests:
  - name: gone
    transport: { http: { path: /x } }
    sizes: [2kB, 20kB]
    requesters: 1
"#;
    let suite = Suite::parse(text, Path::new("s.yaml")).expect("suite");
    let outcome = run_suite(&suite, &options(Some(bin.clone()), "exits"), &NoHooks).expect("run");
    let _ = std::fs::remove_file(&bin);
    let _ = std::fs::remove_dir_all(temp("exits-data"));
    assert_eq!(outcome.rows.len(), 2);
    // Each case is either skipped with the reason or measured with every run failed.
    assert!(outcome.rows.iter().all(|r| r.median().is_none()));
    assert!(
        outcome.rows[1]
            .note
            .as_deref()
            .unwrap_or("")
            .contains("exited")
    );
}
