//! ESQL INTERVAL: a year-month or day-time duration with its qualifier.
//!
//! Year-month intervals count months; day-time intervals count microseconds. The
//! qualifier says which fields the literal shows (`INTERVAL '1-02' YEAR TO MONTH`).

use std::fmt;

use crate::datetime::{MICROS_PER_SECOND, parse_field, parse_fraction, write_fraction};
use crate::error::ScalarError;

/// The fields an INTERVAL is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntervalQualifier {
    /// YEAR
    Year,
    /// YEAR TO MONTH
    YearToMonth,
    /// MONTH
    Month,
    /// DAY
    Day,
    /// DAY TO HOUR
    DayToHour,
    /// DAY TO MINUTE
    DayToMinute,
    /// DAY TO SECOND
    DayToSecond,
    /// HOUR
    Hour,
    /// HOUR TO MINUTE
    HourToMinute,
    /// HOUR TO SECOND
    HourToSecond,
    /// MINUTE
    Minute,
    /// MINUTE TO SECOND
    MinuteToSecond,
    /// SECOND
    Second,
}

/// One field of an interval, in descending size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Field {
    fn micros(self) -> i64 {
        match self {
            Field::Day => 86_400 * MICROS_PER_SECOND,
            Field::Hour => 3_600 * MICROS_PER_SECOND,
            Field::Minute => 60 * MICROS_PER_SECOND,
            _ => MICROS_PER_SECOND,
        }
    }
}

impl IntervalQualifier {
    fn fields(self) -> (Field, Field) {
        use IntervalQualifier as Q;
        match self {
            Q::Year => (Field::Year, Field::Year),
            Q::YearToMonth => (Field::Year, Field::Month),
            Q::Month => (Field::Month, Field::Month),
            Q::Day => (Field::Day, Field::Day),
            Q::DayToHour => (Field::Day, Field::Hour),
            Q::DayToMinute => (Field::Day, Field::Minute),
            Q::DayToSecond => (Field::Day, Field::Second),
            Q::Hour => (Field::Hour, Field::Hour),
            Q::HourToMinute => (Field::Hour, Field::Minute),
            Q::HourToSecond => (Field::Hour, Field::Second),
            Q::Minute => (Field::Minute, Field::Minute),
            Q::MinuteToSecond => (Field::Minute, Field::Second),
            Q::Second => (Field::Second, Field::Second),
        }
    }

    /// True for YEAR, YEAR TO MONTH and MONTH.
    pub fn is_year_month(self) -> bool {
        matches!(
            self,
            IntervalQualifier::Year | IntervalQualifier::YearToMonth | IntervalQualifier::Month
        )
    }

    /// The qualifier as ESQL writes it, such as `DAY TO SECOND`.
    pub fn keyword(self) -> &'static str {
        use IntervalQualifier as Q;
        match self {
            Q::Year => "YEAR",
            Q::YearToMonth => "YEAR TO MONTH",
            Q::Month => "MONTH",
            Q::Day => "DAY",
            Q::DayToHour => "DAY TO HOUR",
            Q::DayToMinute => "DAY TO MINUTE",
            Q::DayToSecond => "DAY TO SECOND",
            Q::Hour => "HOUR",
            Q::HourToMinute => "HOUR TO MINUTE",
            Q::HourToSecond => "HOUR TO SECOND",
            Q::Minute => "MINUTE",
            Q::MinuteToSecond => "MINUTE TO SECOND",
            Q::Second => "SECOND",
        }
    }

    /// Parses `YEAR TO MONTH` and the like (case-insensitive, any spacing).
    pub fn parse(text: &str) -> Option<IntervalQualifier> {
        let words: Vec<String> = text
            .split_whitespace()
            .map(str::to_ascii_uppercase)
            .collect();
        let joined = words.join(" ");
        ALL.iter().copied().find(|q| q.keyword() == joined)
    }
}

const ALL: [IntervalQualifier; 13] = [
    IntervalQualifier::Year,
    IntervalQualifier::YearToMonth,
    IntervalQualifier::Month,
    IntervalQualifier::Day,
    IntervalQualifier::DayToHour,
    IntervalQualifier::DayToMinute,
    IntervalQualifier::DayToSecond,
    IntervalQualifier::Hour,
    IntervalQualifier::HourToMinute,
    IntervalQualifier::HourToSecond,
    IntervalQualifier::Minute,
    IntervalQualifier::MinuteToSecond,
    IntervalQualifier::Second,
];

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
                "a month count needs a year-month qualifier, not {}",
                qualifier.keyword()
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
                "a duration needs a day-time qualifier, not {}",
                qualifier.keyword()
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
                format!("INTERVAL {}", qualifier.keyword()),
            ));
        }
        Ok(Interval {
            qualifier,
            amount: self.amount,
        })
    }

    /// The value of the named field as ESQL's EXTRACT sees it (the leading field holds
    /// everything above it; seconds include their fraction in micros).
    pub(crate) fn field_value(&self, name: &str) -> Option<i64> {
        let (lead, _) = self.qualifier.fields();
        let a = self.amount;
        Some(match name {
            "YEAR" if self.is_year_month() => a / 12,
            "MONTH" if self.is_year_month() => {
                if lead == Field::Month {
                    a
                } else {
                    a % 12
                }
            }
            "DAY" if !self.is_year_month() => a / Field::Day.micros(),
            "HOUR" if !self.is_year_month() => {
                let h = a / Field::Hour.micros();
                if lead < Field::Hour { h % 24 } else { h }
            }
            "MINUTE" if !self.is_year_month() => {
                let m = a / Field::Minute.micros();
                if lead < Field::Minute { m % 60 } else { m }
            }
            "SECOND" if !self.is_year_month() => {
                let s = a / MICROS_PER_SECOND;
                if lead < Field::Second { s % 60 } else { s }
            }
            _ => return None,
        })
    }

    /// Parses the quoted body of an interval literal for the given qualifier, such as
    /// `1-02` for YEAR TO MONTH or `3 04:05:06.5` for DAY TO SECOND.
    pub fn parse(body: &str, qualifier: IntervalQualifier) -> Result<Interval, ScalarError> {
        let target = format!("INTERVAL {}", qualifier.keyword());
        let fail = || ScalarError::cast(body, target.clone());
        let t = body.trim();
        let (negative, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (lead, last) = qualifier.fields();
        // Split into numeric fields on the separators SQL uses: '-' between year and
        // month, ' ' between day and hour, ':' between time fields, '.' before the
        // fraction of a second.
        let (main, frac) = if last == Field::Second {
            match t.split_once('.') {
                Some((m, f)) => (m, parse_fraction(f).ok_or_else(fail)?),
                None => (t, 0),
            }
        } else {
            (t, 0)
        };
        let parts: Vec<&str> = main.split(['-', ' ', ':']).collect();
        let order = [
            Field::Year,
            Field::Month,
            Field::Day,
            Field::Hour,
            Field::Minute,
            Field::Second,
        ];
        let fields: Vec<Field> = order
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
                    Field::Month => 12,
                    Field::Hour => 24,
                    _ => 60,
                };
                if v >= limit {
                    return Err(fail());
                }
            }
            let unit = match field {
                Field::Year => 12,
                Field::Month => 1,
                f => f.micros(),
            };
            amount = v
                .checked_mul(unit)
                .and_then(|x| amount.checked_add(x))
                .ok_or_else(|| ScalarError::overflow("INTERVAL", "INTERVAL"))?;
        }
        amount = amount
            .checked_add(frac)
            .ok_or_else(|| ScalarError::overflow("INTERVAL", "INTERVAL"))?;
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
                (Field::Year, Field::Month) => out.push_str(&format!("{}-{:02}", a / 12, a % 12)),
                (Field::Year, _) => out.push_str(&(a / 12).to_string()),
                _ => out.push_str(&a.to_string()),
            }
            return out;
        }
        let micros_of = |f: Field| f.micros() as u64;
        let mut rest = a;
        let order = [Field::Day, Field::Hour, Field::Minute, Field::Second];
        for f in order.into_iter().filter(|f| *f >= lead && *f <= last) {
            let unit = micros_of(f);
            let v = rest / unit;
            rest %= unit;
            if f == lead {
                out.push_str(&v.to_string());
            } else {
                out.push(if f == Field::Hour { ' ' } else { ':' });
                out.push_str(&format!("{v:02}"));
            }
        }
        if last == Field::Second {
            let _ = write_fraction(&mut out, rest as i64);
        }
        out
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "INTERVAL '{}' {}", self.body(), self.qualifier.keyword())
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

    #[test]
    fn interval_qualifier_parses_keywords() {
        assert_eq!(
            IntervalQualifier::parse("day  to second"),
            Some(Q::DayToSecond)
        );
        assert_eq!(IntervalQualifier::parse("fortnight"), None);
    }
}
