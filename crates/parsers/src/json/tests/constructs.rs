//! The tree the parser builds for each JSON construct, as the product's JSON domain shapes it.

use sluice_tree::{Tree, Value};

use super::parsed;
use crate::json::field_type::{ARRAY, NAME_VALUE, OBJECT};

fn text(tree: &Tree, v: Value) -> String {
    match v {
        Value::Character(t) | Value::Decimal(t) => tree.str(t).into_owned(),
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn object_members_become_name_value_elements_under_data() {
    let (mut tree, json, _) = parsed(
        r#"{"name":"John Doe","age":-1,"known":false,"address":{"street":null,"city":"unknown"},"belongings":["this","that"]}"#,
    );
    assert_eq!(tree.name_bytes(json), b"JSON");
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    assert_eq!(tree.field_type(data), OBJECT);
    let name = tree.path(data, &["name"]).unwrap().unwrap();
    assert_eq!(tree.field_type(name), NAME_VALUE);
    assert_eq!(text(&tree, tree.value(name)), "John Doe");
    let age = tree.path(data, &["age"]).unwrap().unwrap();
    assert_eq!(tree.value(age), Value::Integer(-1));
    let known = tree.path(data, &["known"]).unwrap().unwrap();
    assert_eq!(tree.value(known), Value::Boolean(false));
    let address = tree.path(data, &["address"]).unwrap().unwrap();
    assert_eq!(tree.field_type(address), OBJECT);
    let street = tree.path(address, &["street"]).unwrap().unwrap();
    assert_eq!(tree.field_type(street), NAME_VALUE);
    assert_eq!(tree.value(street), Value::Null);
    let belongings = tree.path(data, &["belongings"]).unwrap().unwrap();
    assert_eq!(tree.field_type(belongings), ARRAY);
    let items = tree.children(belongings).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(tree.name_bytes(items[0]), b"Item");
    assert_eq!(tree.field_type(items[1]), NAME_VALUE);
    assert_eq!(text(&tree, tree.value(items[1])), "that");
}

#[test]
fn top_level_array_makes_data_an_array_of_items() {
    let (mut tree, json, _) = parsed(r#"[1, [2], {"a": 3}]"#);
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    assert_eq!(tree.field_type(data), ARRAY);
    let items = tree.children(data).unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(tree.value(items[0]), Value::Integer(1));
    assert_eq!(tree.field_type(items[1]), ARRAY);
    assert_eq!(tree.field_type(items[2]), OBJECT);
    assert!(items.iter().all(|&i| tree.name_bytes(i) == b"Item"));
}

#[test]
fn numbers_parse_as_integer_float_or_decimal() {
    let (mut tree, json, _) = parsed(
        r#"{"i":0,"n":-9223372036854775808,"f":1.5,"e":2E3,"z":-0.0,"big":123456789012345678901234}"#,
    );
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    let v = |tree: &mut Tree, n: &str| {
        let id = tree.path(data, &[n]).unwrap().unwrap();
        tree.value(id)
    };
    assert_eq!(v(&mut tree, "i"), Value::Integer(0));
    assert_eq!(v(&mut tree, "n"), Value::Integer(i64::MIN));
    assert_eq!(v(&mut tree, "f"), Value::Float(1.5));
    assert_eq!(v(&mut tree, "e"), Value::Float(2000.0));
    assert_eq!(v(&mut tree, "z"), Value::Float(-0.0));
    let big = v(&mut tree, "big");
    assert!(matches!(big, Value::Decimal(_)));
    assert_eq!(text(&tree, big), "123456789012345678901234");
}

#[test]
fn strings_without_escapes_borrow_the_message_bytes() {
    let (mut tree, json, _) = parsed(r#"{"plain":"abc","esc":"a\"b"}"#);
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    let plain = tree.path(data, &["plain"]).unwrap().unwrap();
    assert!(matches!(
        tree.value(plain),
        Value::Character(t) if t.as_src().is_some()
    ));
    assert!(tree.name(plain).as_src().is_some());
    let esc = tree.path(data, &["esc"]).unwrap().unwrap();
    assert!(matches!(
        tree.value(esc),
        Value::Character(t) if t.is_heap()
    ));
    assert_eq!(text(&tree, tree.value(esc)), "a\"b");
}

#[test]
fn escapes_decode_including_surrogate_pairs() {
    let (mut tree, json, _) =
        parsed(r#"{"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00","k\u0031":1}"#);
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    let s = tree.path(data, &["s"]).unwrap().unwrap();
    assert_eq!(text(&tree, tree.value(s)), "\"\\/\u{8}\u{c}\n\r\tAé€😀");
    assert!(tree.path(data, &["k1"]).unwrap().is_some());
}

#[test]
fn repeated_member_names_are_kept_in_order() {
    let (mut tree, json, _) = parsed(r#"{"a":1,"a":2,"b":3,"a":4}"#);
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    let second = tree.child_named(data, None, b"a", 2).unwrap().unwrap();
    assert_eq!(tree.value(second), Value::Integer(4));
    assert_eq!(tree.child_count(data).unwrap(), 4);
}

#[test]
fn empty_containers_and_white_space_parse() {
    let (mut tree, json, _) = parsed(" \r\n\t{ \"o\" : { } , \"a\" : [ ] , \"s\" : \"\" }\n ");
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    let o = tree.path(data, &["o"]).unwrap().unwrap();
    assert_eq!(tree.child_count(o).unwrap(), 0);
    let a = tree.path(data, &["a"]).unwrap().unwrap();
    assert_eq!(tree.field_type(a), ARRAY);
    assert_eq!(tree.child_count(a).unwrap(), 0);
    let s = tree.path(data, &["s"]).unwrap().unwrap();
    assert_eq!(tree.value_bytes(s), Some(&b""[..]));
}

#[test]
fn empty_message_gives_an_empty_json_element() {
    let (mut tree, json, _) = parsed("  ");
    assert_eq!(tree.child_count(json).unwrap(), 0);
}

#[test]
fn byte_order_mark_is_skipped() {
    let (mut tree, json, parser) = super::load(b"\xEF\xBB\xBF{\"a\":1}");
    tree.expand_all(json).unwrap();
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    assert_eq!(tree.value(a), Value::Integer(1));
    let out = crate::json::to_bytes(&mut tree, json, &parser).unwrap();
    assert_eq!(out, b"\xEF\xBB\xBF{\"a\":1}");
}

#[test]
fn spans_cover_each_value() {
    let (mut tree, json, _) = parsed(r#"{"a": {"b": [1, "x"]}, "c": true}"#);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    assert_eq!(tree.original(a), Some(&br#"{"b": [1, "x"]}"#[..]));
    let c = tree.path(json, &["Data", "c"]).unwrap().unwrap();
    assert_eq!(tree.original(c), Some(&b"true"[..]));
    // Containers read as having no namespace.
    assert_eq!(tree.namespace_bytes(a), b"");
}

#[test]
fn parse_complete_builds_the_same_tree_as_expand_all() {
    let text = r#"{"a":[1,{"b":[true,null]},"c"],"d":{"e":{}}}"#;
    let (mut full, json, _) = parsed(text);
    let (mut fast, json2, _) = super::load(text.as_bytes());
    crate::json::parse_complete(&mut fast, json2).unwrap();
    assert!(!fast.is_pending(json2));
    assert_eq!(format!("{fast:?}"), format!("{full:?}"));
    assert!(!format!("{fast:?}").contains('…'));
    // After some navigation it still parses everything.
    let (mut lazy, json3, _) = super::load(text.as_bytes());
    let b = lazy.path(json3, &["Data", "a"]).unwrap().unwrap();
    lazy.first_child(b).unwrap();
    crate::json::parse_complete(&mut lazy, json3).unwrap();
    assert_eq!(format!("{lazy:?}"), format!("{full:?}"));
    full.expand_all(json).unwrap();
}
