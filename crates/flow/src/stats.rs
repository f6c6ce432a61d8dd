//! Statistics, always on: per flow and per node invocations, errors, elapsed time and CPU time.
//!
//! Elapsed time is read at every node entry and exit (a vDSO clock read, ~25 ns). The thread CPU
//! clock costs a system call (~0.5 µs here), so CPU time is read on one invocation in
//! [`CPU_SAMPLE_EVERY`] and scaled by the number of invocations: the CPU figures are estimates
//! whose error shrinks as invocations grow. Time is charged to the node that was running, so a
//! node's time excludes the nodes it propagated to (the product's node statistics do the same).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// One invocation in this many has its CPU time measured.
pub const CPU_SAMPLE_EVERY: u64 = 16;

/// Counters of one node (or of the flow as a whole).
#[derive(Default, Debug)]
pub struct Counters {
    pub invocations: AtomicU64,
    pub errors: AtomicU64,
    pub elapsed_ns: AtomicU64,
    /// CPU time of the sampled invocations.
    pub sampled_cpu_ns: AtomicU64,
    pub sampled_invocations: AtomicU64,
    pub input_bytes: AtomicU64,
    /// The longest single invocation, kept for the flow as a whole only: a node's time is
    /// charged in slices around the nodes it propagates to.
    pub max_elapsed_ns: AtomicU64,
}

/// A copy of [`Counters`] at one moment, with the CPU estimate worked out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub invocations: u64,
    pub errors: u64,
    pub elapsed_ns: u64,
    pub cpu_ns: u64,
    pub input_bytes: u64,
    pub max_elapsed_ns: u64,
}

impl Counters {
    pub fn snapshot(&self) -> Snapshot {
        let invocations = self.invocations.load(Relaxed);
        let sampled = self.sampled_invocations.load(Relaxed);
        let cpu = self.sampled_cpu_ns.load(Relaxed);
        let cpu_ns = if sampled == 0 {
            0
        } else {
            (cpu as u128 * invocations as u128 / sampled as u128) as u64
        };
        Snapshot {
            invocations,
            errors: self.errors.load(Relaxed),
            elapsed_ns: self.elapsed_ns.load(Relaxed),
            cpu_ns,
            input_bytes: self.input_bytes.load(Relaxed),
            max_elapsed_ns: self.max_elapsed_ns.load(Relaxed),
        }
    }

    /// Add `other`'s counts to these.
    pub fn absorb(&self, other: &Counters) {
        let pairs = [
            (&self.invocations, &other.invocations),
            (&self.errors, &other.errors),
            (&self.elapsed_ns, &other.elapsed_ns),
            (&self.sampled_cpu_ns, &other.sampled_cpu_ns),
            (&self.sampled_invocations, &other.sampled_invocations),
            (&self.input_bytes, &other.input_bytes),
        ];
        for (mine, theirs) in pairs {
            mine.fetch_add(theirs.load(Relaxed), Relaxed);
        }
        self.max_elapsed_ns
            .fetch_max(other.max_elapsed_ns.load(Relaxed), Relaxed);
    }

    /// Start again from zero (an operator's statistics reset). Invocations running meanwhile
    /// may land on either side of the reset; each counter stays consistent on its own.
    pub fn reset(&self) {
        for c in [
            &self.invocations,
            &self.errors,
            &self.elapsed_ns,
            &self.sampled_cpu_ns,
            &self.sampled_invocations,
            &self.input_bytes,
            &self.max_elapsed_ns,
        ] {
            c.store(0, Relaxed);
        }
    }

    fn add(&self, elapsed: u64, cpu: Option<u64>) {
        self.elapsed_ns.fetch_add(elapsed, Relaxed);
        if let Some(c) = cpu {
            self.sampled_cpu_ns.fetch_add(c, Relaxed);
        }
    }
}

/// The statistics of one deployed flow.
#[derive(Debug)]
pub struct FlowStats {
    pub flow: Counters,
    /// Per node, in the order of the flow's nodes.
    pub nodes: Vec<Counters>,
}

impl FlowStats {
    pub fn new(nodes: usize) -> FlowStats {
        FlowStats {
            flow: Counters::default(),
            nodes: (0..nodes).map(|_| Counters::default()).collect(),
        }
    }

    /// Reset the flow's counters and every node's.
    pub fn reset(&self) {
        self.flow.reset();
        for n in &self.nodes {
            n.reset();
        }
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

thread_local! {
    static EPOCH: Instant = Instant::now();
    static CURSOR: Cell<Cursor> = const { Cell::new(Cursor { node: NONE, wall: 0, cpu: 0, sampling: false, count: 0 }) };
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Cursor {
    node: u32,
    wall: u64,
    cpu: u64,
    sampling: bool,
    count: u64,
}

fn wall_ns() -> u64 {
    EPOCH.with(|e| e.elapsed().as_nanos() as u64)
}

/// Timing of one flow invocation on this thread.
pub struct InvocationTimer {
    start_wall: u64,
    start_cpu: u64,
    sampling: bool,
}

/// Start timing an invocation of the flow from input node `node`.
pub fn begin_invocation(stats: &FlowStats, node: u32) -> InvocationTimer {
    let mut c = CURSOR.with(|c| c.get());
    c.count += 1;
    let sampling = c.count % CPU_SAMPLE_EVERY == 1;
    let wall = wall_ns();
    let cpu = if sampling { thread_cpu_ns() } else { 0 };
    c.node = node;
    c.wall = wall;
    c.cpu = cpu;
    c.sampling = sampling;
    CURSOR.with(|x| x.set(c));
    stats.flow.invocations.fetch_add(1, Relaxed);
    stats.nodes[node as usize].invocations.fetch_add(1, Relaxed);
    if sampling {
        stats.flow.sampled_invocations.fetch_add(1, Relaxed);
        stats.nodes[node as usize]
            .sampled_invocations
            .fetch_add(1, Relaxed);
    }
    InvocationTimer {
        start_wall: wall,
        start_cpu: cpu,
        sampling,
    }
}

/// Finish timing an invocation: charge the running node and the flow.
pub fn end_invocation(stats: &FlowStats, t: InvocationTimer, failed: bool) {
    let now = charge(stats);
    let cpu = t.sampling.then(|| now.1.saturating_sub(t.start_cpu));
    let elapsed = now.0.saturating_sub(t.start_wall);
    stats.flow.add(elapsed, cpu);
    // A plain read first: a new maximum is rare, and the read keeps the cache line shared.
    if elapsed > stats.flow.max_elapsed_ns.load(Relaxed) {
        stats.flow.max_elapsed_ns.fetch_max(elapsed, Relaxed);
    }
    if failed {
        stats.flow.errors.fetch_add(1, Relaxed);
    }
    CURSOR.with(|x| {
        let mut c = x.get();
        c.node = NONE;
        x.set(c);
    });
}

/// Charge the time since the last transition to the running node; returns (wall, cpu) now.
fn charge(stats: &FlowStats) -> (u64, u64) {
    let mut c = CURSOR.with(|c| c.get());
    let wall = wall_ns();
    let cpu = if c.sampling { thread_cpu_ns() } else { 0 };
    if let Some(n) = stats.nodes.get(c.node as usize) {
        n.add(
            wall.saturating_sub(c.wall),
            c.sampling.then(|| cpu.saturating_sub(c.cpu)),
        );
    }
    c.wall = wall;
    c.cpu = cpu;
    CURSOR.with(|x| x.set(c));
    (wall, cpu)
}

/// Node `node` starts running; returns the node that was running before.
pub fn enter_node(stats: &FlowStats, node: u32) -> u32 {
    charge(stats);
    let n = &stats.nodes[node as usize];
    n.invocations.fetch_add(1, Relaxed);
    CURSOR.with(|x| {
        let mut c = x.get();
        if c.sampling {
            n.sampled_invocations.fetch_add(1, Relaxed);
        }
        let prev = c.node;
        c.node = node;
        x.set(c);
        prev
    })
}

/// Node `node` returned; `prev` runs again.
pub fn leave_node(stats: &FlowStats, node: u32, prev: u32, failed: bool) {
    charge(stats);
    if failed {
        stats.nodes[node as usize].errors.fetch_add(1, Relaxed);
    }
    CURSOR.with(|x| {
        let mut c = x.get();
        c.node = prev;
        x.set(c);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_zeroes_flow_and_node_counters_when_they_have_counts() {
        let s = FlowStats::new(2);
        s.flow.invocations.store(5, Relaxed);
        s.flow.sampled_cpu_ns.store(100, Relaxed);
        s.nodes[1].errors.store(3, Relaxed);
        s.flow.max_elapsed_ns.store(9, Relaxed);
        assert_ne!(s.flow.snapshot(), Snapshot::default());
        s.reset();
        assert_eq!(s.flow.snapshot(), Snapshot::default());
        assert_eq!(s.nodes[1].snapshot(), Snapshot::default());
    }

    #[test]
    fn max_elapsed_keeps_the_longest_invocation_when_several_end() {
        let s = FlowStats::new(1);
        let t = begin_invocation(&s, 0);
        std::thread::sleep(std::time::Duration::from_millis(5));
        end_invocation(&s, t, false);
        let long = s.flow.snapshot().max_elapsed_ns;
        assert!(long >= 5_000_000, "{long}");
        let t = begin_invocation(&s, 0);
        end_invocation(&s, t, false);
        assert_eq!(s.flow.snapshot().max_elapsed_ns, long);
        let other = FlowStats::new(1);
        other.flow.max_elapsed_ns.store(long + 1, Relaxed);
        s.flow.absorb(&other.flow);
        assert_eq!(s.flow.snapshot().max_elapsed_ns, long + 1);
    }
}
