//! The tree the XMLNSC parser builds, construct by construct.

mod common;

use common::*;
use sluice_parsers::xmlnsc::{XmlnscOptions, field_type as ft};
use sluice_tree::{Text, Value};

#[test]
fn simple_elements_are_fields_and_complex_are_folders() {
    let (mut t, id) = parse("<a><b>x</b><c><d>y</d></c></a>");
    assert_eq!(
        dump(&mut t, id),
        "01000000 a\n  03000000 b = 'x'\n  01000000 c\n    03000000 d = 'y'\n"
    );
}

#[test]
fn empty_elements_have_empty_string_values() {
    let (mut t, id) = parse("<a><b/><c></c><d x='1'/></a>");
    assert_eq!(
        dump(&mut t, id),
        "01000000 a\n  03000000 b = ''\n  03000000 c = ''\n  03000000 d = ''\n    03000101 x = '1'\n"
    );
}

#[test]
fn attributes_come_before_content_in_source_order() {
    let (mut t, id) = parse(r#"<a z="1" y='2'><b>t</b></a>"#);
    assert_eq!(
        dump(&mut t, id),
        "01000000 a\n  03000100 z = '1'\n  03000101 y = '2'\n  03000000 b = 't'\n"
    );
}

#[test]
fn element_with_attributes_and_text_is_field_with_attribute_children() {
    let (mut t, id) = parse(r#"<a id="7">text</a>"#);
    assert_eq!(
        dump(&mut t, id),
        "03000000 a = 'text'\n  03000100 id = '7'\n"
    );
}

#[test]
fn namespaces_resolve_to_uris_and_declarations_are_children() {
    let (mut t, id) =
        parse(r#"<p:a xmlns:p="urn:p" xmlns="urn:d"><b p:at="v" plain="w">x</b></p:a>"#);
    assert_eq!(
        dump(&mut t, id),
        "01000000 {urn:p}a\n  03000103 {http://www.w3.org/2000/xmlns/}p = 'urn:p'\n  03000103 xmlns = 'urn:d'\n  03000000 {urn:d}b = 'x'\n    03000100 {urn:p}at = 'v'\n    03000100 plain = 'w'\n"
    );
}

#[test]
fn xml_prefix_is_predefined() {
    let (mut t, id) = parse(r#"<a xml:lang="en"/>"#);
    assert_eq!(
        dump(&mut t, id),
        "03000000 a = ''\n  03000100 {http://www.w3.org/XML/1998/namespace}lang = 'en'\n"
    );
}

#[test]
fn xml_declaration_is_a_folder_with_attributes() {
    let (mut t, id) = parse(r#"<?xml version="1.0" encoding="UTF-8" standalone='yes'?><a/>"#);
    assert_eq!(
        dump(&mut t, id),
        "01000400 XmlDeclaration\n  03000100 Version = '1.0'\n  03000100 Encoding = 'UTF-8'\n  03000100 StandAlone = 'yes'\n03000000 a = ''\n"
    );
}

#[test]
fn references_are_decoded_and_plain_text_borrows_the_source() {
    let (mut t, id) = parse("<a><b>plain</b><c>x &amp; &lt;y&gt; &#x41;&#66;</c></a>");
    let b = at(&mut t, id, &["a", "b"]);
    assert!(matches!(t.value(b), Value::Character(t) if t.as_src().is_some()));
    let c = at(&mut t, id, &["a", "c"]);
    assert!(matches!(t.value(c), Value::Character(t) if t.is_heap()));
    assert_eq!(text(&t, c), "x & <y> AB");
}

#[test]
fn cdata_only_element_is_cdata_field() {
    let (mut t, id) = parse("<a><b><![CDATA[<not> & markup]]></b><c>x<![CDATA[y]]></c></a>");
    let b = at(&mut t, id, &["a", "b"]);
    assert_eq!(t.field_type(b), ft::CDATA_FIELD);
    assert_eq!(text(&t, b), "<not> & markup");
    let c = at(&mut t, id, &["a", "c"]);
    assert_eq!(t.field_type(c), ft::FIELD);
    assert_eq!(text(&t, c), "xy");
}

#[test]
fn whitespace_between_elements_is_dropped_but_kept_in_fields() {
    let (mut t, id) = parse("<a>\n  <b>  </b>\n  <c>v</c>\n</a>");
    assert_eq!(
        dump(&mut t, id),
        "01000000 a\n  03000000 b = '  '\n  03000000 c = 'v'\n"
    );
}

#[test]
fn mixed_content_dropped_by_default_and_kept_with_retain_mixed() {
    let xml = "<a>one<b>x</b>two<![CDATA[three]]></a>";
    let (mut t, id) = parse(xml);
    assert_eq!(dump(&mut t, id), "01000000 a\n  03000000 b = 'x'\n");
    let opts = XmlnscOptions {
        retain_mixed: true,
        ..Default::default()
    };
    let (mut t, id) = parse_with(xml, opts);
    assert_eq!(
        dump(&mut t, id),
        "01000000 a\n  02000000  = 'one'\n  03000000 b = 'x'\n  02000000  = 'two'\n  02000001  = 'three'\n"
    );
}

#[test]
fn comments_and_pis_dropped_by_default_and_kept_when_asked() {
    let xml = "<!--top--><a><!-- c --><?pi data?><b>x<!--in-->y</b></a>";
    let (mut t, id) = parse(xml);
    assert_eq!(dump(&mut t, id), "01000000 a\n  03000000 b = 'xy'\n");
    let opts = XmlnscOptions {
        retain_comments: true,
        retain_pis: true,
        ..Default::default()
    };
    let (mut t, id) = parse_with(xml, opts);
    assert_eq!(
        dump(&mut t, id),
        "03000400  = 'top'\n01000000 a\n  03000400  = ' c '\n  03000401 pi = 'data'\n  01000000 b\n    03000400  = 'in'\n"
    );
}

#[test]
fn opaque_elements_keep_raw_bytes_by_name_and_path() {
    let xml = "<P><S><I>1</I><I>2</I></S><Q><S>n</S></Q></P>";
    let opts = XmlnscOptions {
        opaque_elements: vec!["/P/S".into()],
        ..Default::default()
    };
    let (mut t, id) = parse_with(xml, opts);
    assert_eq!(
        dump(&mut t, id),
        "01000000 P\n  03000500 S = X'<S><I>1</I><I>2</I></S>'\n  01000000 Q\n    03000000 S = 'n'\n"
    );
    let opts = XmlnscOptions {
        opaque_elements: vec!["S".into()],
        ..Default::default()
    };
    let (mut t, id) = parse_with(xml, opts);
    assert_eq!(
        dump(&mut t, id),
        "01000000 P\n  03000500 S = X'<S><I>1</I><I>2</I></S>'\n  01000000 Q\n    03000500 S = X'<S>n</S>'\n"
    );
    // Opaque elements are written back as they were, also when a sibling changed.
    let q = at(&mut t, id, &["P", "Q"]);
    t.set_name(q, Text::from_static("R"));
    assert_eq!(
        ser(&mut t, id),
        "<P><S><I>1</I><I>2</I></S><R><S>n</S></R></P>"
    );
}

#[test]
fn utf8_bom_is_skipped() {
    let mut x = vec![0xEF, 0xBB, 0xBF];
    x.extend_from_slice(b"<a>v</a>");
    let (mut t, id) = attach_bytes(x.clone(), XmlnscOptions::default());
    let a = at(&mut t, id, &["a"]);
    assert_eq!(text(&t, a), "v");
    assert_eq!(ser(&mut t, id).as_bytes(), &x[..]);
}

#[test]
fn empty_body_is_an_empty_domain_element() {
    let (mut t, id) = attach("", XmlnscOptions::default());
    assert_eq!(t.child_count(id).ok(), Some(0));
    assert_eq!(ser(&mut t, id), "");
}

#[test]
fn doctype_without_entities_is_skipped() {
    let (mut t, id) = parse("<!DOCTYPE a [<!ELEMENT a (#PCDATA)>]><a>v</a>");
    assert_eq!(dump(&mut t, id), "03000000 a = 'v'\n");
}

/// Whether anything under `id` is still waiting to be parsed.
fn any_pending(t: &sluice_tree::Tree, id: sluice_tree::NodeId) -> bool {
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        if t.is_pending(n) {
            return true;
        }
        let mut c = t.peek_first_child(n);
        while let Some(k) = c {
            stack.push(k);
            c = t.peek_next_sibling(k);
        }
    }
    false
}

#[test]
fn complete_parse_leaves_nothing_pending_after_lazy_steps_and_copies() {
    let xml = "<a><b><c>1</c><d><e>2</e></d></b><f><g>3</g></f></a>";
    let (mut t, id) = attach(xml, XmlnscOptions::default());
    // Parse a little lazily, leaving folders pending, and copy a pending folder elsewhere.
    let a = t.first_child(id).unwrap().unwrap();
    let b = t.first_child(a).unwrap().unwrap();
    assert!(any_pending(&t, id));
    let mut other = sluice_tree::Tree::new("Root");
    let root = other.root();
    let copy = other
        .copy_from(&t, b, root, sluice_tree::Position::LastChild)
        .unwrap();
    other.expand_all(copy).unwrap();
    assert!(!any_pending(&other, copy));
    assert_eq!(
        dump(&mut other, copy),
        "03000000 c = '1'\n01000000 d\n  03000000 e = '2'\n"
    );
    t.expand_all(id).unwrap();
    assert!(!any_pending(&t, id));
    assert_eq!(ser(&mut t, id), xml);
}

#[test]
fn on_demand_navigation_reports_an_error_only_when_it_reaches_it() {
    let (mut t, id) = attach(
        "<a><b>1</b><c>2</c><d>&nope;</d><e>4</e></a>",
        XmlnscOptions::default(),
    );
    let a = t.first_child(id).unwrap().unwrap();
    let b = t.first_child(a).unwrap().unwrap();
    assert_eq!(t.name_bytes(b), b"b");
    let c = t.next_sibling(b).unwrap().unwrap();
    assert_eq!(t.name_bytes(c), b"c");
    let err = t.next_sibling(c).unwrap_err().to_string();
    assert!(err.contains("nope"), "{err}");
}
