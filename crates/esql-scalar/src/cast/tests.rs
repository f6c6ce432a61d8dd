use super::*;

fn s(x: &str) -> Value {
    Value::from_text(x)
}

fn to_text(v: &Value) -> String {
    match cast(v, DataType::Character).unwrap() {
        Value::Character(c) => c.to_string(),
        other => panic!("CHARACTER expected, got {other:?}"),
    }
}

fn dec(x: &str) -> Value {
    Value::Decimal(Decimal::parse(x).unwrap())
}

#[test]
fn float_to_character_matches_the_broker() {
    for (f, text) in [
        (0.48, "4.8E-1"),
        (0.8, "8E-1"),
        (129.408, "1.29408E+2"),
        (35.744, "3.5744E+1"),
        (57.92, "5.792E+1"),
        (1.0, "1E+0"),
        (0.0, "0E+0"),
    ] {
        assert_eq!(to_text(&Value::Float(f)), text);
    }
}

#[test]
fn scalar_types_print_as_the_reference_shows() {
    assert_eq!(to_text(&Value::Integer(-42)), "-42");
    assert_eq!(to_text(&Value::Boolean(true)), "TRUE");
    assert_eq!(to_text(&Value::Boolean(false)), "FALSE");
    assert_eq!(
        to_text(&cast(&s("00.30"), DataType::Decimal(None)).unwrap()),
        "0.30"
    );
    assert_eq!(to_text(&Value::from_bytes(vec![0x0a, 0x1b])), "X'0a1b'");
    assert_eq!(
        to_text(&Value::Bit(BitString::parse("0101").unwrap())),
        "B'0101'"
    );
    let d = Value::Date(Date::new(2024, 1, 31).unwrap());
    assert_eq!(to_text(&d), "DATE '2024-01-31'");
    let t = Value::Time(Time::parse("12:34:56.5").unwrap());
    assert_eq!(to_text(&t), "TIME '12:34:56.5'");
    let g = Value::GmtTimestamp(Timestamp::parse("2024-01-31 01:02:03").unwrap());
    assert_eq!(to_text(&g), "GMTTIMESTAMP '2024-01-31 01:02:03'");
    let iv = Value::Interval(Interval::parse("1-02", IntervalQualifier::YearToMonth).unwrap());
    assert_eq!(to_text(&iv), "INTERVAL '1-02' YEAR TO MONTH");
}

#[test]
fn format_gives_the_plain_form() {
    let d = Value::Date(Date::new(2024, 1, 31).unwrap());
    let out = cast_with(&d, DataType::Character, &CastOptions::format("dd MMM yyyy")).unwrap();
    assert_eq!(out, s("31 Jan 2024"));
    let n = cast_with(
        &dec("1234.5"),
        DataType::Character,
        &CastOptions::format("#,##0.00"),
    )
    .unwrap();
    assert_eq!(n, s("1,234.50"));
    let back = cast_with(
        &s("1,234.50"),
        DataType::Decimal(None),
        &CastOptions::format("#,##0.00"),
    )
    .unwrap();
    assert_eq!(back, dec("1234.5"));
    let date = cast_with(
        &s("31/01/2024"),
        DataType::Date,
        &CastOptions::format("dd/MM/yyyy"),
    )
    .unwrap();
    assert_eq!(date, d);
}

#[test]
fn character_parses_literals_and_plain_forms() {
    assert_eq!(
        cast(&s(" 42 "), DataType::Integer).unwrap(),
        Value::Integer(42)
    );
    assert_eq!(
        cast(&s("-0x10"), DataType::Integer).unwrap(),
        Value::Integer(-16)
    );
    assert_eq!(
        cast(&s("1.5E2"), DataType::Float).unwrap(),
        Value::Float(150.0)
    );
    assert_eq!(
        cast(&s("true"), DataType::Boolean).unwrap(),
        Value::Boolean(true)
    );
    assert_eq!(cast(&s("UNKNOWN"), DataType::Boolean).unwrap(), Value::Null);
    assert_eq!(
        cast(&s("X'0a1b'"), DataType::Blob).unwrap(),
        Value::from_bytes(vec![0x0a, 0x1b])
    );
    assert_eq!(
        cast(&s("0a1b"), DataType::Blob).unwrap(),
        Value::from_bytes(vec![0x0a, 0x1b])
    );
    assert_eq!(
        cast(&s("B'101'"), DataType::Bit).unwrap(),
        Value::Bit(BitString::parse("101").unwrap())
    );
    let d = Value::Date(Date::new(2024, 1, 31).unwrap());
    assert_eq!(cast(&s("DATE '2024-01-31'"), DataType::Date).unwrap(), d);
    assert_eq!(cast(&s("2024-01-31"), DataType::Date).unwrap(), d);
    let ts = cast(
        &s("TIMESTAMP '2024-01-31 10:11:12.345'"),
        DataType::Timestamp,
    )
    .unwrap();
    assert_eq!(to_text(&ts), "TIMESTAMP '2024-01-31 10:11:12.345'");
    let iv = cast(&s("INTERVAL '2 10' DAY TO HOUR"), DataType::Interval(None)).unwrap();
    assert_eq!(to_text(&iv), "INTERVAL '2 10' DAY TO HOUR");
    let bare = cast(
        &s("90"),
        DataType::Interval(Some(IntervalQualifier::Minute)),
    )
    .unwrap();
    assert_eq!(to_text(&bare), "INTERVAL '90' MINUTE");
}

#[test]
fn bad_text_is_a_cast_failure() {
    let err = cast(&s("abc"), DataType::Integer).unwrap_err();
    assert_eq!(err.to_string(), "Cannot cast 'abc' to INTEGER");
    assert_eq!(err.sqlstate(), "22018");
    assert!(cast(&s("1.5"), DataType::Integer).is_err());
    assert!(cast(&s("inf"), DataType::Float).is_err());
    assert!(cast(&s("NaN"), DataType::Float).is_err());
    assert!(cast(&s("99999999999999999999"), DataType::Integer).is_err());
    assert!(cast(&s("2024-02-30"), DataType::Date).is_err());
    assert!(cast(&s("X'0a1'"), DataType::Blob).is_err());
    assert!(cast(&s("maybe"), DataType::Boolean).is_err());
}

#[test]
fn default_replaces_a_failed_cast() {
    let opts = CastOptions {
        default: Some(Value::Integer(-1)),
        ..CastOptions::default()
    };
    assert_eq!(
        cast_with(&s("abc"), DataType::Integer, &opts).unwrap(),
        Value::Integer(-1)
    );
    assert_eq!(
        cast_with(&s("7"), DataType::Integer, &opts).unwrap(),
        Value::Integer(7)
    );
    assert_eq!(
        cast_with(&Value::Null, DataType::Integer, &opts).unwrap(),
        Value::Null
    );
}

#[test]
fn numeric_casts_round_or_truncate_as_documented() {
    assert_eq!(
        cast(&Value::Float(2.9), DataType::Integer).unwrap(),
        Value::Integer(2)
    );
    assert_eq!(
        cast(&Value::Float(-2.9), DataType::Integer).unwrap(),
        Value::Integer(-2)
    );
    assert!(cast(&Value::Float(1e30), DataType::Integer).is_err());
    assert_eq!(
        cast(&dec("2.5"), DataType::Integer).unwrap(),
        Value::Integer(3)
    );
    assert_eq!(
        cast(&Value::Float(0.1 + 0.2), DataType::Decimal(None)).unwrap(),
        dec("0.3")
    );
    assert_eq!(
        cast(&Value::Integer(3), DataType::Float).unwrap(),
        Value::Float(3.0)
    );
    let shaped = cast(&dec("123.456"), DataType::Decimal(Some((5, 2)))).unwrap();
    assert_eq!(to_text(&shaped), "123.46");
    assert_eq!(
        to_text(&cast(&Value::Integer(5), DataType::Decimal(Some((4, 2)))).unwrap()),
        "5.00"
    );
    assert!(cast(&dec("12345.6"), DataType::Decimal(Some((5, 2)))).is_err());
}

#[test]
fn ccsid_converts_character_and_blob() {
    let latin = cast_with(&s("café"), DataType::Blob, &CastOptions::ccsid(819)).unwrap();
    assert_eq!(latin, Value::from_bytes(vec![0x63, 0x61, 0x66, 0xE9]));
    let back = cast_with(&latin, DataType::Character, &CastOptions::ccsid(819)).unwrap();
    assert_eq!(back, s("café"));
    let utf8 = cast_with(&s("café"), DataType::Blob, &CastOptions::ccsid(1208)).unwrap();
    assert_eq!(utf8, Value::from_bytes("café".as_bytes().to_vec()));
    let be = CastOptions {
        ccsid: Some(1200),
        encoding: Some(785),
        ..CastOptions::default()
    };
    assert_eq!(
        cast_with(&s("A"), DataType::Blob, &be).unwrap(),
        Value::from_bytes(vec![0u8, 0x41])
    );
    assert!(cast_with(&s("a"), DataType::Blob, &CastOptions::ccsid(4242)).is_err());
}

#[test]
fn binary_casts_between_bit_blob_and_integer() {
    let blob = Value::from_bytes(vec![0x01, 0x00]);
    assert_eq!(cast(&blob, DataType::Integer).unwrap(), Value::Integer(256));
    assert_eq!(
        cast(&blob, DataType::Bit).unwrap(),
        Value::Bit(BitString::parse("0000000100000000").unwrap())
    );
    let odd = Value::Bit(BitString::parse("101").unwrap());
    assert!(cast(&odd, DataType::Blob).is_err());
    assert_eq!(cast(&odd, DataType::Integer).unwrap(), Value::Integer(5));
    assert_eq!(
        cast(&Value::Integer(1), DataType::Blob).unwrap(),
        Value::from_bytes(vec![0u8, 0, 0, 0, 0, 0, 0, 1])
    );
}

#[test]
fn datetime_casts_between_kinds() {
    let ts = Value::Timestamp(Timestamp::parse("2024-01-31 10:11:12").unwrap());
    assert_eq!(
        cast(&ts, DataType::Date).unwrap(),
        Value::Date(Date::new(2024, 1, 31).unwrap())
    );
    assert_eq!(
        cast(&ts, DataType::Time).unwrap(),
        Value::Time(Time::parse("10:11:12").unwrap())
    );
    let d = Value::Date(Date::new(2024, 1, 31).unwrap());
    assert_eq!(
        cast(&d, DataType::Timestamp).unwrap(),
        Value::Timestamp(Timestamp::parse("2024-01-31 00:00:00").unwrap())
    );
    assert!(matches!(
        cast(&ts, DataType::GmtTimestamp).unwrap(),
        Value::GmtTimestamp(_)
    ));
}

#[test]
fn intervals_cast_to_and_from_numbers() {
    let v = cast(
        &Value::Integer(90),
        DataType::Interval(Some(IntervalQualifier::Minute)),
    )
    .unwrap();
    assert_eq!(cast(&v, DataType::Integer).unwrap(), Value::Integer(90));
    let hm = cast(
        &v,
        DataType::Interval(Some(IntervalQualifier::HourToMinute)),
    )
    .unwrap();
    assert_eq!(to_text(&hm), "INTERVAL '1:30' HOUR TO MINUTE");
    assert!(cast(&hm, DataType::Integer).is_err());
    assert!(cast(&v, DataType::Interval(Some(IntervalQualifier::Year))).is_err());
}

#[test]
fn unsupported_pairs_are_reported() {
    let err = cast(&Value::Boolean(true), DataType::Integer).unwrap_err();
    assert!(matches!(err, ScalarError::UnsupportedCast { .. }));
    assert!(cast(&Value::Integer(1), DataType::Date).is_err());
    assert!(cast(&Value::Date(Date::MIN), DataType::Float).is_err());
}
