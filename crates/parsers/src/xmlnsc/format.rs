//! Values of any type as XML character data, in ESQL's CHARACTER forms: INTEGER as digits,
//! BOOLEAN as `TRUE`/`FALSE`, FLOAT in scientific form (`0.48` → `4.8E-1`), DECIMAL as its
//! text, BLOB as hexadecimal, dates and times in ISO 8601.

use std::io::Write;

use sluice_tree::{Tree, Value};

/// Append the text form of `v` to `out`; returns false for NULL (nothing written).
pub(crate) fn value_text(tree: &Tree, v: Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => return false,
        Value::Boolean(b) => out.extend_from_slice(if b { b"TRUE" } else { b"FALSE" }),
        Value::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => float(f, out),
        Value::Character(t) | Value::Decimal(t) | Value::Bit(t) => {
            out.extend_from_slice(tree.bytes(t))
        }
        Value::Blob(t) => {
            for b in tree.bytes(t) {
                let _ = write!(out, "{b:02X}");
            }
        }
        Value::Date(d) => date(d as i64, out),
        Value::Time(us) => time(us, out),
        Value::GmtTime(us) => {
            time(us, out);
            out.push(b'Z');
        }
        Value::Timestamp(us) => timestamp(us, out),
        Value::GmtTimestamp(us) => {
            timestamp(us, out);
            out.push(b'Z');
        }
        Value::Interval { months, micros, .. } => interval(months, micros, out),
    }
    true
}

fn float(f: f64, out: &mut Vec<u8>) {
    if f.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if f.is_infinite() {
        out.extend_from_slice(if f > 0.0 { b"INF" } else { b"-INF" });
    } else {
        let _ = write!(out, "{f:E}");
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn date(days: i64, out: &mut Vec<u8>) {
    let (y, m, d) = civil(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
}

fn time(us: i64, out: &mut Vec<u8>) {
    let us = us.rem_euclid(86_400_000_000);
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    let _ = write!(out, "{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if frac != 0 {
        let _ = write!(out, ".{frac:06}");
    }
}

fn timestamp(us: i64, out: &mut Vec<u8>) {
    date(us.div_euclid(86_400_000_000), out);
    out.push(b'T');
    time(us.rem_euclid(86_400_000_000), out);
}

fn interval(months: i32, micros: i64, out: &mut Vec<u8>) {
    let neg = months < 0 || micros < 0;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        let t = Tree::new("t");
        let mut out = Vec::new();
        value_text(&t, v, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn values_format_in_esql_character_forms() {
        assert_eq!(text(Value::Float(0.48)), "4.8E-1");
        assert_eq!(text(Value::Integer(-42)), "-42");
        assert_eq!(text(Value::Boolean(true)), "TRUE");
        assert_eq!(text(Value::Date(0)), "1970-01-01");
        assert_eq!(text(Value::Date(19_723)), "2024-01-01");
        assert_eq!(text(Value::Time(3_723_000_500)), "01:02:03.000500");
        assert_eq!(
            text(Value::Timestamp(86_400_000_000 + 1_000_000)),
            "1970-01-02T00:00:01"
        );
        assert_eq!(
            text(Value::Interval {
                months: 14,
                micros: 90_000_000,
                qualifier: 0
            }),
            "P1Y2MT1M30S"
        );
    }
}
