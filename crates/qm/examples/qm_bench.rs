//! Queue manager throughput figures (not a test): the disk's own fdatasync rate, in-process
//! 2 KB non-persistent put+get, persistent 2 KB puts with N threads (group commit), and
//! request/reply round trips over the client protocol at 2 KB, 20 KB, 200 KB and 2 MB (or the
//! sizes given, in bytes, comma-separated).
//!
//! As in seeds/001, there are as many responders as it takes for a request always to find a
//! waiting getter: one per requester (or at most MAX_RESPONDERS).
//!
//! `cargo run -p sluice-qm --release --example qm_bench -- [SECONDS] [DATA_DIR] [np|persistent|rr|rrp|rrn] [SIZES] [MAX_RESPONDERS] [REQUESTERS] [tcp|local]`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

/// User+system CPU seconds of this process (or of the calling thread), from getrusage: to
/// the microsecond, where /proc's stat files count whole 10 ms ticks per thread (which lost
/// most of each client thread's CPU when 128 of them ran for 2 s).
fn rusage_cpu_secs(who: libc::c_int) -> f64 {
    // SAFETY: getrusage only writes into `ru`, which is valid and zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage for the call to fill in.
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

fn cpu_secs() -> f64 {
    rusage_cpu_secs(libc::RUSAGE_SELF)
}

/// Voluntary context switches of the whole process so far (a thread blocking, to be woken
/// later): what a request/reply round trip costs most here.
fn voluntary_switches() -> i64 {
    // SAFETY: getrusage only writes into `ru`, which is valid and zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage for the call to fill in.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    ru.ru_nvcsw
}

fn thread_cpu_secs() -> f64 {
    rusage_cpu_secs(libc::RUSAGE_THREAD)
}

/// User+system CPU seconds so far of this process's threads named `name` (those alive).
fn named_threads_cpu_secs(name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let mut total = 0.0;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        // schedstat's first field: nanoseconds on a CPU.
        let s = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        let ns = s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok());
        total += ns.unwrap_or(0.0) / 1e9;
    }
    total
}

/// CPU used by the request/reply bench's client threads (requesters and responders), in
/// microseconds, so that the broker's share can be told apart.
static CLIENT_CPU_US: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn add_client_cpu(cpu0: f64) {
    let us = ((thread_cpu_secs() - cpu0) * 1e6) as u64;
    CLIENT_CPU_US.fetch_add(us, Ordering::Relaxed);
}

fn fdatasync_rate(dir: &Path, secs: f64, overwrite: bool) -> f64 {
    let path = dir.join("fsync-probe");
    let mut f = std::fs::File::create(&path).expect("create probe");
    let block = vec![0x5au8; 4096];
    if overwrite {
        for _ in 0..4096 {
            f.write_all(&block).expect("prefill");
        }
        f.sync_all().expect("sync");
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(0)).expect("seek");
    }
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed().as_secs_f64() < secs && n < 4096 {
        f.write_all(&block).expect("write");
        f.sync_data().expect("fdatasync");
        n += 1;
    }
    let r = n as f64 / t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    r
}

fn run_threads(
    threads: usize,
    secs: f64,
    f: impl Fn(usize, &AtomicBool) -> u64 + Send + Sync + 'static,
) -> (f64, f64, u64) {
    let f = Arc::new(f);
    let stop = Arc::new(AtomicBool::new(false));
    let cpu0 = cpu_secs();
    let t = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (f, stop) = (f.clone(), stop.clone());
            std::thread::spawn(move || f(i, &stop))
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let n: u64 = hs.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    let el = t.elapsed().as_secs_f64();
    (
        n as f64 / el,
        (cpu_secs() - cpu0) / n.max(1) as f64 * 1e6,
        n,
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let base: PathBuf = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("sluice-qm-bench"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("data dir");
    let body = bytes::Bytes::from(vec![b'x'; 2048]);

    println!(
        "disk fdatasync, 1 writer, 4 KB appends:   {:>9.0}/s",
        fdatasync_rate(&base, secs.min(2.0), false)
    );
    println!(
        "disk fdatasync, 1 writer, 4 KB overwrites: {:>9.0}/s",
        fdatasync_rate(&base, secs.min(2.0), true)
    );

    // Optional third argument: which part to run (np, persistent, rr; default all).
    let part = args.get(3).cloned().unwrap_or_default();
    let run = |p: &str| part.is_empty() || part == p;
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    for threads in [1, 2, 4].into_iter().filter(|_| run("np")) {
        let q = format!("NP{threads}");
        qm.define(QueueDef {
            max_depth: 1_000_000,
            ..QueueDef::local(&q)
        })
        .expect("define");
        let (qm2, b) = (qm.clone(), body.clone());
        let (rate, cpu, _) = run_threads(threads, secs, move |_, stop| {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                qm2.put(&q, Message::new(b.clone()), &PutOptions::default())
                    .expect("put");
                qm2.get(&q, &GetOptions::new()).expect("get");
                n += 1;
            }
            n
        });
        println!(
            "in-process non-persistent 2 KB put+get, {threads} threads: {rate:>9.0}/s  ({cpu:.2} us CPU each)"
        );
    }

    let qm = QueueManager::open(&base.join("qm"), QmConfig::default()).expect("open");
    qm.define(QueueDef {
        max_depth: 100_000_000,
        ..QueueDef::local("P")
    })
    .expect("define");
    for threads in [1, 8, 64].into_iter().filter(|_| run("persistent")) {
        let s0 = qm.log_stats().expect("stats");
        let (qm2, b) = (qm.clone(), body.clone());
        let (rate, cpu, n) = run_threads(threads, secs, move |_, stop| {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut m = Message::new(b.clone());
                m.md.persistence = Persistence::Persistent;
                qm2.put("P", m, &PutOptions::default()).expect("put");
                n += 1;
            }
            n
        });
        let s1 = qm.log_stats().expect("stats");
        let syncs = s1.syncs - s0.syncs;
        println!(
            "persistent 2 KB put, {threads:>2} threads: {rate:>9.0}/s  {syncs} syncs, {:.1} msgs/sync, {cpu:.1} us CPU each",
            n as f64 / syncs.max(1) as f64
        );
    }
    println!(
        "disk fdatasync after the run, 4 KB appends: {:>9.0}/s",
        fdatasync_rate(&base, secs.min(2.0), false)
    );

    // Request/reply over the client protocol (seeds/001 RR-BB shape, 2 KB, non-persistent and persistent).
    let rqm = QueueManager::open(&base.join("rr"), QmConfig::default()).expect("open");
    rqm.define(QueueDef {
        max_depth: 1_000_000,
        ..QueueDef::local("REQ")
    })
    .expect("define");
    rqm.define(QueueDef {
        max_depth: 1_000_000,
        ..QueueDef::local("REPLY")
    })
    .expect("define");
    // The same server on TCP and on a local socket (MQ's bindings-mode connections, which
    // seeds/001's RR-BB uses, are its local ones).
    let tcp = Server::bind("127.0.0.1:0", rqm.clone(), AuthConfig::anonymous()).expect("bind");
    let local = Server::bind(
        &base.join("qm.sock").display().to_string(),
        rqm.clone(),
        AuthConfig::anonymous(),
    )
    .expect("bind local socket");
    // `rrp`, `rrn`: only the persistent, or non-persistent, request/reply figures (for
    // profiling them).
    let sizes: Vec<usize> = match args.get(4) {
        Some(list) => list
            .split(',')
            .map(|n| n.trim().parse().expect("sizes are numbers of bytes"))
            .collect(),
        None => vec![2 << 10, 20 << 10, 200 << 10, 2 << 20],
    };
    let max_responders: usize = args
        .get(5)
        .map(|n| n.parse().expect("MAX_RESPONDERS is a number"))
        .unwrap_or(usize::MAX);
    let requester_counts: Vec<usize> = match args.get(6) {
        Some(list) => list
            .split(',')
            .map(|n| n.trim().parse().expect("REQUESTERS are numbers"))
            .collect(),
        None => vec![1, 8, 64],
    };
    let transports: Vec<&str> = match args.get(7).map(String::as_str) {
        Some("tcp") => vec!["TCP"],
        Some("local") => vec!["local socket"],
        _ => vec!["TCP", "local socket"],
    };
    let cases = sizes.iter().flat_map(|&n| [(n, false), (n, true)]);
    for ((size, persistent), transport) in
        cases.flat_map(|c| transports.iter().map(move |&t| (c, t)))
    {
        let addr = if transport == "TCP" {
            tcp.address()
        } else {
            local.address()
        }
        .to_string();
        if !(run("rr") || (persistent && part == "rrp") || (!persistent && part == "rrn")) {
            continue;
        }
        let body = bytes::Bytes::from(vec![b'x'; size]);
        let label = match size {
            n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MB", n >> 20),
            n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KB", n >> 10),
            n => format!("{n} B"),
        };
        for &requesters in &requester_counts {
            let stop = Arc::new(AtomicBool::new(false));
            let responders: Vec<_> = (0..requesters.min(max_responders))
                .map(|_| {
                    let (addr, stop) = (addr.clone(), stop.clone());
                    std::thread::spawn(move || {
                        let cpu0 = thread_cpu_secs();
                        let mut c =
                            Client::connect(&addr, Credentials::default()).expect("connect");
                        let wait = GetOptions::new().wait(Duration::from_millis(100));
                        let mut next = None;
                        while !stop.load(Ordering::Relaxed) {
                            let req = match next.take() {
                                Some(r) => r,
                                None => match c.get("REQ", &wait) {
                                    Ok(Some(r)) => r,
                                    _ => continue,
                                },
                            };
                            let mut r = Message::new(req.body.clone());
                            r.md.correl_id = req.md.msg_id;
                            r.md.persistence = req.md.persistence;
                            // Reply and wait for the next request in one round trip.
                            let (_, g) =
                                c.put_then_get("REPLY", &r, &PutOptions::default(), "REQ", &wait);
                            next = g.ok().flatten();
                        }
                        add_client_cpu(cpu0);
                    })
                })
                .collect();
            let (a, b) = (addr.clone(), body.clone());
            // The disk's own rate next to every persistent figure (the machine is shared, so
            // it swings from minute to minute): appending, and overwriting allocated blocks.
            let disk = persistent.then(|| {
                (
                    fdatasync_rate(&base, 0.7, false),
                    fdatasync_rate(&base, 0.7, true),
                )
            });
            let log0 = rqm.log_stats().unwrap_or_default();
            let writer0 = named_threads_cpu_secs("qm-log-writer");
            CLIENT_CPU_US.store(0, Ordering::Relaxed);
            let cpu_start = cpu_secs();
            let sw_start = voluntary_switches();
            let (rate, cpu, n) = run_threads(requesters, secs, move |_, stop| {
                let cpu0 = thread_cpu_secs();
                let mut c = Client::connect(&a, Credentials::default()).expect("connect");
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let mut m = Message::new(b.clone());
                    m.md.persistence = if persistent {
                        Persistence::Persistent
                    } else {
                        Persistence::NotPersistent
                    };
                    let r = c.request("REQ", &m, "REPLY", Duration::from_secs(30));
                    if matches!(r, Ok(Some(_))) {
                        n += 1;
                    }
                }
                add_client_cpu(cpu0);
                n
            });
            stop.store(true, Ordering::Relaxed);
            for r in responders {
                let _ = r.join();
            }
            // The broker's share: the process's CPU less what the client threads used.
            let total_us = (cpu_secs() - cpu_start) * 1e6;
            let switches = (voluntary_switches() - sw_start) as f64 / n.max(1) as f64;
            let broker = (total_us - CLIENT_CPU_US.load(Ordering::Relaxed) as f64).max(0.0)
                / n.max(1) as f64;
            let log1 = rqm.log_stats().unwrap_or_default();
            let writer_us = (named_threads_cpu_secs("qm-log-writer") - writer0) * 1e6;
            println!(
                "request/reply over {transport}, {label} {}, {requesters:>2} requesters: {rate:>8.0} round trips/s ({cpu:.1} us CPU per round trip in all, {broker:.1} us of it the server's; {switches:.1} thread sleeps per round trip)",
                if persistent {
                    "persistent"
                } else {
                    "non-persistent"
                }
            );
            if let Some((append, overwrite)) = disk {
                let syncs = (log1.syncs - log0.syncs).max(1) as f64;
                let records = (log1.records - log0.records) as f64;
                let el = (n as f64 / rate.max(1e-9)).max(1e-9);
                let per_sync = n as f64 / syncs;
                println!(
                    "    log: {:.0} fdatasync/s, {:.2} records and {per_sync:.2} round trips per sync, {:.2} records per round trip, log writer thread {:.1} us CPU per round trip; disk beside it: {append:.0} fdatasync/s appending, {overwrite:.0} overwriting; ceiling at this batch size = disk rate x round trips per sync = {:.0}-{:.0} round trips/s",
                    syncs / el,
                    records / syncs,
                    records / n.max(1) as f64,
                    writer_us / n.max(1) as f64,
                    append * per_sync,
                    overwrite * per_sync,
                );
            }
        }
    }
    drop((tcp, local));
    qm.shutdown();
    rqm.shutdown();
    let _ = std::fs::remove_dir_all(&base);
}
