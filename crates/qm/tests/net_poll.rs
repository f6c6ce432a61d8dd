//! The poll threads with a connection that sends far ahead of an answer it is still owed:
//! what it sent waits, unread past a limit, the socket unwatched meanwhile (the poll thread
//! does not spin on it), and everything is answered in order once the answer is out.
//! Alone in its test binary so that the process's CPU is this test's.

use std::io::Write;
use std::time::{Duration, Instant};

mod raw;

use sluice_qm::net::{AuthConfig, Server};
use sluice_qm::*;

use raw::{connected, frame, read_answer};

fn process_cpu() -> Duration {
    // SAFETY: getrusage only writes into `ru`, which is valid and zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid rusage for the call to fill in.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    d(ru.ru_utime) + d(ru.ru_stime)
}

#[test]
fn requests_far_behind_a_waiting_get_wait_without_spinning_and_are_answered_in_order() {
    let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
    qm.define(QueueDef::local("Q")).expect("define");
    let s = Server::bind("127.0.0.1:0", qm.clone(), AuthConfig::anonymous()).expect("bind");
    let mut raw = connected(&s);
    // A get on Q waiting 1.5 s, then 1.2 MB of DEPTH requests for a queue that does not
    // exist (each answered with an error), more than the poll thread reads ahead.
    let mut get = (1u16).to_le_bytes().to_vec();
    get.extend_from_slice(b"Q");
    get.push(0);
    get.extend_from_slice(&1500u32.to_le_bytes());
    get.extend_from_slice(&[0, 0]);
    let mut bytes = frame(2, 10, &get);
    let name = vec![b'N'; 1000];
    let mut depth = (name.len() as u16).to_le_bytes().to_vec();
    depth.extend_from_slice(&name);
    let n = 1200;
    for id in 0..n {
        bytes.extend(frame(3 + id, 7, &depth));
    }
    let writer = {
        let mut w = raw.try_clone().expect("clone");
        std::thread::spawn(move || w.write_all(&bytes).expect("send"))
    };
    std::thread::sleep(Duration::from_millis(300));
    let (cpu, t) = (process_cpu(), Instant::now());
    std::thread::sleep(Duration::from_millis(800));
    let (used, took) = (process_cpu() - cpu, t.elapsed());
    assert!(
        used < took / 2,
        "{used:?} of CPU in {took:?} while the connection waited: something spins"
    );
    // The waiting get is answered (nothing came), then every DEPTH in order.
    assert_eq!(read_answer(&mut raw), (2, 0));
    for id in 0..n {
        assert_eq!(read_answer(&mut raw), (3 + id, 1), "request {}", 3 + id);
    }
    writer.join().expect("writer");
}
