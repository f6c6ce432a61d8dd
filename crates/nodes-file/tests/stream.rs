//! A large file streamed from FileInput through a small ESQL transformation (each record
//! upper-cased) to FileOutput in bounded memory, 200-byte delimited records: 5 MB in the normal
//! (debug) tests; the 50 MB and 2 GB forms are ignored by default, run them in release with
//! `cargo test --release -p sluice-nodes-file --test stream -- --ignored --nocapture`.
//! Each reports records per second, the whole process's CPU time per record (user + system,
//! from getrusage, from the flow's start to the finished output) and its peak RSS.

mod common;

use std::io::{Read, Seek, Write};

use common::{DataDir, build_in};

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The CPU time (user + system) of the whole process so far.
fn process_cpu() -> std::time::Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage for RUSAGE_SELF.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    assert_eq!(rc, 0, "getrusage");
    let tv = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    tv(u.ru_utime) + tv(u.ru_stime)
}

const UPPER: &str = "CREATE COMPUTE MODULE Upper\n\tCREATE FUNCTION Main() RETURNS BOOLEAN\n\tBEGIN\n\t\tSET OutputRoot.Properties = InputRoot.Properties;\n\t\tSET OutputRoot.BLOB.BLOB = CAST(UPPER(CAST(InputRoot.BLOB.BLOB AS CHARACTER CCSID 1208)) AS BLOB CCSID 1208);\n\t\tRETURN TRUE;\n\tEND;\nEND MODULE;\n";

fn stream(name: &str, bytes: u64) {
    const RECORD: usize = 200;
    let d = DataDir::new(name);
    std::fs::create_dir_all(d.path("in")).unwrap();
    std::fs::create_dir_all(d.path("project/esql")).unwrap();
    std::fs::write(d.path("project/esql/upper.esql"), UPPER).unwrap();
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
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, delimiter: unix, action_on_success: delete, wires: { out: [upper], end_of_data: [write.finish_file] } }\n  upper: { type: Compute, module: Upper, wires: { out: [write] } }\n  write: { type: FileOutput, directory: out, file_name: big.txt, record_definition: delimited, delimiter: unix }\n";
    let run = build_in(src, &d.0, &d.path("project"));
    let started = std::time::Instant::now();
    let cpu_before = process_cpu();
    let limit = std::time::Duration::from_secs(30 + bytes / (1 << 20));
    run.until_within("the output", limit, || d.path("out/big.txt").exists());
    let cpu = process_cpu() - cpu_before;
    let took = started.elapsed();
    let peak = peak_rss_kib();
    let len = std::fs::metadata(d.path("out/big.txt")).unwrap().len();
    assert_eq!(len, records * RECORD as u64);
    // The transformation was applied, to the last record too.
    let mut last = vec![0; RECORD];
    let mut out = std::fs::File::open(d.path("out/big.txt")).unwrap();
    out.seek(std::io::SeekFrom::End(-(RECORD as i64))).unwrap();
    out.read_exact(&mut last).unwrap();
    let mut expected = [b'X'; RECORD];
    expected[..12].copy_from_slice(format!("{:012}", records - 1).as_bytes());
    expected[RECORD - 1] = b'\n';
    assert_eq!(last, expected);
    eprintln!(
        "{records} records ({} MB) in {took:?}: {:.0} records/s, {:.2} µs of process CPU per record ({:.2} µs wall); peak RSS {} MiB (before the flow {} MiB)",
        bytes >> 20,
        records as f64 / took.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / records as f64,
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
