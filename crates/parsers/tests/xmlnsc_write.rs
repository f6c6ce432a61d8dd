//! Serialising XMLNSC trees: unchanged bytes copied, changed parts written from the tree.

mod common;

use common::*;
use sluice_parsers::xmlnsc::{self, XmlnscOptions, field_type as ft};
use sluice_tree::{Parser, Text, Tree, Value};

fn new_doc() -> (Tree, sluice_tree::NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let d = t
        .create_last_child(
            r,
            sluice_tree::field_type::NAME,
            Text::from_static("XMLNSC"),
            Value::Null,
        )
        .unwrap_or(r);
    (t, d)
}

fn child(
    t: &mut Tree,
    p: sluice_tree::NodeId,
    ty: u32,
    name: &'static str,
    v: Value,
) -> sluice_tree::NodeId {
    t.create_last_child(p, ty, Text::from_static(name), v)
        .unwrap_or(p)
}

#[test]
fn unchanged_message_is_written_byte_for_byte() {
    let xml =
        "<?xml version='1.0'?>\n<!-- c -->\n<a  x = \"1\" >\n <b>&amp;</b><![CDATA[x]]>\n</a>\n";
    let (mut t, id) = parse(xml);
    assert_eq!(ser(&mut t, id), xml);
    let p = xmlnsc::XmlnscParser::default();
    let mut out = Vec::new();
    assert!(p.serialize(&mut t, id, &mut out).is_ok());
    assert_eq!(out, xml.as_bytes());
}

#[test]
fn changed_element_is_rewritten_and_siblings_copied() {
    let xml = "<a><b  q='1'>x</b><c>&#65;</c></a>";
    let (mut t, id) = parse(xml);
    let b = at(&mut t, id, &["a", "b"]);
    t.set_str(b, "<&>");
    assert_eq!(
        ser(&mut t, id),
        "<a><b q='1'>&lt;&amp;&gt;</b><c>&#65;</c></a>"
    );
}

#[test]
fn values_of_every_type_are_written_as_text() {
    let (mut t, d) = new_doc();
    let r = child(&mut t, d, ft::FOLDER, "r", Value::Null);
    child(&mut t, r, ft::FIELD, "i", Value::Integer(42));
    child(&mut t, r, ft::FIELD, "f", Value::Float(0.48));
    child(&mut t, r, ft::FIELD, "b", Value::Boolean(false));
    let dec = t.alloc_text(b"12.50");
    child(&mut t, r, ft::FIELD, "d", Value::Decimal(dec));
    child(&mut t, r, ft::FIELD, "n", Value::Null);
    child(&mut t, r, ft::FIELD, "dt", Value::Date(0));
    let c = t.alloc_text(b"a]]>b");
    child(&mut t, r, ft::CDATA_FIELD, "c", Value::Character(c));
    let bl = t.alloc_text(&[1, 0xAB]);
    child(&mut t, r, ft::FIELD, "x", Value::Blob(bl));
    assert_eq!(
        ser(&mut t, d),
        "<r><i>42</i><f>4.8E-1</f><b>FALSE</b><d>12.50</d><n/><dt>1970-01-01</dt><c><![CDATA[a]]]]><![CDATA[>b]]></c><x>01AB</x></r>"
    );
}

#[test]
fn attributes_declarations_comments_pis_and_declaration_are_written() {
    let (mut t, d) = new_doc();
    let decl = child(
        &mut t,
        d,
        ft::XML_DECLARATION,
        "XmlDeclaration",
        Value::Null,
    );
    let v = t.alloc_text(b"1.0");
    child(&mut t, decl, ft::ATTRIBUTE, "Version", Value::Character(v));
    let e = t.alloc_text(b"UTF-8");
    child(&mut t, decl, ft::ATTRIBUTE, "Encoding", Value::Character(e));
    let r = child(&mut t, d, ft::FOLDER, "r", Value::Null);
    let q = t.alloc_text(b"a\"b'c");
    child(&mut t, r, ft::ATTRIBUTE, "dq", Value::Character(q));
    child(&mut t, r, ft::SINGLE_ATTRIBUTE, "sq", Value::Character(q));
    let cm = t.alloc_text(b" note ");
    child(&mut t, r, ft::COMMENT, "", Value::Character(cm));
    let pd = t.alloc_text(b"go");
    child(
        &mut t,
        r,
        ft::PROCESSING_INSTRUCTION,
        "app",
        Value::Character(pd),
    );
    let raw = t.alloc_text(b"<raw/>");
    child(&mut t, r, ft::BIT_STREAM, "bits", Value::Blob(raw));
    // An attribute created after content still goes in the start tag.
    child(&mut t, r, ft::ATTRIBUTE, "late", Value::Integer(1));
    assert_eq!(
        ser(&mut t, d),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><r dq=\"a&quot;b'c\" sq='a\"b&apos;c' late=\"1\"><!-- note --><?app go?><raw/></r>"
    );
}

#[test]
fn namespaces_reuse_declared_prefixes_and_generate_missing_ones() {
    let (mut t, d) = new_doc();
    let r = child(&mut t, d, ft::FOLDER, "r", Value::Null);
    t.set_namespace(r, Text::from_static("urn:a"));
    let u = t.alloc_text(b"urn:a");
    let decl = child(&mut t, r, ft::NAMESPACE_DECL, "a", Value::Character(u));
    t.set_namespace(decl, Text::from_static(xmlnsc::XMLNS_NS));
    let x = child(&mut t, r, ft::FIELD, "x", Value::Integer(1));
    t.set_namespace(x, Text::from_static("urn:a"));
    let y = child(&mut t, r, ft::FIELD, "y", Value::Integer(2));
    t.set_namespace(y, Text::from_static("urn:b"));
    let at_ = child(&mut t, y, ft::ATTRIBUTE, "k", Value::Integer(3));
    t.set_namespace(at_, Text::from_static("urn:c"));
    child(&mut t, r, ft::FIELD, "z", Value::Integer(4));
    assert_eq!(
        ser(&mut t, d),
        "<a:r xmlns:a=\"urn:a\"><a:x>1</a:x><NS1:y xmlns:NS1=\"urn:b\" xmlns:NS2=\"urn:c\" NS2:k=\"3\">2</NS1:y><z>4</z></a:r>"
    );
}

#[test]
fn default_namespace_is_undeclared_for_elements_in_no_namespace() {
    let xml = r#"<r xmlns="urn:d"><a>1</a></r>"#;
    let (mut t, id) = parse(xml);
    let r = at(&mut t, id, &["r"]);
    let n = t
        .create_last_child(r, ft::FIELD, Text::from_static("plain"), Value::Integer(5))
        .unwrap_or(r);
    let _ = n;
    assert_eq!(
        ser(&mut t, id),
        r#"<r xmlns="urn:d"><a>1</a><plain xmlns="">5</plain></r>"#
    );
}

#[test]
fn subtree_moved_under_a_default_namespace_is_not_copied_blindly() {
    // <b> has unprefixed children in no namespace; placed under a default namespace its
    // original bytes would change meaning, so it is rewritten.
    let src = "<x><b><c>1</c></b></x>";
    let (mut s, sid) = parse(src);
    let b = at(&mut s, sid, &["x", "b"]);
    let (mut t, id) = parse(r#"<r xmlns="urn:d"><a>1</a></r>"#);
    let r = at(&mut t, id, &["r"]);
    let copied = t.copy_from(&s, b, r, sluice_tree::Position::LastChild);
    assert!(copied.is_ok());
    assert_eq!(
        ser(&mut t, id),
        r#"<r xmlns="urn:d"><a>1</a><b xmlns=""><c>1</c></b></r>"#
    );
}

#[test]
fn element_with_outer_prefix_is_rewritten_when_its_parent_changes() {
    let xml = r#"<p:r xmlns:p="urn:p"><p:a>1</p:a><p:b>2</p:b></p:r>"#;
    let (mut t, id) = parse(xml);
    let a = at(&mut t, id, &["r", "a"]);
    t.set_str(a, "9");
    assert_eq!(
        ser(&mut t, id),
        r#"<p:r xmlns:p="urn:p"><p:a>9</p:a><p:b>2</p:b></p:r>"#
    );
}

#[test]
fn retained_mixed_content_round_trips_after_change() {
    let xml = "<a>one<b>x</b>two</a>";
    let opts = XmlnscOptions {
        retain_mixed: true,
        ..Default::default()
    };
    let (mut t, id) = parse_with(xml, opts);
    let b = at(&mut t, id, &["a", "b"]);
    t.set_str(b, "y");
    assert_eq!(ser(&mut t, id), "<a>one<b>y</b>two</a>");
}

#[test]
fn element_without_a_name_is_a_serialise_error() {
    let (mut t, d) = new_doc();
    child(&mut t, d, ft::FOLDER, "", Value::Null);
    let mut out = Vec::new();
    let r = xmlnsc::serialize_to(&mut t, d, &mut out);
    assert!(
        matches!(r, Err(sluice_tree::TreeError::Serialize { .. })),
        "{r:?}"
    );
}
