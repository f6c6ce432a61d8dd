//! Rate and CPU arithmetic against a fake clock and a fake /proc tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::*;

/// A clock moved by hand.
struct FakeClock(AtomicU64);

impl FakeClock {
    fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::SeqCst))
    }
}

/// A fake /proc directory, removed when dropped.
struct FakeProc(PathBuf);

impl FakeProc {
    fn new(name: &str) -> FakeProc {
        let dir = std::env::temp_dir().join(format!(
            "sluice-bench-fakeproc-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create fake /proc");
        FakeProc(dir)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create fake /proc dir");
        }
        std::fs::write(path, text).expect("write fake /proc file");
    }

    /// /proc/stat with 4 CPUs: `busy` and `idle` ticks spread over user and idle.
    fn set_machine(&self, user: u64, system: u64, idle: u64, iowait: u64) {
        self.write(
            "stat",
            &format!(
                "cpu  {user} 0 {system} {idle} {iowait} 0 0 0 0 0\n\
                 cpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\n\
                 cpu2 1 0 1 1 0 0 0 0 0 0\ncpu3 1 0 1 1 0 0 0 0 0 0\n\
                 intr 12345\nctxt 999\n"
            ),
        );
    }

    /// /proc/PID/stat with a command name holding spaces and parentheses.
    fn set_process(&self, pid: u32, utime: u64, stime: u64, hwm_kb: u64) {
        self.write(
            &format!("{pid}/stat"),
            &format!(
                "{pid} (sluice (worker) 1) S 1 {pid} {pid} 0 -1 4194560 100 0 0 0 \
                 {utime} {stime} 0 0 20 0 8 0 1000 100000 2000 18446744073709551615\n"
            ),
        );
        self.write(
            &format!("{pid}/status"),
            &format!("Name:\tsluice\nVmPeak:\t 99999 kB\nVmHWM:\t {hwm_kb} kB\nVmRSS:\t 100 kB\n"),
        );
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for FakeProc {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn counts(messages: u64, errors: u64, driver_ms: u64, latencies: &[u64]) -> RunCounts {
    let mut c = RunCounts::new().expect("histogram");
    c.messages = messages;
    c.errors = errors;
    c.driver_cpu = Duration::from_millis(driver_ms);
    for &l in latencies {
        c.latency_us.record(l).expect("record");
    }
    c
}

#[test]
fn compute_gives_seed_formula_figures_for_external_server() {
    let proc = FakeProc::new("external");
    let clock = Arc::new(FakeClock(AtomicU64::new(0)));
    let sampler = Sampler::new(
        ProcFs::at(proc.path(), 100),
        clock.clone(),
        MeasuredServer::External(4242),
        77,
    );
    proc.set_machine(1_000, 0, 9_000, 0);
    proc.set_process(4242, 500, 100, 20_000);
    proc.set_process(77, 10, 10, 5_000);
    let start = sampler.snapshot().expect("start snapshot");

    // 10 s later: 4 CPUs × 10 s = 4000 ticks, 1000 of them busy (25 %).
    clock.advance(Duration::from_secs(10));
    proc.set_machine(1_800, 200, 11_800, 200);
    // The server used 200 + 50 ticks = 2.5 s.
    proc.set_process(4242, 700, 150, 30_000);
    let end = sampler.snapshot().expect("end snapshot");

    let c = counts(5_000, 0, 500, &[100, 200, 300, 400, 1_000]);
    let f = RunFigures::compute(&start, &end, &c);
    assert_eq!(f.cores, 4);
    assert!((f.elapsed_secs - 10.0).abs() < 1e-9);
    assert!((f.rate - 500.0).abs() < 1e-9);
    assert!((f.cpu_busy_pct - 25.0).abs() < 1e-9);
    // ((4 × 1000) × 0.25) / 500 = 2 ms per message.
    assert!((f.cpu_ms_per_msg.unwrap_or(0.0) - 2.0).abs() < 1e-9);
    // 2.5 s / 5000 = 500 µs per message.
    assert!((f.server_cpu_us_per_msg.unwrap_or(0.0) - 500.0).abs() < 1e-6);
    // 0.5 s / 5000 = 100 µs per message.
    assert!((f.driver_cpu_us_per_msg.unwrap_or(0.0) - 100.0).abs() < 1e-6);
    assert_eq!(f.peak_rss_kb, Some(30_000));
    assert_eq!(f.p50_us.map(|v| v.round()), Some(300.0));
    assert!(!f.failed());
}

#[test]
fn compute_subtracts_driver_cpu_for_in_process_server() {
    let proc = FakeProc::new("inprocess");
    let clock = Arc::new(FakeClock(AtomicU64::new(5_000_000)));
    let sampler = Sampler::new(
        ProcFs::at(proc.path(), 100),
        clock.clone(),
        MeasuredServer::InProcess,
        77,
    );
    proc.set_machine(0, 0, 100, 0);
    proc.set_process(77, 100, 0, 8_000);
    let start = sampler.snapshot().expect("start");
    clock.advance(Duration::from_secs(2));
    proc.set_machine(300, 100, 500, 0);
    // The process used 3 s; the requesters 1 s of it; the server 2 s.
    proc.set_process(77, 300, 100, 9_000);
    let end = sampler.snapshot().expect("end");
    let f = RunFigures::compute(&start, &end, &counts(1_000, 0, 1_000, &[50]));
    assert!((f.rate - 500.0).abs() < 1e-9);
    assert!((f.cpu_busy_pct - 50.0).abs() < 1e-9);
    assert!((f.server_cpu_us_per_msg.unwrap_or(0.0) - 2_000.0).abs() < 1e-6);
    assert!((f.driver_cpu_us_per_msg.unwrap_or(0.0) - 1_000.0).abs() < 1e-6);
    assert_eq!(f.peak_rss_kb, Some(9_000));
}

#[test]
fn snapshot_reports_missing_process_clearly() {
    let proc = FakeProc::new("missing");
    proc.set_machine(1, 1, 1, 1);
    let sampler = Sampler::new(
        ProcFs::at(proc.path(), 100),
        Arc::new(FakeClock(AtomicU64::new(0))),
        MeasuredServer::External(1),
        2,
    );
    let err = sampler.snapshot();
    assert!(
        matches!(&err, Err(BenchError::ProcfsRead { source, .. }) if source.kind() == std::io::ErrorKind::NotFound),
        "{err:?}"
    );
}

#[test]
fn compute_handles_zero_messages_without_dividing_by_zero() {
    let snap = Snapshot {
        at: Duration::from_secs(1),
        machine: MachineCpu {
            total: 10,
            idle: 5,
            cores: 2,
        },
        server_cpu: None,
        own_cpu: Duration::ZERO,
        peak_rss_kb: None,
        server: MeasuredServer::Unmeasured,
    };
    let f = RunFigures::compute(&snap, &snap, &counts(0, 3, 0, &[]));
    assert_eq!(f.rate, 0.0);
    assert_eq!(f.cpu_ms_per_msg, None);
    assert_eq!(f.server_cpu_us_per_msg, None);
    assert_eq!(f.p99_us, None);
    assert!(f.failed());
}

#[test]
fn seed_formula_matches_a_published_row() {
    // wmb8_part2: 17716.8 msg/s at 20 % of 8 cores is 0.09 ms/msg (printed 0.1).
    let ms = cpu_ms_per_msg(8, 20.0, 17_716.8).unwrap_or(0.0);
    assert!((ms - 0.0903).abs() < 1e-3);
}

fn run(rate: f64, errors: u64) -> RunFigures {
    RunFigures {
        messages: (rate * 10.0) as u64,
        errors,
        elapsed_secs: 10.0,
        rate,
        cpu_busy_pct: rate / 10.0,
        cores: 2,
        cpu_ms_per_msg: Some(1.0 / rate),
        server_cpu_us_per_msg: Some(rate * 2.0),
        driver_cpu_us_per_msg: None,
        p50_us: Some(rate),
        p99_us: Some(rate),
        p999_us: Some(rate),
        peak_rss_kb: Some(rate as u64),
    }
}

#[test]
fn summary_takes_median_and_discards_failed_runs() {
    let s = Summary::new(vec![
        run(100.0, 0),
        run(300.0, 0),
        run(9_999.0, 2),
        run(200.0, 0),
    ]);
    assert_eq!(s.failed_runs(), 1);
    assert_eq!(s.ok_runs(), 3);
    assert_eq!(s.total_errors(), 2);
    let m = s.median.expect("median");
    assert_eq!(m.rate, 200.0);
    assert_eq!(m.server_cpu_us_per_msg, Some(400.0));
    assert_eq!(m.driver_cpu_us_per_msg, None);
    assert_eq!(m.peak_rss_kb, Some(300));
}

#[test]
fn summary_of_only_failed_runs_has_no_median() {
    let s = Summary::new(vec![run(100.0, 1)]);
    assert!(s.median.is_none());
}

#[test]
fn median_of_even_count_is_mean_of_middle_two() {
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&mut []), None);
}
