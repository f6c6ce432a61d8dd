//! Driver behaviour against in-memory transports (counts, errors, pacing).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::*;
use crate::figures::{MeasuredServer, Sampler};
use crate::procfs::{ProcFs, SystemClock};

/// Echoes the message; fails every `fail_every`-th call when non-zero.
struct Echo {
    calls: Arc<AtomicU64>,
    fail_every: u64,
}

impl Transport for Echo {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.fail_every > 0 && n.is_multiple_of(self.fail_every) {
            return Err(BenchError::HttpStatus(500));
        }
        thread::sleep(Duration::from_micros(200));
        Ok(msg.len())
    }
}

fn driver(config: DriverConfig) -> Driver {
    let sampler = Sampler::new(
        ProcFs::system(),
        Arc::new(SystemClock::new()),
        MeasuredServer::InProcess,
        std::process::id(),
    );
    Driver::new(config, sampler).expect("valid config")
}

fn quick(requesters: usize, pacing: Pacing, runs: usize) -> DriverConfig {
    DriverConfig {
        requesters,
        warmup: Duration::from_millis(100),
        measure: Duration::from_millis(400),
        runs,
        pacing,
        error_pause: Duration::from_millis(1),
    }
}

#[test]
fn run_counts_messages_and_bytes_of_the_measured_interval() {
    let calls = Arc::new(AtomicU64::new(0));
    let factory_calls = calls.clone();
    let factory = move |_: usize| -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(Echo {
            calls: factory_calls.clone(),
            fail_every: 0,
        }))
    };
    let summary = driver(quick(3, Pacing::Unrated, 2))
        .run(&factory, b"0123456789", |_, _| {})
        .expect("run");
    assert_eq!(summary.runs.len(), 2);
    assert_eq!(summary.failed_runs(), 0);
    let total_calls = calls.load(Ordering::SeqCst);
    for run in &summary.runs {
        assert!(run.messages > 0);
        assert!(run.p50_us.is_some());
        assert!(run.driver_cpu_us_per_msg.is_some());
    }
    // Warm-up and in-flight requests are not counted, so fewer were counted than sent.
    let counted: u64 = summary.runs.iter().map(|r| r.messages).sum();
    assert!(counted < total_calls);
    assert!(summary.median.is_some());
}

#[test]
fn run_with_errors_is_reported_failed() {
    let calls = Arc::new(AtomicU64::new(0));
    let factory = move |_: usize| -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(Echo {
            calls: calls.clone(),
            fail_every: 50,
        }))
    };
    let summary = driver(quick(2, Pacing::Unrated, 1))
        .run(&factory, b"x", |_, _| {})
        .expect("run");
    assert_eq!(summary.failed_runs(), 1);
    assert!(summary.total_errors() > 0);
    assert!(summary.median.is_none());
}

#[test]
fn rated_run_does_not_exceed_its_schedule() {
    let calls = Arc::new(AtomicU64::new(0));
    let factory = move |_: usize| -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(Echo {
            calls: calls.clone(),
            fail_every: 0,
        }))
    };
    let summary = driver(quick(2, Pacing::Rate(100.0), 1))
        .run(&factory, b"x", |_, _| {})
        .expect("run");
    // Pacing never sends ahead of schedule: since the run began (0.1 s
    // warm-up + 0.4 s measured) at most 100/s, plus one per requester.
    // A requester that fell behind may catch up, so the bound is the whole
    // schedule, not the measured interval's 40.
    let messages = summary.runs.first().map(|r| r.messages).unwrap_or(0);
    assert!(messages <= 52, "{messages} messages");
    assert!(messages > 0);
}

#[test]
fn factory_error_stops_the_run() {
    let factory = |_: usize| -> Result<Box<dyn Transport>, BenchError> {
        Err(BenchError::Unsupported("no transport".into()))
    };
    assert!(
        driver(quick(1, Pacing::Unrated, 1))
            .run(&factory, b"x", |_, _| {})
            .is_err()
    );
}

#[test]
fn abort_flag_ends_with_the_runs_completed() {
    let abort = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicU64::new(0));
    let factory = move |_: usize| -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(Echo {
            calls: calls.clone(),
            fail_every: 0,
        }))
    };
    let summary = driver(quick(1, Pacing::Unrated, 3))
        .with_abort(abort)
        .run(&factory, b"x", |_, _| {})
        .expect("run");
    assert!(summary.runs.is_empty());
}

#[test]
fn config_rejects_zero_requesters_and_bad_rates() {
    assert!(quick(0, Pacing::Unrated, 1).validate().is_err());
    assert!(quick(1, Pacing::Rate(0.0), 1).validate().is_err());
    assert!(quick(1, Pacing::Rate(f64::NAN), 1).validate().is_err());
    assert!(quick(1, Pacing::Unrated, 0).validate().is_err());
}

/// Each round trip stands for a file of `records` records that takes 200 ms.
struct RecordFiles {
    records: u64,
}

struct SlowFile;

impl Transport for SlowFile {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        thread::sleep(Duration::from_millis(200));
        Ok(msg.len())
    }
}

impl TransportFactory for RecordFiles {
    fn create(&self, _: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(SlowFile))
    }

    fn records_per_round_trip(&self) -> u64 {
        self.records
    }
}

#[test]
fn run_counts_records_of_trips_completed_in_the_interval_when_a_trip_carries_many() {
    let summary = driver(quick(1, Pacing::Unrated, 1))
        .run(&RecordFiles { records: 1_000 }, b"x", |_, _| {})
        .expect("run");
    let run = summary.runs.first().expect("one run");
    // Measured from 0.1 to 0.5 s: the trips ending at 0.2 and 0.4 s count, the first though it
    // began in the warm-up; counting only trips wholly inside would have given one.
    assert!(
        run.messages >= 2_000 && run.messages.is_multiple_of(1_000),
        "{} records",
        run.messages
    );
}
