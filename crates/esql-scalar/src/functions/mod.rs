//! The scalar built-in functions and [`call`], which dispatches on the name.
//!
//! ESQL writes some functions with keywords; [`call`] takes their operands in
//! order, as follows (the typed functions take them directly):
//!
//! | ESQL | `call` |
//! |---|---|
//! | `SUBSTRING(s FROM a FOR b)` | `SUBSTRING(s, a[, b])` |
//! | `SUBSTRING(s BEFORE x FOR b)` | `SUBSTRING_BEFORE(s, x[, b])` |
//! | `SUBSTRING(s AFTER x FOR b)` | `SUBSTRING_AFTER(s, x[, b])` |
//! | `POSITION(x IN s FROM a REPEAT n)` | `POSITION(x, s[, a[, n]])` |
//! | `TRIM(LEADING c FROM s)` | `TRIM_LEADING(s[, c])`, likewise `TRIM_TRAILING`, `TRIM_BOTH`, `TRIM` |
//! | `OVERLAY(s PLACING x FROM a FOR b)` | `OVERLAY(s, x, a[, b])` |
//! | `ROUND(x, n MODE m)` | `ROUND(x, n[, 'ROUND_HALF_UP'])` |
//! | `EXTRACT(YEAR FROM d)` | `EXTRACT('YEAR', d)` |

mod datetime;
mod misc;
mod numeric;
mod string;
mod string_chars;

pub use datetime::{current, current_at, extract};
pub use misc::{coalesce, nullif, uuid_as_blob, uuid_as_char};
pub use numeric::{
    abs, atan2, bit_fold, bitnot, ceil, float_function, floor, modulo, power, rand, round, sign,
    truncate,
};
pub use string::{
    TrimSpec, contains, ends_with, left, length, lower, overlay, position, replace, replicate,
    right, space, starts_with, substring, substring_after, substring_before, translate, trim,
    upper,
};

use crate::decimal::RoundingMode;
use crate::error::ScalarError;
use crate::value::Value;

fn arity(name: &str, args: &[Value], min: usize, max: usize) -> Result<(), ScalarError> {
    if args.len() < min || args.len() > max {
        let expected = match (min, max) {
            (a, b) if a == b => a.to_string(),
            (a, usize::MAX) => format!("{a} or more"),
            (a, b) if b == a + 1 => format!("{a} or {b}"),
            (a, b) => format!("{a} to {b}"),
        };
        return Err(ScalarError::WrongArgumentCount {
            function: name.to_string(),
            expected,
            given: args.len(),
        });
    }
    Ok(())
}

fn rounding_mode(v: Option<&Value>) -> Result<RoundingMode, ScalarError> {
    match v {
        None => Ok(RoundingMode::HalfEven),
        Some(Value::Character(k)) => RoundingMode::from_keyword(k)
            .ok_or_else(|| ScalarError::arg("ROUND", 3, format!("{k} is not a rounding mode"))),
        Some(other) => Err(ScalarError::arg(
            "ROUND",
            3,
            format!("expected a rounding mode, not {}", other.type_name()),
        )),
    }
}

/// Calls the scalar built-in `name` (case-insensitive) with positional arguments.
pub fn call(name: &str, args: &[Value]) -> Result<Value, ScalarError> {
    let name_upper = name.trim().to_ascii_uppercase();
    let n = name_upper.as_str();
    let a = args;
    let opt = |i: usize| a.get(i);
    match n {
        "LENGTH" | "CHARACTER_LENGTH" | "CHAR_LENGTH" => {
            arity(n, a, 1, 1)?;
            length(&a[0])
        }
        "LEFT" => {
            arity(n, a, 2, 2)?;
            left(&a[0], &a[1])
        }
        "RIGHT" => {
            arity(n, a, 2, 2)?;
            right(&a[0], &a[1])
        }
        "SUBSTRING" => {
            arity(n, a, 2, 3)?;
            substring(&a[0], &a[1], opt(2))
        }
        "SUBSTRING_BEFORE" => {
            arity(n, a, 2, 3)?;
            substring_before(&a[0], &a[1], opt(2))
        }
        "SUBSTRING_AFTER" => {
            arity(n, a, 2, 3)?;
            substring_after(&a[0], &a[1], opt(2))
        }
        "POSITION" => {
            arity(n, a, 2, 4)?;
            position(&a[0], &a[1], opt(2), opt(3))
        }
        "TRIM" | "TRIM_BOTH" | "TRIM_LEADING" | "TRIM_TRAILING" => {
            arity(n, a, 1, 2)?;
            let spec = match n {
                "TRIM_LEADING" => TrimSpec::Leading,
                "TRIM_TRAILING" => TrimSpec::Trailing,
                _ => TrimSpec::Both,
            };
            trim(spec, opt(1), &a[0])
        }
        "LTRIM" => {
            arity(n, a, 1, 1)?;
            trim(TrimSpec::Leading, None, &a[0])
        }
        "RTRIM" => {
            arity(n, a, 1, 1)?;
            trim(TrimSpec::Trailing, None, &a[0])
        }
        "UPPER" | "UCASE" => {
            arity(n, a, 1, 1)?;
            upper(&a[0])
        }
        "LOWER" | "LCASE" => {
            arity(n, a, 1, 1)?;
            lower(&a[0])
        }
        "REPLACE" => {
            arity(n, a, 2, 3)?;
            replace(&a[0], &a[1], opt(2))
        }
        "TRANSLATE" => {
            arity(n, a, 2, 3)?;
            translate(&a[0], &a[1], opt(2))
        }
        "OVERLAY" => {
            arity(n, a, 3, 4)?;
            overlay(&a[0], &a[1], &a[2], opt(3))
        }
        "REPLICATE" => {
            arity(n, a, 2, 2)?;
            replicate(&a[0], &a[1])
        }
        "SPACE" => {
            arity(n, a, 1, 1)?;
            space(&a[0])
        }
        "CONTAINS" => {
            arity(n, a, 2, 2)?;
            contains(&a[0], &a[1])
        }
        "STARTSWITH" => {
            arity(n, a, 2, 2)?;
            starts_with(&a[0], &a[1])
        }
        "ENDSWITH" => {
            arity(n, a, 2, 2)?;
            ends_with(&a[0], &a[1])
        }
        "ABS" | "ABSVAL" => {
            arity(n, a, 1, 1)?;
            abs(&a[0])
        }
        "CEIL" | "CEILING" => {
            arity(n, a, 1, 1)?;
            ceil(&a[0])
        }
        "FLOOR" => {
            arity(n, a, 1, 1)?;
            floor(&a[0])
        }
        "ROUND" => {
            arity(n, a, 2, 3)?;
            round(&a[0], &a[1], rounding_mode(opt(2))?)
        }
        "TRUNCATE" => {
            arity(n, a, 2, 2)?;
            truncate(&a[0], &a[1])
        }
        "MOD" => {
            arity(n, a, 2, 2)?;
            modulo(&a[0], &a[1])
        }
        "SIGN" => {
            arity(n, a, 1, 1)?;
            sign(&a[0])
        }
        "POWER" => {
            arity(n, a, 2, 2)?;
            power(&a[0], &a[1])
        }
        "SQRT" | "EXP" | "LN" | "LOG" | "LOG10" | "SIN" | "COS" | "TAN" | "ASIN" | "ACOS"
        | "ATAN" | "SINH" | "COSH" | "TANH" | "COT" | "DEGREES" | "RADIANS" => {
            arity(n, a, 1, 1)?;
            float_function(n, &a[0])
        }
        "ATAN2" => {
            arity(n, a, 2, 2)?;
            atan2(&a[0], &a[1])
        }
        "RAND" => {
            arity(n, a, 0, 1)?;
            rand(opt(0))
        }
        "BITAND" | "BITOR" | "BITXOR" => bit_fold(n, a),
        "BITNOT" => {
            arity(n, a, 1, 1)?;
            bitnot(&a[0])
        }
        "CURRENT_DATE"
        | "CURRENT_TIME"
        | "CURRENT_TIMESTAMP"
        | "CURRENT_GMTDATE"
        | "CURRENT_GMTTIME"
        | "CURRENT_GMTTIMESTAMP"
        | "LOCAL_TIMEZONE" => {
            arity(n, a, 0, 0)?;
            current(n)
        }
        "EXTRACT" => {
            arity(n, a, 2, 2)?;
            let field = a[0].as_str().ok_or_else(|| {
                ScalarError::arg("EXTRACT", 1, "the field is named by a CHARACTER value")
            })?;
            extract(field, &a[1])
        }
        "COALESCE" => {
            arity(n, a, 1, usize::MAX)?;
            Ok(coalesce(a))
        }
        "NULLIF" => {
            arity(n, a, 2, 2)?;
            nullif(&a[0], &a[1])
        }
        "UUIDASCHAR" => {
            arity(n, a, 0, 1)?;
            uuid_as_char(opt(0))
        }
        "BASE64ENCODE" => {
            arity(n, a, 1, 1)?;
            misc::base64_encode(&a[0])
        }
        "BASE64DECODE" => {
            arity(n, a, 1, 1)?;
            misc::base64_decode(&a[0])
        }
        "SLEEP" => {
            arity(n, a, 1, 1)?;
            misc::sleep(&a[0])
        }
        "UUIDASBLOB" => {
            arity(n, a, 0, 1)?;
            uuid_as_blob(opt(0))
        }
        _ => Err(ScalarError::UnknownFunction(name_upper)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from_text(x)
    }

    #[test]
    fn call_dispatches_by_name() {
        assert_eq!(call("length", &[s("abc")]).unwrap(), Value::Integer(3));
        assert_eq!(call("UCASE", &[s("abc")]).unwrap(), s("ABC"));
        assert_eq!(call("trim_leading", &[s("xxa"), s("x")]).unwrap(), s("a"));
        assert_eq!(call("RTRIM", &[s(" a ")]).unwrap(), s(" a"));
        assert_eq!(
            call(
                "ROUND",
                &[Value::Integer(25), Value::Integer(-1), s("ROUND_HALF_UP")]
            )
            .unwrap(),
            Value::Integer(30)
        );
        assert_eq!(
            call(
                "EXTRACT",
                &[
                    s("YEAR"),
                    Value::Date(crate::Date::new(2024, 2, 3).unwrap())
                ]
            )
            .unwrap(),
            Value::Integer(2024)
        );
        assert_eq!(call("COALESCE", &[Value::Null, s("x")]).unwrap(), s("x"));
        assert!(matches!(call("CURRENT_DATE", &[]).unwrap(), Value::Date(_)));
    }

    #[test]
    fn call_reports_bad_calls() {
        assert!(matches!(
            call("NOSUCH", &[]),
            Err(ScalarError::UnknownFunction(_))
        ));
        assert!(matches!(
            call("LEFT", &[s("a")]),
            Err(ScalarError::WrongArgumentCount { .. })
        ));
        assert!(matches!(
            call("COALESCE", &[]),
            Err(ScalarError::WrongArgumentCount { .. })
        ));
        assert!(
            call(
                "ROUND",
                &[Value::Integer(1), Value::Integer(1), s("ROUND_SIDEWAYS")]
            )
            .is_err()
        );
        assert!(call("EXTRACT", &[Value::Integer(1), Value::Null]).is_err());
    }
}
