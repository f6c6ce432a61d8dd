//! The load driver: N requester threads, each with its own transport, that
//! send a message and wait for the reply before sending the next (unrated),
//! or pace themselves to a fixed total rate — as PerfHarness does in the
//! seeds. A warm-up period comes first, then a measured interval; a test is
//! repeated and the median of its runs reported.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::figures::{MeasuredServer, RunCounts, RunFigures, Sampler, Summary};
use crate::procfs::thread_cpu_time;

/// One requester's connection to the system under test.
///
/// `round_trip` sends `msg` and waits for the reply, returning the reply's
/// length in bytes; any failure (including a reply that signals an error)
/// is an `Err` and is counted as an error of the run.
pub trait Transport: Send {
    /// Sends one request and waits for its reply.
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError>;
}

/// Makes one [`Transport`] per requester.
pub trait TransportFactory: Send + Sync {
    /// The transport for requester number `requester` (0-based).
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError>;

    /// A short description for reports (`http://127.0.0.1:8080/echo`).
    fn describe(&self) -> String {
        "custom".to_string()
    }

    /// Whose CPU counts as the server's when this transport is used, when
    /// the transport knows better than the runner: an in-process transport
    /// runs the flow inside this process, so it returns
    /// `Some(MeasuredServer::InProcess)`.
    fn measured_server(&self) -> Option<MeasuredServer> {
        None
    }

    /// How many records one round trip carries (a file of many records); rates and CPU per
    /// message are then per record. Above one, a round trip counts when it completes in the
    /// measured interval, wherever it started: such a trip is long beside the interval, and
    /// counting only trips wholly inside it would leave out work whose CPU is counted.
    fn records_per_round_trip(&self) -> u64 {
        1
    }
}

impl<F> TransportFactory for F
where
    F: Fn(usize) -> Result<Box<dyn Transport>, BenchError> + Send + Sync,
{
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        self(requester)
    }
}

/// How fast requesters send.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Each requester sends its next message as soon as the reply arrives.
    Unrated,
    /// All requesters together aim at this many messages per second.
    /// Latency is measured from when a message was due, so a stalled server
    /// shows in the percentiles instead of hiding behind a late send.
    Rate(f64),
}

/// The shape of a measurement.
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// Requester threads (each with its own transport).
    pub requesters: usize,
    /// Time before measuring starts, to let caches, JITs and pools settle.
    pub warmup: Duration,
    /// The measured interval.
    pub measure: Duration,
    /// How many times the test is repeated; the median is reported.
    pub runs: usize,
    /// Unrated or at a fixed total rate.
    pub pacing: Pacing,
    /// Pause after an error, so a refused connection does not spin a core.
    pub error_pause: Duration,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            requesters: 4,
            warmup: Duration::from_secs(2),
            measure: Duration::from_secs(10),
            runs: 3,
            pacing: Pacing::Unrated,
            error_pause: Duration::from_millis(10),
        }
    }
}

impl DriverConfig {
    /// Checks that the settings make a measurement possible.
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.requesters == 0 {
            return Err(BenchError::InvalidSetting(
                "requesters must be at least 1".into(),
            ));
        }
        if self.measure.is_zero() {
            return Err(BenchError::InvalidSetting(
                "the measured duration must be above zero".into(),
            ));
        }
        if self.runs == 0 {
            return Err(BenchError::InvalidSetting("runs must be at least 1".into()));
        }
        if let Pacing::Rate(rate) = self.pacing
            && !(rate.is_finite()
                && rate > 0.0
                && Duration::try_from_secs_f64(self.requesters as f64 / rate).is_ok())
        {
            return Err(BenchError::InvalidSetting(format!(
                "rate {rate} must be a positive number"
            )));
        }
        Ok(())
    }
}

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// Runs measurements against transports.
pub struct Driver {
    config: DriverConfig,
    sampler: Sampler,
    abort: Arc<AtomicBool>,
}

impl Driver {
    /// A driver with `config`, taking readings with `sampler`.
    pub fn new(config: DriverConfig, sampler: Sampler) -> Result<Self, BenchError> {
        config.validate()?;
        Ok(Driver {
            config,
            sampler,
            abort: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Uses `abort` to stop early (set by a Ctrl-C handler): the run under
    /// way is dropped and the runs completed so far are returned.
    pub fn with_abort(mut self, abort: Arc<AtomicBool>) -> Self {
        self.abort = abort;
        self
    }

    /// The settings in use.
    pub fn config(&self) -> &DriverConfig {
        &self.config
    }

    /// Whether a stop was requested.
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::SeqCst)
    }

    /// Runs the test `config.runs` times, calling `after_run` after each,
    /// and returns every run with the medians. Stops early, with the runs
    /// completed so far, when the abort flag is set.
    pub fn run(
        &self,
        factory: &dyn TransportFactory,
        message: &[u8],
        mut after_run: impl FnMut(usize, &RunFigures),
    ) -> Result<Summary, BenchError> {
        let mut runs = Vec::with_capacity(self.config.runs);
        for index in 0..self.config.runs {
            match self.run_once(factory, message)? {
                Some(figures) => {
                    after_run(index, &figures);
                    runs.push(figures);
                }
                None => break,
            }
        }
        Ok(Summary::new(runs))
    }

    /// One warm-up and measured interval; `None` when aborted part-way.
    pub fn run_once(
        &self,
        factory: &dyn TransportFactory,
        message: &[u8],
    ) -> Result<Option<RunFigures>, BenchError> {
        let requesters = self.config.requesters;
        let mut transports = Vec::with_capacity(requesters);
        for index in 0..requesters {
            transports.push(factory.create(index)?);
        }
        let per_trip = factory.records_per_round_trip().max(1);
        let phase = AtomicU8::new(WARMUP);
        let started = Instant::now();
        let outcome = thread::scope(|scope| {
            let handles: Vec<_> = transports
                .into_iter()
                .enumerate()
                .map(|(index, transport)| {
                    let phase = &phase;
                    let config = &self.config;
                    thread::Builder::new()
                        .name(format!("requester-{index}"))
                        .spawn_scoped(scope, move || {
                            requester(index, transport, message, phase, config, started, per_trip)
                        })
                })
                .collect();
            let measured = self.coordinate(&phase);
            // Whatever happened, the requesters must stop before the scope ends.
            phase.store(STOP, Ordering::SeqCst);
            let mut total = RunCounts::new()?;
            for handle in handles {
                let handle =
                    handle.map_err(|e| BenchError::io("starting a requester thread", e))?;
                let counts = handle
                    .join()
                    .map_err(|_| BenchError::Internal("a requester thread panicked".into()))??;
                total.merge(&counts)?;
            }
            Ok::<_, BenchError>(measured?.map(|(start, end)| (start, end, total)))
        })?;
        Ok(outcome.map(|(start, end, total)| RunFigures::compute(&start, &end, &total)))
    }

    /// Sleeps through warm-up, takes the start readings, switches to
    /// measuring, sleeps through the interval, stops and takes the end
    /// readings. `None` when aborted.
    fn coordinate(
        &self,
        phase: &AtomicU8,
    ) -> Result<Option<(crate::figures::Snapshot, crate::figures::Snapshot)>, BenchError> {
        if !self.sleep_unless_aborted(self.config.warmup) {
            return Ok(None);
        }
        let start = self.sampler.snapshot()?;
        phase.store(MEASURE, Ordering::SeqCst);
        let completed = self.sleep_unless_aborted(self.config.measure);
        phase.store(STOP, Ordering::SeqCst);
        let end = self.sampler.snapshot()?;
        Ok(completed.then_some((start, end)))
    }

    fn sleep_unless_aborted(&self, total: Duration) -> bool {
        let deadline = Instant::now() + total;
        loop {
            if self.aborted() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            thread::sleep((deadline - now).min(Duration::from_millis(50)));
        }
    }
}

/// One requester's loop; returns what it counted while measuring.
fn requester(
    index: usize,
    mut transport: Box<dyn Transport>,
    message: &[u8],
    phase: &AtomicU8,
    config: &DriverConfig,
    started: Instant,
    per_trip: u64,
) -> Result<RunCounts, BenchError> {
    let mut counts = RunCounts::new()?;
    let interval = match config.pacing {
        Pacing::Unrated => None,
        // validate() checked that this interval is representable.
        Pacing::Rate(rate) => Duration::try_from_secs_f64(config.requesters as f64 / rate).ok(),
    };
    // Requesters start staggered across one interval so paced sends spread out.
    let mut due = interval.map(|i| started + i.mul_f64(index as f64 / config.requesters as f64));
    let mut cpu_at_measure: Option<Duration> = None;
    loop {
        let before = phase.load(Ordering::Acquire);
        if before == STOP {
            break;
        }
        if before == MEASURE && cpu_at_measure.is_none() {
            cpu_at_measure = Some(thread_cpu_time());
        }
        let sent_at = match (due, interval) {
            (Some(at), Some(step)) => {
                if !sleep_until(at, phase) {
                    break;
                }
                due = Some(at + step);
                at
            }
            _ => Instant::now(),
        };
        let result = transport.round_trip(message);
        let latency = sent_at.elapsed();
        let after = phase.load(Ordering::Acquire);
        match result {
            Ok(reply_len) => {
                let counted = after == MEASURE && (before == MEASURE || per_trip > 1);
                if counted {
                    counts.messages += per_trip;
                    counts.reply_bytes += reply_len as u64;
                    counts
                        .latency_us
                        .saturating_record((latency.as_micros() as u64).max(1));
                }
            }
            Err(_) => {
                if after != STOP {
                    counts.errors += 1;
                }
                thread::sleep(config.error_pause);
            }
        }
    }
    if let Some(cpu_start) = cpu_at_measure {
        counts.driver_cpu = thread_cpu_time().saturating_sub(cpu_start);
    }
    Ok(counts)
}

/// Sleeps until `at`; false when told to stop meanwhile.
fn sleep_until(at: Instant, phase: &AtomicU8) -> bool {
    loop {
        if phase.load(Ordering::Acquire) == STOP {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        thread::sleep((at - now).min(Duration::from_millis(20)));
    }
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
