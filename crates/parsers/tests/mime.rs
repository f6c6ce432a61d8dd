//! The MIME domain: the fuzz target's body run on stable over its seed corpus, mutants of the
//! seeds and arbitrary bytes; and round trips of generated multipart messages (tree → bytes →
//! tree keeps every header and every part body, in every transfer encoding).

#[allow(dead_code)]
#[path = "../../../fuzz/bodies/mime_parse.rs"]
mod mime_parse;
#[allow(dead_code)]
#[path = "../../../fuzz/bodies/short_form.rs"]
mod short_form;

use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use sluice_parsers::blob;
use sluice_parsers::mime::{MimeParser, PartDomains, attach, serialize_entity};
use sluice_tree::field_type::{NAME, NAME_VALUE, VALUE};
use sluice_tree::{NodeId, Text, Tree, Value};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/mime_parse");

#[test]
fn mime_parse_never_panics_on_seeds_and_mutants() {
    let seeds = short_form::run_seeds(CORPUS, mime_parse::run);
    short_form::run_mutants(&seeds, 4000, mime_parse::run);
}

#[derive(Clone, Debug, PartialEq)]
struct Part {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
struct Msg {
    subtype: String,
    preamble: Option<Vec<u8>>,
    parts: Vec<Part>,
    epilogue: Option<Vec<u8>>,
}

fn part() -> impl Strategy<Value = Part> {
    let value = "[a-zA-Z0-9<>@.=\"/][a-zA-Z0-9<>@.=\"/ ;-]{0,30}[a-zA-Z0-9>\"]";
    (
        prop::option::of(value),
        prop::option::of(value),
        prop::sample::select(vec!["", "base64", "quoted-printable", "binary", "8bit"]),
        prop::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(id, disp, enc, body)| {
            let mut headers = Vec::new();
            if let Some(id) = id {
                headers.push(("Content-ID".to_string(), id));
            }
            if let Some(d) = disp {
                headers.push(("Content-Disposition".to_string(), d));
            }
            if !enc.is_empty() {
                headers.push(("Content-Transfer-Encoding".to_string(), enc.to_string()));
            }
            Part { headers, body }
        })
}

fn msg() -> impl Strategy<Value = Msg> {
    (
        prop::sample::select(vec!["related", "mixed", "form-data"]),
        prop::option::of(prop::collection::vec(any::<u8>(), 1..80)),
        // RFC 2046 requires one part at least; without one, a lone preamble and a lone epilogue
        // would look alike.
        prop::collection::vec(part(), 1..5),
        prop::option::of(prop::collection::vec(any::<u8>(), 1..80)),
    )
        .prop_map(|(s, preamble, parts, epilogue)| Msg {
            subtype: s.to_string(),
            preamble,
            parts,
            epilogue,
        })
}

fn child(t: &mut Tree, parent: NodeId, ty: u32, name: &'static str, v: Value) -> NodeId {
    t.create_last_child(parent, ty, Text::from_static(name), v)
        .expect("a folder takes a child")
}

fn build(m: &Msg) -> (Tree, NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let mime = child(&mut t, r, NAME, "MIME", Value::Null);
    let ct = t.alloc_text(format!("multipart/{}", m.subtype).as_bytes());
    child(
        &mut t,
        mime,
        NAME_VALUE,
        "Content-Type",
        Value::Character(ct),
    );
    let parts = child(&mut t, mime, NAME, "Parts", Value::Null);
    if let Some(p) = &m.preamble {
        let v = t.alloc_text(p);
        child(&mut t, parts, VALUE, "", Value::Blob(v));
    }
    for p in &m.parts {
        let part = child(&mut t, parts, NAME, "Part", Value::Null);
        for (n, v) in &p.headers {
            let n = t.alloc_text(n.as_bytes());
            let v = t.alloc_text(v.as_bytes());
            t.create_last_child(part, NAME_VALUE, n, Value::Character(v))
                .expect("a part takes a header");
        }
        let data = child(&mut t, part, NAME, "Data", Value::Null);
        blob::attach(&mut t, data, Bytes::copy_from_slice(&p.body));
    }
    if let Some(e) = &m.epilogue {
        let v = t.alloc_text(e);
        child(&mut t, parts, VALUE, "", Value::Blob(v));
    }
    (t, mime)
}

fn text(t: &Tree, id: NodeId) -> String {
    String::from_utf8_lossy(t.value_bytes(id).unwrap_or_default()).into_owned()
}

fn read(t: &mut Tree, mime: NodeId) -> Msg {
    let mut m = Msg {
        subtype: String::new(),
        preamble: None,
        parts: Vec::new(),
        epilogue: None,
    };
    for c in t.children(mime).expect("the message parses") {
        match t.name_bytes(c) {
            b"Content-Type" => {
                let ct = text(t, c);
                let sub = ct.trim_start_matches("multipart/");
                m.subtype = sub.split(';').next().unwrap_or("").to_string();
            }
            b"Parts" => {
                for p in t.children(c).expect("parts parse") {
                    if t.name_bytes(p).is_empty() {
                        let v = t.value_bytes(p).unwrap_or_default().to_vec();
                        if m.parts.is_empty() {
                            m.preamble = Some(v);
                        } else {
                            m.epilogue = Some(v);
                        }
                        continue;
                    }
                    let mut part = Part {
                        headers: Vec::new(),
                        body: Vec::new(),
                    };
                    for h in t.children(p).expect("a part parses") {
                        if t.name_bytes(h) == b"Data" {
                            let b = t
                                .path(h, &["BLOB", "BLOB"])
                                .expect("a body")
                                .expect("a BLOB");
                            part.body = t.value_bytes(b).unwrap_or_default().to_vec();
                        } else {
                            let n = String::from_utf8_lossy(t.name_bytes(h)).into_owned();
                            part.headers.push((n, text(t, h)));
                        }
                    }
                    m.parts.push(part);
                }
            }
            _ => {}
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mime_round_trip_keeps_headers_and_bodies(m in msg()) {
        let (mut t, mime) = build(&m);
        let mut out = Vec::new();
        let ct = serialize_entity(&mut t, mime, &mut out).expect("a built message serialises");
        prop_assert!(ct.contains("boundary="));
        let mut t2 = Tree::new("Root");
        let r = t2.root();
        let parser = Arc::new(MimeParser::new(PartDomains::Blob));
        let id = attach(&mut t2, r, Bytes::from(out), &parser);
        let back = read(&mut t2, id);
        prop_assert_eq!(back, m);
    }

    #[test]
    fn mime_parse_never_panics_on_arbitrary_bytes(data in prop::collection::vec(any::<u8>(), 0..400)) {
        mime_parse::run(&data);
    }
}
