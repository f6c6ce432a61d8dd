//! FileInput and FileOutput on a real OpenSSH server (`sshd/mod.rs`), started by each test from a
//! temp folder as the current user. The server's files are in that folder, so the tests look at
//! them directly.

#![cfg(feature = "sftp")]

mod common;
mod sshd;

use std::path::Path;
use std::time::Duration;

use common::{DataDir, body, build, labels, le_file};
use sluice_nodes_file::FileError;
use sluice_nodes_file::checkpoint::{Checkpoint, Progress};
use sluice_nodes_file::remote::{Login, Remote};
use sluice_nodes_file::sftp::Sftp;
use sluice_nodes_file::store::Store;
use sshd::Sshd;

/// How the tests below log in to [`Sshd`] through the node crate's own types.
trait Logins {
    fn remote(&self, known_hosts: &str, login: Login) -> Remote;
    fn key_login(&self) -> Login;
}

impl Logins for Sshd {
    fn remote(&self, known_hosts: &str, login: Login) -> Remote {
        Remote {
            host: "127.0.0.1".into(),
            port: self.port,
            login,
            known_hosts: self.dir.join(known_hosts),
            retry: Duration::from_millis(100),
        }
    }

    fn key_login(&self) -> Login {
        Login {
            user: self.user.clone(),
            password_env: None,
            private_key: Some(self.dir.join("client_key")),
        }
    }
}

fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn input_flow(s: &Sshd, props: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 20, directory: '{}', record_detection: delimited, {}, {props} wires: {{ out: [rec], end_of_data: [eod] }} }}\n  rec: {{ type: Capture }}\n  eod: {{ type: Capture }}\n",
        s.files("in").display(),
        s.props()
    )
}

#[test]
fn sftp_file_input_reads_remote_records_and_archives_the_file_when_logged_in_with_a_key() {
    let Some(s) = Sshd::start("in") else { return };
    let d = DataDir::new("sftp-in");
    s.write("in/a.txt", b"one\ntwo\r\nthree\n");
    s.write("in/skip.tmp", b"not mine\n");
    let run = build(&input_flow(&s, "file_name_pattern: '*.txt',"), &d.0);
    let got = run.until("the remote archive", || {
        s.files("in/mqsiarchive/a.txt").exists()
    });
    assert_eq!(labels(&got), ["rec", "rec", "rec", "eod"]);
    let bodies: Vec<String> = got[..3].iter().map(|c| body(&c.message)).collect();
    assert_eq!(bodies, ["one", "two", "three"]);
    assert_eq!(le_file(&got[2].message, "Offset"), "9");
    assert_eq!(le_file(&got[0].message, "Name"), "a.txt");
    assert_eq!(
        le_file(&got[0].message, "Directory"),
        s.files("in").to_string_lossy()
    );
    assert_eq!(
        list(&s.files("in")),
        ["mqsiarchive", "mqsitransitin", "skip.tmp"]
    );
    assert!(list(&s.files("in/mqsitransitin")).is_empty());
    // The checkpoint went with the file.
    let kept = d.path("sftp-checkpoints");
    let left: Vec<String> = std::fs::read_dir(&kept)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .flat_map(|e| list(&e.path()))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn sftp_file_input_resumes_after_the_last_committed_record_when_a_checkpoint_is_kept() {
    let Some(s) = Sshd::start("resume") else {
        return;
    };
    let d = DataDir::new("sftp-resume");
    // As a server killed after committing record 2 leaves it: the file in remote transit, the
    // checkpoint in the local data folder.
    s.write("in/mqsitransitin/a.txt", b"one\ntwo\nthree\nfour\n");
    let remote = s.remote("known_hosts", s.key_login());
    let transit = s.files("in/mqsitransitin/a.txt");
    let at = sluice_nodes_file::remote::checkpoint_path(&d.0, &remote, &transit);
    let (mut p, _) = Progress::open_at(&at).expect("open the checkpoint");
    p.next = Checkpoint {
        offset: 8,
        record: 2,
        delimiter: Some(b"\n".to_vec().into()),
        after_delimiter: true,
        done: false,
        outputs: Vec::new(),
    };
    p.save().expect("save the checkpoint");
    drop(p);
    let run = build(&input_flow(&s, ""), &d.0);
    let got = run.until("the remote archive", || {
        s.files("in/mqsiarchive/a.txt").exists()
    });
    assert_eq!(labels(&got), ["rec", "rec", "eod"]);
    assert_eq!(body(&got[0].message), "three");
    assert_eq!(le_file(&got[0].message, "Record"), "3");
    assert_eq!(le_file(&got[1].message, "Record"), "4");
    assert!(!at.exists(), "the checkpoint is removed with the file");
}

#[test]
fn sftp_file_output_writes_in_remote_transit_and_renames_into_place_on_finish() {
    let Some(s) = Sshd::start("out") else { return };
    let d = DataDir::new("sftp-out");
    d.write("in/a.txt", b"one\ntwo\n", 0);
    let flow = format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, wires: {{ out: [write], end_of_data: [write.finish_file] }} }}\n  write: {{ type: FileOutput, directory: '{}', file_name: out.txt, record_definition: delimited, output_file_action: append, {}, wires: {{ out: [wrote], end_of_data: [finished] }} }}\n  wrote: {{ type: Capture }}\n  finished: {{ type: Capture }}\n",
        s.files("out").display(),
        s.props()
    );
    s.write("out/out.txt", b"zero\n");
    let run = build(&flow, &d.0);
    let got = run.until("the finished file", || {
        d.path("in/mqsiarchive/a.txt").exists()
    });
    assert_eq!(labels(&got), ["wrote", "wrote", "finished"]);
    assert_eq!(
        std::fs::read_to_string(s.files("out/out.txt")).expect("read the output"),
        "zero\none\ntwo\n"
    );
    assert!(list(&s.files("out/mqsitransit")).is_empty());
    let written =
        |i: usize, f: &str| common::le_at(&got[i].message, &["WrittenDestination", "File", f]);
    assert_eq!(written(0, "Action"), "Create");
    assert_eq!(written(1, "Action"), "Append");
    assert_eq!(written(2, "Action"), "Finish");
}

#[test]
fn sftp_store_replaces_a_file_only_when_told_and_creates_folders_when_missing() {
    let Some(s) = Sshd::start("whole") else {
        return;
    };
    let store = Sftp::new(s.remote("known_hosts", s.key_login()));
    let dir = s.files("deep/er");
    store.create_dir_all(&dir).expect("create remote folders");
    store.write(&dir.join("w.txt"), b"first").expect("write");
    store.write(&dir.join("w2.txt"), b"second").expect("write");
    sluice_nodes_file::store::move_in(&store, &dir.join("w2.txt"), &dir.join("w.txt"), true)
        .expect("replace");
    assert_eq!(std::fs::read(s.files("deep/er/w.txt")).unwrap(), b"second");
    store.write(&dir.join("w3.txt"), b"third").expect("write");
    let refused =
        sluice_nodes_file::store::move_in(&store, &dir.join("w3.txt"), &dir.join("w.txt"), false);
    assert!(
        matches!(refused, Err(FileError::Exists { .. })),
        "{refused:?}"
    );
    let names: Vec<String> = store
        .files(&dir)
        .expect("list")
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names.len(), 2);
    assert!(store.files(&s.files("none")).expect("list").is_empty());
}

#[test]
fn sftp_connection_is_refused_when_the_host_key_is_not_known() {
    let Some(s) = Sshd::start("unknown") else {
        return;
    };
    s.write("in/a.txt", b"one\n");
    // A known_hosts that lists another key of the same kind for this server...
    s.write_known_hosts("changed_hosts", "client_key.pub");
    let store = Sftp::new(s.remote("changed_hosts", s.key_login()));
    let e = store.files(&s.files("in")).expect_err("a changed host key");
    assert!(
        matches!(e, FileError::HostKeyChanged { line: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("refusing to connect"), "{e}");
    // ...and one that lists nothing for it.
    std::fs::write(
        s.dir.join("empty_hosts"),
        "other.example ssh-ed25519 AAAA x\n",
    )
    .unwrap();
    let store = Sftp::new(s.remote("empty_hosts", s.key_login()));
    let e = store.files(&s.files("in")).expect_err("an unknown host");
    assert!(matches!(e, FileError::UnknownHost { .. }), "{e}");
    assert!(e.to_string().contains("SHA256:"), "{e}");
    // Nothing was touched.
    assert_eq!(list(&s.files("in")), ["a.txt"]);
}

#[test]
fn sftp_login_fails_clearly_when_the_password_is_wrong() {
    let Some(s) = Sshd::start("password") else {
        return;
    };
    // PATH is set, and is not the user's password.
    let var = "PATH".to_string();
    let store = Sftp::new(s.remote(
        "known_hosts",
        Login {
            user: s.user.clone(),
            password_env: Some(var.clone()),
            private_key: None,
        },
    ));
    let e = store.files(&s.files("in")).expect_err("a wrong password");
    assert!(matches!(e, FileError::Login { .. }), "{e}");
    let store = Sftp::new(s.remote(
        "known_hosts",
        Login {
            user: s.user.clone(),
            password_env: Some("SLUICE_TEST_SFTP_PASSWORD_NEVER_SET".into()),
            private_key: None,
        },
    ));
    let e = store.files(&s.files("in")).expect_err("no password");
    assert!(e.to_string().contains("is not set"), "{e}");
}
