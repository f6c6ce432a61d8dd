//! FileRead with real files: the whole file, the first record matching a pattern, a file named
//! by LocalEnvironment or a name pattern, no_match, and delete/archive afterwards.

mod common;

use bytes::Bytes;
use common::{DataDir, body, build, labels, le_file};
use sluice_nodes_core::domains::BodyParsing;
use sluice_tree::{Message, Text, Value, field_type};

fn flow(props: &str) -> String {
    format!(
        "nodes:\n  inject: {{ type: Inject, wires: {{ out: [read] }} }}\n  read: {{ type: FileRead, directory: data, {props}, wires: {{ out: [found], no_match: [none] }} }}\n  found: {{ type: Capture }}\n  none: {{ type: Capture }}\n"
    )
}

fn message(name: Option<&str>) -> Message {
    let mut m = Message::new();
    BodyParsing::blob()
        .attach(&mut m.root, Bytes::from_static(b"request"))
        .unwrap();
    if let Some(name) = name {
        let le = &mut m.local_environment;
        let mut at = le.root();
        for f in ["Destination", "File"] {
            at = le
                .create_last_child(at, field_type::NAME, Text::from_static(f), Value::Null)
                .unwrap();
        }
        let t = le.alloc_text(name.as_bytes());
        le.create_last_child(
            at,
            field_type::NAME_VALUE,
            Text::from_static("Name"),
            Value::Character(t),
        )
        .unwrap();
    }
    m
}

fn read(d: &DataDir, props: &str, msg: Message) -> Vec<sluice_flow_testing::Captured> {
    let run = build(&flow(props), &d.0);
    run.harness.inject(msg);
    run.harness.run(&run.flow);
    let outcomes = run.harness.take_outcomes();
    assert!(
        outcomes.iter().all(Result::is_ok),
        "{:?}",
        outcomes[0].as_ref().err().map(|e| e.exception.describe())
    );
    run.harness.take_captured()
}

#[test]
fn file_read_replaces_the_body_with_the_whole_file() {
    let d = DataDir::new("read-whole");
    d.write("data/p.txt", b"apple 1\npear 2\n", 0);
    let got = read(&d, "file_name: p.txt", message(None));
    assert_eq!(labels(&got), ["found"]);
    assert_eq!(body(&got[0].message), "apple 1\npear 2\n");
    assert_eq!(le_file(&got[0].message, "Name"), "p.txt");
    assert!(d.path("data/p.txt").exists());
}

#[test]
fn file_read_propagates_the_first_matching_record_and_archives_the_file() {
    let d = DataDir::new("read-match");
    d.write("data/p.txt", b"apple 1\npear 2\npear 3\n", 0);
    let got = read(
        &d,
        "file_name: p.txt, record_detection: delimited, record_pattern: 'pear*', action_after_read: archive",
        message(None),
    );
    assert_eq!(body(&got[0].message), "pear 2");
    assert_eq!(le_file(&got[0].message, "Record"), "2");
    assert_eq!(le_file(&got[0].message, "Offset"), "8");
    assert!(d.path("data/mqsiarchive/p.txt").exists());
    assert!(!d.path("data/p.txt").exists());
}

#[test]
fn file_read_goes_to_no_match_when_no_record_or_file_matches() {
    let d = DataDir::new("read-none");
    d.write("data/p.txt", b"apple 1\n", 0);
    let got = read(
        &d,
        "file_name: p.txt, record_detection: delimited, record_pattern: 'plum*', action_after_read: delete",
        message(None),
    );
    assert_eq!(labels(&got), ["none"]);
    assert_eq!(body(&got[0].message), "request");
    assert!(
        d.path("data/p.txt").exists(),
        "no record was read: the file stays"
    );
    let got = read(&d, "file_name: missing.txt", message(None));
    assert_eq!(labels(&got), ["none"]);
}

#[test]
fn file_read_reads_the_file_local_environment_names_and_deletes_it() {
    let d = DataDir::new("read-le");
    d.write("data/a.txt", b"A", 0);
    d.write("data/b.txt", b"B", 0);
    let got = read(
        &d,
        "file_name: a.txt, action_after_read: delete",
        message(Some("b.txt")),
    );
    assert_eq!(body(&got[0].message), "B");
    assert!(!d.path("data/b.txt").exists());
    assert!(d.path("data/a.txt").exists());
}

#[test]
fn file_read_takes_the_oldest_file_when_the_name_is_a_pattern() {
    let d = DataDir::new("read-pattern");
    d.write("data/new.csv", b"new", 10);
    d.write("data/old.csv", b"old", 100);
    let got = read(&d, "file_name: '*.csv'", message(None));
    assert_eq!(body(&got[0].message), "old");
}
