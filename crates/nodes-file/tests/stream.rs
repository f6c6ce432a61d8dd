//! A large file streamed from FileInput to FileOutput in bounded memory, 200-byte delimited
//! records: 5 MB in the normal (debug) tests; the 50 MB and 2 GB forms are ignored by default,
//! run them in release with
//! `cargo test --release -p sluice-nodes-file --test stream -- --ignored --nocapture`.
//! Each reports the time per record and the process's peak RSS.

mod common;

use std::io::Write;

use common::{DataDir, build};

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn stream(name: &str, bytes: u64) {
    const RECORD: usize = 200;
    let d = DataDir::new(name);
    std::fs::create_dir_all(d.path("in")).unwrap();
    let records = bytes / RECORD as u64;
    {
        // Written elsewhere, then moved in whole, as writers of an input directory should.
        let mut f = std::io::BufWriter::new(std::fs::File::create(d.path("big.part")).unwrap());
        let mut line = [b'x'; RECORD];
        line[RECORD - 1] = b'\n';
        for i in 0..records {
            let n = format!("{i:012}");
            line[..12].copy_from_slice(n.as_bytes());
            f.write_all(&line).unwrap();
        }
        f.flush().unwrap();
    }
    std::fs::rename(d.path("big.part"), d.path("in/big.txt")).unwrap();
    let before = peak_rss_kib();
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, delimiter: unix, action_on_success: delete, wires: { out: [write], end_of_data: [write.finish_file] } }\n  write: { type: FileOutput, directory: out, file_name: big.txt, record_definition: delimited, delimiter: unix }\n";
    let run = build(src, &d.0);
    let started = std::time::Instant::now();
    let limit = std::time::Duration::from_secs(30 + bytes / (1 << 20));
    run.until_within("the output", limit, || d.path("out/big.txt").exists());
    let took = started.elapsed();
    let peak = peak_rss_kib();
    let len = std::fs::metadata(d.path("out/big.txt")).unwrap().len();
    assert_eq!(len, records * RECORD as u64);
    eprintln!(
        "{records} records ({} MB) in {took:?}: {:.2} µs per record; peak RSS {} MiB (before the flow {} MiB)",
        bytes >> 20,
        took.as_secs_f64() * 1e6 / records as f64,
        peak >> 10,
        before >> 10
    );
    // Bounded memory: the peak does not grow with the file.
    assert!(peak < before + 64 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn file_input_streams_5_mb_to_file_output_in_bounded_memory() {
    stream("stream-5mb", 5 << 20);
}

#[test]
#[ignore = "slow in a debug build; run in release"]
fn file_input_streams_50_mb_to_file_output_in_bounded_memory() {
    stream("stream-50mb", 50 << 20);
}

#[test]
#[ignore = "2 GB on disk twice; the long form of the streaming test"]
fn file_input_streams_2_gb_to_file_output_in_bounded_memory() {
    stream("stream-2gb", 2 << 30);
}
