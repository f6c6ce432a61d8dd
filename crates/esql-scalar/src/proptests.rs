//! Property tests: CAST round trips and DECIMAL arithmetic against an exact
//! i128 reference.

use proptest::prelude::*;

use crate::cast::{CastOptions, cast, cast_with};
use crate::datetime::Date;
use crate::decimal::Decimal;
use crate::value::{DataType, Value};

fn text_of(v: &Value) -> String {
    match v {
        Value::Character(s) => s.to_string(),
        other => panic!("CHARACTER expected, got {other:?}"),
    }
}

/// A decimal given as coefficient and scale, small enough for i128 products.
fn small_decimal() -> impl Strategy<Value = (i64, u32)> {
    (-999_999_999_999_999i64..=999_999_999_999_999, 0u32..=8)
}

fn decimal_of(c: i64, scale: u32) -> Decimal {
    Decimal::from_parts(i128::from(c), -(scale as i32)).expect("small decimals fit")
}

/// The exact value `c × 10^-scale` rescaled to `target` fractional digits.
fn scaled(c: i64, scale: u32, target: u32) -> i128 {
    i128::from(c) * 10i128.pow(target - scale)
}

proptest! {
    #[test]
    fn decimal_to_float_is_the_nearest_double_of_its_text(
        c in any::<i64>(),
        e in -30i32..=30,
    ) {
        let d = Decimal::from_parts(i128::from(c), e).expect("i64 coefficients fit");
        let nearest: f64 = d.to_string().parse().expect("a decimal's text is a number");
        prop_assert_eq!(d.to_f64().to_bits(), nearest.to_bits(), "{}", d);
    }

    #[test]
    fn integer_round_trips_through_character(n in any::<i64>()) {
        let text = cast(&Value::Integer(n), DataType::Character).unwrap();
        prop_assert_eq!(cast(&text, DataType::Integer).unwrap(), Value::Integer(n));
    }

    #[test]
    fn decimal_round_trips_through_character((c, scale) in small_decimal()) {
        let d = Value::Decimal(decimal_of(c, scale));
        let text = cast(&d, DataType::Character).unwrap();
        let back = cast(&text, DataType::Decimal(None)).unwrap();
        // Same value and same digits (the scale survives).
        prop_assert_eq!(text_of(&cast(&back, DataType::Character).unwrap()), text_of(&text));
        prop_assert_eq!(back, d);
    }

    #[test]
    fn float_round_trips_through_character_to_15_digits(f in proptest::num::f64::NORMAL) {
        let text = cast(&Value::Float(f), DataType::Character).unwrap();
        let Value::Float(back) = cast(&text, DataType::Float).unwrap() else {
            panic!("FLOAT expected");
        };
        // Both print the same 15 significant digits.
        prop_assert_eq!(format!("{back:.14e}"), format!("{f:.14e}"));
        let relative = ((back - f) / f).abs();
        prop_assert!(relative < 1e-14, "{} vs {}", f, back);
    }

    #[test]
    fn date_round_trips_through_a_format(days in Date::MIN.to_days()..=Date::MAX.to_days(), which in 0usize..4) {
        let patterns = ["yyyy-MM-dd", "dd/MM/yyyy", "yyyyMMdd", "EEEE, d MMMM yyyy"];
        let opts = CastOptions::format(patterns[which]);
        let d = Value::Date(Date::from_days(days).unwrap());
        let text = cast_with(&d, DataType::Character, &opts).unwrap();
        prop_assert_eq!(cast_with(&text, DataType::Date, &opts).unwrap(), d);
    }

    #[test]
    fn decimal_add_matches_i128((a, sa) in small_decimal(), (b, sb) in small_decimal()) {
        let sum = decimal_of(a, sa).checked_add(decimal_of(b, sb)).unwrap();
        let s = sa.max(sb);
        let expected = scaled(a, sa, s) + scaled(b, sb, s);
        prop_assert_eq!(sum, Decimal::from_parts(expected, -(s as i32)).unwrap());
        prop_assert_eq!(sum.exponent(), -(s as i32));
    }

    #[test]
    fn decimal_multiply_matches_i128((a, sa) in small_decimal(), (b, sb) in small_decimal()) {
        let product = decimal_of(a, sa).checked_mul(decimal_of(b, sb)).unwrap();
        // At most 30 digits: exact in 34.
        let expected = i128::from(a) * i128::from(b);
        prop_assert_eq!(product.coefficient(), expected);
        prop_assert_eq!(product.exponent(), -((sa + sb) as i32));
    }

    #[test]
    fn casts_from_any_text_never_panic(text in ".{0,40}") {
        let v = Value::from_string(text);
        for target in ["INTEGER", "DECIMAL", "FLOAT", "BOOLEAN", "BLOB", "BIT", "DATE", "TIME", "TIMESTAMP", "INTERVAL DAY TO SECOND"] {
            let _ = cast(&v, DataType::parse(target).unwrap());
        }
        let _ = cast_with(&v, DataType::Date, &CastOptions::format("dd MMM yyyy HH:mm"));
        let _ = cast_with(&v, DataType::Decimal(None), &CastOptions::format("#,##0.00;(#)"));
    }

    #[test]
    fn functions_never_panic_on_strings(a in ".{0,12}", b in ".{0,4}", n in -20i64..20, m in -5i64..5) {
        let (a, b) = (Value::from_string(a), Value::from_string(b));
        let (n, m) = (Value::Integer(n), Value::Integer(m));
        for (name, args) in [
            ("SUBSTRING", vec![a.clone(), n.clone(), m.clone()]),
            ("POSITION", vec![b.clone(), a.clone(), n.clone(), m.clone()]),
            ("OVERLAY", vec![a.clone(), b.clone(), n.clone(), m.clone()]),
            ("LEFT", vec![a.clone(), n.clone()]),
            ("REPLACE", vec![a.clone(), b.clone(), b.clone()]),
            ("TRANSLATE", vec![a.clone(), b.clone()]),
            ("TRIM_BOTH", vec![a.clone(), b.clone()]),
        ] {
            let _ = crate::call(name, &args);
        }
        let _ = crate::compare::like(&a, &b, None);
    }
}

/// Any value of any type, including awkward ones.
fn any_value() -> impl Strategy<Value = Value> {
    use crate::datetime::{Time, Timestamp};
    use crate::interval::{Interval, IntervalQualifier};
    use crate::value::BitString;
    let qualifiers = prop_oneof![
        Just(IntervalQualifier::Year),
        Just(IntervalQualifier::YearToMonth),
        Just(IntervalQualifier::Day),
        Just(IntervalQualifier::DayToSecond),
        Just(IntervalQualifier::HourToMinute),
        Just(IntervalQualifier::Second),
    ];
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Boolean),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0i64), -100i64..100]
            .prop_map(Value::Integer),
        (any::<i64>(), -40i32..40)
            .prop_map(|(c, e)| Value::Decimal(Decimal::from_parts(i128::from(c), e).unwrap())),
        prop_oneof![Just(1e308), Just(-1e-308), Just(0.0), -1e6f64..1e6].prop_map(Value::Float),
        ".{0,8}".prop_map(Value::from_string),
        proptest::collection::vec(any::<u8>(), 0..10).prop_map(Value::from_bytes),
        proptest::collection::vec(any::<bool>(), 0..20).prop_map(|b| Value::Bit(BitString(b))),
        (Date::MIN.to_days()..=Date::MAX.to_days())
            .prop_map(|d| Value::Date(Date::from_days(d).unwrap())),
        (0i64..86_400_000_000).prop_map(|m| Value::Time(Time::from_micros_wrapping(m))),
        (-62_135_596_800_000_000i64..253_402_300_799_000_000)
            .prop_map(|m| Value::GmtTimestamp(Timestamp::from_micros(m).unwrap())),
        (any::<i32>(), qualifiers).prop_map(|(n, q)| {
            let iv = if q.is_year_month() {
                Interval::months(i64::from(n), q)
            } else {
                Interval::micros(i64::from(n) * 1_000_003, q)
            };
            Value::Interval(iv.unwrap())
        }),
    ]
}

const FUNCTIONS: [&str; 48] = [
    "LENGTH",
    "LEFT",
    "RIGHT",
    "SUBSTRING",
    "SUBSTRING_BEFORE",
    "SUBSTRING_AFTER",
    "POSITION",
    "TRIM",
    "TRIM_LEADING",
    "LTRIM",
    "RTRIM",
    "UPPER",
    "LOWER",
    "REPLACE",
    "TRANSLATE",
    "OVERLAY",
    "REPLICATE",
    "SPACE",
    "CONTAINS",
    "STARTSWITH",
    "ENDSWITH",
    "ABS",
    "CEIL",
    "FLOOR",
    "ROUND",
    "TRUNCATE",
    "MOD",
    "SIGN",
    "POWER",
    "SQRT",
    "EXP",
    "LN",
    "LOG10",
    "SIN",
    "ACOS",
    "COT",
    "ATAN2",
    "RAND",
    "BITAND",
    "BITNOT",
    "EXTRACT",
    "COALESCE",
    "NULLIF",
    "UUIDASCHAR",
    "UUIDASBLOB",
    "DEGREES",
    "TANH",
    "BITXOR",
];

const TARGETS: [&str; 14] = [
    "BOOLEAN",
    "INTEGER",
    "DECIMAL",
    "DECIMAL(5,2)",
    "FLOAT",
    "CHARACTER",
    "BLOB",
    "BIT",
    "DATE",
    "TIME",
    "GMTTIMESTAMP",
    "TIMESTAMP",
    "INTERVAL MINUTE",
    "INTERVAL DAY TO SECOND",
];

proptest! {
    #[test]
    fn operations_never_panic_on_any_values(
        a in any_value(),
        b in any_value(),
        c in any_value(),
        f in 0usize..FUNCTIONS.len(),
        argc in 0usize..4,
    ) {
        let args = [a.clone(), b.clone(), c.clone()];
        let _ = crate::call(FUNCTIONS[f], &args[..argc]);
        let _ = crate::arith::add(&a, &b);
        let _ = crate::arith::subtract(&a, &b);
        let _ = crate::arith::multiply(&a, &b);
        let _ = crate::arith::divide(&a, &b);
        let _ = crate::arith::negate(&a);
        let _ = crate::arith::concat(&a, &b);
        let _ = crate::compare::compare(&a, &b);
        let _ = crate::compare::between(&a, &b, &c, true);
        let _ = a.to_string();
        for target in TARGETS {
            let t = DataType::parse(target).unwrap();
            let _ = cast(&a, t);
            let _ = cast_with(&a, t, &CastOptions { ccsid: Some(437), ..CastOptions::default() });
            let _ = cast_with(&a, t, &CastOptions::format("#,##0.0#"));
            let _ = cast_with(&a, t, &CastOptions::format("yyyy-MM-dd HH:mm:ss.SSS ZZZ"));
        }
        let _ = crate::cast::cast_many(&args, DataType::Date);
    }
}
