//! Simple elements (no attributes, unprefixed ASCII names) are built by a one-pass path; any
//! opaque-element rule turns that path off. Parsing with a rule that matches nothing must give
//! exactly what the one-pass path gives: the same tree (names, namespaces, field types, values,
//! source spans, parser flags), the same serialisation and the same errors.

mod common;

use common::*;
use proptest::prelude::*;
use sluice_parsers::xmlnsc::XmlnscOptions;
use sluice_tree::{NodeId, Tree, Value};

const SEED: &str = "<Parent><First>1</First><SaleList><Invoice><Initial>K</Initial>\
<Surname>Braithwaite\u{e9}\u{1F600}</Surname><Item><Code>00</Code><Description>a &amp; b\
</Description><Price>0.30</Price></Item><Item><Code/><Empty></Empty><n:x xmlns:n=\"urn:n\">\
t</n:x><Long>abcdefghijklmnopqrstuvwxyz0123456789abcdefghij</Long></Item><Balance>\t0.50\r\n\
</Balance></Invoice></SaleList><d xmlns=\"urn:d\"><e>v</e></d><Last>Test</Last></Parent>";

fn options(general: bool, flags: u8) -> XmlnscOptions {
    XmlnscOptions {
        opaque_elements: if general {
            vec!["NoElementHasThisName".into()]
        } else {
            vec![]
        },
        retain_mixed: flags & 1 != 0,
        retain_comments: flags & 2 != 0,
        retain_pis: flags & 4 != 0,
        ..Default::default()
    }
}

fn describe(t: &mut Tree, id: NodeId, out: &mut String) {
    let mut c = t.peek_first_child(id);
    while let Some(k) = c {
        let v = match t.value(k) {
            Value::Character(x) | Value::Blob(x) => format!("{:?}", t.bytes(x)),
            other => format!("{other:?}"),
        };
        out.push_str(&format!(
            "{:?} {:?} {:?} {:x} {v} {:?} {:x} {}\n",
            t.namespace_bytes(k),
            t.name_bytes(k),
            k,
            t.field_type(k),
            t.source(k),
            t.parser_flags(k),
            t.is_pending(k),
        ));
        describe(t, k, out);
        c = t.peek_next_sibling(k);
    }
}

/// The tree, serialisation and error of a complete parse.
fn outcome(body: &[u8], general: bool, flags: u8) -> String {
    let (mut t, id) = attach_bytes(body.to_vec(), options(general, flags));
    let mut out = String::new();
    match t.expand_all(id) {
        Ok(()) => {
            describe(&mut t, id, &mut out);
            let mut ser = Vec::new();
            let r = sluice_parsers::xmlnsc::serialize_to(&mut t, id, &mut ser);
            out.push_str(&format!("{r:?} {ser:?}"));
        }
        Err(e) => out.push_str(&format!("error: {e}")),
    }
    out
}

fn same_either_way(body: &[u8], flags: u8) {
    assert_eq!(
        outcome(body, false, flags),
        outcome(body, true, flags),
        "{}",
        String::from_utf8_lossy(body)
    );
}

#[test]
fn plain_elements_build_the_same_tree_as_the_general_path() {
    for flags in 0..8 {
        same_either_way(SEED.as_bytes(), flags);
    }
}

#[test]
fn plain_elements_at_the_end_of_the_buffer_are_errors_as_before() {
    for end in 0..SEED.len() {
        if SEED.is_char_boundary(end) {
            same_either_way(&SEED.as_bytes()[..end], 0);
        }
    }
}

#[test]
fn plain_elements_check_utf8_in_values() {
    same_either_way(b"<a><b>ok\xff</b></a>", 0);
    same_either_way(b"<a><b>\xe2\x82</b></a>", 0);
    same_either_way(b"<a><b>caf\xc3\xa9 \xe2\x82\xac</b></a>", 0);
    same_either_way(b"<a><b>x\x01y</b></a>", 0);
    same_either_way(b"<a><b>x\x7fy</b></a>", 0);
    same_either_way(b"<a><b>1234567&lt;</b></a>", 0);
}

#[test]
fn plain_elements_keep_the_depth_limit() {
    let deep = "<a>".repeat(600) + &"</a>".repeat(600);
    same_either_way(deep.as_bytes(), 0);
    let deep = "<a>".repeat(600) + "x" + &"</a>".repeat(600);
    same_either_way(deep.as_bytes(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn edited_documents_build_the_same_tree_either_way(
        edits in prop::collection::vec(
            (0usize..SEED.len(), prop::sample::select(b"<>/&;:= xaZ\t\r\n\x7f\xc3\xa9\xff!?".to_vec()), 0u8..3),
            1..6,
        ),
        flags in 0u8..8,
    ) {
        let body = mutate(SEED, edits);
        same_either_way(&body, flags);
    }
}
