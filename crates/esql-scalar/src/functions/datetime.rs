//! Date and time functions: the CURRENT_… values, LOCAL_TIMEZONE and EXTRACT.
//!
//! The current values are computed from one clock reading passed in, so that the
//! runtime can give every reference within one node evaluation the same instant,
//! as the broker does.

use crate::clock;
use crate::datetime::{Date, MICROS_PER_SECOND, Timestamp};
use crate::error::ScalarError;
use crate::interval::{DatetimeField, Interval, IntervalQualifier};
use crate::value::Value;

/// The value of a CURRENT_… special register (`CURRENT_DATE`, `CURRENT_TIME`,
/// `CURRENT_TIMESTAMP`, `CURRENT_GMTDATE`, `CURRENT_GMTTIME`,
/// `CURRENT_GMTTIMESTAMP`) or `LOCAL_TIMEZONE`, at the given UTC instant.
pub fn current_at(name: &str, utc_micros: i64) -> Result<Value, ScalarError> {
    let offset = clock::local_offset_seconds_at(utc_micros) * MICROS_PER_SECOND;
    let gmt = Timestamp::from_micros(utc_micros)?;
    let local = Timestamp::from_micros(utc_micros + offset)?;
    Ok(match name.to_ascii_uppercase().as_str() {
        "CURRENT_DATE" => Value::Date(local.date),
        "CURRENT_TIME" => Value::Time(local.time),
        "CURRENT_TIMESTAMP" => Value::Timestamp(local),
        "CURRENT_GMTDATE" => Value::Date(gmt.date),
        "CURRENT_GMTTIME" => Value::GmtTime(gmt.time),
        "CURRENT_GMTTIMESTAMP" => Value::GmtTimestamp(gmt),
        "LOCAL_TIMEZONE" => {
            Value::Interval(Interval::micros(offset, IntervalQualifier::HourToMinute)?)
        }
        other => return Err(ScalarError::UnknownFunction(other.to_string())),
    })
}

/// [`current_at`] for the present moment.
pub fn current(name: &str) -> Result<Value, ScalarError> {
    current_at(name, clock::now_utc_micros())
}

/// The fields EXTRACT accepts besides the date-time fields ([`DatetimeField`]).
const CALENDAR_FIELDS: [&str; 5] = [
    "DAYOFYEAR",
    "DAYOFWEEK",
    "WEEKOFYEAR",
    "WEEKOFMONTH",
    "QUARTER",
];

/// EXTRACT(field FROM source). Every field gives an INTEGER except SECOND, which
/// gives a FLOAT carrying the fraction of the second.
pub fn extract(field: &str, source: &Value) -> Result<Value, ScalarError> {
    let f = field.trim().to_ascii_uppercase();
    let datetime_field = DatetimeField::from_name(&f);
    if datetime_field.is_none() && !CALENDAR_FIELDS.contains(&f.as_str()) {
        return Err(ScalarError::arg(
            "EXTRACT",
            1,
            format!("{field} is not a datetime field"),
        ));
    }
    let no_field = || {
        ScalarError::arg(
            "EXTRACT",
            2,
            format!("{} has no {f} field", source.type_name()),
        )
    };
    let (date, time): (Option<Date>, Option<crate::Time>) = match source {
        Value::Null => return Ok(Value::Null),
        Value::Date(d) => (Some(*d), None),
        Value::Time(t) | Value::GmtTime(t) => (None, Some(*t)),
        Value::Timestamp(ts) | Value::GmtTimestamp(ts) => (Some(ts.date), Some(ts.time)),
        Value::Interval(iv) => {
            let field = datetime_field.ok_or_else(no_field)?;
            let v = iv.field_value(field).ok_or_else(no_field)?;
            if field == DatetimeField::Second {
                let micros = v * MICROS_PER_SECOND + iv.total_micros() % MICROS_PER_SECOND;
                return Ok(Value::Float(micros as f64 / MICROS_PER_SECOND as f64));
            }
            return Ok(Value::Integer(v));
        }
        other => {
            return Err(ScalarError::arg(
                "EXTRACT",
                2,
                format!("expected a datetime, not {}", other.type_name()),
            ));
        }
    };
    let from_date = |g: fn(&Date) -> i64| date.as_ref().map(g).ok_or_else(no_field);
    let v = match datetime_field {
        Some(DatetimeField::Year) => from_date(|d| i64::from(d.year()))?,
        Some(DatetimeField::Month) => from_date(|d| i64::from(d.month()))?,
        Some(DatetimeField::Day) => from_date(|d| i64::from(d.day()))?,
        Some(DatetimeField::Hour) => i64::from(time.ok_or_else(no_field)?.hour()),
        Some(DatetimeField::Minute) => i64::from(time.ok_or_else(no_field)?.minute()),
        Some(DatetimeField::Second) => {
            let t = time.ok_or_else(no_field)?;
            let micros = t.micros_of_day() % (60 * MICROS_PER_SECOND);
            return Ok(Value::Float(micros as f64 / MICROS_PER_SECOND as f64));
        }
        None => match f.as_str() {
            "DAYOFYEAR" => from_date(|d| i64::from(d.day_of_year()))?,
            "DAYOFWEEK" => from_date(|d| i64::from(d.day_of_week()))?,
            "WEEKOFYEAR" => from_date(|d| i64::from(d.week_of_year()))?,
            "WEEKOFMONTH" => from_date(|d| i64::from(d.week_of_month()))?,
            _ => from_date(|d| i64::from((d.month() - 1) / 3 + 1))?,
        },
    };
    Ok(Value::Integer(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::Time;

    fn ts(s: &str) -> Value {
        Value::Timestamp(Timestamp::parse(s).unwrap())
    }

    #[test]
    fn extract_reads_every_field() {
        let v = ts("2024-05-31 13:45:07.25");
        let get = |f: &str| extract(f, &v).unwrap();
        assert_eq!(get("YEAR"), Value::Integer(2024));
        assert_eq!(get("month"), Value::Integer(5));
        assert_eq!(get("DAY"), Value::Integer(31));
        assert_eq!(get("HOUR"), Value::Integer(13));
        assert_eq!(get("MINUTE"), Value::Integer(45));
        assert_eq!(get("SECOND"), Value::Float(7.25));
        assert_eq!(get("DAYOFYEAR"), Value::Integer(152));
        assert_eq!(get("DAYOFWEEK"), Value::Integer(6)); // Friday
        assert_eq!(get("QUARTER"), Value::Integer(2));
        assert_eq!(get("WEEKOFYEAR"), Value::Integer(22));
        assert_eq!(get("WEEKOFMONTH"), Value::Integer(5));
    }

    #[test]
    fn extract_rejects_missing_fields() {
        let d = Value::Date(Date::new(2024, 1, 1).unwrap());
        assert!(extract("HOUR", &d).is_err());
        let t = Value::Time(Time::parse("10:00:00").unwrap());
        assert!(extract("YEAR", &t).is_err());
        assert!(extract("FORTNIGHT", &d).is_err());
        assert!(extract("YEAR", &Value::Integer(1)).is_err());
        assert_eq!(extract("YEAR", &Value::Null).unwrap(), Value::Null);
    }

    #[test]
    fn extract_reads_intervals() {
        let iv = Value::Interval(
            Interval::parse("3 04:05:06.5", IntervalQualifier::DayToSecond).unwrap(),
        );
        assert_eq!(extract("DAY", &iv).unwrap(), Value::Integer(3));
        assert_eq!(extract("HOUR", &iv).unwrap(), Value::Integer(4));
        assert_eq!(extract("SECOND", &iv).unwrap(), Value::Float(6.5));
        let ym = Value::Interval(Interval::parse("2-03", IntervalQualifier::YearToMonth).unwrap());
        assert_eq!(extract("YEAR", &ym).unwrap(), Value::Integer(2));
        assert_eq!(extract("MONTH", &ym).unwrap(), Value::Integer(3));
        assert!(extract("DAY", &ym).is_err());
    }

    #[test]
    fn current_values_share_one_instant() {
        let now = 1_717_000_000_000_000; // 2024-05-29 16:26:40 UTC
        let Value::GmtTimestamp(g) = current_at("CURRENT_GMTTIMESTAMP", now).unwrap() else {
            panic!("GMTTIMESTAMP expected")
        };
        assert_eq!(g.to_string(), "2024-05-29 16:26:40");
        assert_eq!(
            current_at("CURRENT_GMTDATE", now).unwrap(),
            Value::Date(g.date)
        );
        assert_eq!(
            current_at("CURRENT_GMTTIME", now).unwrap(),
            Value::GmtTime(g.time)
        );
        let Value::Interval(tz) = current_at("LOCAL_TIMEZONE", now).unwrap() else {
            panic!("INTERVAL expected")
        };
        let Value::Timestamp(local) = current_at("CURRENT_TIMESTAMP", now).unwrap() else {
            panic!("TIMESTAMP expected")
        };
        assert_eq!(local.to_micros() - g.to_micros(), tz.total_micros());
        assert!(current("CURRENT_DATE").is_ok());
        assert!(current("CURRENT_WEEK").is_err());
    }
}
