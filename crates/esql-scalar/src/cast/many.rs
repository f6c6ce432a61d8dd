//! Many-to-one CASTs (table 2 of "Supported casts"): several numbers to a DATE,
//! TIME, TIMESTAMP or INTERVAL, and a DATE with a TIME to a TIMESTAMP.

use crate::datetime::{Date, MICROS_PER_SECOND, Time, Timestamp};
use crate::decimal::{Decimal, RoundingMode};
use crate::error::ScalarError;
use crate::interval::{Interval, IntervalQualifier};
use crate::value::{DataType, ScalarType, Value};

fn describe(values: &[Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| crate::cast::to_character(v).unwrap_or_else(|_| v.type_name().to_string()))
        .collect();
    parts.join(", ")
}

fn whole(values: &[Value], target: DataType, v: &Value) -> Result<i64, ScalarError> {
    match v {
        Value::Integer(i) => Ok(*i),
        Value::Decimal(d) if d.is_integer() => d.to_i64(RoundingMode::Down),
        Value::Float(f) if f.fract() == 0.0 => Decimal::from_f64(*f)?.to_i64(RoundingMode::Down),
        _ => Err(ScalarError::cast_because(
            describe(values),
            target.to_string(),
            format!(
                "{} is not a whole number",
                crate::cast::to_character(v).unwrap_or_default()
            ),
        )),
    }
}

/// Seconds with a fraction, as microseconds.
fn seconds_micros(values: &[Value], target: DataType, v: &Value) -> Result<i64, ScalarError> {
    let d = match v {
        Value::Integer(i) => Decimal::from_i64(*i),
        Value::Decimal(d) => *d,
        Value::Float(f) => Decimal::from_f64(*f)?,
        _ => {
            return Err(ScalarError::cast_because(
                describe(values),
                target.to_string(),
                "seconds must be a number",
            ));
        }
    };
    d.checked_mul(Decimal::from_i64(MICROS_PER_SECOND))?
        .to_i64(RoundingMode::Down)
}

fn time_of(
    values: &[Value],
    target: DataType,
    h: &Value,
    m: &Value,
    s: &Value,
) -> Result<Time, ScalarError> {
    let micros = seconds_micros(values, target, s)?;
    let fail = |e: ScalarError| {
        ScalarError::cast_because(describe(values), target.to_string(), e.to_string())
    };
    Time::new(
        whole(values, target, h)?,
        whole(values, target, m)?,
        micros.div_euclid(MICROS_PER_SECOND),
        micros.rem_euclid(MICROS_PER_SECOND),
    )
    .map_err(fail)
}

/// `CAST(a, b, … AS target)`. NULL in any position gives NULL.
pub fn cast_many(values: &[Value], target: DataType) -> Result<Value, ScalarError> {
    if values.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if values.len() == 1 {
        return crate::cast::cast(&values[0], target);
    }
    let fail = |e: ScalarError| {
        ScalarError::cast_because(describe(values), target.to_string(), e.to_string())
    };
    let unsupported = || ScalarError::UnsupportedCast {
        from: "a list of values",
        to: format!("{target} from {} values", values.len()),
    };
    match (target, values) {
        (DataType::Date, [y, m, d]) => {
            let date = Date::new(
                whole(values, target, y)?,
                whole(values, target, m)?,
                whole(values, target, d)?,
            )
            .map_err(fail)?;
            Ok(Value::Date(date))
        }
        (DataType::Time, [h, m, s]) => Ok(Value::Time(time_of(values, target, h, m, s)?)),
        (DataType::GmtTime, [h, m, s]) => Ok(Value::GmtTime(time_of(values, target, h, m, s)?)),
        (DataType::Timestamp | DataType::GmtTimestamp, [first, second]) => {
            let ts = match (first, second) {
                (Value::Date(d), Value::Time(t) | Value::GmtTime(t)) => Timestamp::new(*d, *t),
                _ => return Err(unsupported()),
            };
            Ok(if target == DataType::Timestamp {
                Value::Timestamp(ts)
            } else {
                Value::GmtTimestamp(ts)
            })
        }
        (DataType::Timestamp | DataType::GmtTimestamp, [y, mo, d, h, mi, s]) => {
            let date = Date::new(
                whole(values, target, y)?,
                whole(values, target, mo)?,
                whole(values, target, d)?,
            )
            .map_err(fail)?;
            let ts = Timestamp::new(date, time_of(values, target, h, mi, s)?);
            Ok(if target == DataType::Timestamp {
                Value::Timestamp(ts)
            } else {
                Value::GmtTimestamp(ts)
            })
        }
        (DataType::Interval(Some(q)), _) => interval_from_fields(values, q, target),
        _ => Err(unsupported()),
    }
}

fn interval_from_fields(
    values: &[Value],
    q: IntervalQualifier,
    target: DataType,
) -> Result<Value, ScalarError> {
    use IntervalQualifier as Q;
    const HOUR: i64 = 3_600 * MICROS_PER_SECOND;
    const MINUTE: i64 = 60 * MICROS_PER_SECOND;
    const DAY: i64 = 24 * HOUR;
    let units: &[i64] = match q {
        Q::YearToMonth => &[12, 1],
        Q::DayToHour => &[DAY, HOUR],
        Q::DayToMinute => &[DAY, HOUR, MINUTE],
        Q::DayToSecond => &[DAY, HOUR, MINUTE, MICROS_PER_SECOND],
        Q::HourToMinute => &[HOUR, MINUTE],
        Q::HourToSecond => &[HOUR, MINUTE, MICROS_PER_SECOND],
        Q::MinuteToSecond => &[MINUTE, MICROS_PER_SECOND],
        _ => &[],
    };
    if units.len() != values.len() {
        return Err(ScalarError::UnsupportedCast {
            from: "a list of values",
            to: format!("{target} from {} values", values.len()),
        });
    }
    let overflow = || ScalarError::overflow("CAST", ScalarType::Interval);
    let mut total: i64 = 0;
    for (v, unit) in values.iter().zip(units) {
        let part = if *unit == MICROS_PER_SECOND {
            seconds_micros(values, target, v)?
        } else {
            whole(values, target, v)?
                .checked_mul(*unit)
                .ok_or_else(overflow)?
        };
        total = total.checked_add(part).ok_or_else(overflow)?;
    }
    let iv = if q.is_year_month() {
        Interval::months(total, q)?
    } else {
        Interval::micros(total, q)?
    };
    Ok(Value::Interval(iv))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(n: i64) -> Value {
        Value::Integer(n)
    }

    #[test]
    fn numbers_make_dates_times_and_timestamps() {
        assert_eq!(
            cast_many(&[i(2024), i(1), i(31)], DataType::Date).unwrap(),
            Value::Date(Date::new(2024, 1, 31).unwrap())
        );
        let sec = Value::Decimal(Decimal::parse("5.25").unwrap());
        assert_eq!(
            cast_many(&[i(13), i(4), sec.clone()], DataType::Time).unwrap(),
            Value::Time(Time::parse("13:04:05.25").unwrap())
        );
        let ts = cast_many(
            &[i(2024), i(1), i(31), i(13), i(4), sec],
            DataType::GmtTimestamp,
        )
        .unwrap();
        assert_eq!(
            ts,
            Value::GmtTimestamp(Timestamp::parse("2024-01-31 13:04:05.25").unwrap())
        );
        let d = Value::Date(Date::new(2024, 1, 31).unwrap());
        let t = Value::Time(Time::parse("01:02:03").unwrap());
        assert_eq!(
            cast_many(&[d, t], DataType::Timestamp).unwrap(),
            Value::Timestamp(Timestamp::parse("2024-01-31 01:02:03").unwrap())
        );
    }

    #[test]
    fn numbers_make_intervals() {
        let ym = cast_many(
            &[i(1), i(2)],
            DataType::Interval(Some(IntervalQualifier::YearToMonth)),
        )
        .unwrap();
        assert_eq!(
            crate::cast::to_character(&ym).unwrap(),
            "INTERVAL '1-02' YEAR TO MONTH"
        );
        let ds = cast_many(
            &[i(3), i(4), i(5), i(6)],
            DataType::Interval(Some(IntervalQualifier::DayToSecond)),
        )
        .unwrap();
        assert_eq!(
            crate::cast::to_character(&ds).unwrap(),
            "INTERVAL '3 04:05:06' DAY TO SECOND"
        );
    }

    #[test]
    fn bad_lists_are_reported() {
        assert!(cast_many(&[i(2024), i(2), i(30)], DataType::Date).is_err());
        assert!(cast_many(&[i(2024), i(2)], DataType::Date).is_err());
        assert!(
            cast_many(
                &[i(1), i(2)],
                DataType::Interval(Some(IntervalQualifier::Day))
            )
            .is_err()
        );
        assert!(cast_many(&[Value::from_text("x"), i(1), i(1)], DataType::Date).is_err());
        assert_eq!(
            cast_many(&[i(2024), Value::Null, i(1)], DataType::Date).unwrap(),
            Value::Null
        );
    }
}
