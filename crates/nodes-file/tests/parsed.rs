//! FileInput with parsed record sequence: records found by parsing the file with the node's
//! domain, with real files in a temporary data folder.

mod common;

use common::{DataDir, body, build, labels, le_file};

const FLOW: &str = "nodes:\n  in: { type: FileInput, polling_interval_ms: 20, directory: in, record_detection: parsed_record_sequence, domain: XMLNSC, wires: { out: [rec], failure: [failed], end_of_data: [eod] } }\n  rec: { type: Capture }\n  failed: { type: Capture }\n  eod: { type: Capture }\n";

#[test]
fn file_input_propagates_each_xml_element_as_a_record_with_its_offset() {
    let d = DataDir::new("parsed-xml");
    d.write(
        "in/a.xml",
        b"<?xml version='1.0'?><a>1</a>\n\n<b><c/></b>  <d/>\n",
        0,
    );
    let run = build(FLOW, &d.0);
    let got = run.until("the archive", || d.path("in/mqsiarchive/a.xml").exists());
    assert_eq!(labels(&got), ["rec", "rec", "rec", "eod"]);
    let bodies: Vec<String> = got[..3].iter().map(|c| body(&c.message)).collect();
    assert_eq!(
        bodies,
        ["<?xml version='1.0'?><a>1</a>", "<b><c/></b>", "<d/>"]
    );
    let offsets: Vec<String> = got[..3]
        .iter()
        .map(|c| le_file(&c.message, "Offset"))
        .collect();
    assert_eq!(offsets, ["0", "31", "44"]);
}

#[test]
fn file_input_sends_a_malformed_record_to_failure_and_backs_out_the_file() {
    let d = DataDir::new("parsed-bad");
    d.write("in/bad.xml", b"<a>1</a><a>2</b><c/>", 0);
    let run = build(FLOW, &d.0);
    let got = run.until("the failure", || {
        d.path("in/mqsiarchive/bad.xml").exists() || d.path("in/mqsibackout/bad.xml").exists()
    });
    assert_eq!(labels(&got)[..2], ["rec", "failed"]);
    let ex =
        sluice_flow_testing::dump::dump_tree(&got[1].message.exception_list, &Default::default());
    assert!(
        ex.contains("does not match") && ex.contains("FileInput"),
        "{ex}"
    );
}

#[test]
fn file_input_fails_the_partial_record_at_the_end_of_the_file() {
    let d = DataDir::new("parsed-partial");
    d.write("in/half.json", b"{\"a\":1}\n{\"b\":[1,", 0);
    let run = build(&FLOW.replace("XMLNSC", "JSON"), &d.0);
    let got = run.until("the file's end", || {
        d.path("in/mqsiarchive/half.json").exists() || d.path("in/mqsibackout/half.json").exists()
    });
    assert_eq!(labels(&got)[..2], ["rec", "failed"]);
    let ex =
        sluice_flow_testing::dump::dump_tree(&got[1].message.exception_list, &Default::default());
    assert!(
        ex.contains("ends after 8 bytes of the JSON record at offset 8"),
        "{ex}"
    );
}
