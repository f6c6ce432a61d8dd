//! On-demand parsing: only what navigation asks for is built, and errors surface when
//! navigation reaches them.

mod common;

use common::*;
use sluice_parsers::xmlnsc::XmlnscOptions;
use sluice_tree::{Position, Text, Tree, TreeError};

fn big_doc(invoices: usize, tail: &str) -> String {
    let mut s = String::from("<Parent><First>1</First><SaleList>");
    for i in 0..invoices {
        s.push_str(&format!(
            "<Invoice><Initial>K</Initial><Surname>N{i}</Surname><Item><Code>{i}</Code><Price>{i}.30</Price></Item></Invoice>"
        ));
    }
    s.push_str("</SaleList>");
    s.push_str(tail);
    s
}

#[test]
fn first_field_of_a_large_message_is_found_without_reading_the_malformed_tail() {
    // About 20 MB whose end is malformed (mismatched end tag, then nothing).
    let xml = big_doc(200_000, "<Last>Test</Wrong>");
    assert!(xml.len() > 20_000_000);
    let (mut t, id) = attach(&xml, XmlnscOptions::default());
    let parent = at(&mut t, id, &["Parent"]);
    let first = t.first_child(parent).ok().flatten();
    let first = first.unwrap_or_else(|| panic!("no first child"));
    assert_eq!(t.name_bytes(first), b"First");
    assert_eq!(text(&t, first), "1");
    // Only a handful of elements exist: the rest was not built.
    assert!(t.len() < 10, "tree has {} elements", t.len());
    // Moving past SaleList skips its 20 MB without building it, then meets the bad tail.
    let sale = t
        .next_sibling(first)
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no SaleList"));
    assert_eq!(t.name_bytes(sale), b"SaleList");
    match t.next_sibling(sale) {
        Err(TreeError::Parse {
            offset, message, ..
        }) => {
            assert_eq!(offset as usize, xml.len() - 8);
            assert!(
                message.contains("</Wrong> does not match start tag <Last>"),
                "{message}"
            );
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(t.len() < 10, "tree has {} elements", t.len());
}

#[test]
fn navigation_into_a_skipped_subtree_still_builds_it() {
    let xml = big_doc(3, "<Last>Test</Last></Parent>");
    let (mut t, id) = attach(&xml, XmlnscOptions::default());
    let last = at(&mut t, id, &["Parent", "Last"]);
    assert_eq!(text(&t, last), "Test");
    let code = at(
        &mut t,
        id,
        &["Parent", "SaleList", "Invoice", "Item", "Code"],
    );
    assert_eq!(text(&t, code), "0");
    let sale = at(&mut t, id, &["Parent", "SaleList"]);
    assert_eq!(t.child_count(sale).ok(), Some(3));
    let surname = t.path(sale, &["Invoice"]).ok().flatten();
    assert!(surname.is_some());
}

#[test]
fn lazy_and_complete_parses_build_the_same_tree() {
    let xml = r#"<?xml version="1.0"?><r xmlns="urn:d" xmlns:p="urn:p"><a p:x="1"><b>t</b><c><d/></c></a><p:e>v</p:e></r>"#;
    let (mut full, fid) = parse(xml);
    let (mut lazy, lid) = attach(xml, XmlnscOptions::default());
    // Navigate a little first, in an odd order, then dump everything.
    let _ = at(&mut lazy, lid, &["r", "a", "c", "d"]);
    let _ = at(&mut lazy, lid, &["r", "e"]);
    assert_eq!(dump(&mut lazy, lid), dump(&mut full, fid));
}

#[test]
fn change_in_a_lazily_parsed_message_copies_the_untouched_rest() {
    let xml = big_doc(50, "<Last>Test</Last></Parent>");
    let (mut t, id) = attach(&xml, XmlnscOptions::default());
    let first = at(&mut t, id, &["Parent", "First"]);
    t.set_str(first, "2");
    let out = ser(&mut t, id);
    assert_eq!(out, xml.replacen("<First>1</First>", "<First>2</First>", 1));
    // SaleList was copied, never built.
    let sale = t
        .path(id, &["Parent", "SaleList"])
        .ok()
        .flatten()
        .unwrap_or(id);
    assert!(t.is_pending(sale));
}

#[test]
fn copied_subtree_resolves_prefixes_declared_above_it() {
    let xml = r#"<s:Envelope xmlns:s="urn:soap" xmlns:t="urn:t"><s:Body><t:Req a="1"><t:V>x</t:V></t:Req></s:Body></s:Envelope>"#;
    let (mut src, sid) = attach(xml, XmlnscOptions::default());
    let body = at(&mut src, sid, &["Envelope", "Body"]);
    // Copy the still unparsed Body into another message.
    let mut out_tree = Tree::new("Root");
    let root = out_tree.root();
    let dom = out_tree
        .create_last_child(
            root,
            sluice_tree::field_type::NAME,
            Text::from_static("XMLNSC"),
            sluice_tree::Value::Null,
        )
        .unwrap_or(root);
    let copy = out_tree.copy_from(&src, body, dom, Position::LastChild);
    let copy = copy.unwrap_or_else(|e| panic!("copy failed: {e}"));
    let req = at(&mut out_tree, copy, &["Req"]);
    assert_eq!(out_tree.namespace_bytes(req), b"urn:t");
    let v = at(&mut out_tree, copy, &["Req", "V"]);
    assert_eq!(out_tree.namespace_bytes(v), b"urn:t");
    // Its bytes rely on declarations it does not carry, so it is rewritten with its own.
    let out = ser(&mut out_tree, dom);
    assert_eq!(
        out,
        r#"<NS1:Body xmlns:NS1="urn:soap"><NS2:Req xmlns:NS2="urn:t" a="1"><NS2:V>x</NS2:V></NS2:Req></NS1:Body>"#
    );
}

#[test]
fn element_renamed_before_parsing_is_still_parsed() {
    let xml = "<r><a><b>1</b></a><c>2</c></r>";
    let (mut t, id) = attach(xml, XmlnscOptions::default());
    let a = at(&mut t, id, &["r", "a"]);
    t.set_name(a, Text::from_static("z"));
    let b = at(&mut t, a, &["b"]);
    assert_eq!(text(&t, b), "1");
    assert_eq!(ser(&mut t, id), "<r><z><b>1</b></z><c>2</c></r>");
}

#[test]
fn small_folder_that_navigation_moves_past_is_built_the_same_as_a_complete_parse() {
    let xml = r#"<r xmlns:p="urn:p"><a p:x="1"><b>t&amp;u</b><c><d/></c></a><p:e>v</p:e></r>"#;
    let (mut lazy, lid) = attach(xml, XmlnscOptions::default());
    let e = at(&mut lazy, lid, &["r", "e"]);
    assert_eq!(text(&lazy, e), "v");
    // `a` was built on the way to `e` rather than skipped: nothing under it is pending.
    let a = lazy
        .path(lid, &["r"])
        .ok()
        .flatten()
        .and_then(|r| lazy.peek_first_child(r))
        .unwrap_or_else(|| panic!("no a"));
    assert!(!lazy.is_pending(a));
    let (mut full, fid) = parse(xml);
    assert_eq!(dump(&mut lazy, lid), dump(&mut full, fid));
    // Untouched, it is still written as the bytes it came in.
    assert_eq!(ser(&mut lazy, lid), xml);
}

#[test]
fn large_folder_that_navigation_moves_past_is_skipped_not_built() {
    let xml = big_doc(400, "<Last>Test</Last></Parent>");
    let (mut t, id) = attach(&xml, XmlnscOptions::default());
    let last = at(&mut t, id, &["Parent", "Last"]);
    assert_eq!(text(&t, last), "Test");
    let sale = at(&mut t, id, &["Parent", "SaleList"]);
    assert!(t.is_pending(sale));
    assert!(t.peek_first_child(sale).is_none());
}

#[test]
fn error_in_a_small_folder_moved_past_surfaces_only_when_navigation_enters_it() {
    // Skipping does not decode references; building would. Moving past `a` must still work
    // and the bad reference must be reported when `a` is entered, as before.
    let xml = "<r><a><b>&bad;</b></a><c>1</c></r>";
    let (mut t, id) = attach(xml, XmlnscOptions::default());
    let c = at(&mut t, id, &["r", "c"]);
    assert_eq!(text(&t, c), "1");
    let a = t
        .path(id, &["r", "a"])
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("no a"));
    assert!(t.is_pending(a));
    assert!(t.first_child(a).is_err());
}

#[test]
fn namespaces_declared_by_a_folder_built_in_passing_stay_inside_it() {
    // `a` is built while the step that met it goes on to `c`: its default namespace and
    // prefix must not reach `c`, whose `p:` prefix is therefore undeclared.
    let xml = r#"<r><a xmlns="urn:a" xmlns:p="urn:p"><b/></a><c/><d/></r>"#;
    let (mut lazy, lid) = attach(xml, XmlnscOptions::default());
    let c = at(&mut lazy, lid, &["r", "c"]);
    assert!(lazy.namespace_bytes(c).is_empty());
    let (mut full, fid) = parse(xml);
    assert_eq!(dump(&mut lazy, lid), dump(&mut full, fid));
    let bad = r#"<r><a xmlns:p="urn:p"><b/></a><p:c/></r>"#;
    let (mut t, id) = attach(bad, XmlnscOptions::default());
    let a = at(&mut t, id, &["r", "a"]);
    assert!(t.next_sibling(a).is_err());
}
