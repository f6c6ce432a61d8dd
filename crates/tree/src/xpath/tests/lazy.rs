//! On-demand parsing: expressions parse only as much of the message as they need.

use std::sync::atomic::Ordering;

use crate::xpath::tests::lazy_message;
use crate::xpath::tree_api::{Message, NodeId, TreeError};
use crate::xpath::{XPath, XPathContext, XPathError, XValue};

/// A message whose `SaleList` is large, between `First` and `Last`.
fn big_message() -> String {
    let mut xml = String::from("<Parent><First>1</First><SaleList>");
    for i in 0..500 {
        xml.push_str(&format!("<Invoice id='{i}'><Amount>{i}</Amount></Invoice>"));
    }
    xml.push_str("</SaleList><Last>Test</Last></Parent>");
    xml
}

fn element(m: &mut Message, names: &[&str]) -> NodeId {
    let r = m.root.root();
    m.root.path(r, names).expect("navigates").expect("exists")
}

#[test]
fn first_field_test_parses_only_up_to_first() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("$Body/Parent/First = '1'").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    assert!(x.evaluate_bool(&mut cx).expect("evaluates"));
    // XMLNSC built Parent; Parent built First; nothing else.
    assert_eq!(parser.expands.load(Ordering::Relaxed), 2);
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 2);
    let parent = element(&mut m, &["XMLNSC", "Parent"]);
    assert!(m.root.is_pending(parent));
}

#[test]
fn numeric_comparison_and_first_string_stop_at_first() {
    for e in [
        "$Body/Parent/First = 1",
        "string($Body/Parent/First) = '1'",
        "boolean($Body/Parent/First)",
    ] {
        let (mut m, parser) = lazy_message(&big_message());
        let x = XPath::compile(e).expect("compiles");
        let mut cx = XPathContext::without_environment(&mut m);
        assert!(x.evaluate_bool(&mut cx).expect("evaluates"), "{e}");
        assert_eq!(parser.pushed.load(Ordering::Relaxed), 2, "{e}");
    }
}

#[test]
fn first_position_predicates_return_a_node_set_without_reading_further() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("$Body/Parent[1]/First[1]").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    let XValue::NodeSet(ns) = x.evaluate(&mut cx).expect("evaluates") else {
        panic!("node-set")
    };
    assert_eq!(ns.len(), 1);
    assert_eq!(cx.string_value(ns[0]).expect("value"), "1");
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 2);
}

#[test]
fn whole_node_set_reads_the_level_but_not_inside_siblings() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("$Body/Parent/First").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    let XValue::NodeSet(ns) = x.evaluate(&mut cx).expect("evaluates") else {
        panic!("node-set")
    };
    assert_eq!(ns.len(), 1);
    // Parent, First, SaleList, Last: the invoices stay unparsed.
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 4);
    let list = element(&mut m, &["XMLNSC", "Parent", "SaleList"]);
    assert!(m.root.is_pending(list));
}

#[test]
fn last_field_test_skips_the_content_of_earlier_siblings() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("$Body/Parent/Last = 'Test'").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    assert!(x.evaluate_bool(&mut cx).expect("evaluates"));
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 4);
}

#[test]
fn count_and_descendants_parse_what_they_cover() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("count($Body//Amount)").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    assert_eq!(
        x.evaluate(&mut cx).expect("evaluates"),
        XValue::Number(500.0)
    );
    // Parent, First, SaleList, Last, 500 invoices with an attribute and an amount each.
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 4 + 500 * 3);
}

#[test]
fn attribute_lookup_stops_at_the_first_content_child() {
    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("$Body/Parent/SaleList/Invoice[1]/@id = '0'").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    assert!(x.evaluate_bool(&mut cx).expect("evaluates"));
    // Parent, First, SaleList, the first invoice with its attribute.
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 5);

    let (mut m, parser) = lazy_message(&big_message());
    let x = XPath::compile("not($Body/Parent/SaleList/Invoice[1]/@kind)").expect("compiles");
    let mut cx = XPathContext::without_environment(&mut m);
    assert!(x.evaluate_bool(&mut cx).expect("evaluates"));
    // A missing attribute is known at the first content child (Amount), as the parser writes
    // attributes first; the invoices after the first stay unparsed. The search then goes on to
    // other SaleList elements, which builds Last.
    assert_eq!(parser.pushed.load(Ordering::Relaxed), 7);
}

#[test]
fn parse_errors_surface_only_when_navigation_reaches_them() {
    let xml = "<Parent><First>1</First><Bad x=1>v</Bad><Last>z</Last></Parent>";
    let (mut m, _) = lazy_message(xml);
    let mut cx = XPathContext::without_environment(&mut m);
    let ok = XPath::compile("$Body/Parent/First = '1'").expect("compiles");
    assert!(
        ok.evaluate_bool(&mut cx)
            .expect("the bad part is never reached")
    );
    let bad = XPath::compile("$Body/Parent/Last = 'z'").expect("compiles");
    match bad.evaluate_bool(&mut cx) {
        Err(XPathError::Tree(TreeError::Parse { domain, offset, .. })) => {
            assert_eq!(domain, "TOYXML");
            assert_eq!(offset, 29);
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}
