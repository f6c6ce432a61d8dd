//! Serialising changed and flow-built trees.

use sluice_tree::field_type::{NAME, NAME_VALUE, VALUE};
use sluice_tree::{NodeId, Text, Tree, TreeError, Value};

use super::{load, parsed, write};
use crate::json::JsonParser;
use crate::json::field_type::ARRAY;

/// An output tree with an empty `JSON.Data` object, as ESQL would create it.
fn output() -> (Tree, NodeId, NodeId) {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let json = tree
        .create_last_child(root, NAME, Text::from_static("JSON"), Value::Null)
        .unwrap();
    let data = tree
        .create_last_child(json, NAME, Text::from_static("Data"), Value::Null)
        .unwrap();
    (tree, json, data)
}

fn field(tree: &mut Tree, parent: NodeId, name: &'static str, v: Value) -> NodeId {
    tree.create_last_child(parent, NAME_VALUE, Text::from_static(name), v)
        .unwrap()
}

#[test]
fn flow_built_folders_and_fields_become_objects_and_members() {
    let (mut tree, json, data) = output();
    field(&mut tree, data, "Message", Value::Null);
    let m = tree.path(data, &["Message"]).unwrap().unwrap();
    tree.set_str(m, "Hello World");
    let folder = tree
        .create_last_child(data, NAME, Text::from_static("Folder"), Value::Null)
        .unwrap();
    field(&mut tree, folder, "x", Value::Integer(1));
    field(&mut tree, folder, "x", Value::Integer(2));
    tree.create_last_child(data, NAME, Text::from_static("Empty"), Value::Null)
        .unwrap();
    field(&mut tree, data, "Nothing", Value::Null);
    assert_eq!(
        write(&mut tree, json, &JsonParser::new()),
        r#"{"Message":"Hello World","Folder":{"x":1,"x":2},"Empty":{},"Nothing":null}"#
    );
}

#[test]
fn array_elements_write_their_items_without_names() {
    let (mut tree, json, data) = output();
    let arr = tree
        .create_last_child(data, ARRAY, Text::from_static("list"), Value::Null)
        .unwrap();
    field(&mut tree, arr, "Item", Value::Integer(1));
    let t = tree.alloc_text(b"two");
    field(&mut tree, arr, "Other", Value::Character(t));
    let obj = tree
        .create_last_child(arr, NAME, Text::from_static("Item"), Value::Null)
        .unwrap();
    field(&mut tree, obj, "k", Value::Boolean(true));
    tree.create_last_child(arr, ARRAY, Text::from_static("Item"), Value::Null)
        .unwrap();
    tree.create_last_child(arr, VALUE, Text::EMPTY, Value::Float(0.25))
        .unwrap();
    assert_eq!(
        write(&mut tree, json, &JsonParser::new()),
        r#"{"list":[1,"two",{"k":true},[],2.5E-1]}"#
    );
}

#[test]
fn every_value_type_is_written() {
    let (mut tree, json, data) = output();
    let s = tree.alloc_text("q\"b\\s/\n\r\t\u{8}\u{c}\u{1}é😀".as_bytes());
    field(&mut tree, data, "char", Value::Character(s));
    field(&mut tree, data, "int", Value::Integer(-42));
    field(&mut tree, data, "float", Value::Float(1.5));
    field(&mut tree, data, "big", Value::Float(1e300));
    field(&mut tree, data, "small", Value::Float(-2.5e-7));
    let d = tree.alloc_text(b"-12.50");
    field(&mut tree, data, "dec", Value::Decimal(d));
    field(&mut tree, data, "bool", Value::Boolean(true));
    let b = tree.alloc_text(&[0x00, 0xAB, 0x1F]);
    field(&mut tree, data, "blob", Value::Blob(b));
    let bits = tree.alloc_text(b"0101");
    field(&mut tree, data, "bit", Value::Bit(bits));
    field(&mut tree, data, "date", Value::Date(19_723));
    field(&mut tree, data, "time", Value::Time(45_296_000_007));
    field(
        &mut tree,
        data,
        "ts",
        Value::GmtTimestamp(1_704_164_696_123_456),
    );
    field(&mut tree, data, "before", Value::Timestamp(-1));
    field(
        &mut tree,
        data,
        "interval",
        Value::Interval {
            months: 14,
            micros: 93_784_000_005,
            qualifier: sluice_tree::IntervalQualifier::Year,
        },
    );
    let out = write(&mut tree, json, &JsonParser::new());
    assert_eq!(
        out,
        concat!(
            r#"{"char":"q\"b\\s/\n\r\t\b\f\u0001é😀","int":-42,"float":1.5E+0,"big":1.0E+300,"#,
            r#""small":-2.5E-7,"dec":-12.50,"bool":true,"blob":"00AB1F","bit":"0101","#,
            r#""date":"2024-01-01","time":"12:34:56.000007","ts":"2024-01-02T03:04:56.123456Z","#,
            r#""before":"1969-12-31T23:59:59.999999","interval":"P1Y2M1DT2H3M4.000005S"}"#
        )
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["char"], "q\"b\\s/\n\r\t\u{8}\u{c}\u{1}é😀");
    assert_eq!(v["float"], 1.5);
}

#[test]
fn values_json_cannot_hold_are_errors() {
    let (mut tree, json, data) = output();
    field(&mut tree, data, "nan", Value::Float(f64::NAN));
    let err = crate::json::to_bytes(&mut tree, json, &JsonParser::new()).unwrap_err();
    assert!(matches!(err, TreeError::Serialize { domain: "JSON", .. }));
    let (mut tree, json, data) = output();
    let d = tree.alloc_text(b"INF");
    field(&mut tree, data, "dec", Value::Decimal(d));
    assert!(crate::json::to_bytes(&mut tree, json, &JsonParser::new()).is_err());
}

#[test]
fn data_holding_a_value_is_written_as_that_value() {
    for (v, expected) in [
        (Value::Integer(3), "3"),
        (Value::Boolean(true), "true"),
        (Value::Null, "null"),
    ] {
        let mut tree = Tree::new("Root");
        let root = tree.root();
        let json = tree
            .create_last_child(root, NAME, Text::from_static("JSON"), Value::Null)
            .unwrap();
        field(&mut tree, json, "Data", v);
        assert_eq!(write(&mut tree, json, &JsonParser::new()), expected);
    }
}

#[test]
fn top_level_scalars_parse_into_data_and_write_back() {
    for text in [
        r#""abc""#,
        "12",
        "-1.5e3",
        "true",
        "false",
        "null",
        r#" "a\nb" "#,
    ] {
        let (mut tree, json, parser) = parsed(text);
        let data = tree.path(json, &["Data"]).unwrap().unwrap();
        assert_eq!(tree.field_type(data), NAME_VALUE, "{text}");
        assert_eq!(write(&mut tree, json, &parser), text, "{text}");
        super::touch_all(&mut tree, json);
        let rebuilt = write(&mut tree, json, &parser);
        let again: serde_json::Value = serde_json::from_str(&rebuilt).unwrap();
        let first: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, first, "{text} rebuilt as {rebuilt}");
    }
}

#[test]
fn json_without_data_writes_nothing() {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let json = tree
        .create_last_child(root, NAME, Text::from_static("JSON"), Value::Null)
        .unwrap();
    assert_eq!(write(&mut tree, json, &JsonParser::new()), "");
}

#[test]
fn padding_wraps_the_output_for_jsonp() {
    let (mut tree, json, data) = output();
    field(&mut tree, data, "a", Value::Integer(1));
    let p = tree.alloc_text(b"scriptFn");
    tree.create_first_child(
        json,
        NAME_VALUE,
        Text::from_static("Padding"),
        Value::Character(p),
    )
    .unwrap();
    assert_eq!(
        write(&mut tree, json, &JsonParser::new()),
        r#"scriptFn({"a":1})"#
    );
}

#[test]
fn changed_message_copies_its_unchanged_parts() {
    let (mut tree, json, parser) = load(br#"{ "a" : 1.50, "b" : [1, 2], "c": {"d" : "e"} }"#);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    tree.set_value(a, Value::Integer(7));
    assert_eq!(
        write(&mut tree, json, &parser),
        r#"{"a":7,"b":[1, 2],"c":{"d" : "e"}}"#
    );
    let d = tree.path(json, &["Data", "c", "d"]).unwrap().unwrap();
    tree.delete(d).unwrap();
    let b = tree.path(json, &["Data", "b"]).unwrap().unwrap();
    field(&mut tree, b, "Item", Value::Null);
    assert_eq!(
        write(&mut tree, json, &parser),
        r#"{"a":7,"b":[1,2,null],"c":{}}"#
    );
}

#[test]
fn unchanged_values_keep_their_text_when_a_sibling_changes() {
    let (mut tree, json, parser) = parsed(r#"{"f":1.50,"g":1e3,"h":"\u0041"}"#);
    let data = tree.path(json, &["Data"]).unwrap().unwrap();
    field(&mut tree, data, "i", Value::Float(1000.0));
    assert_eq!(
        write(&mut tree, json, &parser),
        r#"{"f":1.50,"g":1e3,"h":"\u0041","i":1.0E+3}"#
    );
}

#[test]
fn renamed_members_are_written_with_the_new_name() {
    let (mut tree, json, parser) = parsed(r#"{"a":{"x":1}}"#);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    let t = tree.alloc_text(b"new \"name\"");
    tree.set_name(a, t);
    assert_eq!(
        write(&mut tree, json, &parser),
        r#"{"new \"name\"":{"x":1}}"#
    );
}
