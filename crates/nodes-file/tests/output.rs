//! FileOutput with real files: records appended in transit and finished by FileInput's End of
//! Data, each record definition, the output file actions, and LocalEnvironment destinations.

mod common;

use bytes::Bytes;
use common::{DataDir, build, labels, le_at};
use sluice_nodes_core::domains::BodyParsing;
use sluice_tree::{Message, Text, Value, field_type};

fn copy_flow(out_props: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, action_on_success: delete, wires: {{ out: [write], end_of_data: [write.finish_file] }} }}\n  write: {{ type: FileOutput, directory: out, file_name: out.txt, {out_props}, wires: {{ out: [wrote], end_of_data: [finished] }} }}\n  wrote: {{ type: Capture }}\n  finished: {{ type: Capture }}\n"
    )
}

#[test]
fn file_output_appends_records_in_transit_and_finishes_on_end_of_data() {
    let d = DataDir::new("out-lines");
    d.write("in/a.txt", b"one\ntwo\r\nthree", 0);
    let run = build(
        &copy_flow("record_definition: delimited, delimiter: dos"),
        &d.0,
    );
    let got = run.until("the output", || d.path("out/out.txt").exists());
    assert_eq!(labels(&got), ["wrote", "wrote", "wrote", "finished"]);
    assert_eq!(
        std::fs::read(d.path("out/out.txt")).unwrap(),
        b"one\r\ntwo\r\nthree\r\n"
    );
    assert!(d.list("out/mqsitransit").is_empty());
    let wd = |i: usize, f: &str| le_at(&got[i].message, &["WrittenDestination", "File", f]);
    assert_eq!(
        [wd(0, "Action"), wd(1, "Action"), wd(3, "Action")],
        ["Create", "Append", "Finish"]
    );
    assert_eq!(wd(0, "Name"), "out.txt");
    assert_eq!(wd(0, "Directory"), d.path("out").to_string_lossy());
    assert_eq!(wd(0, "Timestamp").len(), 22);
}

#[test]
fn file_output_pads_fixed_length_records_and_writes_infix_delimiters() {
    let d = DataDir::new("out-fixed");
    d.write("in/a.txt", b"ab\ncde\n", 0);
    let run = build(
        &copy_flow("record_definition: fixed_length, record_length_bytes: 4, padding_byte_hex: 2E"),
        &d.0,
    );
    run.until("the output", || d.path("out/out.txt").exists());
    assert_eq!(std::fs::read(d.path("out/out.txt")).unwrap(), b"ab..cde.");

    d.write("in/b.txt", b"x\ny\n", 0);
    let run = build(
        &copy_flow(
            "record_definition: delimited, delimiter: custom, custom_delimiter: '|', delimiter_type: infix, output_file_action: replace",
        ),
        &d.0,
    );
    run.until("the output", || {
        std::fs::read(d.path("out/out.txt")).unwrap() == b"x|y"
    });
}

#[test]
fn file_output_fails_a_fixed_length_record_when_it_is_too_long() {
    let d = DataDir::new("out-long");
    d.write("in/a.txt", b"abcdef\n", 0);
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, wires: { out: [write] } }\n  write: { type: FileOutput, directory: out, file_name: o.txt, record_definition: fixed_length, record_length_bytes: 3 }\n";
    let run = build(src, &d.0);
    run.until("the backout", || d.path("in/mqsibackout/a.txt").exists());
    assert!(
        !d.path("out/mqsitransit/o.txt").exists()
            || std::fs::read(d.path("out/mqsitransit/o.txt"))
                .unwrap()
                .is_empty()
    );
}

/// A BLOB message, with `LocalEnvironment.Destination.File.<k>` set for each pair.
fn message(body: &'static str, destination: &[(&'static str, &str)]) -> Message {
    let mut m = Message::new();
    BodyParsing::blob()
        .attach(&mut m.root, Bytes::from_static(body.as_bytes()))
        .unwrap();
    if !destination.is_empty() {
        let le = &mut m.local_environment;
        let mut at = le.root();
        for name in ["Destination", "File"] {
            at = le
                .create_last_child(at, field_type::NAME, Text::from_static(name), Value::Null)
                .unwrap();
        }
        for (k, v) in destination {
            let t = le.alloc_text(v.as_bytes());
            le.create_last_child(
                at,
                field_type::NAME_VALUE,
                Text::from_static(k),
                Value::Character(t),
            )
            .unwrap();
        }
    }
    m
}

fn whole_file_flow(action: &str) -> String {
    format!(
        "nodes:\n  inject: {{ type: Inject, wires: {{ out: [write] }} }}\n  write: {{ type: FileOutput, directory: out, file_name: w.txt, output_file_action: {action}, wires: {{ out: [wrote] }} }}\n  wrote: {{ type: Capture }}\n"
    )
}

#[test]
fn file_output_writes_each_message_as_a_whole_file_named_by_local_environment() {
    let d = DataDir::new("out-whole");
    let run = build(&whole_file_flow("replace"), &d.0);
    run.harness.inject(message("first", &[]));
    run.harness
        .inject(message("second", &[("Name", "other.txt")]));
    let elsewhere = d.path("elsewhere").to_string_lossy().into_owned();
    run.harness.inject(message(
        "third",
        &[("Directory", &elsewhere), ("Name", "x.txt")],
    ));
    run.harness.run(&run.flow);
    assert!(run.harness.take_outcomes().iter().all(Result::is_ok));
    assert_eq!(std::fs::read(d.path("out/w.txt")).unwrap(), b"first");
    assert_eq!(std::fs::read(d.path("out/other.txt")).unwrap(), b"second");
    assert_eq!(std::fs::read(d.path("elsewhere/x.txt")).unwrap(), b"third");
    let got = run.harness.take_captured();
    assert_eq!(
        le_at(&got[0].message, &["WrittenDestination", "File", "Action"]),
        "Create"
    );
}

#[test]
fn file_output_applies_the_output_file_action_when_the_file_exists() {
    let d = DataDir::new("out-actions");
    let cases: [(&str, &[u8]); 3] = [
        ("replace", b"new"),
        ("append", b"oldnew"),
        ("archive_and_replace", b"new"),
    ];
    for (action, want) in cases {
        d.write("out/w.txt", b"old", 0);
        let _ = std::fs::remove_dir_all(d.path("out/mqsiarchive"));
        let run = build(&whole_file_flow(action), &d.0);
        run.harness.inject(message("new", &[]));
        run.harness.run(&run.flow);
        assert!(run.harness.take_outcomes()[0].is_ok(), "{action}");
        assert_eq!(
            std::fs::read(d.path("out/w.txt")).unwrap(),
            want,
            "{action}"
        );
        let got = run.harness.take_captured();
        if action != "append" {
            assert_eq!(
                le_at(&got[0].message, &["WrittenDestination", "File", "Action"]),
                "Replace"
            );
        }
    }
    assert_eq!(
        std::fs::read(d.path("out/mqsiarchive/w.txt")).unwrap(),
        b"old"
    );

    d.write("out/w.txt", b"old", 0);
    let run = build(&whole_file_flow("fail_if_exists"), &d.0);
    run.harness.inject(message("new", &[]));
    run.harness.run(&run.flow);
    let outcome = run.harness.take_outcomes();
    let e = outcome[0].as_ref().expect_err("the file exists");
    assert!(
        e.exception.describe().contains("already exists"),
        "{}",
        e.exception.describe()
    );
    assert_eq!(std::fs::read(d.path("out/w.txt")).unwrap(), b"old");

    d.write("out/w.txt", b"old", 0);
    let run = build(&whole_file_flow("timestamp_archive_and_replace"), &d.0);
    run.harness.inject(message("new", &[]));
    run.harness.run(&run.flow);
    let archived = d.list("out/mqsiarchive");
    assert!(
        archived
            .iter()
            .any(|n| n.len() == 23 + 5 && n.ends_with("_w.txt")),
        "{archived:?}"
    );
}

#[test]
fn file_output_refuses_a_name_with_a_folder_in_it() {
    let d = DataDir::new("out-name");
    let run = build(&whole_file_flow("replace"), &d.0);
    run.harness
        .inject(message("x", &[("Name", "../escape.txt")]));
    run.harness.run(&run.flow);
    assert!(run.harness.take_outcomes()[0].is_err());
    assert!(!d.path("escape.txt").exists());
}

#[test]
fn file_output_appends_to_the_file_each_message_names_when_names_alternate() {
    let d = DataDir::new("out-named");
    let src = "nodes:\n  inject: { type: Inject, wires: { out: [write] } }\n  write: { type: FileOutput, directory: out, record_definition: delimited, delimiter: unix }\n";
    let run = build(src, &d.0);
    let elsewhere = d.path("elsewhere").to_string_lossy().into_owned();
    for (body, dir, name) in [
        ("1", None, "a.txt"),
        ("2", None, "a.txt"),
        ("3", Some(elsewhere.as_str()), "a.txt"),
        ("4", None, "b.txt"),
        ("5", None, "a.txt"),
        ("6", Some(elsewhere.as_str()), "a.txt"),
    ] {
        let mut destination = vec![("Name", name)];
        destination.extend(dir.map(|d| ("Directory", d)));
        run.harness.inject(message(body, &destination));
    }
    run.harness.run(&run.flow);
    assert!(run.harness.take_outcomes().iter().all(Result::is_ok));
    let read = |p: &str| std::fs::read(d.path(p)).unwrap();
    assert_eq!(read("out/mqsitransit/a.txt"), b"1\n2\n5\n");
    assert_eq!(read("out/mqsitransit/b.txt"), b"4\n");
    assert_eq!(read("elsewhere/mqsitransit/a.txt"), b"3\n6\n");
}
