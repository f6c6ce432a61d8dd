//! CAST between ESQL types, with CCSID, ENCODING, FORMAT and DEFAULT.
//!
//! The pairs follow the "Supported casts" table of the ESQL reference; a pair it
//! does not list is [`ScalarError::UnsupportedCast`]. A NULL source gives NULL. When
//! DEFAULT is given, a source of the wrong format or range gives the default instead.

mod datetime_format;
mod many;
mod number_format;
mod text;

pub use datetime_format::{format_datetime, parse_datetime};
pub use many::cast_many;
pub use number_format::{format_number, parse_number};
pub use text::{to_character, write_character};

use crate::clock;
use crate::datetime::{Date, MICROS_PER_DAY, MICROS_PER_SECOND, Time, Timestamp};
use crate::decimal::{Decimal, RoundingMode};
use crate::error::ScalarError;
use crate::interval::{Interval, IntervalQualifier};
use crate::value::{BitString, DataType, ScalarType, Value};

/// The optional clauses of a CAST.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CastOptions {
    /// CCSID: the code page of a CHARACTER ↔ BLOB/BIT conversion.
    pub ccsid: Option<i64>,
    /// ENCODING: the byte order of a UTF-16 conversion or a BLOB ↔ INTEGER one.
    pub encoding: Option<i64>,
    /// FORMAT: a number or datetime pattern.
    pub format: Option<String>,
    /// DEFAULT: the value to give when the source cannot be converted.
    pub default: Option<Value>,
}

impl CastOptions {
    /// Options with only a FORMAT.
    pub fn format(pattern: &str) -> CastOptions {
        CastOptions {
            format: Some(pattern.to_string()),
            ..CastOptions::default()
        }
    }

    /// Options with only a CCSID.
    pub fn ccsid(ccsid: i64) -> CastOptions {
        CastOptions {
            ccsid: Some(ccsid),
            ..CastOptions::default()
        }
    }
}

/// `CAST(value AS target)`.
pub fn cast(value: &Value, target: DataType) -> Result<Value, ScalarError> {
    cast_with(value, target, &CastOptions::default())
}

/// `CAST(value AS target CCSID … ENCODING … FORMAT … DEFAULT …)`.
pub fn cast_with(
    value: &Value,
    target: DataType,
    opts: &CastOptions,
) -> Result<Value, ScalarError> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    match convert(value, target, opts) {
        Err(
            e @ (ScalarError::CastFailure { .. }
            | ScalarError::Overflow { .. }
            | ScalarError::DatetimeRange(_)),
        ) => match &opts.default {
            Some(d) => {
                let plain = CastOptions::default();
                convert(d, target, &plain).or(Err(e))
            }
            None => Err(e),
        },
        other => other,
    }
}

/// `CAST(s AS INTEGER)` or `CAST(s AS FLOAT)` of character data without options, straight from
/// text that need not be a [`Value`] first (a message field's bytes); `None` for any other
/// target. The result is the one [`cast`] gives for `Value::Character(s)`.
pub fn cast_text(s: &str, target: DataType) -> Option<Result<Value, ScalarError>> {
    match target {
        DataType::Integer => Some(text::parse_integer(s).map(Value::Integer)),
        DataType::Float => Some(text::parse_float(s).map(Value::Float)),
        _ => None,
    }
}

fn unsupported(value: &Value, target: DataType) -> ScalarError {
    ScalarError::UnsupportedCast {
        from: value.type_name(),
        to: target.to_string(),
    }
}

fn convert(value: &Value, target: DataType, opts: &CastOptions) -> Result<Value, ScalarError> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    if let Value::Character(s) = value {
        return text::from_character(s, target, opts);
    }
    match target {
        DataType::Character => text::character_value(value, opts),
        DataType::Boolean => match value {
            Value::Boolean(b) => Ok(Value::Boolean(*b)),
            _ => Err(unsupported(value, target)),
        },
        DataType::Integer => to_integer(value, opts).map(Value::Integer),
        DataType::Decimal(shape) => {
            let d = match value {
                Value::Integer(i) => Decimal::from_i64(*i),
                Value::Decimal(d) => *d,
                Value::Float(f) => Decimal::from_f64(*f)?,
                Value::Interval(iv) => interval_to_decimal(iv, value, target)?,
                _ => return Err(unsupported(value, target)),
            };
            fit_decimal(d, shape).map(Value::Decimal)
        }
        DataType::Float => match value {
            Value::Integer(i) => Ok(Value::Float(*i as f64)),
            Value::Decimal(d) => Ok(Value::Float(d.to_f64())),
            Value::Float(f) => Ok(Value::Float(*f)),
            Value::Interval(iv) => Ok(Value::Float(
                interval_to_decimal(iv, value, target)?.to_f64(),
            )),
            _ => Err(unsupported(value, target)),
        },
        DataType::Blob => match value {
            Value::Blob(b) => Ok(Value::Blob(b.clone())),
            Value::Bit(bits) => bits.to_bytes().map(Value::from_bytes).ok_or_else(|| {
                ScalarError::cast_because(
                    format!("B'{}'", bits.digits()),
                    ScalarType::Blob,
                    "the bit count is not a multiple of 8",
                )
            }),
            Value::Integer(i) => Ok(Value::from_bytes(integer_bytes(*i, opts).to_vec())),
            _ => Err(unsupported(value, target)),
        },
        DataType::Bit => match value {
            Value::Bit(b) => Ok(Value::Bit(b.clone())),
            Value::Blob(b) => Ok(Value::Bit(BitString::from_bytes(b))),
            Value::Integer(i) => Ok(Value::Bit(BitString::from_bytes(&i.to_be_bytes()))),
            _ => Err(unsupported(value, target)),
        },
        DataType::Date => match value {
            Value::Date(d) => Ok(Value::Date(*d)),
            Value::Timestamp(t) => Ok(Value::Date(t.date)),
            Value::GmtTimestamp(t) => Ok(Value::Date(t.date)),
            _ => Err(unsupported(value, target)),
        },
        DataType::Time | DataType::GmtTime => {
            let gmt = target == DataType::GmtTime;
            let t = match value {
                Value::Time(t) if gmt => clock::local_to_gmt(Timestamp::new(today(), *t))?.time,
                Value::GmtTime(t) if !gmt => clock::gmt_to_local(Timestamp::new(today(), *t))?.time,
                Value::Time(t) | Value::GmtTime(t) => *t,
                Value::Timestamp(ts) if gmt => clock::local_to_gmt(*ts)?.time,
                Value::GmtTimestamp(ts) if !gmt => clock::gmt_to_local(*ts)?.time,
                Value::Timestamp(ts) | Value::GmtTimestamp(ts) => ts.time,
                _ => return Err(unsupported(value, target)),
            };
            Ok(if gmt {
                Value::GmtTime(t)
            } else {
                Value::Time(t)
            })
        }
        DataType::Timestamp | DataType::GmtTimestamp => {
            let gmt = target == DataType::GmtTimestamp;
            let ts = match value {
                Value::Date(d) => Timestamp::new(*d, Time::MIDNIGHT),
                // A time alone takes today's date, as the reference describes.
                Value::Time(t) | Value::GmtTime(t) => Timestamp::new(today(), *t),
                Value::Timestamp(t) if gmt => clock::local_to_gmt(*t)?,
                Value::GmtTimestamp(t) if !gmt => clock::gmt_to_local(*t)?,
                Value::Timestamp(t) | Value::GmtTimestamp(t) => *t,
                _ => return Err(unsupported(value, target)),
            };
            Ok(if gmt {
                Value::GmtTimestamp(ts)
            } else {
                Value::Timestamp(ts)
            })
        }
        DataType::Interval(q) => to_interval(value, q, target),
    }
}

fn today() -> Date {
    let now = clock::now_utc_micros();
    let local = now + clock::local_offset_seconds_at(now) * MICROS_PER_SECOND;
    Date::from_days(local.div_euclid(MICROS_PER_DAY)).unwrap_or(Date::MIN)
}

fn integer_bytes(i: i64, opts: &CastOptions) -> [u8; 8] {
    if opts.encoding.is_some_and(|e| e & 0x0F == 2) {
        i.to_le_bytes()
    } else {
        i.to_be_bytes()
    }
}

fn to_integer(value: &Value, opts: &CastOptions) -> Result<i64, ScalarError> {
    match value {
        Value::Integer(i) => Ok(*i),
        Value::Decimal(d) => d.to_i64(RoundingMode::HalfUp),
        Value::Float(f) => {
            // FLOAT to INTEGER truncates (ESQL FLOAT data type, "Rounding").
            let t = f.trunc();
            if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
                Ok(t as i64)
            } else {
                Err(ScalarError::overflow("CAST", ScalarType::Integer))
            }
        }
        Value::Bit(b) => {
            if b.len() > 64 {
                return Err(ScalarError::cast_because(
                    format!("B'{}'", b.digits()),
                    ScalarType::Integer,
                    "more than 64 bits",
                ));
            }
            Ok(b.0
                .iter()
                .fold(0u64, |acc, &bit| (acc << 1) | u64::from(bit)) as i64)
        }
        Value::Blob(bytes) => {
            if bytes.len() > 8 {
                return Err(ScalarError::cast_because(
                    crate::codepage::hex_literal(bytes),
                    ScalarType::Integer,
                    "more than 8 bytes",
                ));
            }
            let little = opts.encoding.is_some_and(|e| e & 0x0F == 2);
            let mut buf = [0u8; 8];
            if little {
                buf[..bytes.len()].copy_from_slice(bytes);
                Ok(i64::from_le_bytes(buf))
            } else {
                buf[8 - bytes.len()..].copy_from_slice(bytes);
                Ok(i64::from_be_bytes(buf))
            }
        }
        Value::Interval(iv) => {
            interval_to_decimal(iv, value, DataType::Integer)?.to_i64(RoundingMode::Down)
        }
        _ => Err(unsupported(value, DataType::Integer)),
    }
}

/// Rounds a DECIMAL to `DECIMAL(precision, scale)` and checks its size.
fn fit_decimal(d: Decimal, shape: Option<(u32, u32)>) -> Result<Decimal, ScalarError> {
    let Some((precision, scale)) = shape else {
        return Ok(d);
    };
    let rounded = d.round_to(i64::from(scale), RoundingMode::HalfUp)?;
    let rescaled = if rounded.exponent() > -(scale as i32) {
        // Pad with zeros so that the value shows its declared scale; a value too big
        // for the precision fails here or below.
        let shift = u32::try_from(rounded.exponent() + scale as i32).unwrap_or(u32::MAX);
        let padded = 10i128
            .checked_pow(shift)
            .and_then(|p| rounded.coefficient().checked_mul(p))
            .ok_or_else(|| ScalarError::overflow("CAST", ScalarType::Decimal))?;
        Decimal::from_parts(padded, -(scale as i32))?
    } else {
        rounded
    };
    let digits = rescaled.coefficient().unsigned_abs().to_string().len() as u32;
    if digits > precision {
        return Err(ScalarError::overflow("CAST", ScalarType::Decimal));
    }
    Ok(rescaled)
}

/// A single-field interval as a number of its field's units.
fn interval_to_decimal(
    iv: &Interval,
    value: &Value,
    target: DataType,
) -> Result<Decimal, ScalarError> {
    use IntervalQualifier as Q;
    let (amount, unit) = match iv.qualifier() {
        Q::Year => (iv.total_months(), 12),
        Q::Month => (iv.total_months(), 1),
        Q::Day => (iv.total_micros(), MICROS_PER_DAY),
        Q::Hour => (iv.total_micros(), 3_600 * MICROS_PER_SECOND),
        Q::Minute => (iv.total_micros(), 60 * MICROS_PER_SECOND),
        Q::Second => (iv.total_micros(), MICROS_PER_SECOND),
        _ => return Err(unsupported(value, target)),
    };
    Decimal::from_i64(amount).checked_div(Decimal::from_i64(unit))
}

fn to_interval(
    value: &Value,
    q: Option<IntervalQualifier>,
    target: DataType,
) -> Result<Value, ScalarError> {
    use IntervalQualifier as Q;
    match value {
        Value::Interval(iv) => match q {
            None => Ok(Value::Interval(*iv)),
            Some(q) => iv.with_qualifier(q).map(Value::Interval),
        },
        Value::Integer(_) | Value::Decimal(_) | Value::Float(_) => {
            let q = q.ok_or_else(|| unsupported(value, target))?;
            let n = match value {
                Value::Integer(i) => Decimal::from_i64(*i),
                Value::Decimal(d) => *d,
                Value::Float(f) => Decimal::from_f64(*f)?,
                _ => return Err(unsupported(value, target)),
            };
            let (unit, months) = match q {
                Q::Year => (12, true),
                Q::Month => (1, true),
                Q::Day => (MICROS_PER_DAY, false),
                Q::Hour => (3_600 * MICROS_PER_SECOND, false),
                Q::Minute => (60 * MICROS_PER_SECOND, false),
                Q::Second => (MICROS_PER_SECOND, false),
                _ => return Err(unsupported(value, target)),
            };
            let amount = n
                .checked_mul(Decimal::from_i64(unit))?
                .to_i64(RoundingMode::Down)?;
            let iv = if months {
                Interval::months(amount, q)?
            } else {
                Interval::micros(amount, q)?
            };
            Ok(Value::Interval(iv))
        }
        _ => Err(unsupported(value, target)),
    }
}

#[cfg(test)]
mod tests;
