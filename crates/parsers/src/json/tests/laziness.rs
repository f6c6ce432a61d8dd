//! On-demand parsing: navigation builds only what it reaches.

use sluice_tree::{TreeError, Value};

use super::{load, write};

/// A large object whose first member is small and whose tail is malformed.
fn big_with_bad_tail() -> Vec<u8> {
    let mut m = br#"{"first":1,"rest":["#.to_vec();
    while m.len() < 20 * 1024 * 1024 {
        m.extend_from_slice(br#"{"k":"v\"]}","n":[1,2,3]},"#);
    }
    m.extend_from_slice(br#"{"k": oops}]}"#);
    m
}

#[test]
fn first_member_access_does_not_read_a_malformed_tail() {
    let msg = big_with_bad_tail();
    let (mut tree, json, _) = load(&msg);
    let data = tree.first_child(json).unwrap().unwrap();
    let first = tree.first_child(data).unwrap().unwrap();
    assert_eq!(tree.name_bytes(first), b"first");
    assert_eq!(tree.value(first), Value::Integer(1));
    // Only `first` was built, and the resume point is right after it.
    assert!(tree.is_pending(data));
    assert_eq!(tree.resume(data) as usize, br#"{"first":1"#.len());
    assert!(tree.len() <= 4);
    // The next member is pushed unparsed; its content is not read.
    let rest = tree.next_sibling(first).unwrap().unwrap();
    assert!(tree.is_pending(rest));
    assert!(tree.source(rest).is_none());
    let item = tree.first_child(rest).unwrap().unwrap();
    assert!(tree.is_pending(item));
    assert!(tree.len() <= 6);
}

#[test]
fn malformed_tail_fails_when_navigation_reaches_it() {
    let msg = big_with_bad_tail();
    let (mut tree, json, _) = load(&msg);
    let rest = tree.path(json, &["Data", "rest"]).unwrap().unwrap();
    let err = tree.child_count(rest).unwrap_err();
    let TreeError::Parse {
        domain,
        offset,
        message,
    } = err
    else {
        panic!("not a parse error: {err:?}")
    };
    assert_eq!(domain, "JSON");
    assert_eq!(offset as usize, msg.len() - b"oops}]}".len());
    assert!(message.contains("unexpected 'o'"), "{message}");
}

#[test]
fn skipping_unparsed_siblings_finds_the_next_member() {
    let msg = br#"{"a":{"s":"}]\"{[","t":[{"u":"]"}]},"b":2}"#;
    let (mut tree, json, parser) = load(msg);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    assert!(tree.is_pending(a));
    let b = tree.next_sibling(a).unwrap().unwrap();
    assert_eq!(tree.value(b), Value::Integer(2));
    // Skipping recorded a's bytes without building its children.
    assert!(tree.is_pending(a));
    assert_eq!(
        tree.original(a),
        Some(&br#"{"s":"}]\"{[","t":[{"u":"]"}]}"#[..])
    );
    assert_eq!(tree.peek_first_child(a), None);
    // The skipped member still parses when navigated into.
    let t = tree.path(a, &["t"]).unwrap().unwrap();
    let u = tree.path(t, &["Item", "u"]).unwrap().unwrap();
    assert_eq!(tree.value_bytes(u), Some(&b"]"[..]));
    assert_eq!(write(&mut tree, json, &parser).as_bytes(), msg);
}

#[test]
fn partly_parsed_message_serialises_to_the_same_bytes() {
    let msg = br#"{ "x" : [1, 2, {"y": null}], "z": "w" }"#;
    let (mut tree, json, parser) = load(msg);
    let x = tree.path(json, &["Data", "x"]).unwrap().unwrap();
    tree.first_child(x).unwrap();
    assert_eq!(write(&mut tree, json, &parser).as_bytes(), msg);
}

#[test]
fn copied_unparsed_subtree_parses_in_the_other_tree() {
    let (mut tree, json, parser) = load(br#"{"a":{"b":[true,{"c":"d"}]},"e":1}"#);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    assert!(tree.is_pending(a));
    let mut out = sluice_tree::Tree::new("Root");
    let root = out.root();
    let oj = out
        .create_last_child(
            root,
            sluice_tree::field_type::NAME,
            sluice_tree::Text::from_static("JSON"),
            Value::Null,
        )
        .unwrap();
    let od = out
        .create_last_child(
            oj,
            crate::json::field_type::OBJECT,
            sluice_tree::Text::from_static("Data"),
            Value::Null,
        )
        .unwrap();
    let copy = out
        .copy_from(&tree, a, od, sluice_tree::Position::LastChild)
        .unwrap();
    let c = out.path(copy, &["b"]).unwrap().unwrap();
    let items = out.children(c).unwrap();
    assert_eq!(out.value(items[0]), Value::Boolean(true));
    assert_eq!(
        write(&mut out, oj, &parser),
        r#"{"a":{"b":[true,{"c":"d"}]}}"#
    );
}
