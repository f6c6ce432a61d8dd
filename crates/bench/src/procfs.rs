//! CPU and memory readings from /proc, and the clock they are taken against.
//!
//! Every reader takes the /proc root as a path so that tests can point it at
//! a fake directory holding hand-written `stat` and `status` files, and the
//! [`Clock`] trait lets the same tests move time by hand.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::BenchError;

/// A monotonic clock: the time since some fixed origin.
pub trait Clock: Send + Sync {
    /// The time elapsed since the clock's origin.
    fn now(&self) -> Duration;
}

/// The real monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// Machine-wide CPU time counters from the `cpu` line of /proc/stat, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineCpu {
    /// All time of all CPUs: user, nice, system, idle, iowait, irq, softirq, steal.
    pub total: u64,
    /// Idle plus iowait: time no work ran.
    pub idle: u64,
    /// The number of CPUs (`cpuN` lines).
    pub cores: u32,
}

impl MachineCpu {
    /// The % of CPU busy between `earlier` and `self` (0–100).
    pub fn busy_pct_since(&self, earlier: &MachineCpu) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        let idle = self.idle.saturating_sub(earlier.idle);
        if total == 0 {
            return 0.0;
        }
        100.0 * total.saturating_sub(idle) as f64 / total as f64
    }
}

/// Readers of a /proc tree.
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
    ticks_per_second: u64,
}

impl Default for ProcFs {
    fn default() -> Self {
        Self::system()
    }
}

impl ProcFs {
    /// The real /proc, with the kernel's clock-tick rate.
    pub fn system() -> Self {
        ProcFs {
            root: PathBuf::from("/proc"),
            ticks_per_second: clock_ticks_per_second(),
        }
    }

    /// A /proc tree at `root` whose tick counts are `ticks_per_second` per second.
    pub fn at(root: impl Into<PathBuf>, ticks_per_second: u64) -> Self {
        ProcFs {
            root: root.into(),
            ticks_per_second: ticks_per_second.max(1),
        }
    }

    /// The root directory read.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Clock ticks per second used to turn tick counts into time.
    pub fn ticks_per_second(&self) -> u64 {
        self.ticks_per_second
    }

    /// Converts clock ticks into seconds.
    pub fn ticks_to_secs(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ticks_per_second as f64
    }

    /// Reads the machine's CPU counters from `stat`.
    pub fn machine_cpu(&self) -> Result<MachineCpu, BenchError> {
        let path = self.root.join("stat");
        let text = read(&path)?;
        let mut result = MachineCpu::default();
        let mut found = false;
        for line in text.lines() {
            let mut fields = line.split_ascii_whitespace();
            match fields.next() {
                Some("cpu") => {
                    let values: Vec<u64> = fields
                        .take(8)
                        .map(|f| f.parse::<u64>())
                        .collect::<Result<_, _>>()
                        .map_err(|e| BenchError::Procfs {
                            path: path.clone(),
                            reason: "bad cpu counter".into(),
                            source: Some(Box::new(e)),
                        })?;
                    if values.len() < 4 {
                        return Err(procfs_error(
                            &path,
                            "the cpu line has fewer than 4 counters",
                        ));
                    }
                    result.total = values.iter().sum();
                    result.idle = values[3] + values.get(4).copied().unwrap_or(0);
                    found = true;
                }
                Some(name) if name.starts_with("cpu") => result.cores += 1,
                _ => {}
            }
        }
        if !found {
            return Err(procfs_error(&path, "no `cpu` line"));
        }
        result.cores = result.cores.max(1);
        Ok(result)
    }

    /// The CPU time (user + system) in ticks of process `pid`.
    pub fn process_cpu_ticks(&self, pid: u32) -> Result<u64, BenchError> {
        self.stat_cpu_ticks(&self.root.join(pid.to_string()).join("stat"))
    }

    /// The CPU time in ticks of thread `tid` of process `pid`.
    pub fn thread_cpu_ticks(&self, pid: u32, tid: u32) -> Result<u64, BenchError> {
        let path = self
            .root
            .join(pid.to_string())
            .join("task")
            .join(tid.to_string())
            .join("stat");
        self.stat_cpu_ticks(&path)
    }

    /// The CPU time in seconds of process `pid`.
    pub fn process_cpu_secs(&self, pid: u32) -> Result<f64, BenchError> {
        Ok(self.ticks_to_secs(self.process_cpu_ticks(pid)?))
    }

    /// The peak resident set size (VmHWM) of process `pid`, in kB.
    pub fn peak_rss_kb(&self, pid: u32) -> Result<u64, BenchError> {
        let path = self.root.join(pid.to_string()).join("status");
        let text = read(&path)?;
        let line = text
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .ok_or_else(|| procfs_error(&path, "no VmHWM line"))?;
        line["VmHWM:".len()..]
            .split_ascii_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| procfs_error(&path, format!("bad VmHWM line `{line}`")))
    }

    /// A short description of the machine: CPU model and core count.
    pub fn cpu_model(&self) -> Option<String> {
        let text = fs::read_to_string(self.root.join("cpuinfo")).ok()?;
        text.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    }

    /// Total memory in kB from `meminfo`.
    pub fn mem_total_kb(&self) -> Option<u64> {
        let text = fs::read_to_string(self.root.join("meminfo")).ok()?;
        text.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l["MemTotal:".len()..].split_ascii_whitespace().next())
            .and_then(|v| v.parse().ok())
    }

    /// The kernel release from `sys/kernel/osrelease`.
    pub fn kernel_release(&self) -> Option<String> {
        fs::read_to_string(self.root.join("sys/kernel/osrelease"))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// utime + stime (fields 14 and 15) of a `stat` file.
    fn stat_cpu_ticks(&self, path: &Path) -> Result<u64, BenchError> {
        let text = read(path)?;
        // The command name (field 2) is in parentheses and may hold spaces or
        // parentheses itself, so fields are counted from the last `)`.
        let after = text
            .rfind(')')
            .map(|i| &text[i + 1..])
            .ok_or_else(|| procfs_error(path, "no `)` after the command name"))?;
        let fields: Vec<&str> = after.split_ascii_whitespace().collect();
        // After the name: state is field 3, so utime (14) is index 11, stime (15) index 12.
        let parse = |index: usize, name: &str| -> Result<u64, BenchError> {
            fields
                .get(index)
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| procfs_error(path, format!("missing or bad {name}")))
        };
        Ok(parse(11, "utime")? + parse(12, "stime")?)
    }
}

/// The CPU time (user + system) this process has used so far, from getrusage.
pub fn own_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass, which is a
    // properly aligned, zero-initialised rusage.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return Duration::ZERO;
        }
        usage
    };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

/// The CPU time the calling thread has used so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The kernel thread id of the calling thread.
pub fn current_thread_id() -> u32 {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    tid.max(0) as u32
}

/// sysconf(_SC_CLK_TCK), 100 when it cannot be read.
pub fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as u64 } else { 100 }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec.max(0) as u64, 0) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

fn read(path: &Path) -> Result<String, BenchError> {
    fs::read_to_string(path).map_err(|source| BenchError::ProcfsRead {
        path: path.to_path_buf(),
        source,
    })
}

fn procfs_error(path: &Path, reason: impl Into<String>) -> BenchError {
    BenchError::Procfs {
        path: path.to_path_buf(),
        reason: reason.into(),
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_proc_reads_own_process() {
        let proc = ProcFs::system();
        let pid = std::process::id();
        assert!(proc.machine_cpu().map(|m| m.cores >= 1).unwrap_or(false));
        assert!(proc.process_cpu_ticks(pid).is_ok());
        assert!(proc.peak_rss_kb(pid).map(|kb| kb > 0).unwrap_or(false));
        assert!(proc.thread_cpu_ticks(pid, current_thread_id()).is_ok());
    }

    #[test]
    fn busy_pct_is_share_of_non_idle_ticks() {
        let before = MachineCpu {
            total: 1_000,
            idle: 800,
            cores: 2,
        };
        let after = MachineCpu {
            total: 1_400,
            idle: 900,
            cores: 2,
        };
        assert!((after.busy_pct_since(&before) - 75.0).abs() < 1e-9);
        assert_eq!(before.busy_pct_since(&before), 0.0);
    }

    #[test]
    fn own_and_thread_cpu_time_grow_with_work() {
        let start_thread = thread_cpu_time();
        let start = own_cpu_time();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time() > start_thread);
        assert!(own_cpu_time() >= start);
    }
}
