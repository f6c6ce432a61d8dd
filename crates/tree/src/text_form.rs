//! Values as text, in the forms the product writes them into XML and JSON and ESQL prints them:
//! INTEGER as digits, BOOLEAN as `TRUE`/`FALSE`, FLOAT in scientific form with at most 15
//! significant digits (`0.48` → `4.8E-1`, `1.0` → `1E+0`), DECIMAL as its text, BLOB as
//! hexadecimal, dates and times in ISO 8601, intervals as ISO 8601 durations. Also the calendar
//! arithmetic every date conversion uses.

use std::io::Write;

use crate::tree::Tree;
use crate::value::Value;

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day), proleptic Gregorian, to days since 1970-01-01.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A FLOAT as `CAST(f AS CHARACTER)` prints it.
pub fn format_float(f: f64) -> String {
    let mut buf = [0u8; FLOAT_TEXT_BYTES];
    float_text(f, &mut buf).to_string()
}

/// Room for any [`float_text`]: sign, 15 digits, point, `E`, exponent sign and 3 digits.
pub const FLOAT_TEXT_BYTES: usize = 32;

/// [`format_float`] written into `buf` (no allocation, for callers that convert many values).
pub fn float_text(f: f64, buf: &mut [u8; FLOAT_TEXT_BYTES]) -> &str {
    if f.is_nan() {
        return "NaN";
    }
    if f.is_infinite() {
        return if f > 0.0 { "INF" } else { "-INF" };
    }
    if f == 0.0 {
        return "0E+0";
    }
    // `{:.14e}` rounds to 15 significant digits, e.g. "1.29408000000000e2".
    let mut rendered = [0u8; FLOAT_TEXT_BYTES];
    let mut cursor = std::io::Cursor::new(&mut rendered[..]);
    // At most 22 bytes ("-1.23456789012345e-308"): the buffer cannot overflow.
    let _ = write!(cursor, "{f:.14e}");
    let n = cursor.position() as usize;
    let rendered = &rendered[..n];
    let Some(e) = rendered.iter().position(|&b| b == b'e') else {
        return "NaN";
    };
    let (mantissa, exponent) = (&rendered[..e], &rendered[e + 1..]);
    let mut m = mantissa.len();
    if mantissa.contains(&b'.') {
        while m > 0 && mantissa[m - 1] == b'0' {
            m -= 1;
        }
        if m > 0 && mantissa[m - 1] == b'.' {
            m -= 1;
        }
    }
    let (sign, digits) = match exponent.strip_prefix(b"-") {
        Some(d) => (b'-', d),
        None => (b'+', exponent),
    };
    let len = m + 2 + digits.len();
    buf[..m].copy_from_slice(&mantissa[..m]);
    buf[m] = b'E';
    buf[m + 1] = sign;
    buf[m + 2..len].copy_from_slice(digits);
    // Only ASCII digits, signs, '.' and 'E' were written.
    std::str::from_utf8(&buf[..len]).unwrap_or("NaN")
}

pub fn write_date(out: &mut Vec<u8>, days: i64) {
    let (y, m, d) = civil_from_days(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
}

/// A time of day in microseconds; the fraction only when there is one, without trailing zeros
/// (XML Schema's canonical form).
pub fn write_time(out: &mut Vec<u8>, micros: i64) {
    let us = micros.rem_euclid(MICROS_PER_DAY);
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    let _ = write!(out, "{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if frac != 0 {
        let digits = format!("{frac:06}");
        let _ = write!(out, ".{}", digits.trim_end_matches('0'));
    }
}

pub fn write_timestamp(out: &mut Vec<u8>, micros: i64) {
    write_date(out, micros.div_euclid(MICROS_PER_DAY));
    out.push(b'T');
    write_time(out, micros.rem_euclid(MICROS_PER_DAY));
}

/// An interval as an ISO 8601 duration (`P1Y2M`, `-P3DT4H5M6.000007S`).
pub fn write_interval(out: &mut Vec<u8>, months: i32, micros: i64) {
    let neg = months < 0 || (months == 0 && micros < 0);
    let (months, micros) = (months.unsigned_abs(), micros.unsigned_abs());
    if neg {
        out.push(b'-');
    }
    out.push(b'P');
    if months >= 12 {
        let _ = write!(out, "{}Y", months / 12);
    }
    if months % 12 != 0 {
        let _ = write!(out, "{}M", months % 12);
    }
    let secs = micros / 1_000_000;
    let frac = micros % 1_000_000;
    if secs / 86_400 != 0 {
        let _ = write!(out, "{}D", secs / 86_400);
    }
    let rest = secs % 86_400;
    if rest != 0 || frac != 0 || (months == 0 && secs == 0) {
        out.push(b'T');
        if rest / 3600 != 0 {
            let _ = write!(out, "{}H", rest / 3600);
        }
        if rest / 60 % 60 != 0 {
            let _ = write!(out, "{}M", rest / 60 % 60);
        }
        if frac != 0 {
            let _ = write!(out, "{}.{frac:06}S", rest % 60);
        } else if rest % 60 != 0 || (months == 0 && secs == 0) {
            let _ = write!(out, "{}S", rest % 60);
        }
    }
}

/// Append the text form of `v` to `out`; returns false for NULL (nothing written).
pub fn write_value(tree: &Tree, v: Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => return false,
        Value::Boolean(b) => out.extend_from_slice(if b { b"TRUE" } else { b"FALSE" }),
        Value::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => {
            let mut buf = [0u8; FLOAT_TEXT_BYTES];
            out.extend_from_slice(float_text(f, &mut buf).as_bytes())
        }
        Value::Character(t) | Value::Decimal(t) | Value::Bit(t) => {
            out.extend_from_slice(tree.bytes(t))
        }
        Value::Blob(t) => {
            for b in tree.bytes(t) {
                let _ = write!(out, "{b:02X}");
            }
        }
        Value::Date(d) => write_date(out, i64::from(d)),
        Value::Time(us) => write_time(out, us),
        Value::GmtTime(us) => {
            write_time(out, us);
            out.push(b'Z');
        }
        Value::Timestamp(us) => write_timestamp(out, us),
        Value::GmtTimestamp(us) => {
            write_timestamp(out, us);
            out.push(b'Z');
        }
        Value::Interval { months, micros, .. } => write_interval(out, months, micros),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        let t = Tree::new("t");
        let mut out = Vec::new();
        write_value(&t, v, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn float_prints_like_the_product() {
        for (f, s) in [
            (0.48, "4.8E-1"),
            (0.8, "8E-1"),
            (129.408, "1.29408E+2"),
            (35.744, "3.5744E+1"),
            (57.92, "5.792E+1"),
            (1.0, "1E+0"),
            (0.0, "0E+0"),
            (-0.0, "0E+0"),
            (1.2 * 107.84, "1.29408E+2"),
            (0.1 + 0.2, "3E-1"),
            (1.0 / 3.0, "3.33333333333333E-1"),
            (-1234.5, "-1.2345E+3"),
            (1e300, "1E+300"),
        ] {
            assert_eq!(format_float(f), s, "{f}");
        }
    }

    #[test]
    fn values_format_in_their_text_forms() {
        assert_eq!(text(Value::Integer(-42)), "-42");
        assert_eq!(text(Value::Boolean(true)), "TRUE");
        assert_eq!(text(Value::Date(0)), "1970-01-01");
        assert_eq!(text(Value::Date(19_723)), "2024-01-01");
        assert_eq!(text(Value::Time(3_723_000_500)), "01:02:03.0005");
        assert_eq!(
            text(Value::GmtTimestamp(86_400_000_000 + 1_000_000)),
            "1970-01-02T00:00:01Z"
        );
        assert_eq!(
            text(Value::Interval {
                months: 14,
                micros: 0,
                qualifier: crate::IntervalQualifier::YearToMonth
            }),
            "P1Y2M"
        );
    }

    #[test]
    fn calendar_round_trips() {
        for days in [-800_000, -1, 0, 1, 11_016, 19_723, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
