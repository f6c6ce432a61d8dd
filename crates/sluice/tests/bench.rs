//! `sluice bench` against the real server: one HTTP and one queue-manager measurement, and a
//! short suite. They check counts and the report's shape, never speed.

mod common;

use std::process::Command;

use common::tempdir::TempDir;
use common::{Server, bin, samples_dir};

fn run(args: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("bench")
        .args(args)
        .output()
        .expect("run sluice bench");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "sluice bench {args:?} failed:\n{text}"
    );
    text
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The cell of column `name` in the last row of the first table in `text`.
fn cell(text: &str, name: &str) -> String {
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
    let head = cells(rows.first().expect("a table"));
    let i = head
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}: {text}"));
    cells(rows.last().expect("a row"))[i].clone()
}

#[test]
fn bench_gen_writes_a_message_of_the_size_asked() {
    let out = Command::new(bin())
        .args(["bench", "gen", "--size", "20kB", "--format", "xml"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let n = out.stdout.len() as f64;
    assert!((n - 20_000.0).abs() / 20_000.0 < 0.02, "{n} bytes");
    assert!(out.stdout.starts_with(b"<Parent>"));
}

#[test]
fn bench_http_measures_a_sample_without_errors() {
    let s = Server::start(&samples_dir());
    let url = format!("http://127.0.0.1:{}/samples/xml-echo", s.http_port);
    let pid = s.child.id().to_string();
    let t = run(&[
        "http",
        "--url",
        &url,
        "--size",
        "2kB",
        "--requesters",
        "2",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--server-pid",
        &pid,
    ]);
    assert_eq!(cell(&t, "Runs ok/failed"), "1/0", "{t}");
    assert!(
        cell(&t, "Message Rate")
            .parse::<f64>()
            .is_ok_and(|r| r > 0.0),
        "{t}"
    );
    assert!(
        cell(&t, "Server CPU µs/msg")
            .parse::<f64>()
            .is_ok_and(|c| c > 0.0),
        "{t}"
    );
}

#[test]
fn bench_qm_measures_request_reply_through_the_queue_manager() {
    let s = Server::start(&samples_dir());
    let addr = format!("127.0.0.1:{}", s.qm_port);
    let pid = s.child.id().to_string();
    let t = run(&[
        "qm",
        "--server",
        &addr,
        "--in",
        "SAMPLES.IN",
        "--out",
        "SAMPLES.OUT",
        "--size",
        "2kB",
        "--requesters",
        "2",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--server-pid",
        &pid,
    ]);
    assert_eq!(cell(&t, "Runs ok/failed"), "1/0", "{t}");
    assert!(
        cell(&t, "Message Rate")
            .parse::<f64>()
            .is_ok_and(|r| r > 0.0),
        "{t}"
    );
    // The same through the server's local socket.
    let local = s.data_dir.join("qm.sock").display().to_string();
    let any = run(&[
        "qm",
        "--server",
        &local,
        "--in",
        "SAMPLES.IN",
        "--out",
        "SAMPLES.OUT",
        "--any-reply",
        "--requesters",
        "2",
        "--duration",
        "1",
        "--warmup",
        "0.2",
    ]);
    assert_eq!(cell(&any, "Runs ok/failed"), "1/0", "{any}");
    let mut c = sluice_qm::net::Client::connect(&addr, Default::default()).unwrap();
    assert_eq!(
        c.depth("SAMPLES.IN").unwrap(),
        0,
        "every request was taken by the flow"
    );
    assert_eq!(
        c.depth("SAMPLES.OUT").unwrap(),
        0,
        "every reply was taken by its requester"
    );
}

#[test]
fn bench_suite_writes_markdown_and_csv_reports_with_seed_figures() {
    let dir = TempDir::new("suite");
    let suite = dir.path().join("suite.yaml");
    let samples = samples_dir();
    // With more than one core, the server runs on one and the driver on the others.
    let placed = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    std::fs::write(
        &suite,
        format!(
            "project: {}\nwarmup_secs: 0.2\nduration_secs: 1\nruns: 1\nfloor: false\n{}tests:\n  - name: blob-echo\n    transport: {{ http: {{ path: /samples/blob-echo }} }}\n    format: xml\n    sizes: [2kB]\n    instances: [1, 2]\n    requesters: 2\n    seed: {{ file: ace11_containers.csv, platform: Linux, scenario: HTTP BLOB Echo, product: ACE 11.0.0.4, concurrency: \"2\" }}\n  - name: in-process\n    transport: {{ inprocess: {{ path: /samples/xml-echo }} }}\n    format: xml\n    sizes: [2kB]\n    requesters: 2\n  - name: mq-read-write\n    transport: {{ qm: {{ in: SAMPLES.IN, out: SAMPLES.OUT }} }}\n    format: xml\n    sizes: [2kB]\n    persistence: [NONE, FULL]\n    requesters: 2\n    seed: {{ file: wmb8_part2.csv, section: MQ Nodes, test: Reading and writing to an MQ Queue }}\n",
            samples.display(),
            if placed { "server_cores: 1\n" } else { "" }
        ),
    )
    .unwrap();
    let out = dir.path().join("report");
    let t = run(&[
        "--suite",
        &suite.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--no-progress",
    ]);
    let md = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let csv = std::fs::read_to_string(out.join("report.csv")).expect("report.csv");
    assert!(
        md.contains("blob-echo")
            && md.contains("mq-read-write")
            && md.contains("in-process /samples/xml-echo"),
        "{md}"
    );
    assert!(md.contains("Msg Size") && md.contains("CPU ms/msg"), "{md}");
    assert_eq!(
        md.contains("The server ran on CPU"),
        placed,
        "the report says where the server ran when the suite placed it:\n{md}"
    );
    assert!(
        md.contains("331.64"),
        "the seed figure for HTTP BLOB Echo 2k at 2 cores is shown:\n{md}"
    );
    assert!(
        !md.contains("no mechanism"),
        "instances were set through the admin API:\n{md}"
    );
    assert_eq!(
        csv.lines().count(),
        1 + 5,
        "a header and one row per case:\n{csv}"
    );
    let head: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let failed = head
        .iter()
        .position(|h| *h == "runs_failed")
        .expect("a runs_failed column");
    for line in csv.lines().skip(1).filter(|l| !l.is_empty()) {
        // The seed source column is quoted and holds commas; count from the left, before it.
        assert_eq!(line.split(',').nth(failed), Some("0"), "{csv}\n{t}");
    }
}
