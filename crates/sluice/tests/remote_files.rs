//! FileInput's restart safety on a remote file: `sluice run` reads a file of numbered lines from
//! a real OpenSSH server over SFTP (the file nodes' test server, `crates/nodes-file/tests/sshd`)
//! and copies it through FileOutput into its data folder; it is SIGKILLed several times in the
//! middle of the file and restarted on the same data folder.
//!
//! What the product guarantees, and what is checked: each record's unit of work commits a
//! checkpoint (kept in the local data folder, `sftp-checkpoints`) with the output's committed
//! length, so a restart resumes at the first record not committed, and the record in flight at
//! the kill is processed again with whatever it had written cut away. The finished output
//! therefore holds every record exactly once, in order, and the remote file is archived.
//!
//! Short form (in the normal suite): `cargo test -p sluice --test remote_files`.
//! Long form: `SLUICE_SFTP_KILL_LINES=2000000 cargo test -p sluice --release --test remote_files -- --nocapture`.

mod common;
#[path = "../../nodes-file/tests/sshd/mod.rs"]
mod sshd;

use std::time::Duration;

use common::{Server, assert_each_line_once, file_len as len, tempdir::TempDir, wait_for};
use sshd::Sshd;

/// Lines in the short form's file: enough for the kills to land mid-file.
const DEFAULT_LINES: usize = 100_000;

#[test]
fn remote_file_input_killed_mid_file_resumes_without_repeating_a_committed_record() {
    let Some(s) = Sshd::start("sluice-kill") else {
        return;
    };
    let lines: usize = std::env::var("SLUICE_SFTP_KILL_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LINES);
    let project = TempDir::new("remote-kill-project");
    std::fs::create_dir_all(project.path().join("flows")).unwrap();
    std::fs::write(project.path().join("sluice.yaml"), "{}\n").unwrap();
    let flow = format!(
        "nodes:\n  in: {{ type: FileInput, directory: '{}', record_detection: delimited, polling_interval_ms: 50, {}, wires: {{ out: [write], end_of_data: [write.finish_file] }} }}\n  write: {{ type: FileOutput, directory: out, file_name: out.txt, record_definition: delimited }}\n",
        s.files("in").display(),
        s.props()
    );
    std::fs::write(project.path().join("flows/copy.yaml"), flow).unwrap();
    let data = TempDir::new("remote-kill-data");
    let input: String = (0..lines).map(|i| format!("line {i:08}\n")).collect();
    // Written under another name and renamed, so that FileInput never sees half of it.
    s.write("input.part", input.as_bytes());
    std::fs::create_dir_all(s.files("in")).unwrap();
    std::fs::rename(s.files("input.part"), s.files("in/input.txt")).unwrap();
    let transit = data.path().join("out/mqsitransit/out.txt");
    let done = data.path().join("out/out.txt");
    let total = input.len() as u64;
    let mut mid_file = 0;
    for (kill, fraction) in [0.2, 0.45, 0.7].into_iter().enumerate() {
        let mut server = Server::start_with_data(project.path(), data.path());
        let at = (total as f64 * fraction) as u64;
        wait_for("the output to grow", Duration::from_secs(120), || {
            len(&transit) >= at || done.exists()
        });
        server.child.kill().expect("SIGKILL the server");
        let _ = server.child.wait();
        let had = len(&transit);
        eprintln!("kill {kill}: the transit output had {had} of {total} bytes");
        if done.exists() {
            break;
        }
        mid_file += 1;
    }
    assert!(
        mid_file > 0,
        "the file was finished before the first kill: make it longer"
    );
    let _server = Server::start_with_data(project.path(), data.path());
    wait_for("the finished output", Duration::from_secs(300), || {
        done.exists()
    });
    let out = std::fs::read_to_string(&done).unwrap();
    assert_each_line_once(&out, lines);
    assert_eq!(out, input);
    wait_for("the remote archive", Duration::from_secs(10), || {
        s.files("in/mqsiarchive/input.txt").exists()
    });
    assert!(
        !s.files("in/mqsitransitin/input.txt").exists(),
        "the remote transit copy is gone once archived"
    );
}
