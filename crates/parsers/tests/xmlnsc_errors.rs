//! Malformed XML and limits: each is a parse error naming the byte offset and the cause.

mod common;

use common::*;
use sluice_parsers::xmlnsc::{Limits, XmlnscOptions};
use sluice_tree::TreeError;

fn err(xml: &[u8]) -> (u64, String) {
    err_with(xml, XmlnscOptions::default())
}

fn err_with(xml: &[u8], options: XmlnscOptions) -> (u64, String) {
    let (mut t, id) = attach_bytes(xml.to_vec(), options);
    match t.expand_all(id) {
        Err(TreeError::Parse {
            domain,
            offset,
            message,
        }) => {
            assert_eq!(domain, "XMLNSC");
            (offset, message)
        }
        other => panic!(
            "expected a parse error for {:?}, got {other:?}",
            String::from_utf8_lossy(xml)
        ),
    }
}

fn assert_err(xml: &str, offset: u64, needle: &str) {
    let (o, m) = err(xml.as_bytes());
    assert_eq!(o, offset, "offset for {xml:?} ({m})");
    assert!(
        m.contains(needle),
        "message {m:?} for {xml:?} lacks {needle:?}"
    );
}

#[test]
fn unclosed_tag_reports_end_of_document() {
    assert_err("<a><b>x</b>", 11, "<a> is not closed");
}

#[test]
fn mismatched_end_tag_reports_its_offset() {
    assert_err("<a><b>x</c></a>", 7, "does not match");
    assert_err(
        "<a><b><c/></x></a>",
        10,
        "</x> does not match start tag <b>",
    );
}

#[test]
fn bad_attribute_syntax_is_rejected() {
    assert_err("<a x=1/>", 5, "quoted attribute value");
    assert_err("<a x='1'y='2'/>", 8, "white space before an attribute");
    assert_err("<a x='1' x='2'/>", 9, "duplicate attribute");
    assert_err("<a x='<'/>", 6, "'<' in an attribute value");
    assert_err("<a x></a>", 4, "expected '='");
}

#[test]
fn invalid_utf8_is_rejected() {
    let (o, m) = err(b"<a><b>ok\xff</b></a>");
    assert_eq!(o, 8);
    assert!(m.contains("UTF-8"));
}

#[test]
fn junk_after_root_and_second_root_are_rejected() {
    assert_err("<a/>junk", 4, "content after the root element");
    assert_err("<a/><b/>", 4, "a second root element");
    assert_err("  text<a/>", 0, "text before the root element");
}

#[test]
fn whitespace_only_body_has_no_root() {
    assert_err("  \n", 3, "no root element");
}

#[test]
fn undefined_entities_and_bad_references_are_rejected() {
    assert_err("<a>x &nbsp; y</a>", 5, "undefined entity");
    assert_err("<a>x & y</a>", 5, "'&' not followed");
    assert_err("<a v='&#xD800;'/>", 6, "invalid character reference");
}

#[test]
fn undeclared_prefix_is_rejected() {
    assert_err("<a><p:b/></a>", 3, "prefix 'p' is not declared");
    assert_err("<a p:x='1'/>", 3, "prefix 'p' is not declared");
}

#[test]
fn doctype_with_entities_is_refused() {
    assert_err(
        "<!DOCTYPE a [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><a>&lol2;</a>",
        0,
        "DOCTYPE declares entities",
    );
    assert_err(
        "<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a>&xxe;</a>",
        43,
        "undefined entity",
    );
}

#[test]
fn unterminated_constructs_are_rejected() {
    assert_err("<a><!-- x </a>", 3, "unterminated comment");
    assert_err("<a><![CDATA[ x </a>", 3, "unterminated CDATA");
    assert_err("<a><?pi x </a>", 3, "unterminated processing instruction");
}

#[test]
fn misplaced_xml_declaration_is_rejected() {
    assert_err(
        "<a/><?xml version='1.0'?>",
        4,
        "XML declaration not at the start",
    );
}

#[test]
fn utf16_is_refused() {
    let (o, m) = err(b"\xFF\xFE<\x00a\x00/\x00>\x00");
    assert_eq!(o, 0);
    assert!(m.contains("UTF-16"));
}

#[test]
fn depth_limit_is_enforced() {
    let opts = XmlnscOptions {
        limits: Limits {
            max_depth: 3,
            ..Default::default()
        },
        ..Default::default()
    };
    let (o, m) = err_with(b"<a><b><c><d>x</d></c></b></a>", opts.clone());
    assert_eq!(o, 9);
    assert!(m.contains("limit of 3"), "{m}");
    assert!(try_parse(b"<a><b><c>x</c></b></a>").is_ok());
    // Deep documents within the default limit parse.
    let deep = format!("{}{}", "<a>".repeat(900), "</a>".repeat(900));
    assert!(try_parse(deep.as_bytes()).is_ok());
    let too_deep = format!("{}{}", "<a>".repeat(1100), "</a>".repeat(1100));
    let (o, m) = err(too_deep.as_bytes());
    assert_eq!(o, 3000);
    assert!(m.contains("limit of 1000"));
}

#[test]
fn attribute_limit_is_enforced() {
    let opts = XmlnscOptions {
        limits: Limits {
            max_attributes: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let (o, m) = err_with(b"<a x='1' y='2' z='3'/>", opts);
    assert_eq!(o, 15);
    assert!(m.contains("more than 2 attributes"));
}

#[test]
fn size_limit_is_enforced() {
    let opts = XmlnscOptions {
        limits: Limits {
            max_size_bytes: 10,
            ..Default::default()
        },
        ..Default::default()
    };
    let (_, m) = err_with(b"<a>0123456789</a>", opts);
    assert!(m.contains("larger than the limit of 10 bytes"));
}

#[test]
fn entity_limit_is_enforced() {
    let opts = XmlnscOptions {
        limits: Limits {
            max_entity_expansion: 3,
            ..Default::default()
        },
        ..Default::default()
    };
    let (o, m) = err_with(b"<a>&amp;&amp;&amp;&amp;</a>", opts);
    assert_eq!(o, 18);
    assert!(m.contains("more than 3 entity references"));
}

#[test]
fn errors_repeat_on_later_navigation() {
    let (mut t, id) = attach("<a><b>1</b><c>2</d></a>", XmlnscOptions::default());
    assert!(t.expand_all(id).is_err());
    assert!(t.expand_all(id).is_err());
}

#[test]
fn failed_subtree_is_not_skipped_later() {
    // Build the root lazily, fail inside a child with a complete parse, then ask the parent
    // to move on: the earlier failure is reported again, not skipped over.
    let xml = "<r><a><b>&bad;</b></a><c>1</c></r>";
    let (mut t, id) = attach(xml, XmlnscOptions::default());
    let a = at(&mut t, id, &["r", "a"]);
    assert!(t.expand_all(a).is_err());
    assert!(t.next_sibling(a).is_err());
}
