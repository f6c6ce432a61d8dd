//! Report tables and charts from hand-made rows.

use std::time::Duration;

use super::*;
use crate::message::Format;
use crate::runner::SuiteOutcome;
use crate::seeds::SeedFigure;
use crate::size::MessageSize;
use crate::suite::{Persistence, TransportSpec};

fn case(name: &str, instances: Option<u32>, scaling: bool) -> Case {
    Case {
        name: name.into(),
        transport: TransportSpec::Http {
            path: "/samples/xml-echo".into(),
        },
        format: Format::Xml,
        size: MessageSize::parse("2kB").expect("size"),
        persistence: Persistence::None,
        instances,
        requesters: 4,
        rate: None,
        reconnect_after: Some(5_000),
        seed: None,
        warmup: Duration::from_secs(1),
        measure: Duration::from_secs(1),
        runs: 1,
        scaling,
        peer: None,
    }
}

fn figures(rate: f64) -> RunFigures {
    RunFigures {
        messages: rate as u64,
        errors: 0,
        elapsed_secs: 1.0,
        rate,
        cpu_busy_pct: 50.0,
        cores: 2,
        cpu_ms_per_msg: Some(1000.0 / rate),
        server_cpu_us_per_msg: Some(120.0),
        driver_cpu_us_per_msg: Some(15.0),
        p50_us: Some(200.0),
        p99_us: Some(900.0),
        p999_us: Some(2_000.0),
        peak_rss_kb: Some(10_240),
    }
}

fn seed() -> SeedFigure {
    SeedFigure {
        source: "ace11_containers.csv: HTTP BLOB Echo".into(),
        rate: Some(2_000.0),
        cpu_busy_pct: None,
        cpu_ms_per_msg: None,
        cpu_us_per_msg: Some(240.0),
    }
}

fn outcome() -> SuiteOutcome {
    let mut rows = vec![
        ReportRow::new(
            &case("echo", None, false),
            Summary::new(vec![figures(4_000.0)]),
            Some(seed()),
            None,
        ),
        ReportRow::new(
            &case("broken", None, false),
            Summary::new(Vec::new()),
            None,
            Some("qm, not supplied".into()),
        ),
    ];
    for i in 1..=3 {
        rows.push(ReportRow::new(
            &case("scale", Some(i), true),
            Summary::new(vec![figures(1_000.0 * f64::from(i))]),
            None,
            None,
        ));
    }
    SuiteOutcome {
        rows,
        interrupted: true,
        machine: MachineInfo {
            cpu_model: Some("Test CPU".into()),
            cores: 2,
            mem_total_kb: Some(24 * 1024 * 1024),
            kernel: Some("6.1".into()),
        },
        placement: Some((vec![0], vec![1])),
    }
}

#[test]
fn report_says_where_the_server_and_the_driver_ran() {
    let md = markdown_report(&outcome(), "Suite");
    assert!(
        md.contains("The server ran on CPU 0 and the load driver on CPU 1."),
        "{md}"
    );
}

#[test]
fn ratios_compare_rate_and_direct_cpu_cost() {
    let o = outcome();
    let row = &o.rows[0];
    assert_eq!(row.rate_ratio(), Some(2.0));
    let (label, ratio) = row.cpu_comparison().expect("cpu comparison");
    assert_eq!(label, "240 µs");
    assert_eq!(ratio, Some(0.5));
}

#[test]
fn markdown_report_has_seed_columns_machine_and_caveat() {
    let md = markdown_report(&outcome(), "Sluice performance");
    for needle in [
        "| Msg Size | Persistent | Instances |",
        "Message Rate",
        "% CPU Busy",
        "CPU ms/msg",
        "Driver CPU µs/msg",
        "2 × Test CPU, 24.0 GiB RAM, Linux 6.1",
        "indicative, not equal",
        "**Interrupted**",
        "| 4000.0 |",
        "failed",
        "qm, not supplied",
    ] {
        assert!(md.contains(needle), "missing {needle}:\n{md}");
    }
}

#[test]
fn csv_report_has_one_line_per_row_with_quoted_notes() {
    let csv = csv_report(&outcome().rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 5);
    let header = crate::seeds::parse_csv_line(lines[0]);
    for line in &lines[1..] {
        assert_eq!(
            crate::seeds::parse_csv_line(line).len(),
            header.len(),
            "{line}"
        );
    }
    assert!(lines[2].contains("\"qm, not supplied\""));
    assert!(lines[1].contains("4000.000000"));
}

#[test]
fn write_report_writes_markdown_csv_and_wellformed_chart() {
    let dir = std::env::temp_dir().join(format!("sluice-bench-report-{}", std::process::id()));
    let files = write_report(&dir, &outcome(), "Test").expect("written");
    let names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert!(names.contains(&"report.md".to_string()));
    assert!(names.contains(&"report.csv".to_string()));
    let svg_name = names.iter().find(|n| n.ends_with(".svg")).expect("a chart");
    let svg = std::fs::read_to_string(dir.join(svg_name)).expect("svg");
    let mut reader = quick_xml::Reader::from_str(&svg);
    let mut polylines = 0;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Empty(e)) if e.name().as_ref() == b"polyline" => {
                polylines += 1
            }
            Ok(_) => {}
            Err(e) => panic!("chart is not well-formed XML: {e}"),
        }
    }
    assert_eq!(polylines, 2);
    let md = std::fs::read_to_string(dir.join("report.md")).expect("md");
    assert!(md.contains(&format!("]({svg_name})")));
    let _ = std::fs::remove_dir_all(dir);
}
