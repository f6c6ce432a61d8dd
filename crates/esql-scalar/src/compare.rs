//! Comparisons with three-valued logic (`None` is UNKNOWN), LIKE and BETWEEN.
//!
//! Numbers compare across INTEGER, DECIMAL and FLOAT; a CHARACTER compared with a
//! value of another type is cast to that type first (the implicit casts of the ESQL
//! reference); trailing blanks are insignificant between character strings.

use std::cmp::Ordering;

use crate::cast::{CastOptions, cast_with};
use crate::error::ScalarError;
use crate::value::{DataType, Value};

fn mismatch(op: &str, a: &Value, b: &Value) -> ScalarError {
    ScalarError::TypeMismatch {
        operator: op.to_string(),
        left: a.type_name(),
        right: b.type_name(),
    }
}

fn type_of(v: &Value) -> Option<DataType> {
    Some(match v {
        Value::Boolean(_) => DataType::Boolean,
        Value::Integer(_) => DataType::Integer,
        Value::Decimal(_) => DataType::Decimal(None),
        Value::Float(_) => DataType::Float,
        Value::Date(_) => DataType::Date,
        Value::Time(_) => DataType::Time,
        Value::GmtTime(_) => DataType::GmtTime,
        Value::Timestamp(_) => DataType::Timestamp,
        Value::GmtTimestamp(_) => DataType::GmtTimestamp,
        Value::Interval(iv) => DataType::Interval(Some(iv.qualifier())),
        _ => return None,
    })
}

fn compare_text(a: &str, b: &str) -> Ordering {
    // The reference: comparison is lexicographic, a longer string that is equal as
    // far as the shorter goes is greater, and trailing blanks are insignificant.
    // UTF-8 byte order is code point order.
    a.trim_end_matches(' ').cmp(b.trim_end_matches(' '))
}

/// Orders two values; `Ok(None)` when either is NULL.
pub fn compare(a: &Value, b: &Value) -> Result<Option<Ordering>, ScalarError> {
    use Value::*;
    let ord = match (a, b) {
        (Null, _) | (_, Null) => return Ok(None),
        (Integer(x), Integer(y)) => x.cmp(y),
        (Integer(x), Decimal(y)) => crate::Decimal::from_i64(*x).compare(y),
        (Decimal(x), Integer(y)) => x.compare(&crate::Decimal::from_i64(*y)),
        (Decimal(x), Decimal(y)) => x.compare(y),
        (Float(_), Integer(_) | Decimal(_) | Float(_)) | (Integer(_) | Decimal(_), Float(_)) => {
            let (x, y) = (as_f64(a), as_f64(b));
            x.partial_cmp(&y).ok_or_else(|| mismatch("=", a, b))?
        }
        (Character(x), Character(y)) => compare_text(x, y),
        (Blob(x), Blob(y)) => x.as_ref().cmp(y.as_ref()),
        (Bit(x), Bit(y)) => x.0.cmp(&y.0),
        (Boolean(x), Boolean(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) | (GmtTime(x), GmtTime(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y)) | (GmtTimestamp(x), GmtTimestamp(y)) => x.cmp(y),
        (Interval(x), Interval(y)) if x.is_year_month() == y.is_year_month() => x
            .total_months()
            .cmp(&y.total_months())
            .then(x.total_micros().cmp(&y.total_micros())),
        (Character(_), other) => {
            let target = type_of(other).ok_or_else(|| mismatch("=", a, b))?;
            let converted = cast_with(a, target, &CastOptions::default())?;
            return compare(&converted, b);
        }
        (other, Character(_)) => {
            let target = type_of(other).ok_or_else(|| mismatch("=", a, b))?;
            let converted = cast_with(b, target, &CastOptions::default())?;
            return compare(a, &converted);
        }
        _ => return Err(mismatch("=", a, b)),
    };
    Ok(Some(ord))
}

fn as_f64(v: &Value) -> f64 {
    crate::arith::as_f64(v).unwrap_or(f64::NAN)
}

/// `a = b`.
pub fn equal(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o == Ordering::Equal))
}

/// `a <> b`.
pub fn not_equal(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o != Ordering::Equal))
}

/// `a < b`.
pub fn less(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o == Ordering::Less))
}

/// `a <= b`.
pub fn less_equal(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o != Ordering::Greater))
}

/// `a > b`.
pub fn greater(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o == Ordering::Greater))
}

/// `a >= b`.
pub fn greater_equal(a: &Value, b: &Value) -> Result<Option<bool>, ScalarError> {
    Ok(compare(a, b)?.map(|o| o != Ordering::Less))
}

/// `x BETWEEN low AND high` (`ASYMMETRIC`, the default) or, with `symmetric`,
/// `BETWEEN SYMMETRIC` which accepts the bounds in either order.
pub fn between(
    x: &Value,
    low: &Value,
    high: &Value,
    symmetric: bool,
) -> Result<Option<bool>, ScalarError> {
    let forward = and(greater_equal(x, low)?, less_equal(x, high)?);
    if !symmetric {
        return Ok(forward);
    }
    let backward = and(greater_equal(x, high)?, less_equal(x, low)?);
    Ok(or(forward, backward))
}

/// Three-valued AND.
pub fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// Three-valued OR.
pub fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// Three-valued NOT.
pub fn not(a: Option<bool>) -> Option<bool> {
    a.map(|b| !b)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Char(char),
    One,
    Any,
}

fn tokenize(pattern: &str, escape: Option<char>) -> Result<Vec<Token>, ScalarError> {
    let mut out = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some(n) => out.push(Token::Char(n)),
                None => {
                    return Err(ScalarError::arg(
                        "LIKE",
                        2,
                        "the pattern ends with the escape character",
                    ));
                }
            }
        } else if c == '%' {
            out.push(Token::Any);
        } else if c == '_' {
            out.push(Token::One);
        } else {
            out.push(Token::Char(c));
        }
    }
    Ok(out)
}

/// `source LIKE pattern [ESCAPE escape]`: `%` matches any run of characters, `_`
/// exactly one; the escape character makes the next one literal. NULL in, UNKNOWN out.
pub fn like(
    source: &Value,
    pattern: &Value,
    escape: Option<&Value>,
) -> Result<Option<bool>, ScalarError> {
    let esc = match escape {
        None => None,
        Some(Value::Null) => return Ok(None),
        Some(Value::Character(e)) => {
            let mut cs = e.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Some(c),
                _ => return Err(ScalarError::arg("LIKE", 3, "ESCAPE must be one character")),
            }
        }
        Some(other) => {
            return Err(ScalarError::arg(
                "LIKE",
                3,
                format!("ESCAPE must be CHARACTER, not {}", other.type_name()),
            ));
        }
    };
    let (s, p) = match (source, pattern) {
        (Value::Null, _) | (_, Value::Null) => return Ok(None),
        (Value::Character(s), Value::Character(p)) => (s, p),
        (Value::Character(_), other) | (other, _) => {
            return Err(ScalarError::arg(
                "LIKE",
                if matches!(source, Value::Character(_)) {
                    2
                } else {
                    1
                },
                format!("LIKE needs CHARACTER operands, not {}", other.type_name()),
            ));
        }
    };
    let tokens = tokenize(p, esc)?;
    let text: Vec<char> = s.chars().collect();
    Ok(Some(matches(&text, &tokens)))
}

/// Wildcard matching in O(len(text) × len(pattern)) without recursion.
fn matches(text: &[char], tokens: &[Token]) -> bool {
    let (mut t, mut p) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::Any) => {
                star = Some((p, t));
                p += 1;
            }
            Some(Token::One) => {
                t += 1;
                p += 1;
            }
            Some(Token::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p.min(tokens.len())..]
        .iter()
        .all(|t| *t == Token::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from_text(x)
    }

    #[test]
    fn comparisons_use_three_valued_logic() {
        assert_eq!(equal(&Value::Integer(1), &Value::Null).unwrap(), None);
        assert_eq!(and(None, Some(false)), Some(false));
        assert_eq!(or(None, Some(true)), Some(true));
        assert_eq!(and(None, Some(true)), None);
        assert_eq!(not(None), None);
    }

    #[test]
    fn numbers_compare_across_types() {
        let d = Value::Decimal(crate::Decimal::parse("1.00").unwrap());
        assert_eq!(equal(&Value::Integer(1), &d).unwrap(), Some(true));
        assert_eq!(less(&Value::Float(0.5), &d).unwrap(), Some(true));
        assert_eq!(greater(&s("10"), &Value::Integer(9)).unwrap(), Some(true));
        assert!(equal(&s("x"), &Value::Integer(9)).is_err());
    }

    #[test]
    fn strings_ignore_trailing_blanks() {
        assert_eq!(equal(&s("abc"), &s("abc  ")).unwrap(), Some(true));
        assert_eq!(less(&s("abc"), &s("abd")).unwrap(), Some(true));
        assert_eq!(less(&s("ab"), &s("ab\t")).unwrap(), Some(true));
        assert_eq!(greater(&s("ABC"), &s("AB")).unwrap(), Some(true));
    }

    #[test]
    fn like_matches_wildcards_and_escape() {
        assert_eq!(like(&s("Hursley"), &s("H%y"), None).unwrap(), Some(true));
        assert_eq!(
            like(&s("Hursley"), &s("H_rsley"), None).unwrap(),
            Some(true)
        );
        assert_eq!(
            like(&s("Hursley"), &s("H_sley"), None).unwrap(),
            Some(false)
        );
        assert_eq!(
            like(&s("100%"), &s("100\\%"), Some(&s("\\"))).unwrap(),
            Some(true)
        );
        assert_eq!(
            like(&s("1000"), &s("100\\%"), Some(&s("\\"))).unwrap(),
            Some(false)
        );
        assert_eq!(
            like(&s("a_b"), &s("a$_b"), Some(&s("$"))).unwrap(),
            Some(true)
        );
        assert_eq!(like(&s(""), &s("%"), None).unwrap(), Some(true));
        assert_eq!(like(&s("abcabc"), &s("%abc"), None).unwrap(), Some(true));
        assert_eq!(like(&Value::Null, &s("%"), None).unwrap(), None);
        assert!(like(&s("a"), &s("a\\"), Some(&s("\\"))).is_err());
    }

    #[test]
    fn between_handles_symmetric_bounds() {
        let (one, five, three) = (Value::Integer(1), Value::Integer(5), Value::Integer(3));
        assert_eq!(between(&three, &one, &five, false).unwrap(), Some(true));
        assert_eq!(between(&three, &five, &one, false).unwrap(), Some(false));
        assert_eq!(between(&three, &five, &one, true).unwrap(), Some(true));
        assert_eq!(between(&three, &Value::Null, &five, false).unwrap(), None);
        assert_eq!(
            between(&Value::Integer(9), &Value::Null, &five, false).unwrap(),
            Some(false)
        );
    }
}
