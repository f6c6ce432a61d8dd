//! Malformed messages fail with the byte offset and the cause.

use sluice_tree::TreeError;

use super::{load, load_with};
use crate::json::JsonOptions;

fn error_of(text: &[u8]) -> (u64, String) {
    let (mut tree, json, _) = load(text);
    match tree.expand_all(json) {
        Err(TreeError::Parse {
            domain,
            offset,
            message,
        }) => {
            assert_eq!(domain, "JSON");
            (offset, message)
        }
        other => panic!(
            "expected a parse error for {:?}, got {other:?}",
            String::from_utf8_lossy(text)
        ),
    }
}

fn assert_error(text: &str, offset: u64, cause: &str) {
    let (o, m) = error_of(text.as_bytes());
    assert!(m.contains(cause), "{text:?}: message {m:?} lacks {cause:?}");
    assert_eq!(o, offset, "{text:?}: {m}");
}

#[test]
fn unexpected_tokens_are_reported_where_they_are() {
    assert_error(r#"{"a" 1}"#, 5, "expected ':'");
    assert_error(r#"{"a":1 "b":2}"#, 7, "expected ',' or '}'");
    assert_error(r#"[1,]"#, 3, "expected a value");
    assert_error(r#"{"a":1,}"#, 7, "expected a member name string");
    assert_error(r#"{a:1}"#, 1, "expected a member name string");
    assert_error(r#"{"a":tru}"#, 5, "expected a value");
    assert_error(r#"[1 2]"#, 3, "expected ',' or ']'");
}

#[test]
fn unterminated_input_is_reported() {
    assert_error(r#"{"a":"abc"#, 5, "unterminated string");
    assert_error(r#"{"a":[1,2"#, 9, "unexpected end of data");
    assert_error(r#"{"a":"#, 5, "unexpected end of data");
    assert_error(r#"{"#, 1, "unexpected end of data");
}

#[test]
fn top_level_scalar_errors_are_reported() {
    assert_error(r#"  "text" x"#, 9, "trailing data");
    assert_error("tru", 0, "");
    assert_error("42 43", 3, "trailing data");
}

#[test]
fn trailing_data_is_reported() {
    assert_error(r#"{"a":1} x"#, 8, "trailing data");
    assert_error(r#"[1]]"#, 3, "trailing data");
}

#[test]
fn bad_numbers_are_reported() {
    assert_error(r#"[01]"#, 1, "leading zero");
    assert_error(r#"[1.]"#, 3, "after '.'");
    assert_error(r#"[-]"#, 1, "expected a digit");
    assert_error(r#"[1e+]"#, 4, "exponent");
    assert_error(r#"[1e999]"#, 1, "out of the range");
    assert_error(r#"[+1]"#, 1, "expected a value");
}

#[test]
fn bad_escapes_and_strings_are_reported() {
    assert_error(r#"["a\x"]"#, 3, "unknown escape");
    assert_error(r#"["\u12G4"]"#, 2, "four hexadecimal digits");
    assert_error(r#"["\ud800"]"#, 2, "unpaired high surrogate");
    assert_error(r#"["\ud800\u0041"]"#, 2, "unpaired high surrogate");
    assert_error(r#"["\udc00"]"#, 2, "unpaired low surrogate");
    assert_error("[\"a\tb\"]", 3, "control character 0x09");
    let (o, m) = error_of(b"[\"a\xFFb\"]");
    assert_eq!(o, 3);
    assert!(m.contains("UTF-8"), "{m}");
}

#[test]
fn depth_limit_is_enforced_when_parsing_and_skipping() {
    let options = JsonOptions {
        max_depth: 3,
        ..JsonOptions::default()
    };
    let (mut tree, json, _) = load_with(b"[[[1]]]", options);
    tree.expand_all(json).unwrap();
    let (mut tree, json, _) = load_with(b"[[[[1]]]]", options);
    match tree.expand_all(json) {
        Err(TreeError::Parse {
            offset, message, ..
        }) => {
            assert_eq!(offset, 3);
            assert!(message.contains("limit of 3"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Skipping an unparsed member applies the same limit.
    let (mut tree, json, _) = load_with(br#"{"a":[[[1]]],"b":1}"#, options);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    match tree.next_sibling(a) {
        Err(TreeError::Parse { offset, .. }) => assert_eq!(offset, 7),
        other => panic!("{other:?}"),
    }
}

#[test]
fn deep_nesting_at_the_default_limit_does_not_overflow() {
    let mut m = "[".repeat(512);
    m.push_str(&"]".repeat(512));
    let (mut tree, json, parser) = load(m.as_bytes());
    tree.expand_all(json).unwrap();
    super::touch_all(&mut tree, json);
    assert_eq!(super::write(&mut tree, json, &parser), m);
    let deeper = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (o, m) = error_of(deeper.as_bytes());
    assert_eq!(o, 512);
    assert!(m.contains("limit of 512"));
}

#[test]
fn mismatched_brackets_fail_when_skipped() {
    let (mut tree, json, _) = load(br#"{"a":[1,2},"b":1}"#);
    let a = tree.path(json, &["Data", "a"]).unwrap().unwrap();
    match tree.next_sibling(a) {
        Err(TreeError::Parse {
            offset, message, ..
        }) => {
            assert_eq!(offset, 9);
            assert!(message.contains("mismatched"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn size_limit_is_enforced_at_attach() {
    let mut tree = sluice_tree::Tree::new("Root");
    let parser = std::sync::Arc::new(crate::json::JsonParser::with_options(JsonOptions {
        max_size: 4,
        ..JsonOptions::default()
    }));
    let root = tree.root();
    let err = crate::json::attach(
        &mut tree,
        root,
        bytes::Bytes::from_static(b"[1,2]"),
        &parser,
    )
    .unwrap_err();
    assert!(
        matches!(err, TreeError::Parse { ref message, .. } if message.contains("exceeds the limit"))
    );
}

#[test]
fn errors_repeat_on_retry_without_panicking() {
    let (mut tree, json, _) = load(br#"{"a":1,"b":[1,2,x]}"#);
    let first = tree.expand_all(json).unwrap_err();
    let second = tree.expand_all(json).unwrap_err();
    assert_eq!(first, second);
}
