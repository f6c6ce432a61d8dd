use super::*;

fn s(x: &str) -> Value {
    Value::from_text(x)
}

fn i(n: i64) -> Value {
    Value::Integer(n)
}

fn pos(search: &str, source: &str, from: Option<i64>, repeat: Option<i64>) -> i64 {
    let f = from.map(i);
    let r = repeat.map(i);
    match position(&s(search), &s(source), f.as_ref(), r.as_ref()).unwrap() {
        Value::Integer(n) => n,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn position_matches_reference_examples() {
    let abc = "ABCABCABCABCABC";
    assert_eq!(pos("Village", "Hursley Village", None, None), 9);
    assert_eq!(pos("Town", "Hursley Village", None, None), 0);
    assert_eq!(pos("B", abc, None, None), 2);
    assert_eq!(pos("D", abc, None, None), 0);
    assert_eq!(pos("A", abc, Some(4), None), 4);
    assert_eq!(pos("C", abc, Some(2), None), 3);
    assert_eq!(pos("B", abc, None, Some(2)), 5);
    assert_eq!(pos("C", abc, None, Some(4)), 12);
    assert_eq!(pos("", abc, None, None), 1);
}

#[test]
fn position_negative_repeat_searches_backwards() {
    let abc = "ABCABCABCABCABC";
    assert_eq!(pos("B", abc, None, Some(-1)), 14);
    assert_eq!(pos("CA", abc, None, Some(-1)), 12);
    assert_eq!(pos("BC", abc, None, Some(-3)), 8);
    assert_eq!(pos("A", abc, None, Some(-2)), 10);
    assert_eq!(pos("B", abc, Some(10), Some(-1)), 8);
    assert_eq!(pos("BC", abc, Some(10), Some(-3)), 2);
    assert_eq!(pos("BC", abc, Some(12), Some(-3)), 5);
    assert_eq!(pos("B", abc, None, Some(-9)), 0);
}

#[test]
fn position_returns_null_for_null() {
    assert_eq!(
        position(&Value::Null, &s("a"), None, None).unwrap(),
        Value::Null
    );
}

#[test]
fn substring_forms() {
    let hw = s("Hello World!");
    assert_eq!(substring(&hw, &i(7), Some(&i(4))).unwrap(), s("Worl"));
    assert_eq!(substring(&hw, &i(7), None).unwrap(), s("World!"));
    assert_eq!(substring(&hw, &i(0), Some(&i(3))).unwrap(), s("He"));
    assert_eq!(substring(&hw, &i(-5), Some(&i(3))).unwrap(), s(""));
    assert_eq!(substring(&hw, &i(20), Some(&i(3))).unwrap(), s(""));
    assert!(substring(&hw, &i(1), Some(&i(-1))).is_err());
    assert_eq!(
        substring_before(&hw, &s("World"), None).unwrap(),
        s("Hello ")
    );
    assert_eq!(
        substring_after(&hw, &s("Hello"), None).unwrap(),
        s(" World!")
    );
    assert_eq!(
        substring_before(&hw, &s("World"), Some(&i(3))).unwrap(),
        s("lo ")
    );
    assert_eq!(
        substring_after(&hw, &s("Hello"), Some(&i(3))).unwrap(),
        s(" Wo")
    );
    assert_eq!(substring_after(&hw, &s("xyz"), None).unwrap(), s(""));
    let blob = Value::from_bytes(vec![1u8, 2, 3, 4]);
    assert_eq!(
        substring(&blob, &i(2), Some(&i(2))).unwrap(),
        Value::from_bytes(vec![2u8, 3])
    );
}

#[test]
fn left_right_length() {
    assert_eq!(left(&s("Hello"), &i(3)).unwrap(), s("Hel"));
    assert_eq!(right(&s("Hello"), &i(3)).unwrap(), s("llo"));
    assert_eq!(left(&s("Hi"), &i(9)).unwrap(), s("Hi"));
    assert!(left(&s("Hi"), &i(-1)).is_err());
    assert_eq!(length(&s("Grüße")).unwrap(), i(5));
    assert_eq!(length(&Value::from_bytes(vec![0u8; 3])).unwrap(), i(3));
    assert_eq!(
        length(&Value::Bit(BitString::parse("101").unwrap())).unwrap(),
        i(3)
    );
    assert_eq!(length(&Value::Null).unwrap(), Value::Null);
    assert!(length(&i(5)).is_err());
}

#[test]
fn trim_matches_reference_examples() {
    assert_eq!(
        trim(TrimSpec::Trailing, Some(&s("b")), &s("aaabBb")).unwrap(),
        s("aaabB")
    );
    assert_eq!(trim(TrimSpec::Both, None, &s(" a ")).unwrap(), s("a"));
    assert_eq!(trim(TrimSpec::Leading, None, &s(" a ")).unwrap(), s("a "));
    assert_eq!(
        trim(TrimSpec::Both, Some(&s("b")), &s("bbbaaabbb")).unwrap(),
        s("aaa")
    );
    assert_eq!(
        trim(TrimSpec::Both, None, &Value::from_bytes(vec![0u8, 7, 0])).unwrap(),
        Value::from_bytes(vec![7u8])
    );
    assert!(trim(TrimSpec::Both, Some(&s("ab")), &s("abc")).is_err());
}

#[test]
fn case_functions() {
    assert_eq!(upper(&s("Straße")).unwrap(), s("STRASSE"));
    assert_eq!(lower(&s("ABC")).unwrap(), s("abc"));
    assert!(upper(&i(1)).is_err());
}

#[test]
fn replace_and_translate_match_reference_examples() {
    assert_eq!(
        replace(&s("ABCDABCDABCDA"), &s("A"), Some(&s("AA"))).unwrap(),
        s("AABCDAABCDAABCDAA")
    );
    assert_eq!(
        replace(&s("AAAABCDEFGHAAAABCDEFGH"), &s("AA"), Some(&s("A"))).unwrap(),
        s("AABCDEFGHAABCDEFGH")
    );
    assert_eq!(
        replace(&s("ABCDABCDABCDA"), &s("A"), None).unwrap(),
        s("BCDBCDBCD")
    );
    assert_eq!(
        translate(&s("Hello World!"), &s("dlo"), Some(&s("DLO"))).unwrap(),
        s("HeLLO WOrLD!")
    );
    assert_eq!(
        translate(&s("ABCDE"), &s("ABC"), Some(&s("A"))).unwrap(),
        s("ADE")
    );
    assert!(replace(&s("a"), &Value::from_bytes(vec![1u8]), None).is_err());
}

#[test]
fn overlay_matches_reference_example() {
    assert_eq!(
        overlay(&s("ABCDEFGHIJ"), &s("1234"), &i(4), Some(&i(3))).unwrap(),
        s("ABC1234GHIJ")
    );
    assert_eq!(
        overlay(&s("ABCDEFGHIJ"), &s("12"), &i(4), None).unwrap(),
        s("ABC12FGHIJ")
    );
    assert_eq!(
        overlay(&s("ABC"), &s("xy"), &i(9), None).unwrap(),
        s("ABCxy")
    );
}

#[test]
fn replicate_space_and_predicates() {
    assert_eq!(replicate(&s("ab"), &i(3)).unwrap(), s("ababab"));
    assert_eq!(space(&i(3)).unwrap(), s("   "));
    assert!(space(&i(-1)).is_err());
    assert!(replicate(&s("ab"), &i(i64::MAX)).is_err());
    assert_eq!(
        contains(&s("Hello"), &s("ell")).unwrap(),
        Value::Boolean(true)
    );
    assert_eq!(
        starts_with(&s("Hello"), &s("He")).unwrap(),
        Value::Boolean(true)
    );
    assert_eq!(
        ends_with(&s("Hello"), &s("He")).unwrap(),
        Value::Boolean(false)
    );
    assert_eq!(contains(&Value::Null, &s("x")).unwrap(), Value::Null);
}
