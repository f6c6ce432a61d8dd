//! FileInput's restart safety against the real binary: a flow copies a file of numbered lines
//! through FileInput and FileOutput; `sluice run` is SIGKILLed several times in the middle of
//! the file and restarted on the same data folder, and the finished output must hold every line
//! exactly once, in order. Also: the `file-in-out` sample transforms a dropped file.

mod common;

use std::time::Duration;

use common::{
    Server, assert_each_line_once, file_len as len, samples_dir, tempdir::TempDir, wait_for,
};

const LINES: usize = 200_000;

const COPY_FLOW: &str = "nodes:\n  in: { type: FileInput, directory: in, record_detection: delimited, polling_interval_ms: 50, wires: { out: [write], end_of_data: [write.finish_file] } }\n  write: { type: FileOutput, directory: out, file_name: out.txt, record_definition: delimited }\n";

#[test]
fn file_input_killed_mid_file_resumes_without_repeating_a_committed_record() {
    let project = TempDir::new("files-kill-project");
    std::fs::create_dir_all(project.path().join("flows")).unwrap();
    std::fs::write(project.path().join("sluice.yaml"), "{}\n").unwrap();
    std::fs::write(project.path().join("flows/copy.yaml"), COPY_FLOW).unwrap();
    let data = TempDir::new("files-kill-data");
    let input: String = (0..LINES).map(|i| format!("line {i:08}\n")).collect();
    std::fs::create_dir_all(data.path().join("in")).unwrap();
    std::fs::write(data.path().join("input.part"), &input).unwrap();
    std::fs::rename(
        data.path().join("input.part"),
        data.path().join("in/input.txt"),
    )
    .unwrap();
    let transit = data.path().join("out/mqsitransit/out.txt");
    let total = input.len() as u64;
    // Kill at growing points of the file; each run must get further than the one before.
    for (kill, fraction) in [0.1, 0.3, 0.5, 0.7].into_iter().enumerate() {
        let mut server = Server::start_with_data(project.path(), data.path());
        let at = (total as f64 * fraction) as u64;
        wait_for("the output to grow", Duration::from_secs(120), || {
            len(&transit) >= at
        });
        server.child.kill().expect("SIGKILL the server");
        let _ = server.child.wait();
        eprintln!(
            "kill {kill}: the transit output had {} of {total} bytes",
            len(&transit)
        );
    }
    let _server = Server::start_with_data(project.path(), data.path());
    let done = data.path().join("out/out.txt");
    wait_for("the finished output", Duration::from_secs(300), || {
        done.exists()
    });
    let out = std::fs::read_to_string(&done).unwrap();
    assert_each_line_once(&out, LINES);
    assert_eq!(out, input);
    wait_for("the archive", Duration::from_secs(10), || {
        data.path().join("in/mqsiarchive/input.txt").exists()
    });
}

#[test]
fn file_in_out_sample_transforms_each_line_and_archives_the_input() {
    let data = TempDir::new("files-sample-data");
    std::fs::create_dir_all(data.path().join("files/in")).unwrap();
    std::fs::write(data.path().join("orders.part"), "apple\npear\r\nplum\n").unwrap();
    std::fs::rename(
        data.path().join("orders.part"),
        data.path().join("files/in/orders.txt"),
    )
    .unwrap();
    let _server = Server::start_with_data(&samples_dir(), data.path());
    let out = data.path().join("files/out/orders.txt");
    wait_for("the output file", Duration::from_secs(30), || out.exists());
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "1: APPLE\n2: PEAR\n3: PLUM\n"
    );
    wait_for("the archive", Duration::from_secs(10), || {
        data.path().join("files/archive/orders.txt").exists()
    });
}
