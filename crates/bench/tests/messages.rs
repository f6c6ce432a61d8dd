//! Generated SaleList messages: size within 2 % of the target, well-formed
//! in every format, and varied across repetitions.

use std::collections::HashSet;

use sluice_bench::message::writers::{FIXED_FILLER_DIGITS, FIXED_RECORD_LEN};
use sluice_bench::message::{Format, generate};
use sluice_bench::size::parse_bytes;

const SIZES: [&str; 4] = ["2kB", "20kB", "200kB", "2MB"];

fn message(format: Format, size: &str) -> Vec<u8> {
    let bytes = parse_bytes(size).expect("size");
    generate(format, bytes, 1).expect("message")
}

fn assert_within_two_percent(len: usize, size: &str) {
    let target = parse_bytes(size).expect("size") as f64;
    let off = (len as f64 - target).abs() / target;
    assert!(
        off <= 0.02,
        "{len} bytes is {:.2}% from {size}",
        off * 100.0
    );
}

/// Checks XML well-formedness and returns the text of every `Surname`.
fn xml_surnames(xml: &[u8]) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(xml);
    reader.config_mut().check_end_names = true;
    let mut buf = Vec::new();
    let mut depth = 0i32;
    let mut in_surname = false;
    let mut surnames = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                depth += 1;
                in_surname = e.name().as_ref() == b"Surname";
            }
            Ok(Event::End(_)) => {
                depth -= 1;
                in_surname = false;
            }
            Ok(Event::Text(t)) if in_surname => {
                surnames.push(String::from_utf8_lossy(t.as_ref()).into_owned());
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed at {}: {e}", reader.buffer_position()),
        }
        buf.clear();
    }
    assert_eq!(depth, 0, "unbalanced elements");
    surnames
}

#[test]
fn xml_messages_are_wellformed_sized_and_varied() {
    for size in SIZES {
        let m = message(Format::Xml, size);
        assert_within_two_percent(m.len(), size);
        assert!(m.starts_with(b"<Parent><First>1</First><SaleList><Invoice>"));
        assert!(m.ends_with(b"</SaleList><Last>Test</Last></Parent>"));
        assert!(
            !m.windows(2).any(|w| w == b"> <" || w == b">\n"),
            "white space between tags"
        );
        let surnames = xml_surnames(&m);
        let distinct: HashSet<&String> = surnames.iter().collect();
        // Names vary across repetitions: far more distinct names than a repeated SaleList's two.
        if surnames.len() >= 20 {
            assert!(
                distinct.len() > surnames.len() / 8,
                "{} of {}",
                distinct.len(),
                surnames.len()
            );
        }
        assert!(distinct.len() > 2 || surnames.len() <= 4);
    }
}

#[test]
fn twenty_megabyte_xml_message_is_within_two_percent() {
    let m = message(Format::Xml, "20MB");
    assert_within_two_percent(m.len(), "20MB");
    let surnames = xml_surnames(&m);
    let distinct: HashSet<&String> = surnames.iter().collect();
    assert!(surnames.len() > 20_000, "{} surnames", surnames.len());
    assert!(
        distinct.len() > 1_000,
        "{} distinct surnames",
        distinct.len()
    );
}

#[test]
fn soap_messages_are_wellformed_envelopes_with_count() {
    for size in SIZES {
        let m = message(Format::Soap, size);
        assert_within_two_percent(m.len(), size);
        xml_surnames(&m);
        let text = String::from_utf8(m).expect("utf-8");
        assert!(text.starts_with("<soapenv:Envelope "));
        let lists = text.matches("<SaleList>").count();
        assert!(text.contains(&format!("<SaleListCount>{lists}</SaleListCount>")));
        assert!(text.ends_with("</soapenv:Body></soapenv:Envelope>"));
    }
}

#[test]
fn swa_messages_are_an_envelope_part_and_an_xml_attachment() {
    for size in SIZES {
        let m = message(Format::Swa, size);
        assert_within_two_percent(m.len(), size);
        let text = String::from_utf8(m).expect("utf-8");
        let parts: Vec<&str> = text.split("--SluiceBenchSwA").collect();
        // Empty preamble, envelope, attachment, close delimiter.
        assert_eq!(parts.len(), 4, "{}", &text[..200.min(text.len())]);
        assert!(parts[1].contains("Content-ID: <envelope>"));
        assert!(parts[1].contains("<soapenv:Envelope "));
        let (head, xml) = parts[2].split_once("\r\n\r\n").expect("part headers");
        assert!(head.contains("Content-ID: <salelist>"));
        let xml = xml
            .strip_suffix("\r\n")
            .expect("CR LF before the delimiter");
        assert!(!xml_surnames(xml.as_bytes()).is_empty());
        assert_eq!(parts[3], "--\r\n");
    }
    assert!(
        Format::Swa
            .content_type()
            .contains("boundary=\"SluiceBenchSwA\"")
    );
}

#[test]
fn json_messages_parse_with_the_documented_shape() {
    for size in SIZES {
        let m = message(Format::Json, size);
        assert_within_two_percent(m.len(), size);
        let v: serde_json::Value = serde_json::from_slice(&m).expect("valid JSON");
        let parent = &v["Parent"];
        assert_eq!(parent["First"], 1);
        assert_eq!(parent["Last"], "Test");
        let lists = parent["SaleList"].as_array().expect("SaleList array");
        assert!(!lists.is_empty());
        let first = &lists[0]["Invoice"][0];
        assert_eq!(first["Surname"], "Braithwaite");
        assert_eq!(first["Initial"][0], "K");
        assert_eq!(first["Item"][0]["Code"][2], "02");
        assert!(first["Item"][0]["Price"].is_f64());
        let surnames: HashSet<String> = lists
            .iter()
            .flat_map(|l| l["Invoice"].as_array().cloned().unwrap_or_default())
            .filter_map(|i| i["Surname"].as_str().map(str::to_string))
            .collect();
        assert!(surnames.len() > 2 || lists.len() == 1);
    }
}

#[test]
fn delimited_messages_have_fixed_field_counts() {
    for size in SIZES {
        let m = message(Format::Delimited, size);
        assert_within_two_percent(m.len(), size);
        let text = String::from_utf8(m).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.first(), Some(&"1"));
        assert_eq!(lines.last(), Some(&"Test"));
        for line in &lines[1..lines.len() - 1] {
            assert_eq!(line.split(',').count(), 38, "{line}");
        }
        let distinct: HashSet<&&str> = lines.iter().collect();
        assert_eq!(distinct.len(), lines.len(), "a repeated line");
    }
}

#[test]
fn fixed_messages_are_whole_records_plus_filler() {
    for size in SIZES {
        let m = message(Format::Fixed, size);
        assert_within_two_percent(m.len(), size);
        let text = std::str::from_utf8(&m).expect("ascii");
        let count: usize = text[4..12].parse().expect("count field");
        let filler_at = 12 + count * FIXED_RECORD_LEN;
        let filler: usize = text[filler_at..filler_at + FIXED_FILLER_DIGITS]
            .parse()
            .expect("filler length");
        assert_eq!(filler_at + FIXED_FILLER_DIGITS + filler + 4, m.len());
        assert!(text.ends_with("Test"));
        // Surname of the first invoice of record 0 and record 1 differ.
        let surname = |record: usize| {
            &text[12 + record * FIXED_RECORD_LEN + 2..12 + record * FIXED_RECORD_LEN + 22]
        };
        assert_eq!(surname(0).trim_end(), "Braithwaite");
        if count > 1 {
            assert_ne!(surname(0), surname(1));
        }
    }
}

#[test]
fn same_seed_gives_same_bytes() {
    for format in Format::ALL {
        let a = generate(format, 50_000, 9).expect("message");
        let b = generate(format, 50_000, 9).expect("message");
        assert_eq!(a, b, "{format}");
    }
}
