//! The HTTP client against the floor echo server and small hand-made
//! servers: exact request and reply counts, reconnects, status errors.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use sluice_bench::BenchError;
use sluice_bench::driver::{Driver, DriverConfig, Pacing, Transport, TransportFactory};
use sluice_bench::figures::{MeasuredServer, Sampler};
use sluice_bench::floor::FloorServer;
use sluice_bench::http::{HttpClient, HttpCounters, HttpFactory, HttpOptions, HttpTarget};
use sluice_bench::message::{Format, generate};
use sluice_bench::procfs::{ProcFs, SystemClock};

fn client(url: &str, reconnect_after: Option<u64>) -> (HttpClient, Arc<HttpCounters>) {
    let counters = Arc::new(HttpCounters::default());
    let options = HttpOptions {
        reconnect_after,
        ..HttpOptions::default()
    };
    let target = Arc::new(HttpTarget::parse(url).expect("url"));
    (HttpClient::new(target, options, counters.clone()), counters)
}

#[test]
fn client_counts_match_floor_exactly_and_replies_echo_size() {
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let (mut c, counters) = client(&floor.url("/echo"), None);
    let message = generate(Format::Xml, 20_000, 1).expect("message");
    for _ in 0..250 {
        assert_eq!(c.round_trip(&message).expect("round trip"), message.len());
    }
    assert_eq!(floor.stats().requests.load(Ordering::SeqCst), 250);
    assert_eq!(floor.stats().bytes.load(Ordering::SeqCst), 250 * 20_000);
    assert_eq!(floor.stats().connections.load(Ordering::SeqCst), 1);
    assert_eq!(counters.requests.load(Ordering::SeqCst), 250);
    assert_eq!(counters.replies_ok.load(Ordering::SeqCst), 250);
    assert_eq!(counters.errors.load(Ordering::SeqCst), 0);
}

#[test]
fn client_reconnects_every_n_requests() {
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let (mut c, counters) = client(&floor.url("/"), Some(7));
    for _ in 0..50 {
        c.round_trip(b"ping").expect("round trip");
    }
    // 50 requests, 7 per connection: 8 connections (7 full, one with 1).
    assert_eq!(counters.connections.load(Ordering::SeqCst), 8);
    assert_eq!(floor.stats().connections.load(Ordering::SeqCst), 8);
    assert_eq!(floor.stats().requests.load(Ordering::SeqCst), 50);
}

#[test]
fn client_sends_large_messages_in_pieces() {
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let (mut c, _) = client(&floor.url("/"), None);
    let message = generate(Format::Json, 2_000_000, 1).expect("message");
    assert_eq!(c.round_trip(&message).expect("round trip"), 2_000_000);
}

/// A server that answers every request on a connection with `reply`.
fn canned_server(reply: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { continue };
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut seen = Vec::new();
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    seen.extend_from_slice(&buf[..n]);
                    // Each test request is tiny and has body "ping".
                    while let Some(end) = seen.windows(4).position(|w| w == b"ping") {
                        seen.drain(..end + 4);
                        if stream.write_all(reply).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

#[test]
fn client_counts_non_200_as_errors_and_keeps_the_connection() {
    let url = canned_server(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops");
    let (mut c, counters) = client(&url, None);
    for _ in 0..3 {
        assert!(matches!(
            c.round_trip(b"ping"),
            Err(BenchError::HttpStatus(500))
        ));
    }
    assert_eq!(counters.errors.load(Ordering::SeqCst), 3);
    assert_eq!(counters.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn client_reads_chunked_replies() {
    let url = canned_server(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    );
    let (mut c, counters) = client(&url, None);
    for _ in 0..4 {
        assert_eq!(c.round_trip(b"ping").expect("round trip"), 5);
    }
    assert_eq!(counters.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn client_reports_refused_connections() {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let (mut c, counters) = client(&format!("http://127.0.0.1:{port}/"), None);
    assert!(matches!(c.round_trip(b"ping"), Err(BenchError::Io { .. })));
    assert_eq!(counters.requests.load(Ordering::SeqCst), 0);
}

#[test]
fn driver_against_floor_counts_consistently() {
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let factory = HttpFactory::new(
        &floor.url("/"),
        HttpOptions {
            reconnect_after: Some(100),
            ..HttpOptions::default()
        },
    )
    .expect("factory");
    let sampler = Sampler::new(
        ProcFs::system(),
        Arc::new(SystemClock::new()),
        MeasuredServer::InProcess,
        std::process::id(),
    );
    let config = DriverConfig {
        requesters: 3,
        warmup: Duration::from_millis(200),
        measure: Duration::from_millis(800),
        runs: 2,
        pacing: Pacing::Unrated,
        error_pause: Duration::from_millis(1),
    };
    let message = generate(Format::Xml, 2_000, 1).expect("message");
    let summary = Driver::new(config, sampler)
        .expect("driver")
        .run(&factory, &message, |_, _| {})
        .expect("run");
    let counted: u64 = summary.runs.iter().map(|r| r.messages).sum();
    let served = floor.stats().requests.load(Ordering::SeqCst);
    let counters = factory.counters();
    assert_eq!(summary.failed_runs(), 0);
    assert!(counted > 0);
    // Every request sent was answered; only measured ones were counted.
    assert_eq!(counters.requests.load(Ordering::SeqCst), served);
    assert_eq!(counters.replies_ok.load(Ordering::SeqCst), served);
    assert!(counted <= served);
    assert_eq!(
        counters.connections.load(Ordering::SeqCst),
        floor.stats().connections.load(Ordering::SeqCst)
    );
    let median = summary.median.expect("median");
    assert!(median.driver_cpu_us_per_msg.is_some());
    assert!(median.server_cpu_us_per_msg.is_some());
    assert!(median.p999_us.is_some());
    assert_eq!(factory.describe(), floor.url("/"));
}

#[test]
fn bench_http_command_prints_one_row() {
    use sluice_bench::cli::{HttpArgs, MeasureArgs, run_http};
    let floor = FloorServer::start("127.0.0.1:0").expect("floor");
    let file = std::env::temp_dir().join(format!("sluice-bench-msg-{}.xml", std::process::id()));
    std::fs::write(&file, generate(Format::Xml, 2_000, 1).expect("message"))
        .expect("write message");
    let args = HttpArgs {
        url: floor.url("/samples/xml-echo"),
        file: Some(file.clone()),
        size: "2kB".into(),
        format: "xml".into(),
        reconnect_after: 50,
        content_type: None,
        measure: MeasureArgs {
            requesters: 2,
            duration: 0.3,
            warmup: 0.1,
            runs: 1,
            rate: None,
            server_pid: Some(std::process::id()),
        },
    };
    let mut out = Vec::new();
    let summary = run_http(&args, &mut out).expect("measurement");
    let _ = std::fs::remove_file(file);
    let text = String::from_utf8(out).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].contains("Message Rate"));
    assert!(
        lines[2].starts_with("| http | http /samples/xml-echo | xml | 2000 | NONE |"),
        "{}",
        lines[2]
    );
    assert_eq!(summary.failed_runs(), 0);
    assert!(
        summary
            .median
            .and_then(|m| m.server_cpu_us_per_msg)
            .is_some()
    );
}
