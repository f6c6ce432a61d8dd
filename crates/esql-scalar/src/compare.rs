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

/// The token at byte `at` of a LIKE pattern and the byte where the next one starts; `None` at
/// the end. Matching walks the pattern in place, so that LIKE allocates nothing.
fn token_at(pattern: &str, at: usize, escape: Option<char>) -> Option<(Token, usize)> {
    let mut chars = pattern.get(at..)?.chars();
    let c = chars.next()?;
    let next = at + c.len_utf8();
    Some(if Some(c) == escape {
        // `check_pattern` has made sure that an escape is followed by a character.
        let n = chars.next()?;
        (Token::Char(n), next + n.len_utf8())
    } else if c == '%' {
        (Token::Any, next)
    } else if c == '_' {
        (Token::One, next)
    } else {
        (Token::Char(c), next)
    })
}

fn check_pattern(pattern: &str, escape: Option<char>) -> Result<(), ScalarError> {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape && chars.next().is_none() {
            return Err(ScalarError::arg(
                "LIKE",
                2,
                "the pattern ends with the escape character",
            ));
        }
    }
    Ok(())
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
    check_pattern(p, esc)?;
    Ok(Some(matches(s, p, esc)))
}

/// Wildcard matching in O(len(text) × len(pattern)) without recursion; positions are bytes.
fn matches(text: &str, pattern: &str, escape: Option<char>) -> bool {
    let char_len = |at: usize| text[at..].chars().next().map_or(1, char::len_utf8);
    let (mut t, mut p) = (0usize, 0usize);
    // Where the pattern goes on after the last `%` seen, and the text that `%` has matched to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match token_at(pattern, p, escape) {
            Some((Token::Any, next)) => {
                star = Some((next, t));
                p = next;
            }
            Some((Token::One, next)) => {
                t += char_len(t);
                p = next;
            }
            Some((Token::Char(c), next)) if text[t..].starts_with(c) => {
                t += c.len_utf8();
                p = next;
            }
            _ => match star {
                Some((after, st)) => {
                    p = after;
                    t = st + char_len(st);
                    star = Some((after, t));
                }
                None => return false,
            },
        }
    }
    while let Some((token, next)) = token_at(pattern, p, escape) {
        if token != Token::Any {
            return false;
        }
        p = next;
    }
    true
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

    /// LIKE by its definition, recursively, over characters.
    fn like_reference(t: &[char], p: &[char], esc: Option<char>) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((&c, rest)) if Some(c) == esc => {
                t.first() == rest.first()
                    && !t.is_empty()
                    && like_reference(&t[1..], &rest[1..], esc)
            }
            Some(('%', rest)) => (0..=t.len()).any(|i| like_reference(&t[i..], rest, esc)),
            Some(('_', rest)) => !t.is_empty() && like_reference(&t[1..], rest, esc),
            Some((&c, rest)) => t.first() == Some(&c) && like_reference(&t[1..], rest, esc),
        }
    }

    proptest::proptest! {
        #[test]
        fn like_agrees_with_its_definition(t in "[aé_%!]{0,8}", p in "[aé_%!]{0,6}") {
            let (tc, pc): (Vec<char>, Vec<char>) = (t.chars().collect(), p.chars().collect());
            for esc in [None, Some('!')] {
                // An escape takes the next character with it, so the pattern ends with a lone
                // escape (an error) when the run of escapes at its end is odd.
                let lone_escape = p.chars().rev().take_while(|&c| c == '!').count() % 2 == 1;
                let expected = if esc.is_some() && lone_escape {
                    None
                } else {
                    Some(like_reference(&tc, &pc, esc))
                };
                let escape = esc.map(|c| Value::from_text(&c.to_string()));
                let got = like(&s(&t), &s(&p), escape.as_ref()).ok().flatten();
                proptest::prop_assert_eq!(got, expected, "{:?} LIKE {:?} ESCAPE {:?}", t, p, esc);
            }
        }
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
