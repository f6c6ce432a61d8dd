//! The interval qualifiers (`YEAR TO MONTH`, `DAY TO SECOND`, …) and the date-time fields they
//! run between, as ESQL names them.
//!
//! This is the one table of qualifiers: a qualifier's code is what [`Value::Interval`] keeps in
//! the tree, and the ESQL scalar layer and compiler use these same values.
//!
//! [`Value::Interval`]: crate::Value::Interval

use std::fmt;

/// A field of a date, time or interval, largest first: a qualifier runs from a larger field to a
/// smaller one, and EXTRACT takes one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DatetimeField {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl DatetimeField {
    /// Every field, largest first.
    pub const ALL: [DatetimeField; 6] = [
        DatetimeField::Year,
        DatetimeField::Month,
        DatetimeField::Day,
        DatetimeField::Hour,
        DatetimeField::Minute,
        DatetimeField::Second,
    ];

    /// The field's ESQL name, such as `MINUTE`.
    pub const fn name(self) -> &'static str {
        match self {
            DatetimeField::Year => "YEAR",
            DatetimeField::Month => "MONTH",
            DatetimeField::Day => "DAY",
            DatetimeField::Hour => "HOUR",
            DatetimeField::Minute => "MINUTE",
            DatetimeField::Second => "SECOND",
        }
    }

    /// The field named `word`, case-insensitively.
    pub fn from_name(word: &str) -> Option<DatetimeField> {
        DatetimeField::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(word))
    }
}

impl fmt::Display for DatetimeField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The fields an INTERVAL is written with. The discriminant is the qualifier's code in the tree
/// ([`IntervalQualifier::code`]); the order is that of the ESQL reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum IntervalQualifier {
    Year,
    YearToMonth,
    Month,
    Day,
    DayToHour,
    DayToMinute,
    DayToSecond,
    Hour,
    HourToMinute,
    HourToSecond,
    Minute,
    MinuteToSecond,
    Second,
}

impl IntervalQualifier {
    /// Every qualifier, in code order: `ALL[q.code()] == q`.
    pub const ALL: [IntervalQualifier; 13] = [
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

    /// The largest and the smallest field (the same field for `DAY`).
    pub const fn fields(self) -> (DatetimeField, DatetimeField) {
        use DatetimeField as F;
        use IntervalQualifier as Q;
        match self {
            Q::Year => (F::Year, F::Year),
            Q::YearToMonth => (F::Year, F::Month),
            Q::Month => (F::Month, F::Month),
            Q::Day => (F::Day, F::Day),
            Q::DayToHour => (F::Day, F::Hour),
            Q::DayToMinute => (F::Day, F::Minute),
            Q::DayToSecond => (F::Day, F::Second),
            Q::Hour => (F::Hour, F::Hour),
            Q::HourToMinute => (F::Hour, F::Minute),
            Q::HourToSecond => (F::Hour, F::Second),
            Q::Minute => (F::Minute, F::Minute),
            Q::MinuteToSecond => (F::Minute, F::Second),
            Q::Second => (F::Second, F::Second),
        }
    }

    /// The qualifier `lead [TO last]`; `None` for one ESQL does not have, such as `MONTH TO DAY`,
    /// `SECOND TO HOUR` or `DAY TO DAY`.
    pub fn from_fields(
        lead: DatetimeField,
        last: Option<DatetimeField>,
    ) -> Option<IntervalQualifier> {
        let last = match last {
            None => lead,
            Some(last) if last > lead => last,
            Some(_) => return None,
        };
        IntervalQualifier::ALL
            .into_iter()
            .find(|q| q.fields() == (lead, last))
    }

    /// True for YEAR, YEAR TO MONTH and MONTH, whose intervals count months; the others count
    /// microseconds.
    pub const fn is_year_month(self) -> bool {
        matches!(
            self,
            IntervalQualifier::Year | IntervalQualifier::YearToMonth | IntervalQualifier::Month
        )
    }

    /// The code the tree keeps for this qualifier in [`Value::Interval`](crate::Value::Interval).
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The qualifier with tree code `code`; `None` for a code no qualifier has.
    pub fn from_code(code: u8) -> Option<IntervalQualifier> {
        IntervalQualifier::ALL.get(usize::from(code)).copied()
    }

    /// Parses `DAY TO SECOND` and the like (case-insensitive, any spacing).
    pub fn parse(text: &str) -> Option<IntervalQualifier> {
        let mut words = text.split_whitespace();
        let lead = DatetimeField::from_name(words.next()?)?;
        let last = match (words.next(), words.next(), words.next()) {
            (None, _, _) => None,
            (Some(to), Some(last), None) if to.eq_ignore_ascii_case("TO") => {
                Some(DatetimeField::from_name(last)?)
            }
            _ => return None,
        };
        IntervalQualifier::from_fields(lead, last)
    }
}

/// The qualifier as ESQL writes it, such as `DAY TO SECOND`.
impl fmt::Display for IntervalQualifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fields() {
            (lead, last) if lead == last => f.write_str(lead.name()),
            (lead, last) => write!(f, "{} TO {}", lead.name(), last.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualifier_round_trips_through_its_code_for_every_qualifier() {
        for (i, q) in IntervalQualifier::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(q.code()), i, "{q}");
            assert_eq!(IntervalQualifier::from_code(q.code()), Some(q));
        }
        assert_eq!(IntervalQualifier::from_code(13), None);
        // The codes are kept in trees; they must not change.
        assert_eq!(IntervalQualifier::Year.code(), 0);
        assert_eq!(IntervalQualifier::DayToSecond.code(), 6);
        assert_eq!(IntervalQualifier::Second.code(), 12);
    }

    #[test]
    fn qualifier_round_trips_through_its_name_for_every_qualifier() {
        for q in IntervalQualifier::ALL {
            let name = q.to_string();
            assert_eq!(IntervalQualifier::parse(&name), Some(q), "{name}");
            assert_eq!(
                IntervalQualifier::parse(&name.to_ascii_lowercase()),
                Some(q)
            );
            let (lead, last) = q.fields();
            let to = (last != lead).then_some(last);
            assert_eq!(IntervalQualifier::from_fields(lead, to), Some(q));
            assert!(lead <= last, "{q}");
        }
    }

    #[test]
    fn qualifier_parse_rejects_pairs_esql_lacks() {
        assert_eq!(
            IntervalQualifier::parse("day  to second"),
            Some(IntervalQualifier::DayToSecond)
        );
        for bad in [
            "",
            "fortnight",
            "MONTH TO DAY",
            "SECOND TO HOUR",
            "DAY TO DAY",
            "DAY SECOND",
            "DAY TO",
            "DAY TO SECOND X",
        ] {
            assert_eq!(IntervalQualifier::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn year_month_qualifiers_are_those_led_by_year_or_month() {
        for q in IntervalQualifier::ALL {
            let lead = q.fields().0;
            assert_eq!(q.is_year_month(), lead <= DatetimeField::Month, "{q}");
        }
    }

    #[test]
    fn datetime_field_round_trips_through_its_name() {
        for f in DatetimeField::ALL {
            assert_eq!(DatetimeField::from_name(f.name()), Some(f));
            assert_eq!(DatetimeField::from_name(&f.name().to_lowercase()), Some(f));
        }
        assert_eq!(DatetimeField::from_name("WEEK"), None);
    }
}
