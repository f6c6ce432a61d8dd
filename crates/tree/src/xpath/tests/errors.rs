//! Compile errors with positions, and no panics on any input.

use proptest::prelude::*;

use crate::xpath::tests::{SALE, message};
use crate::xpath::{XPath, XPathContext, XPathError};

fn compile_error(src: &str) -> (usize, String) {
    match XPath::compile(src) {
        Err(XPathError::Syntax { position, message }) => (position, message),
        other => panic!("{src}: expected a syntax error, got {other:?}"),
    }
}

#[test]
fn syntax_errors_name_the_character_and_the_cause() {
    let cases: &[(&str, usize, &str)] = &[
        ("$Body/Parent/", 13, "expected a name or node test"),
        ("count()", 0, "count() takes 1 argument"),
        ("substring('a')", 0, "takes 2 to 3"),
        ("foo(1)", 0, "unknown function `foo()`"),
        ("$Nope/a", 0, "unknown variable `$Nope`"),
        ("1 + ", 4, "expected an expression"),
        ("'abc", 0, "string literal is not closed"),
        ("a[1", 3, "expected `]`"),
        ("1 | $Body", 0, "operands of `|` must be node-sets"),
        ("$Body/x:y", 6, "namespace prefix `x` is not declared"),
        ("following::a", 0, "axis `following` is not supported"),
        ("a # b", 2, "unexpected character `#`"),
        ("count(1)", 6, "must be a node-set"),
        ("'a'/b", 0, "need a node-set"),
        ("a b", 2, "expected an operator"),
        ("(1))", 3, "unexpected `)`"),
        ("", 0, "expected an expression, found the end"),
    ];
    for (src, pos, msg) in cases {
        let (p, m) = compile_error(src);
        assert_eq!(p, *pos, "{src}: {m}");
        assert!(m.contains(msg), "{src}: {m:?} lacks {msg:?}");
    }
}

#[test]
fn error_display_counts_characters_from_one() {
    let e = XPath::compile("é + ").expect_err("incomplete");
    assert_eq!(
        e.to_string(),
        "XPath syntax error at character 5: expected an expression, found the end"
    );
}

#[test]
fn deep_nesting_is_rejected_without_exhausting_the_stack() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(matches!(
        XPath::compile(&deep),
        Err(XPathError::Syntax { .. })
    ));
    let long = vec!["1"; 3000].join(" + ");
    assert!(matches!(
        XPath::compile(&long),
        Err(XPathError::Syntax { .. })
    ));
    let minus = format!("{}1", "-".repeat(5000));
    assert!(matches!(
        XPath::compile(&minus),
        Err(XPathError::Syntax { .. })
    ));
    let steps = vec!["a"; 500].join("/");
    assert!(matches!(
        XPath::compile(&steps),
        Err(XPathError::Syntax { .. })
    ));
    let ok = vec!["1"; 50].join(" + ");
    assert!(XPath::compile(&ok).is_ok());
}

proptest! {
    #[test]
    fn compile_never_panics_on_arbitrary_text(src in ".{0,64}") {
        let _ = XPath::compile(&src);
    }

    #[test]
    fn compile_and_evaluate_never_panic_on_xpath_like_text(
        src in r#"([ $/@.*()\[\],|=<>!+\-:'"0-9]|Body|Parent|First|Invoice|@id|count|last|position|text|node|and|or|div|mod|::|child|self|ancestor|\.\.|//){0,24}"#
    ) {
        if let Ok(x) = XPath::compile(&src) {
            let mut m = message(SALE);
            let mut cx = XPathContext::without_environment(&mut m);
            let _ = x.evaluate(&mut cx);
            let _ = x.evaluate_bool(&mut cx);
        }
    }
}

#[test]
fn deepest_accepted_expressions_evaluate_on_a_test_thread() {
    let chain = vec!["$Body/Parent/First"; 95].join(" + ");
    let nested = format!("$Body/Parent{}[First]{}", "[*".repeat(28), "]".repeat(28));
    let mut m = message(SALE);
    let mut cx = XPathContext::without_environment(&mut m);
    let x = XPath::compile(&chain).expect("compiles");
    assert_eq!(x.evaluate_number(&mut cx).expect("evaluates"), 95.0);
    let x = XPath::compile(&nested).expect("compiles");
    assert!(!x.evaluate_bool(&mut cx).expect("evaluates"));
}

#[test]
fn nodes_from_another_message_are_refused() {
    let mut big = message(SALE);
    let x = XPath::compile("$Body//Amount[last()]").expect("compiles");
    let node = {
        let mut cx = XPathContext::without_environment(&mut big);
        match x.evaluate(&mut cx).expect("evaluates") {
            crate::xpath::XValue::NodeSet(ns) => ns[0],
            other => panic!("{other:?}"),
        }
    };
    let mut small = crate::xpath::tree_api::Message::new();
    let mut cx = XPathContext::without_environment(&mut small);
    assert_eq!(cx.string_value(node), Err(XPathError::StaleNode));
}

#[test]
fn longest_accepted_paths_walk_deep_trees_on_a_test_thread() {
    let xml = format!("{}x{}", "<a>".repeat(120), "</a>".repeat(120));
    let path = format!("$Body/{}", vec!["a"; 96].join("/"));
    let mut m = message(&xml);
    let mut cx = XPathContext::without_environment(&mut m);
    let x = XPath::compile(&format!("count({path}[a])")).expect("compiles");
    assert_eq!(x.evaluate_number(&mut cx).expect("evaluates"), 1.0);
    let x = XPath::compile(&format!("{path} = 'x'")).expect("compiles");
    assert!(x.evaluate_bool(&mut cx).expect("evaluates"));
}

#[test]
fn compiled_expressions_can_be_shared_between_flow_instances() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<XPath>();
}
