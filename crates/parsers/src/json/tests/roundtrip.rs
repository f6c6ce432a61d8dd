//! Random JSON documents: parse, serialise unchanged (same bytes) and rebuilt (same value).

use proptest::prelude::*;
use serde_json::Value as J;

use super::{load, touch_all, write};
use proptest::test_runner::TestCaseError;

fn leaf() -> impl Strategy<Value = J> {
    prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        any::<u64>().prop_map(J::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(J::from),
        ".*".prop_map(J::String),
        "[\"\\\\/\\x00-\\x1f\u{80}-\u{10ffff}a-z]{0,8}".prop_map(J::String),
    ]
}

fn value() -> impl Strategy<Value = J> {
    leaf().prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(J::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..8)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = J> {
    prop_oneof![
        prop::collection::vec(value(), 0..6).prop_map(J::Array),
        prop::collection::btree_map(".{0,6}", value(), 0..6)
            .prop_map(|m| J::Object(m.into_iter().collect())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_documents_round_trip(doc in document(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&doc).unwrap()
        } else {
            serde_json::to_string(&doc).unwrap()
        };
        // Unchanged: fully parsed, serialised to the same bytes.
        let (mut tree, json, parser) = load(text.as_bytes());
        tree.expand_all(json).unwrap();
        prop_assert_eq!(&write(&mut tree, json, &parser), &text);
        // Rebuilt element by element: the same JSON value.
        touch_all(&mut tree, json);
        let rebuilt = write(&mut tree, json, &parser);
        let back: J = serde_json::from_str(&rebuilt).unwrap();
        prop_assert_eq!(&back, &doc, "rebuilt: {}", rebuilt);
        // Navigated lazily and then serialised: the same bytes.
        let (mut tree, json, parser) = load(text.as_bytes());
        let data = tree.first_child(json).unwrap().unwrap();
        if let Some(first) = tree.first_child(data).unwrap() {
            tree.first_child(first).unwrap();
        }
        prop_assert_eq!(&write(&mut tree, json, &parser), &text);
    }
}

/// Walk depth first by navigation (parsing on demand) until the end or the first error.
fn walk_lazily(tree: &mut sluice_tree::Tree, json: sluice_tree::NodeId) {
    let mut at = Some(json);
    while let Some(n) = at {
        at = match tree.first_child(n) {
            Err(_) => return,
            Ok(Some(c)) => Some(c),
            Ok(None) => {
                let mut up = Some(n);
                let mut next = None;
                while let Some(u) = up {
                    if u == json {
                        break;
                    }
                    match tree.next_sibling(u) {
                        Err(_) => return,
                        Ok(Some(s)) => {
                            next = Some(s);
                            break;
                        }
                        Ok(None) => up = tree.parent(u),
                    }
                }
                next
            }
        };
    }
}

/// `-0` with no fraction is the INTEGER 0 in the tree, as in the product, while serde_json
/// keeps it as the float -0.0; the two are the same JSON number.
fn without_negative_zero(v: J) -> J {
    match v {
        J::Number(n) if n.as_f64() == Some(0.0) => J::from(0),
        J::Array(items) => J::Array(items.into_iter().map(without_negative_zero).collect()),
        J::Object(fields) => J::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, without_negative_zero(v)))
                .collect(),
        ),
        other => other,
    }
}

/// The checks of the fuzz target `json_parse`, on one input.
fn check_arbitrary(data: &[u8]) -> Result<(), TestCaseError> {
    let (mut tree, json, parser) = load(data);
    walk_lazily(&mut tree, json);
    let _ = crate::json::to_bytes(&mut tree, json, &parser);
    let (mut tree, json, parser) = load(data);
    if tree.expand_all(json).is_err() {
        // serde_json must reject it too, or it is a top-level scalar, which the product rejects.
        if let Ok(v) = serde_json::from_slice::<J>(data) {
            prop_assert!(!v.is_object() && !v.is_array(), "rejected valid JSON");
        }
        return Ok(());
    }
    let same = crate::json::to_bytes(&mut tree, json, &parser).unwrap();
    prop_assert_eq!(&same, &data);
    touch_all(&mut tree, json);
    let rebuilt = crate::json::to_bytes(&mut tree, json, &parser).unwrap();
    if !rebuilt.is_empty() {
        let a: J =
            serde_json::from_slice(data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data)).unwrap();
        let b: J = serde_json::from_slice(&rebuilt).unwrap();
        prop_assert_eq!(without_negative_zero(a), without_negative_zero(b));
    }
    let (mut again, json2, _) = load(&rebuilt);
    again.expand_all(json2).unwrap();
    touch_all(&mut again, json2);
    let twice = crate::json::to_bytes(&mut again, json2, &parser).unwrap();
    prop_assert_eq!(rebuilt, twice);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_json_like_bytes_never_panic_and_round_trip(
        data in prop::collection::vec(
            prop_oneof![
                prop::sample::select(b"{}[],:\"\\ \n-+.0123456789eEtrufalsn/bu".to_vec()),
                any::<u8>(),
            ],
            0..48,
        )
    ) {
        check_arbitrary(&data)?;
    }

    #[test]
    fn mutated_documents_never_panic_and_round_trip(
        doc in document(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut data = serde_json::to_vec(&doc).unwrap();
        let i = cut.index(data.len());
        data[i] = byte;
        check_arbitrary(&data)?;
    }
}

proptest! {
    #[test]
    fn fast_float_path_agrees_with_the_standard_parser(
        mantissa in 0u64..1_000_000_000_000_000,
        point in 0usize..17,
        exp in prop::option::of(-30i32..30),
        neg in any::<bool>(),
    ) {
        let digits = mantissa.to_string();
        let mut text = String::new();
        if neg {
            text.push('-');
        }
        if point > 0 && point < digits.len() {
            text.push_str(&digits[..digits.len() - point]);
            text.push('.');
            text.push_str(&digits[digits.len() - point..]);
        } else {
            text.push_str(&digits);
            text.push_str(".0");
        }
        if let Some(e) = exp {
            text.push_str(&format!("e{e}"));
        }
        let expected: f64 = text.parse().unwrap();
        if let Some(got) = crate::json::scan::fast_float(text.as_bytes()) {
            prop_assert_eq!(got.to_bits(), expected.to_bits(), "{}", text);
        }
    }
}
