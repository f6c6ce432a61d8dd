//! Arithmetic operators with ESQL type promotion, and the `||` operator.
//!
//! INTEGER op INTEGER stays INTEGER (overflow is an error, division truncates);
//! INTEGER op DECIMAL is DECIMAL; anything op FLOAT is FLOAT. Dates, times and
//! timestamps combine with INTERVALs; INTERVALs scale by numbers. NULL in, NULL out.

use crate::cast::write_character;
use crate::char_string::{CharString, CharWriter};
use crate::datetime::{Date, MICROS_PER_DAY, Time, Timestamp};
use crate::decimal::{Decimal, RoundingMode};
use crate::error::ScalarError;
use crate::interval::{Interval, IntervalQualifier};
use crate::value::{BitString, ScalarType, Value};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
        }
    }
}

fn mismatch(op: &str, a: &Value, b: &Value) -> ScalarError {
    ScalarError::TypeMismatch {
        operator: op.to_string(),
        left: a.type_name(),
        right: b.type_name(),
    }
}

/// `a + b`.
pub fn add(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    binary(Op::Add, a, b)
}

/// `a - b`. DATE, TIME and TIMESTAMP differences give an INTERVAL with the
/// default qualifier of [`subtract_datetimes`].
pub fn subtract(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    binary(Op::Sub, a, b)
}

/// `a * b`.
pub fn multiply(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    binary(Op::Mul, a, b)
}

/// `a / b`.
pub fn divide(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    binary(Op::Div, a, b)
}

/// Unary minus.
pub fn negate(a: &Value) -> Result<Value, ScalarError> {
    match a {
        Value::Null => Ok(Value::Null),
        Value::Integer(i) => i
            .checked_neg()
            .map(Value::Integer)
            .ok_or_else(|| ScalarError::overflow("-", ScalarType::Integer)),
        Value::Decimal(d) => Ok(Value::Decimal(-*d)),
        Value::Float(f) => Ok(Value::Float(-f)),
        Value::Interval(iv) => scale_interval(iv, &Value::Integer(-1), Op::Mul),
        other => Err(ScalarError::TypeMismatch {
            operator: "-".into(),
            left: other.type_name(),
            right: other.type_name(),
        }),
    }
}

/// The numeric class two operands promote to.
enum Promoted {
    Int(i64, i64),
    Dec(Decimal, Decimal),
    Float(f64, f64),
}

fn promote(a: &Value, b: &Value) -> Option<Promoted> {
    use Value::*;
    Some(match (a, b) {
        (Integer(x), Integer(y)) => Promoted::Int(*x, *y),
        (Integer(x), Decimal(y)) => Promoted::Dec(crate::Decimal::from_i64(*x), *y),
        (Decimal(x), Integer(y)) => Promoted::Dec(*x, crate::Decimal::from_i64(*y)),
        (Decimal(x), Decimal(y)) => Promoted::Dec(*x, *y),
        (Float(x), y) => Promoted::Float(*x, as_f64(y)?),
        (x, Float(y)) => Promoted::Float(as_f64(x)?, *y),
        _ => return None,
    })
}

/// A numeric value as a double, or `None` for other types.
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Decimal(d) => Some(d.to_f64()),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn numeric(op: Op, p: Promoted) -> Result<Value, ScalarError> {
    match p {
        Promoted::Int(x, y) => {
            let r = match op {
                Op::Add => x.checked_add(y),
                Op::Sub => x.checked_sub(y),
                Op::Mul => x.checked_mul(y),
                Op::Div => {
                    if y == 0 {
                        return Err(ScalarError::DivisionByZero {
                            operation: "/".into(),
                        });
                    }
                    x.checked_div(y)
                }
            };
            r.map(Value::Integer)
                .ok_or_else(|| ScalarError::overflow(op.symbol(), ScalarType::Integer))
        }
        Promoted::Dec(x, y) => Ok(Value::Decimal(match op {
            Op::Add => x.checked_add(y)?,
            Op::Sub => x.checked_sub(y)?,
            Op::Mul => x.checked_mul(y)?,
            Op::Div => x.checked_div(y)?,
        })),
        Promoted::Float(x, y) => {
            if op == Op::Div && y == 0.0 {
                return Err(ScalarError::DivisionByZero {
                    operation: "/".into(),
                });
            }
            let r = match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
            };
            finite(r, op.symbol())
        }
    }
}

/// A FLOAT result, or an overflow error for infinity or NaN.
pub(crate) fn finite(f: f64, op: &str) -> Result<Value, ScalarError> {
    if f.is_finite() {
        Ok(Value::Float(f))
    } else {
        Err(ScalarError::overflow(op, ScalarType::Float))
    }
}

fn binary(op: Op, a: &Value, b: &Value) -> Result<Value, ScalarError> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    if let Some(p) = promote(a, b) {
        return numeric(op, p);
    }
    use Value::*;
    match (op, a, b) {
        (Op::Add, Date(d), Interval(iv)) | (Op::Add, Interval(iv), Date(d)) => {
            Ok(Date(shift_date(*d, iv, 1)?))
        }
        (Op::Sub, Date(d), Interval(iv)) => Ok(Date(shift_date(*d, iv, -1)?)),
        (Op::Add, Time(t), Interval(iv)) | (Op::Add, Interval(iv), Time(t)) => {
            Ok(Time(shift_time(*t, iv, 1)))
        }
        (Op::Sub, Time(t), Interval(iv)) => Ok(Time(shift_time(*t, iv, -1))),
        (Op::Add, GmtTime(t), Interval(iv)) | (Op::Add, Interval(iv), GmtTime(t)) => {
            Ok(GmtTime(shift_time(*t, iv, 1)))
        }
        (Op::Sub, GmtTime(t), Interval(iv)) => Ok(GmtTime(shift_time(*t, iv, -1))),
        (Op::Add, Timestamp(t), Interval(iv)) | (Op::Add, Interval(iv), Timestamp(t)) => {
            Ok(Timestamp(shift_timestamp(*t, iv, 1)?))
        }
        (Op::Sub, Timestamp(t), Interval(iv)) => Ok(Timestamp(shift_timestamp(*t, iv, -1)?)),
        (Op::Add, GmtTimestamp(t), Interval(iv)) | (Op::Add, Interval(iv), GmtTimestamp(t)) => {
            Ok(GmtTimestamp(shift_timestamp(*t, iv, 1)?))
        }
        (Op::Sub, GmtTimestamp(t), Interval(iv)) => Ok(GmtTimestamp(shift_timestamp(*t, iv, -1)?)),
        (Op::Add, Date(d), Time(t)) | (Op::Add, Time(t), Date(d)) => {
            Ok(Timestamp(crate::Timestamp::new(*d, *t)))
        }
        (Op::Add, Date(d), GmtTime(t)) | (Op::Add, GmtTime(t), Date(d)) => {
            Ok(GmtTimestamp(crate::Timestamp::new(*d, *t)))
        }
        (Op::Add | Op::Sub, Interval(x), Interval(y)) => combine_intervals(op, x, y),
        (Op::Mul, Interval(iv), n) | (Op::Mul, n, Interval(iv)) => scale_interval(iv, n, Op::Mul),
        (Op::Div, Interval(iv), n) => scale_interval(iv, n, Op::Div),
        (Op::Sub, Date(_), Date(_))
        | (Op::Sub, Time(_), Time(_))
        | (Op::Sub, GmtTime(_), GmtTime(_))
        | (Op::Sub, Timestamp(_), Timestamp(_))
        | (Op::Sub, GmtTimestamp(_), GmtTimestamp(_)) => subtract_datetimes(a, b, None),
        _ => Err(mismatch(op.symbol(), a, b)),
    }
}

fn shift_date(d: Date, iv: &Interval, sign: i64) -> Result<Date, ScalarError> {
    if iv.is_year_month() {
        return d.add_months(sign * iv.total_months());
    }
    // Only whole days move a DATE.
    let days = iv.total_micros() / MICROS_PER_DAY;
    Date::from_days(d.to_days() + sign * days)
}

fn shift_time(t: Time, iv: &Interval, sign: i64) -> Time {
    // A TIME is a clock reading: it wraps around midnight and ignores months.
    let delta = (iv.total_micros() % MICROS_PER_DAY) * sign;
    Time::from_micros_wrapping(t.micros_of_day() + delta)
}

fn shift_timestamp(t: Timestamp, iv: &Interval, sign: i64) -> Result<Timestamp, ScalarError> {
    if iv.is_year_month() {
        let date = t.date.add_months(sign * iv.total_months())?;
        return Ok(Timestamp::new(date, t.time));
    }
    let micros = iv
        .total_micros()
        .checked_mul(sign)
        .and_then(|d| t.to_micros().checked_add(d))
        .ok_or_else(|| ScalarError::DatetimeRange("timestamp arithmetic overflow".into()))?;
    Timestamp::from_micros(micros)
}

/// The qualifier that spans the fields of both (which are of the same kind).
fn widest(a: IntervalQualifier, b: IntervalQualifier) -> IntervalQualifier {
    let ((a_lead, a_last), (b_lead, b_last)) = (a.fields(), b.fields());
    let (lead, last) = (a_lead.min(b_lead), a_last.max(b_last));
    IntervalQualifier::from_fields(lead, (last != lead).then_some(last)).unwrap_or(a)
}

fn combine_intervals(op: Op, x: &Interval, y: &Interval) -> Result<Value, ScalarError> {
    if x.is_year_month() != y.is_year_month() {
        return Err(ScalarError::TypeMismatch {
            operator: op.symbol().into(),
            left: "INTERVAL (year-month)",
            right: "INTERVAL (day-time)",
        });
    }
    let q = widest(x.qualifier(), y.qualifier());
    let overflow = || ScalarError::overflow(op.symbol(), ScalarType::Interval);
    if x.is_year_month() {
        let (a, b) = (x.total_months(), y.total_months());
        let r = if op == Op::Add {
            a.checked_add(b)
        } else {
            a.checked_sub(b)
        };
        Ok(Value::Interval(Interval::months(
            r.ok_or_else(overflow)?,
            q,
        )?))
    } else {
        let (a, b) = (x.total_micros(), y.total_micros());
        let r = if op == Op::Add {
            a.checked_add(b)
        } else {
            a.checked_sub(b)
        };
        Ok(Value::Interval(Interval::micros(
            r.ok_or_else(overflow)?,
            q,
        )?))
    }
}

fn scale_interval(iv: &Interval, n: &Value, op: Op) -> Result<Value, ScalarError> {
    let amount = if iv.is_year_month() {
        iv.total_months()
    } else {
        iv.total_micros()
    };
    let overflow = || ScalarError::overflow(op.symbol(), ScalarType::Interval);
    let zero = || ScalarError::DivisionByZero {
        operation: "/".into(),
    };
    let scaled: i64 = match n {
        Value::Integer(k) => match op {
            Op::Mul => amount.checked_mul(*k).ok_or_else(overflow)?,
            _ if *k == 0 => return Err(zero()),
            _ => amount.checked_div(*k).ok_or_else(overflow)?,
        },
        Value::Decimal(k) => {
            let a = Decimal::from_i64(amount);
            let r = if op == Op::Mul {
                a.checked_mul(*k)?
            } else {
                a.checked_div(*k)?
            };
            r.to_i64(RoundingMode::Down)?
        }
        Value::Float(k) => {
            if op == Op::Div && *k == 0.0 {
                return Err(zero());
            }
            let r = if op == Op::Mul {
                amount as f64 * k
            } else {
                amount as f64 / k
            };
            if !r.is_finite() || r.abs() >= 9.2e18 {
                return Err(overflow());
            }
            r.trunc() as i64
        }
        other => {
            return Err(ScalarError::TypeMismatch {
                operator: op.symbol().into(),
                left: ScalarType::Interval.name(),
                right: other.type_name(),
            });
        }
    };
    let result = if iv.is_year_month() {
        Interval::months(scaled, iv.qualifier())?
    } else {
        Interval::micros(scaled, iv.qualifier())?
    };
    Ok(Value::Interval(result))
}

/// `(a - b) qualifier`: the difference of two DATEs, TIMEs or TIMESTAMPs (of the same
/// kind) as an INTERVAL. Without a qualifier, DATEs give DAY, TIMEs HOUR TO SECOND
/// and TIMESTAMPs DAY TO SECOND. A year-month qualifier counts whole months.
pub fn subtract_datetimes(
    a: &Value,
    b: &Value,
    qualifier: Option<IntervalQualifier>,
) -> Result<Value, ScalarError> {
    use Value::*;
    let (ma, mb, default) = match (a, b) {
        (Null, _) | (_, Null) => return Ok(Value::Null),
        (Date(x), Date(y)) => (
            x.to_days() * MICROS_PER_DAY,
            y.to_days() * MICROS_PER_DAY,
            IntervalQualifier::Day,
        ),
        (Time(x), Time(y)) | (GmtTime(x), GmtTime(y)) => (
            x.micros_of_day(),
            y.micros_of_day(),
            IntervalQualifier::HourToSecond,
        ),
        (Timestamp(x), Timestamp(y)) | (GmtTimestamp(x), GmtTimestamp(y)) => {
            (x.to_micros(), y.to_micros(), IntervalQualifier::DayToSecond)
        }
        _ => return Err(mismatch("-", a, b)),
    };
    let q = qualifier.unwrap_or(default);
    if q.is_year_month() {
        let (da, db) = (date_of(a), date_of(b));
        let (Some(da), Some(db)) = (da, db) else {
            return Err(mismatch("-", a, b));
        };
        let mut months = (i64::from(da.0.year()) * 12 + i64::from(da.0.month()))
            - (i64::from(db.0.year()) * 12 + i64::from(db.0.month()));
        // Only completed months count: compare the rest of each value.
        let rest_a = (da.0.day(), da.1);
        let rest_b = (db.0.day(), db.1);
        if months > 0 && rest_a < rest_b {
            months -= 1;
        } else if months < 0 && rest_a > rest_b {
            months += 1;
        }
        return Ok(Value::Interval(crate::Interval::months(months, q)?));
    }
    Ok(Value::Interval(crate::Interval::micros(ma - mb, q)?))
}

fn date_of(v: &Value) -> Option<(Date, i64)> {
    match v {
        Value::Date(d) => Some((*d, 0)),
        Value::Timestamp(t) | Value::GmtTimestamp(t) => Some((t.date, t.time.micros_of_day())),
        _ => None,
    }
}

/// `a || b`: CHARACTER, BLOB and BIT strings join with their own kind; a CHARACTER
/// joined with anything else takes the other operand as `CAST(x AS CHARACTER)`.
pub fn concat(a: &Value, b: &Value) -> Result<Value, ScalarError> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Character(x), Value::Character(y)) => {
            Ok(Value::Character(CharString::concat(x, y)))
        }
        (Value::Blob(x), Value::Blob(y)) => {
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend_from_slice(x);
            v.extend_from_slice(y);
            Ok(Value::Blob(v.into()))
        }
        (Value::Bit(x), Value::Bit(y)) => {
            let mut v = x.0.clone();
            v.extend_from_slice(&y.0);
            Ok(Value::Bit(BitString(v)))
        }
        (Value::Blob(_) | Value::Bit(_), _) | (_, Value::Blob(_) | Value::Bit(_))
            if !matches!(a, Value::Character(_)) && !matches!(b, Value::Character(_)) =>
        {
            Err(mismatch("||", a, b))
        }
        _ => {
            let mut w = CharWriter::new();
            write_character(a, &mut w)?;
            write_character(b, &mut w)?;
            Ok(Value::Character(w.finish()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Value {
        Value::Decimal(Decimal::parse(s).unwrap())
    }

    #[test]
    fn integer_arithmetic_checks_overflow() {
        assert_eq!(
            add(&Value::Integer(2), &Value::Integer(3)).unwrap(),
            Value::Integer(5)
        );
        assert!(add(&Value::Integer(i64::MAX), &Value::Integer(1)).is_err());
        assert!(multiply(&Value::Integer(i64::MIN), &Value::Integer(-1)).is_err());
        assert_eq!(
            divide(&Value::Integer(7), &Value::Integer(2)).unwrap(),
            Value::Integer(3)
        );
        assert!(divide(&Value::Integer(7), &Value::Integer(0)).is_err());
        assert!(negate(&Value::Integer(i64::MIN)).is_err());
    }

    #[test]
    fn mixed_arithmetic_promotes() {
        assert_eq!(add(&Value::Integer(1), &dec("0.5")).unwrap(), dec("1.5"));
        assert_eq!(
            multiply(&dec("1.5"), &Value::Float(2.0)).unwrap(),
            Value::Float(3.0)
        );
        assert_eq!(add(&Value::Null, &Value::Integer(1)).unwrap(), Value::Null);
        assert!(add(&Value::from_text("1"), &Value::Integer(1)).is_err());
        assert!(divide(&Value::Float(1.0), &Value::Float(0.0)).is_err());
        assert!(multiply(&Value::Float(1e308), &Value::Float(10.0)).is_err());
    }

    #[test]
    fn dates_move_by_intervals() {
        let d = Value::Date(Date::parse("2024-01-31").unwrap());
        let month = Value::Interval(Interval::parse("1", IntervalQualifier::Month).unwrap());
        let days = Value::Interval(Interval::parse("30", IntervalQualifier::Day).unwrap());
        assert_eq!(
            add(&d, &month).unwrap(),
            Value::Date(Date::parse("2024-02-29").unwrap())
        );
        assert_eq!(
            subtract(&d, &days).unwrap(),
            Value::Date(Date::parse("2024-01-01").unwrap())
        );
        let t = Value::Time(Time::parse("23:30:00").unwrap());
        let hour = Value::Interval(Interval::parse("1", IntervalQualifier::Hour).unwrap());
        assert_eq!(
            add(&t, &hour).unwrap(),
            Value::Time(Time::parse("00:30:00").unwrap())
        );
    }

    #[test]
    fn timestamp_difference_is_an_interval() {
        let a = Value::Timestamp(Timestamp::parse("2024-03-01 12:00:00").unwrap());
        let b = Value::Timestamp(Timestamp::parse("2024-02-28 11:30:00").unwrap());
        let Value::Interval(iv) = subtract(&a, &b).unwrap() else {
            panic!("interval expected")
        };
        assert_eq!(iv.to_string(), "INTERVAL '2 00:30:00' DAY TO SECOND");
        let Value::Interval(m) =
            subtract_datetimes(&a, &b, Some(IntervalQualifier::Month)).unwrap()
        else {
            panic!("interval expected")
        };
        // 28 February to 1 March is not yet a whole month.
        assert_eq!(m.total_months(), 0);
        let c = Value::Timestamp(Timestamp::parse("2024-03-28 12:00:00").unwrap());
        let Value::Interval(m) =
            subtract_datetimes(&c, &b, Some(IntervalQualifier::Month)).unwrap()
        else {
            panic!("interval expected")
        };
        assert_eq!(m.total_months(), 1);
        let d1 = Value::Date(Date::parse("2024-03-01").unwrap());
        let d2 = Value::Date(Date::parse("2024-01-01").unwrap());
        let Value::Interval(days) = subtract(&d1, &d2).unwrap() else {
            panic!("interval expected")
        };
        assert_eq!(days.to_string(), "INTERVAL '60' DAY");
    }

    #[test]
    fn intervals_scale_and_combine() {
        let h = Value::Interval(Interval::parse("1:30", IntervalQualifier::HourToMinute).unwrap());
        let Value::Interval(x) = multiply(&h, &Value::Integer(3)).unwrap() else {
            panic!()
        };
        assert_eq!(x.body(), "4:30");
        let Value::Interval(y) = divide(&h, &Value::Integer(2)).unwrap() else {
            panic!()
        };
        assert_eq!(y.body(), "0:45");
        let s = Value::Interval(Interval::parse("30", IntervalQualifier::Second).unwrap());
        let Value::Interval(z) = add(&h, &s).unwrap() else {
            panic!()
        };
        assert_eq!(z.to_string(), "INTERVAL '1:30:30' HOUR TO SECOND");
        let ym = Value::Interval(Interval::parse("1", IntervalQualifier::Year).unwrap());
        assert!(add(&h, &ym).is_err());
    }

    #[test]
    fn concatenation_joins_like_types() {
        assert_eq!(
            concat(&Value::from_text("ab"), &Value::from_text("cd")).unwrap(),
            Value::from_text("abcd")
        );
        assert_eq!(
            concat(&Value::from_bytes(vec![1u8]), &Value::from_bytes(vec![2u8])).unwrap(),
            Value::from_bytes(vec![1u8, 2])
        );
        assert_eq!(
            concat(&Value::from_text("n="), &Value::Integer(5)).unwrap(),
            Value::from_text("n=5")
        );
        assert_eq!(
            concat(&Value::from_text("a"), &Value::Null).unwrap(),
            Value::Null
        );
        assert!(concat(&Value::from_bytes(vec![1u8]), &Value::Integer(1)).is_err());
    }
}
