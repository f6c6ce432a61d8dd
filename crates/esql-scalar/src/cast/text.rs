//! CASTs to and from CHARACTER: the literal forms the reference gives
//! (`DATE '2024-01-31'`, `X'0a1b'`, `B'0101'`, `INTERVAL '1-02' YEAR TO MONTH`),
//! FORMAT patterns, and CCSID conversion.

use sluice_tree::text_form::{FLOAT_TEXT_BYTES, float_text};

use crate::cast::{CastOptions, datetime_format, fit_decimal, number_format};
use crate::char_string::{CharString, CharWriter};
use crate::codepage::{self, ENCODING_LITTLE_ENDIAN};
use crate::datetime::{Date, Time, Timestamp};
use crate::decimal::Decimal;
use crate::error::ScalarError;
use crate::float_format::format_float;
use crate::interval::{Interval, IntervalQualifier};
use crate::value::{BitString, DataType, ScalarType, Value};

/// `CAST(value AS CHARACTER)` without options, for use inside other operations.
pub fn to_character(value: &Value) -> Result<String, ScalarError> {
    if value.is_null() {
        return Ok(String::new());
    }
    to_character_with(value, &CastOptions::default())
}

/// [`to_character`] written into `out`: BOOLEAN, INTEGER, FLOAT and DECIMAL print in place, so
/// that short results (`CAST(n AS CHARACTER)`, `'n=' || n`) cost no heap allocation.
pub fn write_character(value: &Value, out: &mut CharWriter) -> Result<(), ScalarError> {
    use std::fmt::Write;
    match value {
        Value::Null => {}
        Value::Character(s) => out.push_str(s),
        Value::Boolean(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        // Writing to a CharWriter cannot fail.
        Value::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Decimal(d) => {
            let _ = write!(out, "{d}");
        }
        Value::Float(f) => {
            let mut buf = [0u8; FLOAT_TEXT_BYTES];
            out.push_str(float_text(*f, &mut buf));
        }
        other => out.push_str(&to_character(other)?),
    }
    Ok(())
}

/// `CAST(value AS CHARACTER …)` of a value that is not CHARACTER already.
pub(super) fn character_value(value: &Value, opts: &CastOptions) -> Result<Value, ScalarError> {
    match value {
        Value::Boolean(_) | Value::Integer(_) | Value::Decimal(_) | Value::Float(_)
            if opts.format.is_none() =>
        {
            let mut w = CharWriter::new();
            write_character(value, &mut w)?;
            Ok(Value::Character(w.finish()))
        }
        _ => to_character_with(value, opts).map(Value::from_string),
    }
}

fn encoding(opts: &CastOptions) -> i64 {
    opts.encoding.unwrap_or(ENCODING_LITTLE_ENDIAN)
}

pub(super) fn to_character_with(value: &Value, opts: &CastOptions) -> Result<String, ScalarError> {
    let fmt = opts.format.as_deref();
    Ok(match value {
        Value::Null => String::new(),
        Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        Value::Integer(i) => match fmt {
            Some(p) => number_format::format_number(&Decimal::from_i64(*i), p)?,
            None => i.to_string(),
        },
        Value::Decimal(d) => match fmt {
            Some(p) => number_format::format_number(d, p)?,
            None => d.to_string(),
        },
        Value::Float(f) => match fmt {
            Some(p) => number_format::format_number(&Decimal::from_f64(*f)?, p)?,
            None => format_float(*f),
        },
        Value::Character(s) => s.to_string(),
        Value::Blob(b) => match opts.ccsid {
            Some(ccsid) => codepage::decode(b, ccsid, encoding(opts))?,
            None => codepage::hex_literal(b),
        },
        Value::Bit(bits) => match opts.ccsid {
            Some(ccsid) => {
                let bytes = bits.to_bytes().ok_or_else(|| {
                    ScalarError::cast_because(
                        format!("B'{}'", bits.digits()),
                        ScalarType::Character,
                        "the bit count is not a multiple of 8",
                    )
                })?;
                codepage::decode(&bytes, ccsid, encoding(opts))?
            }
            None => format!("B'{}'", bits.digits()),
        },
        Value::Date(_)
        | Value::Time(_)
        | Value::GmtTime(_)
        | Value::Timestamp(_)
        | Value::GmtTimestamp(_) => match fmt {
            Some(p) => datetime_format::format_datetime(value, p)?,
            None => datetime_literal(value),
        },
        Value::Interval(iv) => iv.to_string(),
    })
}

fn datetime_literal(value: &Value) -> String {
    match value {
        Value::Date(d) => format!("DATE '{d}'"),
        Value::Time(t) => format!("TIME '{t}'"),
        Value::GmtTime(t) => format!("GMTTIME '{t}'"),
        Value::Timestamp(t) => format!("TIMESTAMP '{t}'"),
        Value::GmtTimestamp(t) => format!("GMTTIMESTAMP '{t}'"),
        _ => String::new(),
    }
}

/// The quoted body when `text` is a literal of the given keyword (`DATE '…'`),
/// otherwise the text itself, trimmed.
fn literal_body<'a>(text: &'a str, keyword: &str) -> &'a str {
    let t = text.trim();
    let n = keyword.len();
    if t.len() > n && t.is_char_boundary(n) && t[..n].eq_ignore_ascii_case(keyword) {
        let rest = t[n..].trim_start();
        if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
            return inner;
        }
    }
    t
}

pub(super) fn parse_integer(text: &str) -> Result<i64, ScalarError> {
    let t = text.trim();
    let fail = || ScalarError::cast(text, ScalarType::Integer);
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => (16, h),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(fail());
    }
    let magnitude = u64::from_str_radix(digits, radix)
        .map_err(|_| ScalarError::overflow("CAST", ScalarType::Integer))?;
    if radix == 16 && !negative {
        // Hexadecimal literals are two's complement bit patterns (0xFFFFFFFFFFFFFFFF = -1).
        return Ok(magnitude as i64);
    }
    let v = i128::from(magnitude) * if negative { -1 } else { 1 };
    i64::try_from(v).map_err(|_| ScalarError::overflow("CAST", ScalarType::Integer))
}

pub(super) fn parse_float(text: &str) -> Result<f64, ScalarError> {
    let t = text.trim();
    let fail = || ScalarError::cast(text, ScalarType::Float);
    // Rust also reads "inf" and "NaN"; ESQL float literals are digits only.
    let ok_chars = t
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'));
    if t.is_empty() || !ok_chars || !t.chars().any(|c| c.is_ascii_digit()) {
        return Err(fail());
    }
    let f: f64 = t.parse().map_err(|_| fail())?;
    if f.is_finite() {
        Ok(f)
    } else {
        Err(ScalarError::overflow("CAST", ScalarType::Float))
    }
}

fn parse_hex(text: &str) -> Result<Vec<u8>, ScalarError> {
    let body = literal_body(text, "X");
    let fail = || ScalarError::cast(text, ScalarType::Blob);
    if !body.len().is_multiple_of(2) || !body.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(fail());
    }
    (0..body.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&body[i..i + 2], 16).map_err(|_| fail()))
        .collect()
}

pub(super) fn from_character(
    text: &CharString,
    target: DataType,
    opts: &CastOptions,
) -> Result<Value, ScalarError> {
    let s: &str = text;
    let fmt = opts.format.as_deref();
    let ccsid = opts.ccsid;
    match target {
        DataType::Character => Ok(Value::Character(text.clone())),
        DataType::Boolean => {
            let t = s.trim();
            if t.eq_ignore_ascii_case("TRUE") {
                Ok(Value::Boolean(true))
            } else if t.eq_ignore_ascii_case("FALSE") {
                Ok(Value::Boolean(false))
            } else if t.eq_ignore_ascii_case("UNKNOWN") {
                Ok(Value::Null)
            } else {
                Err(ScalarError::cast(s, ScalarType::Boolean))
            }
        }
        DataType::Integer => match fmt {
            Some(p) => {
                let d = number_format::parse_number(s, p)?;
                if !d.is_integer() {
                    return Err(ScalarError::cast(s, ScalarType::Integer));
                }
                d.to_i64(crate::RoundingMode::Down).map(Value::Integer)
            }
            None => parse_integer(s).map(Value::Integer),
        },
        DataType::Decimal(shape) => {
            let d = match fmt {
                Some(p) => number_format::parse_number(s, p)?,
                None => Decimal::parse(s)?,
            };
            fit_decimal(d, shape).map(Value::Decimal)
        }
        DataType::Float => match fmt {
            Some(p) => Ok(Value::Float(number_format::parse_number(s, p)?.to_f64())),
            None => parse_float(s).map(Value::Float),
        },
        DataType::Blob => match ccsid {
            Some(c) => Ok(Value::from_bytes(codepage::encode(s, c, encoding(opts))?)),
            None => parse_hex(s).map(Value::from_bytes),
        },
        DataType::Bit => match ccsid {
            Some(c) => Ok(Value::Bit(BitString::from_bytes(&codepage::encode(
                s,
                c,
                encoding(opts),
            )?))),
            None => BitString::parse(literal_body(s, "B"))
                .map(Value::Bit)
                .ok_or_else(|| ScalarError::cast(s, ScalarType::Bit)),
        },
        DataType::Date
        | DataType::Time
        | DataType::GmtTime
        | DataType::Timestamp
        | DataType::GmtTimestamp => {
            if let Some(p) = fmt {
                return datetime_format::parse_datetime(s, p, target);
            }
            let keyword = target.name();
            let body = literal_body(s, keyword);
            let relabel = |e: ScalarError| match e {
                ScalarError::CastFailure { detail, .. } => ScalarError::CastFailure {
                    value: s.to_string(),
                    target: keyword.to_string(),
                    detail,
                },
                other => other,
            };
            Ok(match target {
                DataType::Date => Value::Date(Date::parse(body).map_err(relabel)?),
                DataType::Time => Value::Time(Time::parse(body).map_err(relabel)?),
                DataType::GmtTime => Value::GmtTime(Time::parse(body).map_err(relabel)?),
                DataType::Timestamp => Value::Timestamp(Timestamp::parse(body).map_err(relabel)?),
                _ => Value::GmtTimestamp(Timestamp::parse(body).map_err(relabel)?),
            })
        }
        DataType::Interval(q) => parse_interval_text(s, q).map(Value::Interval),
    }
}

/// Reads `INTERVAL '…' QUALIFIER`, or a bare body with the target's qualifier.
fn parse_interval_text(s: &str, q: Option<IntervalQualifier>) -> Result<Interval, ScalarError> {
    let t = s.trim();
    let target = DataType::Interval(q);
    let keyword = ScalarType::Interval.name();
    let n = keyword.len();
    if t.len() > n && t.is_char_boundary(n) && t[..n].eq_ignore_ascii_case(keyword) {
        let rest = t[n..].trim_start();
        let inner = rest
            .strip_prefix('\'')
            .ok_or_else(|| ScalarError::cast(s, target))?;
        let (body, qual) = inner
            .split_once('\'')
            .ok_or_else(|| ScalarError::cast(s, target))?;
        let lit_q = IntervalQualifier::parse(qual).ok_or_else(|| ScalarError::cast(s, target))?;
        let iv = Interval::parse(body, lit_q)?;
        return match q {
            Some(q) => iv.with_qualifier(q),
            None => Ok(iv),
        };
    }
    match q {
        Some(q) => Interval::parse(t, q),
        None => Err(ScalarError::cast_because(
            s,
            target,
            "an interval qualifier is needed",
        )),
    }
}
