//! FORMAT patterns for dates and times ("Formatting and parsing dateTimes as
//! strings" in the ESQL reference), in both directions.
//!
//! Symbols: `G` era, `y`/`Y` year (`yy` two digits), `M` month (`MMM` Jan, `MMMM`
//! January), `d` day, `D` day of year, `E` weekday name, `e` weekday number, `F`
//! weekday-in-month, `w`/`W` week of year/month, `a` AM/PM, `H` 0–23, `k` 1–24,
//! `K` 0–11, `h` 1–12, `m` minute, `s` second, `S` fraction, `Z`/`z` zone
//! (`ZZZU` writes `Z` for GMT), `I`/`IU` ISO 8601 date-time, `T`/`TU` ISO 8601
//! time; `'text'` is literal and `''` a quote; other non-letters are literal.

use crate::clock;
use crate::datetime::{Date, MICROS_PER_SECOND, Time, Timestamp};
use crate::error::ScalarError;
use crate::value::{DataType, ScalarType, Value};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Field(char, usize),
    Literal(String),
    /// `.SSS` in the ISO forms (which are "up to millisecond"); optional, and of any
    /// length, when parsing.
    IsoFraction,
    /// The `T` before the time of `I`; when parsing, a date alone may end there.
    IsoTime,
    /// `+hh:mm`, or `Z` for GMT when `utc_z`; optional when parsing.
    IsoZone {
        utc_z: bool,
    },
}

fn bad(pattern: &str, reason: String) -> ScalarError {
    ScalarError::InvalidFormat {
        pattern: pattern.to_string(),
        reason,
    }
}

fn tokenize(pattern: &str) -> Result<Vec<Token>, ScalarError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let lit = |out: &mut Vec<Token>, s: &str| match out.last_mut() {
        Some(Token::Literal(l)) => l.push_str(s),
        _ => out.push(Token::Literal(s.to_string())),
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                lit(&mut out, "'");
                i += 2;
                continue;
            }
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                s.push(chars[i]);
                i += 1;
            }
            if i >= chars.len() {
                return Err(bad(pattern, "unterminated quoted text".into()));
            }
            i += 1;
            lit(&mut out, &s);
            continue;
        }
        if !c.is_ascii_alphabetic() {
            lit(&mut out, &c.to_string());
            i += 1;
            continue;
        }
        let mut n = 1;
        while i + n < chars.len() && chars[i + n] == c {
            n += 1;
        }
        let utc_suffix = chars.get(i + n) == Some(&'U');
        match c {
            'I' | 'T' => {
                if c == 'I' {
                    out.extend(tokenize("yyyy-MM-dd")?);
                    out.push(Token::IsoTime);
                }
                out.extend(tokenize("HH:mm:ss")?);
                out.push(Token::IsoFraction);
                out.push(Token::IsoZone { utc_z: utc_suffix });
            }
            'Z' if utc_suffix => out.push(Token::IsoZone { utc_z: true }),
            'G' | 'y' | 'Y' | 'M' | 'd' | 'D' | 'E' | 'e' | 'F' | 'w' | 'W' | 'a' | 'H' | 'k'
            | 'K' | 'h' | 'm' | 's' | 'S' | 'Z' | 'z' => out.push(Token::Field(c, n)),
            other => return Err(bad(pattern, format!("'{other}' is not a pattern symbol"))),
        }
        i += n + usize::from(utc_suffix);
    }
    Ok(out)
}

struct Parts {
    date: Date,
    time: Time,
    offset_seconds: i64,
}

fn parts_of(value: &Value) -> Option<Parts> {
    let local_offset = |ts: &Timestamp| clock::local_offset_seconds_at(ts.to_micros());
    Some(match value {
        Value::Date(d) => {
            let ts = Timestamp::new(*d, Time::MIDNIGHT);
            Parts {
                date: *d,
                time: Time::MIDNIGHT,
                offset_seconds: local_offset(&ts),
            }
        }
        Value::Time(t) => Parts {
            date: Date::new(1970, 1, 1).ok()?,
            time: *t,
            offset_seconds: clock::local_offset_seconds_at(clock::now_utc_micros()),
        },
        Value::GmtTime(t) => Parts {
            date: Date::new(1970, 1, 1).ok()?,
            time: *t,
            offset_seconds: 0,
        },
        Value::Timestamp(ts) => Parts {
            date: ts.date,
            time: ts.time,
            offset_seconds: local_offset(ts),
        },
        Value::GmtTimestamp(ts) => Parts {
            date: ts.date,
            time: ts.time,
            offset_seconds: 0,
        },
        _ => return None,
    })
}

fn zone_text(offset: i64, colon: bool, gmt_prefix: bool) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.abs();
    let (h, m) = (a / 3600, a % 3600 / 60);
    let body = if colon {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    };
    if gmt_prefix {
        format!("GMT{body}")
    } else {
        body
    }
}

/// Formats a DATE, TIME, GMTTIME, TIMESTAMP or GMTTIMESTAMP with a pattern.
pub fn format_datetime(value: &Value, pattern: &str) -> Result<String, ScalarError> {
    let tokens = tokenize(pattern)?;
    let p = parts_of(value).ok_or_else(|| ScalarError::UnsupportedCast {
        from: value.type_name(),
        to: "CHARACTER with a datetime FORMAT".into(),
    })?;
    let (d, t) = (p.date, p.time);
    let mut out = String::new();
    for tok in &tokens {
        match tok {
            Token::Literal(s) => out.push_str(s),
            Token::IsoTime => out.push('T'),
            Token::IsoFraction => out.push_str(&format!(".{:03}", t.microsecond() / 1000)),
            Token::IsoZone { utc_z } => {
                if *utc_z && p.offset_seconds == 0 {
                    out.push('Z');
                } else {
                    out.push_str(&zone_text(p.offset_seconds, true, false));
                }
            }
            Token::Field(c, n) => {
                let n = *n;
                let num = |v: i64| format!("{v:0n$}");
                let s = match c {
                    'G' => "AD".to_string(),
                    'y' | 'Y' if n == 2 => format!("{:02}", d.year() % 100),
                    'y' | 'Y' => num(i64::from(d.year())),
                    'M' if n >= 4 => MONTHS[usize::from(d.month() - 1)].to_string(),
                    'M' if n == 3 => MONTHS[usize::from(d.month() - 1)][..3].to_string(),
                    'M' => num(i64::from(d.month())),
                    'd' => num(i64::from(d.day())),
                    'D' => num(i64::from(d.day_of_year())),
                    'E' if n >= 4 => DAYS[usize::from(d.day_of_week() - 1)].to_string(),
                    'E' => DAYS[usize::from(d.day_of_week() - 1)][..3].to_string(),
                    'e' => num(i64::from(d.day_of_week())),
                    'F' => num((i64::from(d.day()) - 1) / 7 + 1),
                    'w' => num(i64::from(d.week_of_year())),
                    'W' => num(i64::from(d.week_of_month())),
                    'a' => if t.hour() < 12 { "AM" } else { "PM" }.to_string(),
                    'H' => num(i64::from(t.hour())),
                    'k' => num(if t.hour() == 0 {
                        24
                    } else {
                        i64::from(t.hour())
                    }),
                    'K' => num(i64::from(t.hour() % 12)),
                    'h' => num(if t.hour() % 12 == 0 {
                        12
                    } else {
                        i64::from(t.hour() % 12)
                    }),
                    'm' => num(i64::from(t.minute())),
                    's' => num(i64::from(t.second())),
                    'S' => {
                        let six = format!("{:06}", t.microsecond());
                        if n <= 6 {
                            six[..n].to_string()
                        } else {
                            format!("{six}{}", "0".repeat(n - 6))
                        }
                    }
                    'Z' if n <= 2 => zone_text(p.offset_seconds, false, false),
                    'Z' if n == 4 => zone_text(p.offset_seconds, true, true),
                    'Z' => zone_text(p.offset_seconds, true, false),
                    _ => {
                        if p.offset_seconds == 0 {
                            "GMT".to_string()
                        } else {
                            zone_text(p.offset_seconds, true, true)
                        }
                    }
                };
                out.push_str(&s);
            }
        }
    }
    Ok(out)
}

struct Cursor<'a> {
    text: &'a [char],
    pos: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.pos;
        while self.pos < self.text.len()
            && self.pos - start < max
            && self.text[self.pos].is_ascii_digit()
        {
            self.pos += 1;
        }
        if self.pos - start < min {
            self.pos = start;
            return None;
        }
        self.text[start..self.pos]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    }

    fn word(&mut self, words: &[&str]) -> Option<usize> {
        let rest: String = self.text[self.pos..]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase();
        // Prefer the longest match so that "June" is not read as "Jun".
        let mut best: Option<(usize, usize)> = None;
        for (i, w) in words.iter().enumerate() {
            let lw = w.to_ascii_lowercase();
            if rest.starts_with(&lw) && best.is_none_or(|(_, len)| lw.len() > len) {
                best = Some((i, lw.chars().count()));
            }
        }
        let (i, len) = best?;
        self.pos += len;
        Some(i)
    }

    fn literal(&mut self, s: &str) -> bool {
        let cs: Vec<char> = s.chars().collect();
        if self.text[self.pos..].starts_with(&cs) {
            self.pos += cs.len();
            true
        } else {
            false
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos).copied()
    }

    fn zone(&mut self) -> Option<i64> {
        if self.literal("Z") {
            return Some(0);
        }
        let _ = self.literal("GMT") || self.literal("UTC");
        let sign = match self.peek() {
            Some('+') => 1,
            Some('-') => -1,
            _ => return Some(0).filter(|_| self.text[..self.pos].ends_with(&['T'])),
        };
        self.pos += 1;
        let h = self.digits(2, 2)?;
        let _ = self.literal(":");
        let m = self.digits(2, 2)?;
        Some(sign * (h * 3600 + m * 60))
    }
}

fn is_numeric(tok: Option<&Token>) -> bool {
    matches!(tok, Some(Token::Field(c, _)) if !matches!(c, 'a' | 'E' | 'G' | 'Z' | 'z') )
}

/// Parses text written with a pattern into a value of the target datetime type.
pub fn parse_datetime(text: &str, pattern: &str, target: DataType) -> Result<Value, ScalarError> {
    let tokens = tokenize(pattern)?;
    let chars: Vec<char> = text.chars().collect();
    let mut cur = Cursor {
        text: &chars,
        pos: 0,
    };
    let fail = || {
        ScalarError::cast_because(
            text,
            target.to_string(),
            format!("it does not match FORMAT '{pattern}'"),
        )
    };
    let (mut year, mut month, mut day) = (1970i64, 1i64, 1i64);
    let mut day_of_year: Option<i64> = None;
    let (mut hour, mut minute, mut second, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i64> = None;
    // Set when an ISO date-time has no time part: its time tokens are skipped.
    let mut date_only = false;
    for (i, tok) in tokens.iter().enumerate() {
        let next_numeric = is_numeric(tokens.get(i + 1));
        if date_only
            && matches!(
                tok,
                Token::Field(..) | Token::Literal(_) | Token::IsoFraction
            )
        {
            continue;
        }
        match tok {
            Token::IsoTime => {
                if cur.peek() == Some('T') {
                    cur.pos += 1;
                } else {
                    date_only = true;
                }
            }
            Token::Literal(s) => {
                if !cur.literal(s) {
                    return Err(fail());
                }
            }
            Token::IsoFraction => {
                if cur.peek() == Some('.') {
                    cur.pos += 1;
                    let start = cur.pos;
                    cur.digits(1, 9).ok_or_else(fail)?;
                    let digits: String = chars[start..cur.pos].iter().collect();
                    micros = crate::datetime::parse_fraction(&digits).ok_or_else(fail)?;
                }
            }
            Token::IsoZone { .. } => {
                if matches!(cur.peek(), Some('Z' | '+' | '-')) {
                    offset = Some(cur.zone().ok_or_else(fail)?);
                }
            }
            Token::Field(c, n) => {
                let n = *n;
                let width = |default_max: usize| {
                    if next_numeric && n >= 2 {
                        (n, n)
                    } else {
                        (1, default_max.max(n))
                    }
                };
                match c {
                    'G' => {
                        cur.word(&["AD", "BC"]).ok_or_else(fail)?;
                    }
                    'y' | 'Y' if n == 2 => {
                        let yy = cur.digits(2, 2).ok_or_else(fail)?;
                        year = if yy < 70 { 2000 + yy } else { 1900 + yy };
                    }
                    'y' | 'Y' => {
                        let (lo, hi) = width(4);
                        year = cur.digits(lo, hi).ok_or_else(fail)?;
                    }
                    'M' if n >= 3 => {
                        let full: Vec<&str> = MONTHS.to_vec();
                        let short: Vec<&str> = MONTHS.iter().map(|m| &m[..3]).collect();
                        let all: Vec<&str> = full.iter().chain(short.iter()).copied().collect();
                        month = (cur.word(&all).ok_or_else(fail)? % 12 + 1) as i64;
                    }
                    'E' => {
                        let short: Vec<&str> = DAYS.iter().map(|d| &d[..3]).collect();
                        let all: Vec<&str> = DAYS.iter().chain(short.iter()).copied().collect();
                        cur.word(&all).ok_or_else(fail)?;
                    }
                    'a' => pm = Some(cur.word(&["AM", "PM"]).ok_or_else(fail)? == 1),
                    'Z' | 'z' => offset = Some(cur.zone().ok_or_else(fail)?),
                    'S' => {
                        let start = cur.pos;
                        let (lo, hi) = width(9);
                        cur.digits(lo, hi).ok_or_else(fail)?;
                        let digits: String = chars[start..cur.pos].iter().collect();
                        micros = crate::datetime::parse_fraction(&digits).ok_or_else(fail)?;
                    }
                    _ => {
                        let (lo, hi) = width(if *c == 'D' { 3 } else { 2 });
                        let v = cur.digits(lo, hi).ok_or_else(fail)?;
                        match c {
                            'M' => month = v,
                            'd' => day = v,
                            'D' => day_of_year = Some(v),
                            'H' => hour = v,
                            'k' => hour = if v == 24 { 0 } else { v },
                            'K' | 'h' => hour = v % 12,
                            'm' => minute = v,
                            's' => second = v,
                            // Weekday and week numbers are checked only for being digits.
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    if cur.pos != chars.len() {
        return Err(fail());
    }
    if pm == Some(true) && hour < 12 {
        hour += 12;
    }
    let relabel =
        |e: ScalarError| ScalarError::cast_because(text, target.to_string(), e.to_string());
    let mut date = Date::new(year, month, day).map_err(relabel)?;
    if let Some(doy) = day_of_year {
        let jan1 = Date::new(year, 1, 1).map_err(relabel)?;
        date = Date::from_days(jan1.to_days() + doy - 1).map_err(relabel)?;
    }
    let time = Time::new(hour, minute, second, micros).map_err(relabel)?;
    let mut ts = Timestamp::new(date, time);
    let gmt_target = matches!(target, DataType::GmtTime | DataType::GmtTimestamp);
    if let Some(off) = offset {
        // Bring the reading to GMT, then to local time unless the target is GMT.
        ts = Timestamp::from_micros(ts.to_micros() - off * MICROS_PER_SECOND).map_err(relabel)?;
        if !gmt_target {
            ts = clock::gmt_to_local(ts).map_err(relabel)?;
        }
    }
    Ok(match target {
        DataType::Date => Value::Date(ts.date),
        DataType::Time => Value::Time(ts.time),
        DataType::GmtTime => Value::GmtTime(ts.time),
        DataType::Timestamp => Value::Timestamp(ts),
        DataType::GmtTimestamp => Value::GmtTimestamp(ts),
        other => {
            return Err(ScalarError::UnsupportedCast {
                from: ScalarType::Character.name(),
                to: other.to_string(),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gts(s: &str) -> Value {
        Value::GmtTimestamp(Timestamp::parse(s).unwrap())
    }

    #[test]
    fn datetime_format_writes_fields() {
        let v = gts("2024-01-31 15:04:05.123456");
        assert_eq!(format_datetime(&v, "yyyy-MM-dd").unwrap(), "2024-01-31");
        assert_eq!(
            format_datetime(&v, "dd/MM/yy HH:mm:ss.SSS").unwrap(),
            "31/01/24 15:04:05.123"
        );
        assert_eq!(
            format_datetime(&v, "EEEE d MMMM yyyy").unwrap(),
            "Wednesday 31 January 2024"
        );
        assert_eq!(
            format_datetime(&v, "EEE, MMM d h:mm a").unwrap(),
            "Wed, Jan 31 3:04 PM"
        );
        assert_eq!(format_datetime(&v, "DDD 'day' e").unwrap(), "031 day 4");
        assert_eq!(
            format_datetime(&v, "IU").unwrap(),
            "2024-01-31T15:04:05.123Z"
        );
        assert_eq!(format_datetime(&v, "TU").unwrap(), "15:04:05.123Z");
        assert_eq!(
            format_datetime(&v, "yyyy-MM-dd'T'HH:mm:ssZZZ").unwrap(),
            "2024-01-31T15:04:05+00:00"
        );
        assert_eq!(format_datetime(&v, "''yy''").unwrap(), "'24'");
    }

    #[test]
    fn datetime_format_parses_back() {
        let v = parse_datetime("31/01/2024", "dd/MM/yyyy", DataType::Date).unwrap();
        assert_eq!(v, Value::Date(Date::new(2024, 1, 31).unwrap()));
        let v = parse_datetime("20240131150405", "yyyyMMddHHmmss", DataType::GmtTimestamp).unwrap();
        assert_eq!(v, gts("2024-01-31 15:04:05"));
        let v =
            parse_datetime("2024-01-31T16:04:05.5+01:00", "IU", DataType::GmtTimestamp).unwrap();
        assert_eq!(v, gts("2024-01-31 15:04:05.5"));
        let v = parse_datetime("2024-01-31", "IU", DataType::GmtTimestamp).unwrap();
        assert_eq!(v, gts("2024-01-31 00:00:00"));
        let v = parse_datetime("2024-01-31T15:04:05Z", "I", DataType::GmtTimestamp).unwrap();
        assert_eq!(v, gts("2024-01-31 15:04:05"));
        let v = parse_datetime(
            "Jan 5, 2024 3:04 PM",
            "MMM d, yyyy h:mm a",
            DataType::GmtTimestamp,
        )
        .unwrap();
        assert_eq!(v, gts("2024-01-05 15:04:00"));
        let v = parse_datetime("June 1 2024", "MMMM d yyyy", DataType::Date).unwrap();
        assert_eq!(v, Value::Date(Date::new(2024, 6, 1).unwrap()));
    }

    #[test]
    fn datetime_format_rejects_mismatches() {
        assert!(parse_datetime("2024-13-01", "yyyy-MM-dd", DataType::Date).is_err());
        assert!(parse_datetime("2024-01-01x", "yyyy-MM-dd", DataType::Date).is_err());
        assert!(parse_datetime("24", "yyyy-MM-dd", DataType::Date).is_err());
        assert!(format_datetime(&gts("2024-01-01 00:00:00"), "yyyy-qq").is_err());
        assert!(format_datetime(&Value::Integer(1), "yyyy").is_err());
        assert!(tokenize("'open").is_err());
    }
}
