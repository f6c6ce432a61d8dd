//! Dates and times as this crate carries them — days and microseconds from 1970-01-01 — and
//! their ISO text, which is how SQLite stores them and PostgreSQL reads them as text.

const MICROS_PER_DAY: i64 = 86_400_000_000;

use sluice_tree::text_form::{civil_from_days as civil, days_from_civil};

/// `YYYY-MM-DD`.
pub(crate) fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `HH:MM:SS`, with `.ffffff` when there are microseconds.
pub(crate) fn time_text(micros: i64) -> String {
    let m = micros.rem_euclid(MICROS_PER_DAY);
    let secs = m / 1_000_000;
    let frac = m % 1_000_000;
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        s.push_str(&format!(".{frac:06}"));
    }
    s
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]`.
pub(crate) fn timestamp_text(micros: i64) -> String {
    format!(
        "{} {}",
        date_text(micros.div_euclid(MICROS_PER_DAY)),
        time_text(micros.rem_euclid(MICROS_PER_DAY))
    )
}

/// The day number of `YYYY-MM-DD`.
pub(crate) fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    let days = days_from_civil(y, m, d);
    // A day past the month's end would fold into the next month: refuse it instead.
    (civil(days) == (y, m, d)).then_some(days)
}

/// The microseconds of the day of `HH:MM[:SS[.ffffff]]`.
pub(crate) fn parse_time(text: &str) -> Option<i64> {
    let (hms, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut parts = hms.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let s: i64 = parts.next().map_or(Some(0), |s| s.parse().ok())?;
    if parts.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&m)
        || !(0..60).contains(&s)
    {
        return None;
    }
    if frac.len() > 6 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let f: i64 = format!("{frac:0<6}").parse().ok()?;
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + f)
}

/// The microseconds from 1970-01-01 of `YYYY-MM-DD[ T]HH:MM[:SS[.ffffff]]` (or a bare date).
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    let (date, time) = match text.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let days = parse_date(date)?;
    let micros = time.map_or(Some(0), parse_time)?;
    Some(days * MICROS_PER_DAY + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_and_day_numbers_agree_when_round_tripped() {
        for days in [-719_162, -1, 0, 10_957, 11_016, 2_932_896] {
            let (y, m, d) = civil(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(11_016), "2000-02-29");
    }

    #[test]
    fn texts_parse_back_when_formatted() {
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_time("23:59:59.5"), Some(86_399_500_000));
        assert_eq!(time_text(86_399_500_000), "23:59:59.500000");
        assert_eq!(parse_time("24:00"), None);
        let t = parse_timestamp("2026-11-27 22:49:50.000001").expect("timestamp");
        assert_eq!(timestamp_text(t), "2026-11-27 22:49:50.000001");
        assert_eq!(parse_timestamp("1969-12-31T23:59:59"), Some(-1_000_000));
    }
}
