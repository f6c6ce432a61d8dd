use super::*;

fn d(s: &str) -> Value {
    Value::Decimal(Decimal::parse(s).unwrap())
}

fn i(n: i64) -> Value {
    Value::Integer(n)
}

fn text(v: Value) -> String {
    match v {
        Value::Decimal(d) => d.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn round_matches_reference_examples() {
    let hev = RoundingMode::HalfEven;
    assert_eq!(text(round(&d("27.75"), &i(2), hev).unwrap()), "27.75");
    assert_eq!(text(round(&d("27.75"), &i(1), hev).unwrap()), "27.8");
    assert_eq!(text(round(&d("27.75"), &i(0), hev).unwrap()), "28");
    assert_eq!(text(round(&d("27.75"), &i(-1), hev).unwrap()), "3E+1");
    assert_eq!(
        text(round(&d("5.5"), &i(0), RoundingMode::Up).unwrap()),
        "6"
    );
    assert_eq!(
        text(round(&d("-5.5"), &i(0), RoundingMode::Up).unwrap()),
        "-6"
    );
    assert_eq!(
        text(round(&d("5.5"), &i(0), RoundingMode::Down).unwrap()),
        "5"
    );
    assert_eq!(
        text(round(&d("-5.5"), &i(0), RoundingMode::Ceiling).unwrap()),
        "-5"
    );
    assert_eq!(
        text(round(&d("-5.5"), &i(0), RoundingMode::Floor).unwrap()),
        "-6"
    );
    assert_eq!(
        text(round(&d("2.5"), &i(0), RoundingMode::HalfUp).unwrap()),
        "3"
    );
    assert_eq!(
        text(round(&d("2.5"), &i(0), RoundingMode::HalfDown).unwrap()),
        "2"
    );
    assert_eq!(text(round(&d("2.5"), &i(0), hev).unwrap()), "2");
    assert_eq!(text(round(&d("3.5"), &i(0), hev).unwrap()), "4");
}

#[test]
fn round_keeps_the_source_type() {
    assert_eq!(
        round(&i(1234), &i(-2), RoundingMode::HalfEven).unwrap(),
        i(1200)
    );
    assert_eq!(
        round(&i(1250), &i(-2), RoundingMode::HalfEven).unwrap(),
        i(1200)
    );
    assert_eq!(round(&i(17), &i(2), RoundingMode::HalfEven).unwrap(), i(17));
    assert_eq!(
        round(&Value::Float(2.675), &i(2), RoundingMode::HalfUp).unwrap(),
        Value::Float(2.68)
    );
    assert_eq!(
        round(&Value::Null, &i(2), RoundingMode::HalfUp).unwrap(),
        Value::Null
    );
    assert!(round(&Value::from_text("1"), &i(2), RoundingMode::HalfUp).is_err());
}

#[test]
fn truncate_ceil_floor_abs() {
    assert_eq!(text(truncate(&d("27.75"), &i(1)).unwrap()), "27.7");
    assert_eq!(text(truncate(&d("-27.75"), &i(0)).unwrap()), "-27");
    assert_eq!(text(ceil(&d("1.2")).unwrap()), "2");
    assert_eq!(text(ceil(&d("-1.2")).unwrap()), "-1");
    assert_eq!(text(floor(&d("-1.2")).unwrap()), "-2");
    assert_eq!(floor(&Value::Float(1.7)).unwrap(), Value::Float(1.0));
    assert_eq!(ceil(&i(3)).unwrap(), i(3));
    assert_eq!(abs(&i(-3)).unwrap(), i(3));
    assert!(abs(&i(i64::MIN)).is_err());
    assert_eq!(text(abs(&d("-1.50")).unwrap()), "1.50");
}

#[test]
fn modulo_takes_the_dividend_sign() {
    assert_eq!(modulo(&i(7), &i(3)).unwrap(), i(1));
    assert_eq!(modulo(&i(-7), &i(3)).unwrap(), i(-1));
    assert_eq!(modulo(&i(7), &i(-3)).unwrap(), i(1));
    assert_eq!(modulo(&i(i64::MIN), &i(-1)).unwrap(), i(0));
    assert!(modulo(&i(7), &i(0)).is_err());
    assert_eq!(text(modulo(&d("7.5"), &i(2)).unwrap()), "1.5");
    assert_eq!(
        modulo(&Value::Float(7.5), &i(2)).unwrap(),
        Value::Float(1.5)
    );
}

#[test]
fn power_and_float_functions() {
    assert_eq!(power(&i(2), &i(10)).unwrap(), Value::Float(1024.0));
    assert!(power(&i(0), &i(-1)).is_err());
    assert!(power(&i(-8), &d("0.5")).is_err());
    assert_eq!(power(&i(-2), &i(3)).unwrap(), Value::Float(-8.0));
    assert_eq!(float_function("SQRT", &i(16)).unwrap(), Value::Float(4.0));
    assert!(float_function("SQRT", &i(-1)).is_err());
    assert!(float_function("LN", &i(0)).is_err());
    assert_eq!(
        float_function("LOG10", &i(1000)).unwrap(),
        Value::Float(3.0)
    );
    assert_eq!(float_function("EXP", &i(0)).unwrap(), Value::Float(1.0));
    assert_eq!(
        float_function("DEGREES", &Value::Float(std::f64::consts::PI)).unwrap(),
        Value::Float(180.0)
    );
    assert!(float_function("ASIN", &i(2)).is_err());
    assert!(float_function("EXP", &i(100_000)).is_err());
    assert_eq!(
        atan2(&i(1), &i(1)).unwrap(),
        Value::Float(std::f64::consts::FRAC_PI_4)
    );
}

#[test]
fn sign_and_bits() {
    assert_eq!(sign(&i(-9)).unwrap(), i(-1));
    assert_eq!(sign(&Value::Float(0.0)).unwrap(), Value::Float(0.0));
    assert_eq!(text(sign(&d("2.5")).unwrap()), "1");
    assert_eq!(bit_fold("BITAND", &[i(12), i(10)]).unwrap(), i(8));
    assert_eq!(bit_fold("BITOR", &[i(12), i(10), i(1)]).unwrap(), i(15));
    assert_eq!(bit_fold("BITXOR", &[i(12), i(10)]).unwrap(), i(6));
    assert_eq!(bitnot(&i(0)).unwrap(), i(-1));
    assert!(bit_fold("BITAND", &[i(1)]).is_err());
    assert_eq!(
        bit_fold("BITAND", &[i(1), Value::Null]).unwrap(),
        Value::Null
    );
}

#[test]
fn rand_is_in_range_and_seedable() {
    let a = rand(Some(&i(42))).unwrap();
    let b = rand(Some(&i(42))).unwrap();
    assert_eq!(a, b);
    for _ in 0..1000 {
        let Value::Float(f) = rand(None).unwrap() else {
            panic!("FLOAT expected")
        };
        assert!((0.0..1.0).contains(&f));
    }
}
