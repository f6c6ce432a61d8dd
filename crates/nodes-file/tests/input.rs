//! FileInput with real files in a temporary data folder: record detection, LocalEnvironment.File,
//! End of Data, the file's archive, deletion and backout, and resuming from a checkpoint.

mod common;

use common::{DataDir, body, build, labels, le_file};

fn flow(props: &str) -> String {
    format!(
        "nodes:\n  in: {{ type: FileInput, polling_interval_ms: 20, {props}, wires: {{ out: [rec], end_of_data: [eod] }} }}\n  rec: {{ type: Capture }}\n  eod: {{ type: Capture }}\n"
    )
}

#[test]
fn file_input_propagates_each_line_then_end_of_data_and_archives_the_file() {
    let d = DataDir::new("lines");
    d.write("in/a.txt", b"one\r\ntwo\nthree\n", 0);
    let run = build(&flow("directory: in, record_detection: delimited"), &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/a.txt").exists());
    assert_eq!(labels(&got), ["rec", "rec", "rec", "eod"]);
    let bodies: Vec<String> = got[..3].iter().map(|c| body(&c.message)).collect();
    assert_eq!(bodies, ["one", "two", "three"]);
    let field = |i: usize, f: &str| le_file(&got[i].message, f);
    assert_eq!(
        [field(0, "Record"), field(1, "Record"), field(2, "Record")],
        ["1", "2", "3"]
    );
    assert_eq!(
        [field(0, "Offset"), field(1, "Offset"), field(2, "Offset")],
        ["0", "5", "9"]
    );
    assert_eq!(field(0, "Delimiter"), "NULL");
    assert_eq!(field(1, "Delimiter"), "\r\n");
    assert_eq!(field(2, "Delimiter"), "\n");
    assert_eq!(field(0, "Name"), "a.txt");
    assert_eq!(field(0, "Directory"), d.path("in").to_string_lossy());
    assert_eq!(field(0, "LastModified"), "<timestamp>");
    assert_eq!(field(3, "Record"), "3");
    assert_eq!(field(3, "Offset"), "15");
    assert_eq!(body(&got[3].message), "");
    assert!(
        d.list("in/mqsitransitin").is_empty(),
        "{:?}",
        d.list("in/mqsitransitin")
    );
    assert_eq!(d.list("in"), ["mqsiarchive", "mqsitransitin"]);
}

#[test]
fn file_input_takes_matching_files_oldest_first_and_deletes_them_when_told() {
    let d = DataDir::new("pattern");
    d.write("in/new.csv", b"new", 10);
    d.write("in/old.csv", b"old", 100);
    d.write("in/skip.txt", b"skip", 50);
    d.write("in/old_ignore.csv", b"ignored", 200);
    let run = build(
        &flow(
            "directory: in, file_name_pattern: '*.csv', file_exclusion_pattern: '*_ignore.csv', action_on_success: delete",
        ),
        &d.0,
    );
    let got = run.until("both files", || {
        !d.path("in/new.csv").exists() && !d.path("in/old.csv").exists()
    });
    let bodies: Vec<String> = got
        .iter()
        .filter(|c| c.label == "rec")
        .map(|c| body(&c.message))
        .collect();
    assert_eq!(bodies, ["old", "new"]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(
        d.list("in"),
        ["mqsitransitin", "old_ignore.csv", "skip.txt"]
    );
}

#[test]
fn file_input_cuts_fixed_length_records_and_archives_with_a_time_stamp() {
    let d = DataDir::new("fixed");
    d.write("in/f.dat", b"aaabbbc", 0);
    let run = build(
        &flow(
            "directory: in, record_detection: fixed_length, record_length_bytes: 3, action_on_success: archive_with_timestamp",
        ),
        &d.0,
    );
    let got = run.until("the archive", || !d.list("in/mqsiarchive").is_empty());
    let bodies: Vec<String> = got[..3].iter().map(|c| body(&c.message)).collect();
    assert_eq!(bodies, ["aaa", "bbb", "c"]);
    let archived = d.list("in/mqsiarchive");
    assert_eq!(archived.len(), 1);
    // yyyyMMdd_HHmmss_ffffff_ then the name.
    assert!(
        archived[0].ends_with("_f.dat") && archived[0].len() == 23 + 5,
        "{archived:?}"
    );
}

#[test]
fn file_input_splits_on_a_hex_delimiter_infix_with_an_empty_last_record() {
    let d = DataDir::new("hex");
    d.write("in/h.dat", b"x|y|", 0);
    let run = build(
        &flow(
            "directory: in, record_detection: delimited, delimiter: custom, custom_delimiter_hex: '7C', delimiter_type: infix",
        ),
        &d.0,
    );
    let got = run.until("the archive", || d.path("in/mqsiarchive/h.dat").exists());
    let bodies: Vec<String> = got
        .iter()
        .filter(|c| c.label == "rec")
        .map(|c| body(&c.message))
        .collect();
    assert_eq!(bodies, ["x", "y", ""]);
}

#[test]
fn file_input_backs_out_the_file_and_stops_when_a_record_fails_unhandled() {
    let d = DataDir::new("backout");
    d.write("in/b.txt", b"1\n2\n3\n", 0);
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, wires: { out: [rec] } }\n  rec: { type: Capture, raise: boom }\n";
    let run = build(src, &d.0);
    let got = run.until("the backout", || d.path("in/mqsibackout/b.txt").exists());
    assert_eq!(labels(&got), ["rec"]);
    assert_eq!(
        std::fs::read(d.path("in/mqsibackout/b.txt")).unwrap(),
        b"1\n2\n3\n"
    );
    assert!(d.list("in/mqsitransitin").is_empty());
}

#[test]
fn file_input_sends_failed_records_to_failure_and_goes_on_when_it_is_wired() {
    let d = DataDir::new("failure");
    d.write("in/b.txt", b"1\n2\n", 0);
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, wires: { out: [rec], failure: [failed] } }\n  rec: { type: Capture, raise: boom }\n  failed: { type: Capture }\n";
    let run = build(src, &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/b.txt").exists());
    assert_eq!(labels(&got), ["rec", "failed", "rec", "failed"]);
    assert_eq!(le_file(&got[3].message, "Record"), "2");
    let list = sluice_flow_testing::compliance::exception_labels(&got[1].message.exception_list);
    assert_eq!(list, ["rec"]);
}

#[test]
fn file_input_fails_a_record_to_failure_as_blob_when_it_does_not_parse() {
    let d = DataDir::new("parse");
    d.write("in/x.xml", b"<a>1</a>\n<b>\n", 0);
    let src = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: delimited, domain: XMLNSC, parse_timing: complete, wires: { out: [rec], failure: [failed] } }\n  rec: { type: Capture }\n  failed: { type: Capture }\n";
    let run = build(src, &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/x.xml").exists());
    assert_eq!(labels(&got), ["rec", "failed"]);
    assert_eq!(body(&got[1].message), "<b>");
}

#[test]
fn file_input_leaves_the_file_in_transit_when_the_archive_has_one_of_that_name() {
    let d = DataDir::new("duplicate");
    d.write("in/mqsiarchive/a.txt", b"old", 0);
    d.write("in/a.txt", b"new", 0);
    let run = build(&flow("directory: in"), &d.0);
    let done = || {
        std::fs::read(d.path("in/mqsitransitin/.a.txt.progress"))
            .ok()
            .and_then(|b| sluice_nodes_file::checkpoint::Checkpoint::load(&b))
            .is_some_and(|(c, _, _)| c.done)
    };
    let got = run.until("End of Data", done);
    assert_eq!(labels(&got), ["rec", "eod"]);
    assert_eq!(
        std::fs::read(d.path("in/mqsiarchive/a.txt")).unwrap(),
        b"old"
    );
    assert!(d.path("in/mqsitransitin/a.txt").exists());

    let run = build(
        &flow("directory: in, replace_duplicate_archives: true"),
        &d.0,
    );
    let got = run.until("the archive", || !d.path("in/mqsitransitin/a.txt").exists());
    // End of Data was committed before: the file is only archived now, not read again.
    assert!(got.is_empty(), "{:?}", labels(&got));
    assert_eq!(
        std::fs::read(d.path("in/mqsiarchive/a.txt")).unwrap(),
        b"new"
    );
}

#[test]
fn file_input_resumes_after_the_last_committed_record_when_a_checkpoint_is_in_transit() {
    let d = DataDir::new("resume");
    d.write("in/mqsitransitin/r.txt", b"1\n2\n3\n", 0);
    let cp = sluice_nodes_file::checkpoint::Checkpoint {
        offset: 2,
        record: 1,
        delimiter: Some(b"\n".to_vec().into()),
        after_delimiter: true,
        ..Default::default()
    };
    std::fs::write(d.path("in/mqsitransitin/.r.txt.progress"), cp.encode()).unwrap();
    let run = build(&flow("directory: in, record_detection: delimited"), &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/r.txt").exists());
    assert_eq!(labels(&got), ["rec", "rec", "eod"]);
    assert_eq!(body(&got[0].message), "2");
    assert_eq!(le_file(&got[0].message, "Record"), "2");
    assert_eq!(le_file(&got[0].message, "Delimiter"), "\n");
    assert_eq!(le_file(&got[2].message, "Record"), "3");
    assert!(d.list("in/mqsitransitin").is_empty());
}

#[test]
fn file_input_propagates_one_empty_message_when_a_whole_file_is_empty() {
    let d = DataDir::new("empty");
    d.write("in/e.txt", b"", 0);
    let run = build(&flow("directory: in"), &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/e.txt").exists());
    assert_eq!(labels(&got), ["rec", "eod"]);
    assert_eq!(body(&got[0].message), "");
}

#[test]
fn file_input_refuses_a_custom_delimiter_when_none_is_given() {
    let mut registry = sluice_flow::Registry::new();
    sluice_nodes_file::register(&mut |s| registry.register(s));
    let def = sluice_flow::load_flow(
        "f.yaml",
        "nodes:\n  in: { type: FileInput, directory: in, record_detection: delimited, delimiter: custom }\n",
        &registry,
    )
    .unwrap();
    let e = sluice_flow::Flow::build(
        &def,
        std::path::Path::new("."),
        &sluice_node_api::Services::none(),
    )
    .err()
    .expect("a build error");
    assert!(e[0].to_string().contains("custom_delimiter"), "{}", e[0]);
}

#[test]
fn file_input_leaves_outputs_alone_when_resuming_a_file_whose_end_of_data_committed() {
    let d = DataDir::new("done-outputs");
    d.write("in/mqsitransitin/r.txt", b"1\n", 0);
    // Another file's records went on into the output after this one's End of Data.
    d.write("out/mqsitransit/o.txt", b"0123456789", 0);
    let cp = sluice_nodes_file::checkpoint::Checkpoint {
        offset: 2,
        record: 1,
        done: true,
        outputs: vec![(d.path("out/mqsitransit/o.txt"), 3)],
        ..Default::default()
    };
    std::fs::write(d.path("in/mqsitransitin/.r.txt.progress"), cp.encode()).unwrap();
    let run = build(&flow("directory: in, record_detection: delimited"), &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/r.txt").exists());
    assert!(got.is_empty(), "{:?}", labels(&got));
    assert_eq!(
        std::fs::read(d.path("out/mqsitransit/o.txt")).unwrap(),
        b"0123456789"
    );
}
