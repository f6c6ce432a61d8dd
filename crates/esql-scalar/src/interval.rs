//! ESQL INTERVAL: a year-month or day-time duration with its qualifier.
//!
//! Year-month intervals count months; day-time intervals count microseconds. The
//! qualifier says which fields the literal shows (`INTERVAL '1-02' YEAR TO MONTH`).

use std::fmt;

use crate::datetime::{MICROS_PER_SECOND, parse_field, parse_fraction, write_fraction};
use crate::error::ScalarError;
use crate::value::{DataType, ScalarType};

pub use sluice_tree::{DatetimeField, IntervalQualifier};

/// The microseconds in one of a day-time interval's fields.
fn micros_of(field: DatetimeField) -> i64 {
    match field {
        DatetimeField::Day => 86_400 * MICROS_PER_SECOND,
        DatetimeField::Hour => 3_600 * MICROS_PER_SECOND,
        DatetimeField::Minute => 60 * MICROS_PER_SECOND,
        _ => MICROS_PER_SECOND,
    }
}

/// An ESQL INTERVAL value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    qualifier: IntervalQualifier,
    /// Months for a year-month interval, microseconds for a day-time one.
    amount: i64,
}

impl Interval {
    /// A year-month interval of `months` months.
    pub fn months(months: i64, qualifier: IntervalQualifier) -> Result<Interval, ScalarError> {
        if !qualifier.is_year_month() {
            return Err(ScalarError::DatetimeRange(format!(
                "a month count needs a year-month qualifier, not {qualifier}"
            )));
        }
        Ok(Interval {
            qualifier,
            amount: months,
        })
    }

    /// A day-time interval of `micros` microseconds.
    pub fn micros(micros: i64, qualifier: IntervalQualifier) -> Result<Interval, ScalarError> {
        if qualifier.is_year_month() {
            return Err(ScalarError::DatetimeRange(format!(
                "a duration needs a day-time qualifier, not {qualifier}"
            )));
        }
        Ok(Interval {
            qualifier,
            amount: micros,
        })
    }

    /// The qualifier.
    pub fn qualifier(&self) -> IntervalQualifier {
        self.qualifier
    }

    /// True for a year-month interval.
    pub fn is_year_month(&self) -> bool {
        self.qualifier.is_year_month()
    }

    /// Months of a year-month interval, or zero.
    pub fn total_months(&self) -> i64 {
        if self.is_year_month() { self.amount } else { 0 }
    }

    /// Microseconds of a day-time interval, or zero.
    pub fn total_micros(&self) -> i64 {
        if self.is_year_month() { 0 } else { self.amount }
    }

    /// The same duration shown with another qualifier of the same kind.
    pub fn with_qualifier(&self, qualifier: IntervalQualifier) -> Result<Interval, ScalarError> {
        if qualifier.is_year_month() != self.is_year_month() {
            return Err(ScalarError::cast(
                self.to_string(),
                DataType::Interval(Some(qualifier)),
            ));
        }
        Ok(Interval {
            qualifier,
            amount: self.amount,
        })
    }

    /// The value of `field` as ESQL's EXTRACT sees it (the leading field holds everything
    /// above it); `None` for a field of the other kind of interval.
    pub(crate) fn field_value(&self, field: DatetimeField) -> Option<i64> {
        use DatetimeField as F;
        let (lead, _) = self.qualifier.fields();
        let a = self.amount;
        if self.is_year_month() != (field <= F::Month) {
            return None;
        }
        Some(match field {
            F::Year => a / 12,
            F::Month if lead == F::Month => a,
            F::Month => a % 12,
            F::Day => a / micros_of(F::Day),
            F::Hour | F::Minute | F::Second => {
                let v = a / micros_of(field);
                // A field below the leading one wraps at the size of the one above it.
                match field {
                    _ if lead >= field => v,
                    F::Hour => v % 24,
                    _ => v % 60,
                }
            }
        })
    }

    /// Parses the quoted body of an interval literal for the given qualifier, such as
    /// `1-02` for YEAR TO MONTH or `3 04:05:06.5` for DAY TO SECOND.
    pub fn parse(body: &str, qualifier: IntervalQualifier) -> Result<Interval, ScalarError> {
        let fail = || ScalarError::cast(body, DataType::Interval(Some(qualifier)));
        let t = body.trim();
        let (negative, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (lead, last) = qualifier.fields();
        // Split into numeric fields on the separators SQL uses: '-' between year and
        // month, ' ' between day and hour, ':' between time fields, '.' before the
        // fraction of a second.
        let (main, frac) = if last == DatetimeField::Second {
            match t.split_once('.') {
                Some((m, f)) => (m, parse_fraction(f).ok_or_else(fail)?),
                None => (t, 0),
            }
        } else {
            (t, 0)
        };
        let parts: Vec<&str> = main.split(['-', ' ', ':']).collect();
        let fields: Vec<DatetimeField> = DatetimeField::ALL
            .into_iter()
            .filter(|f| *f >= lead && *f <= last)
            .collect();
        if parts.len() != fields.len() {
            return Err(fail());
        }
        let mut amount: i64 = 0;
        for (i, (part, field)) in parts.iter().zip(&fields).enumerate() {
            let max_digits = if i == 0 { 18 } else { 2 };
            let v = parse_field(Some(part), 1, max_digits).ok_or_else(fail)?;
            if i > 0 {
                let limit = match field {
                    DatetimeField::Month => 12,
                    DatetimeField::Hour => 24,
                    _ => 60,
                };
                if v >= limit {
                    return Err(fail());
                }
            }
            let unit = match field {
                DatetimeField::Year => 12,
                DatetimeField::Month => 1,
                f => micros_of(*f),
            };
            amount = v
                .checked_mul(unit)
                .and_then(|x| amount.checked_add(x))
                .ok_or_else(|| ScalarError::overflow("INTERVAL", ScalarType::Interval))?;
        }
        amount = amount
            .checked_add(frac)
            .ok_or_else(|| ScalarError::overflow("INTERVAL", ScalarType::Interval))?;
        Ok(Interval {
            qualifier,
            amount: if negative { -amount } else { amount },
        })
    }

    /// The quoted body of the literal, without `INTERVAL` and the qualifier.
    pub fn body(&self) -> String {
        let mut out = String::new();
        if self.amount < 0 {
            out.push('-');
        }
        let a = self.amount.unsigned_abs();
        let (lead, last) = self.qualifier.fields();
        if self.is_year_month() {
            match (lead, last) {
                (DatetimeField::Year, DatetimeField::Month) => {
                    out.push_str(&format!("{}-{:02}", a / 12, a % 12))
                }
                (DatetimeField::Year, _) => out.push_str(&(a / 12).to_string()),
                _ => out.push_str(&a.to_string()),
            }
            return out;
        }
        let mut rest = a;
        for f in DatetimeField::ALL
            .into_iter()
            .filter(|f| *f >= lead && *f <= last)
        {
            let unit = micros_of(f) as u64;
            let v = rest / unit;
            rest %= unit;
            if f == lead {
                out.push_str(&v.to_string());
            } else {
                out.push(if f == DatetimeField::Hour { ' ' } else { ':' });
                out.push_str(&format!("{v:02}"));
            }
        }
        if last == DatetimeField::Second {
            let _ = write_fraction(&mut out, rest as i64);
        }
        out
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "INTERVAL '{}' {}", self.body(), self.qualifier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use IntervalQualifier as Q;

    #[test]
    fn interval_literals_round_trip() {
        for (body, q) in [
            ("1-02", Q::YearToMonth),
            ("5", Q::Year),
            ("14", Q::Month),
            ("3 04:05:06.5", Q::DayToSecond),
            ("2 10", Q::DayToHour),
            ("10:30", Q::HourToMinute),
            ("-90", Q::Minute),
            ("1:02:03", Q::HourToSecond),
            ("45.25", Q::Second),
        ] {
            let iv = Interval::parse(body, q).unwrap();
            assert_eq!(iv.body(), body, "{q:?}");
        }
    }

    #[test]
    fn interval_prints_as_literal() {
        let iv = Interval::parse("1-02", Q::YearToMonth).unwrap();
        assert_eq!(iv.to_string(), "INTERVAL '1-02' YEAR TO MONTH");
        assert_eq!(iv.total_months(), 14);
    }

    #[test]
    fn interval_rejects_bad_bodies() {
        assert!(Interval::parse("1-13", Q::YearToMonth).is_err());
        assert!(Interval::parse("abc", Q::Day).is_err());
        assert!(Interval::parse("1 2 3", Q::DayToHour).is_err());
        assert!(Interval::parse("99999999999999999999", Q::Second).is_err());
    }
}
