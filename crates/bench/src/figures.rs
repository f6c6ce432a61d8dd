//! The figures of a run — rate, % CPU busy, CPU ms/msg by the seeds'
//! formula, server and driver CPU per message, latency percentiles — and the
//! median over repeated runs.
//!
//! A run with any error is discarded, as seeds/002 does: it is kept in the
//! list as failed and takes no part in the medians.

use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::error::BenchError;
use crate::procfs::{Clock, MachineCpu, ProcFs};

/// Which process's CPU counts as "the server's".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeasuredServer {
    /// No server CPU is measured (an external endpoint on another host).
    Unmeasured,
    /// A separate process, read from /proc/PID/stat.
    External(u32),
    /// The server runs inside this process (the floor, in-process flows):
    /// its CPU is this process's CPU less the requester threads'.
    InProcess,
}

/// Readings taken at the start and at the end of a measured interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The clock when the readings were taken.
    pub at: Duration,
    /// Machine-wide CPU counters.
    pub machine: MachineCpu,
    /// CPU time of the server process, when it is a separate process.
    pub server_cpu: Option<Duration>,
    /// CPU time of this process.
    pub own_cpu: Duration,
    /// Peak resident set size of the server process (or this one), in kB.
    pub peak_rss_kb: Option<u64>,
    /// Which process the server readings are of.
    pub server: MeasuredServer,
}

/// Takes [`Snapshot`]s from a /proc tree and a clock.
#[derive(Clone)]
pub struct Sampler {
    proc: ProcFs,
    clock: Arc<dyn Clock>,
    server: MeasuredServer,
    own_pid: u32,
}

impl Sampler {
    /// A sampler for `server`, reading `proc` and `clock`; `own_pid` is the
    /// driver's process id (this process, or a fake one in tests).
    pub fn new(proc: ProcFs, clock: Arc<dyn Clock>, server: MeasuredServer, own_pid: u32) -> Self {
        Sampler {
            proc,
            clock,
            server,
            own_pid,
        }
    }

    /// Which process is measured as the server.
    pub fn server(&self) -> MeasuredServer {
        self.server
    }

    /// The same sampler measuring `server` instead.
    pub fn with_server(&self, server: MeasuredServer) -> Sampler {
        Sampler {
            server,
            ..self.clone()
        }
    }

    /// The clock readings are taken against.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Reads everything now.
    pub fn snapshot(&self) -> Result<Snapshot, BenchError> {
        let at = self.clock.now();
        let machine = self.proc.machine_cpu()?;
        let own_cpu = Duration::from_secs_f64(self.proc.process_cpu_secs(self.own_pid)?);
        let (server_cpu, rss_pid) = match self.server {
            MeasuredServer::External(pid) => (
                Some(Duration::from_secs_f64(self.proc.process_cpu_secs(pid)?)),
                Some(pid),
            ),
            MeasuredServer::InProcess => (None, Some(self.own_pid)),
            MeasuredServer::Unmeasured => (None, None),
        };
        let peak_rss_kb = match rss_pid {
            Some(pid) => Some(self.proc.peak_rss_kb(pid)?),
            None => None,
        };
        Ok(Snapshot {
            at,
            machine,
            server_cpu,
            own_cpu,
            peak_rss_kb,
            server: self.server,
        })
    }
}

/// What the requesters counted during a measured interval.
#[derive(Debug, Clone)]
pub struct RunCounts {
    /// Complete request/reply round trips.
    pub messages: u64,
    /// Failed round trips (any transport error or non-200 status).
    pub errors: u64,
    /// Reply bytes received.
    pub reply_bytes: u64,
    /// CPU time used by the requester threads.
    pub driver_cpu: Duration,
    /// Round-trip latency in microseconds.
    pub latency_us: Histogram<u64>,
}

impl RunCounts {
    /// Empty counts with a latency histogram covering 1 µs to 1 hour.
    pub fn new() -> Result<Self, BenchError> {
        Ok(RunCounts {
            messages: 0,
            errors: 0,
            reply_bytes: 0,
            driver_cpu: Duration::ZERO,
            latency_us: new_histogram()?,
        })
    }

    /// Adds another requester's counts into these.
    pub fn merge(&mut self, other: &RunCounts) -> Result<(), BenchError> {
        self.messages += other.messages;
        self.errors += other.errors;
        self.reply_bytes += other.reply_bytes;
        self.driver_cpu += other.driver_cpu;
        self.latency_us
            .add(&other.latency_us)
            .map_err(|e| BenchError::Histogram {
                what: "merging latency histograms",
                source: Box::new(e),
            })
    }
}

/// A latency histogram in microseconds, 1 µs to one hour, 3 significant digits.
pub fn new_histogram() -> Result<Histogram<u64>, BenchError> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).map_err(|e| BenchError::Histogram {
        what: "creating a latency histogram",
        source: Box::new(e),
    })
}

/// The figures of one measured run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures {
    /// Round trips completed in the interval.
    pub messages: u64,
    /// Errors in the interval; more than zero means the run failed.
    pub errors: u64,
    /// Length of the measured interval in seconds.
    pub elapsed_secs: f64,
    /// Round trips per second.
    pub rate: f64,
    /// % of all the machine's CPU busy.
    pub cpu_busy_pct: f64,
    /// CPUs of the machine.
    pub cores: u32,
    /// ((cores × 1000) × (%CPU / 100)) / rate, as the seeds compute it.
    pub cpu_ms_per_msg: Option<f64>,
    /// The server process's CPU per round trip in µs (seeds/002's figure).
    pub server_cpu_us_per_msg: Option<f64>,
    /// The requester threads' CPU per round trip in µs.
    pub driver_cpu_us_per_msg: Option<f64>,
    /// Median latency in µs.
    pub p50_us: Option<f64>,
    /// 99th percentile latency in µs.
    pub p99_us: Option<f64>,
    /// 99.9th percentile latency in µs.
    pub p999_us: Option<f64>,
    /// Peak resident set size of the server in kB.
    pub peak_rss_kb: Option<u64>,
}

impl RunFigures {
    /// Computes the figures of the interval between `start` and `end`.
    pub fn compute(start: &Snapshot, end: &Snapshot, counts: &RunCounts) -> RunFigures {
        let elapsed_secs = end.at.saturating_sub(start.at).as_secs_f64();
        let messages = counts.messages;
        let rate = if elapsed_secs > 0.0 {
            messages as f64 / elapsed_secs
        } else {
            0.0
        };
        let cpu_busy_pct = end.machine.busy_pct_since(&start.machine);
        let cores = end.machine.cores;
        let cpu_ms_per_msg = cpu_ms_per_msg(cores, cpu_busy_pct, rate);
        let server_cpu = match (start.server, start.server_cpu, end.server_cpu) {
            (MeasuredServer::External(_), Some(a), Some(b)) => Some(b.saturating_sub(a)),
            // In-process server: this process's CPU less the requesters'.
            (MeasuredServer::InProcess, _, _) => Some(
                end.own_cpu
                    .saturating_sub(start.own_cpu)
                    .saturating_sub(counts.driver_cpu),
            ),
            _ => None,
        };
        let per_msg_us =
            |cpu: Duration| (messages > 0).then(|| cpu.as_secs_f64() * 1e6 / messages as f64);
        let quantile = |q: f64| {
            (!counts.latency_us.is_empty()).then(|| counts.latency_us.value_at_quantile(q) as f64)
        };
        RunFigures {
            messages,
            errors: counts.errors,
            elapsed_secs,
            rate,
            cpu_busy_pct,
            cores,
            cpu_ms_per_msg,
            server_cpu_us_per_msg: server_cpu.and_then(per_msg_us),
            driver_cpu_us_per_msg: per_msg_us(counts.driver_cpu),
            p50_us: quantile(0.5),
            p99_us: quantile(0.99),
            p999_us: quantile(0.999),
            peak_rss_kb: end.peak_rss_kb,
        }
    }

    /// Whether the run is discarded (any error).
    pub fn failed(&self) -> bool {
        self.errors > 0
    }
}

/// The seeds' formula: ((cores × 1000) × (%CPU / 100)) / rate, or `None`
/// when nothing was processed.
pub fn cpu_ms_per_msg(cores: u32, cpu_busy_pct: f64, rate: f64) -> Option<f64> {
    (rate > 0.0).then(|| (f64::from(cores) * 1000.0) * (cpu_busy_pct / 100.0) / rate)
}

/// Repeated runs of one test and their medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Every run, failed ones included.
    pub runs: Vec<RunFigures>,
    /// The medians over the runs that did not fail; `None` when all failed.
    pub median: Option<RunFigures>,
}

impl Summary {
    /// Summarises `runs`.
    pub fn new(runs: Vec<RunFigures>) -> Summary {
        let ok: Vec<&RunFigures> = runs.iter().filter(|r| !r.failed()).collect();
        let median = (!ok.is_empty()).then(|| median_figures(&ok));
        Summary { runs, median }
    }

    /// Runs discarded because of errors.
    pub fn failed_runs(&self) -> usize {
        self.runs.iter().filter(|r| r.failed()).count()
    }

    /// Runs that count.
    pub fn ok_runs(&self) -> usize {
        self.runs.len() - self.failed_runs()
    }

    /// Errors over all runs.
    pub fn total_errors(&self) -> u64 {
        self.runs.iter().map(|r| r.errors).sum()
    }
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

fn median_of(runs: &[&RunFigures], get: impl Fn(&RunFigures) -> Option<f64>) -> Option<f64> {
    let mut values: Vec<f64> = runs.iter().filter_map(|r| get(r)).collect();
    median(&mut values)
}

/// Each figure's median, taken separately (as seeds/002 reports them).
fn median_figures(runs: &[&RunFigures]) -> RunFigures {
    let m = |get: fn(&RunFigures) -> Option<f64>| median_of(runs, get);
    RunFigures {
        messages: m(|r| Some(r.messages as f64)).unwrap_or(0.0).round() as u64,
        errors: 0,
        elapsed_secs: m(|r| Some(r.elapsed_secs)).unwrap_or(0.0),
        rate: m(|r| Some(r.rate)).unwrap_or(0.0),
        cpu_busy_pct: m(|r| Some(r.cpu_busy_pct)).unwrap_or(0.0),
        cores: runs.first().map(|r| r.cores).unwrap_or(1),
        cpu_ms_per_msg: m(|r| r.cpu_ms_per_msg),
        server_cpu_us_per_msg: m(|r| r.server_cpu_us_per_msg),
        driver_cpu_us_per_msg: m(|r| r.driver_cpu_us_per_msg),
        p50_us: m(|r| r.p50_us),
        p99_us: m(|r| r.p99_us),
        p999_us: m(|r| r.p999_us),
        peak_rss_kb: runs.iter().filter_map(|r| r.peak_rss_kb).max(),
    }
}

#[cfg(test)]
#[path = "figures_tests.rs"]
mod tests;
