//! ESQL DATE, TIME and TIMESTAMP values (GMTTIME and GMTTIMESTAMP share the
//! representation and differ only in the [`crate::Value`] variant).
//!
//! Calendar arithmetic is proleptic Gregorian on day numbers counted from
//! 1970-01-01, which keeps every operation total and panic-free.

use sluice_tree::text_form;
use std::fmt;

use crate::error::ScalarError;
use crate::value::ScalarType;

/// Microseconds in one day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// Microseconds in one second.
pub const MICROS_PER_SECOND: i64 = 1_000_000;

/// A calendar date from 0001-01-01 to 9999-12-31.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

/// A time of day to the microsecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    micros: i64,
}

/// A date and time of day to the microsecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// The calendar date.
    pub date: Date,
    /// The time of day.
    pub time: Time,
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The number of days in a month of a year.
pub fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

impl Date {
    /// The earliest DATE.
    pub const MIN: Date = Date {
        year: 1,
        month: 1,
        day: 1,
    };
    /// The latest DATE.
    pub const MAX: Date = Date {
        year: 9999,
        month: 12,
        day: 31,
    };

    /// A date from its parts, checked.
    pub fn new(year: i64, month: i64, day: i64) -> Result<Date, ScalarError> {
        let bad = || {
            ScalarError::DatetimeRange(format!("{year:04}-{month:02}-{day:02} is not a valid date"))
        };
        if !(1..=9999).contains(&year) || !(1..=12).contains(&month) {
            return Err(bad());
        }
        let (y, m) = (year as i32, month as u8);
        if day < 1 || day > i64::from(days_in_month(y, m)) {
            return Err(bad());
        }
        Ok(Date {
            year: y,
            month: m,
            day: day as u8,
        })
    }

    /// The year (1–9999).
    pub fn year(&self) -> i32 {
        self.year
    }

    /// The month (1–12).
    pub fn month(&self) -> u8 {
        self.month
    }

    /// The day of the month (1–31).
    pub fn day(&self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (negative before it).
    pub fn to_days(&self) -> i64 {
        text_form::days_from_civil(
            i64::from(self.year),
            u32::from(self.month),
            u32::from(self.day),
        )
    }

    /// The date `days` after 1970-01-01; errors outside 0001–9999.
    pub fn from_days(days: i64) -> Result<Date, ScalarError> {
        let range = Date::MIN.to_days()..=Date::MAX.to_days();
        if !range.contains(&days) {
            return Err(ScalarError::DatetimeRange(format!(
                "day number {days} is outside the years 0001 to 9999"
            )));
        }
        let (year, month, day) = text_form::civil_from_days(days);
        Date::new(year, i64::from(month), i64::from(day))
    }

    /// Day of the week as ESQL numbers it: 1 = Sunday … 7 = Saturday.
    pub fn day_of_week(&self) -> u8 {
        // 1970-01-01 was a Thursday (5 in this numbering).
        ((self.to_days() + 4).rem_euclid(7) + 1) as u8
    }

    /// Day of the year, 1–366.
    pub fn day_of_year(&self) -> u16 {
        let jan1 = Date {
            year: self.year,
            month: 1,
            day: 1,
        };
        (self.to_days() - jan1.to_days() + 1) as u16
    }

    /// Week of the year with weeks starting on Sunday and week 1 holding 1 January.
    pub fn week_of_year(&self) -> u8 {
        let jan1 = Date {
            year: self.year,
            month: 1,
            day: 1,
        };
        let offset = i64::from(jan1.day_of_week()) - 1;
        ((i64::from(self.day_of_year()) - 1 + offset) / 7 + 1) as u8
    }

    /// Week of the month with weeks starting on Sunday and week 1 holding the 1st.
    pub fn week_of_month(&self) -> u8 {
        let first = Date {
            year: self.year,
            month: self.month,
            day: 1,
        };
        let offset = i64::from(first.day_of_week()) - 1;
        ((i64::from(self.day) - 1 + offset) / 7 + 1) as u8
    }

    /// Adds whole months, keeping the day or clamping it to the month's last day.
    pub fn add_months(&self, months: i64) -> Result<Date, ScalarError> {
        let total = i64::from(self.year) * 12 + i64::from(self.month) - 1;
        let total = total
            .checked_add(months)
            .ok_or_else(|| ScalarError::DatetimeRange("month arithmetic overflow".into()))?;
        let year = total.div_euclid(12);
        let month = total.rem_euclid(12) + 1;
        if !(1..=9999).contains(&year) {
            return Err(ScalarError::DatetimeRange(format!(
                "year {year} is out of range"
            )));
        }
        let last = i64::from(days_in_month(year as i32, month as u8));
        Date::new(year, month, i64::from(self.day).min(last))
    }

    /// Parses the literal body `yyyy-mm-dd`.
    pub fn parse(text: &str) -> Result<Date, ScalarError> {
        let t = text.trim();
        let fail = || ScalarError::cast(text, ScalarType::Date);
        let mut parts = t.splitn(3, '-');
        let y = parse_field(parts.next(), 1, 4).ok_or_else(fail)?;
        let m = parse_field(parts.next(), 1, 2).ok_or_else(fail)?;
        let d = parse_field(parts.next(), 1, 2).ok_or_else(fail)?;
        Date::new(y, m, d)
            .map_err(|e| ScalarError::cast_because(text, ScalarType::Date, e.to_string()))
    }
}

/// Parses an unsigned decimal field of `min..=max` ASCII digits.
pub(crate) fn parse_field(part: Option<&str>, min: usize, max: usize) -> Option<i64> {
    let p = part?;
    if p.len() < min || p.len() > max || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok()
}

/// Parses a fraction of a second written after the point, to microseconds
/// (digits past the sixth are dropped).
pub(crate) fn parse_fraction(frac: &str) -> Option<i64> {
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros = 0i64;
    for (i, b) in frac.bytes().take(6).enumerate() {
        micros += i64::from(b - b'0') * 10i64.pow(5 - i as u32);
    }
    Some(micros)
}

/// Writes `.ffffff` without trailing zeros, or nothing for a whole second.
pub(crate) fn write_fraction(f: &mut impl fmt::Write, micros: i64) -> fmt::Result {
    if micros == 0 {
        return Ok(());
    }
    let s = format!("{micros:06}");
    write!(f, ".{}", s.trim_end_matches('0'))
}

impl Time {
    /// Midnight.
    pub const MIDNIGHT: Time = Time { micros: 0 };

    /// A time from hours, minutes, seconds and microseconds, checked.
    pub fn new(hour: i64, minute: i64, second: i64, micros: i64) -> Result<Time, ScalarError> {
        if !(0..24).contains(&hour)
            || !(0..60).contains(&minute)
            || !(0..60).contains(&second)
            || !(0..MICROS_PER_SECOND).contains(&micros)
        {
            return Err(ScalarError::DatetimeRange(format!(
                "{hour:02}:{minute:02}:{second:02} is not a valid time"
            )));
        }
        Ok(Time {
            micros: ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + micros,
        })
    }

    /// The time `micros` after midnight, wrapping around the day.
    pub fn from_micros_wrapping(micros: i64) -> Time {
        Time {
            micros: micros.rem_euclid(MICROS_PER_DAY),
        }
    }

    /// Microseconds since midnight.
    pub fn micros_of_day(&self) -> i64 {
        self.micros
    }

    /// The hour (0–23).
    pub fn hour(&self) -> u8 {
        (self.micros / 3_600_000_000) as u8
    }

    /// The minute (0–59).
    pub fn minute(&self) -> u8 {
        (self.micros / 60_000_000 % 60) as u8
    }

    /// The whole second (0–59).
    pub fn second(&self) -> u8 {
        (self.micros / MICROS_PER_SECOND % 60) as u8
    }

    /// The microseconds within the second.
    pub fn microsecond(&self) -> i64 {
        self.micros % MICROS_PER_SECOND
    }

    /// Parses the literal body `hh:mm:ss[.ffffff]` (seconds may be left out).
    pub fn parse(text: &str) -> Result<Time, ScalarError> {
        let t = text.trim();
        let fail = || ScalarError::cast(text, ScalarType::Time);
        let (main, frac) = match t.split_once('.') {
            Some((m, f)) => (m, parse_fraction(f).ok_or_else(fail)?),
            None => (t, 0),
        };
        let mut parts = main.split(':');
        let h = parse_field(parts.next(), 1, 2).ok_or_else(fail)?;
        let m = parse_field(parts.next(), 1, 2).ok_or_else(fail)?;
        let s = match parts.next() {
            Some(p) => parse_field(Some(p), 1, 2).ok_or_else(fail)?,
            None => 0,
        };
        if parts.next().is_some() {
            return Err(fail());
        }
        Time::new(h, m, s, frac)
            .map_err(|e| ScalarError::cast_because(text, ScalarType::Time, e.to_string()))
    }
}

impl Timestamp {
    /// Joins a date and a time.
    pub fn new(date: Date, time: Time) -> Timestamp {
        Timestamp { date, time }
    }

    /// Microseconds since 1970-01-01 00:00:00.
    pub fn to_micros(&self) -> i64 {
        self.date.to_days() * MICROS_PER_DAY + self.time.micros
    }

    /// The timestamp `micros` after 1970-01-01 00:00:00; errors outside 0001–9999.
    pub fn from_micros(micros: i64) -> Result<Timestamp, ScalarError> {
        let date = Date::from_days(micros.div_euclid(MICROS_PER_DAY))?;
        Ok(Timestamp {
            date,
            time: Time::from_micros_wrapping(micros),
        })
    }

    /// Parses `yyyy-mm-dd hh:mm:ss[.ffffff]` (a `T` may separate date and time; a
    /// date alone means midnight).
    pub fn parse(text: &str) -> Result<Timestamp, ScalarError> {
        let t = text.trim();
        let (d, tm) = match t.find([' ', 'T']) {
            Some(i) => (&t[..i], t[i + 1..].trim_start()),
            None => (t, ""),
        };
        let map = |e: ScalarError| match e {
            ScalarError::CastFailure { .. } => ScalarError::cast(text, ScalarType::Timestamp),
            other => other,
        };
        let date = Date::parse(d).map_err(map)?;
        let time = if tm.is_empty() {
            Time::MIDNIGHT
        } else {
            Time::parse(tm).map_err(map)?
        };
        Ok(Timestamp { date, time })
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}:{:02}",
            self.hour(),
            self.minute(),
            self.second()
        )?;
        write_fraction(f, self.microsecond())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.date, self.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_day_numbers_round_trip() {
        for days in [-719_162, -1, 0, 1, 19_000, 2_932_896] {
            let d = Date::from_days(days).unwrap();
            assert_eq!(d.to_days(), days);
        }
        assert_eq!(Date::new(1970, 1, 1).unwrap().to_days(), 0);
        assert!(Date::from_days(2_932_897).is_err());
    }

    #[test]
    fn date_rejects_impossible_days() {
        assert!(Date::new(2023, 2, 29).is_err());
        assert!(Date::new(2024, 2, 29).is_ok());
        assert!(Date::new(2024, 13, 1).is_err());
        assert!(Date::parse("2024-1-x").is_err());
    }

    #[test]
    fn date_weekday_and_year_fields() {
        let d = Date::new(2024, 1, 31).unwrap();
        assert_eq!(d.day_of_week(), 4); // Wednesday
        assert_eq!(d.day_of_year(), 31);
        assert_eq!(Date::new(2024, 12, 31).unwrap().day_of_year(), 366);
        assert_eq!(Date::new(2024, 1, 6).unwrap().week_of_year(), 1);
        assert_eq!(Date::new(2024, 1, 7).unwrap().week_of_year(), 2);
    }

    #[test]
    fn date_add_months_clamps_day() {
        let d = Date::new(2024, 1, 31).unwrap();
        assert_eq!(d.add_months(1).unwrap().to_string(), "2024-02-29");
        assert_eq!(d.add_months(-2).unwrap().to_string(), "2023-11-30");
    }

    #[test]
    fn time_parses_and_prints_fraction() {
        assert_eq!(
            Time::parse("12:34:56.500").unwrap().to_string(),
            "12:34:56.5"
        );
        assert_eq!(Time::parse("01:02").unwrap().to_string(), "01:02:00");
        assert!(Time::parse("24:00:00").is_err());
        let ts = Timestamp::parse("2024-01-31 23:59:59.123456").unwrap();
        assert_eq!(ts.to_string(), "2024-01-31 23:59:59.123456");
        assert_eq!(Timestamp::from_micros(ts.to_micros()).unwrap(), ts);
    }
}
