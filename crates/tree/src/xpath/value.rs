//! XPath values and the conversions between them (XPath 1.0 §4.2–4.4), and how tree values
//! read as strings.

use std::fmt::Write;

use crate::xpath::node::XNode;
use crate::xpath::tree_api::{Tree, Value};

/// The result of an XPath expression.
#[derive(Clone, Debug, PartialEq)]
pub enum XValue {
    /// Nodes in document order, without duplicates.
    NodeSet(Vec<XNode>),
    Boolean(bool),
    Number(f64),
    String(String),
}

impl XValue {
    /// The XPath type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            XValue::NodeSet(_) => "node-set",
            XValue::Boolean(_) => "boolean",
            XValue::Number(_) => "number",
            XValue::String(_) => "string",
        }
    }
}

/// `number(string)`: optional whitespace, an optional minus, digits with an optional fraction,
/// optional whitespace; anything else is NaN (no exponent, no plus sign).
pub fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
    let digits = t.strip_prefix('-').unwrap_or(t);
    let mut seen_digit = false;
    let mut seen_dot = false;
    for c in digits.chars() {
        match c {
            '0'..='9' => seen_digit = true,
            '.' if !seen_dot => seen_dot = true,
            _ => return f64::NAN,
        }
    }
    if !seen_digit {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `string(number)`: integers without a fraction, no exponent, `NaN`, `Infinity`.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if n == 0.0 {
        // Both zeros print as 0.
        "0".to_owned()
    } else {
        // Rust prints the shortest round-tripping digits and never uses an exponent.
        format!("{n}")
    }
}

pub fn boolean_to_string(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// Append a tree value as the text XPath sees: character data as is, numbers as XPath
/// formats them, dates and times in XML Schema's lexical forms, BLOBs as hexadecimal.
pub fn append_value(tree: &Tree, v: Value, out: &mut String) {
    match v {
        Value::Null => {}
        Value::Boolean(b) => out.push_str(boolean_to_string(b)),
        Value::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&number_to_string(f)),
        Value::Decimal(t) | Value::Character(t) | Value::Bit(t) => out.push_str(&tree.str(t)),
        Value::Blob(t) => {
            for b in tree.bytes(t) {
                let _ = write!(out, "{b:02x}");
            }
        }
        Value::Date(days) => write_date(out, days),
        Value::Time(us) => write_time(out, us),
        Value::GmtTime(us) => {
            write_time(out, us);
            out.push('Z');
        }
        Value::Timestamp(us) => write_timestamp(out, us),
        Value::GmtTimestamp(us) => {
            write_timestamp(out, us);
            out.push('Z');
        }
        Value::Interval { months, micros, .. } => write_interval(out, months, micros),
    }
}

/// A tree value as a number without going through text, when it is numeric.
pub fn value_number(tree: &Tree, v: Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        Value::Decimal(t) => Some(string_to_number(&tree.str(t))),
        _ => None,
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
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

fn write_date(out: &mut String, days: i32) {
    let (y, m, d) = civil_from_days(i64::from(days));
    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
}

fn write_time(out: &mut String, micros: i64) {
    let us = micros.rem_euclid(MICROS_PER_DAY);
    let secs = us / 1_000_000;
    let frac = us % 1_000_000;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let f = format!("{frac:06}");
        let _ = write!(out, ".{}", f.trim_end_matches('0'));
    }
}

fn write_timestamp(out: &mut String, micros: i64) {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let _ = write!(out, "{y:04}-{m:02}-{d:02}T");
    write_time(out, micros.rem_euclid(MICROS_PER_DAY));
}

/// An interval as an XML Schema duration, for example `-P1Y2M3DT4H5M6.5S`.
fn write_interval(out: &mut String, months: i32, micros: i64) {
    let negative = months < 0 || (months == 0 && micros < 0);
    if negative {
        out.push('-');
    }
    out.push('P');
    let months = i64::from(months).unsigned_abs();
    let micros = micros.unsigned_abs();
    let (years, months) = (months / 12, months % 12);
    if years > 0 {
        let _ = write!(out, "{years}Y");
    }
    if months > 0 {
        let _ = write!(out, "{months}M");
    }
    let days = micros / 86_400_000_000;
    let rest = micros % 86_400_000_000;
    if days > 0 {
        let _ = write!(out, "{days}D");
    }
    if rest > 0 {
        out.push('T');
        let (h, m) = (rest / 3_600_000_000, (rest / 60_000_000) % 60);
        let (s, f) = ((rest / 1_000_000) % 60, rest % 1_000_000);
        if h > 0 {
            let _ = write!(out, "{h}H");
        }
        if m > 0 {
            let _ = write!(out, "{m}M");
        }
        if s > 0 || f > 0 {
            let _ = write!(out, "{s}");
            if f > 0 {
                let ff = format!("{f:06}");
                let _ = write!(out, ".{}", ff.trim_end_matches('0'));
            }
            out.push('S');
        }
    }
    if years == 0 && months == 0 && micros == 0 {
        out.push_str("0D");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_to_number_follows_xpath_rules_when_given_edge_cases() {
        assert_eq!(string_to_number(" 12 "), 12.0);
        assert_eq!(string_to_number("-1.5"), -1.5);
        assert_eq!(string_to_number(".5"), 0.5);
        assert_eq!(string_to_number("5."), 5.0);
        assert!(string_to_number("+1").is_nan());
        assert!(string_to_number("1e3").is_nan());
        assert!(string_to_number("").is_nan());
        assert!(string_to_number("-").is_nan());
        assert!(string_to_number(".").is_nan());
        assert!(string_to_number("1.2.3").is_nan());
    }

    #[test]
    fn number_to_string_has_no_exponent_or_trailing_fraction() {
        assert_eq!(number_to_string(1.0), "1");
        assert_eq!(number_to_string(-0.0), "0");
        assert_eq!(number_to_string(0.5), "0.5");
        assert_eq!(number_to_string(1e21), "1000000000000000000000");
        assert_eq!(number_to_string(f64::NAN), "NaN");
        assert_eq!(number_to_string(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn dates_and_times_format_as_xml_schema_values() {
        let tree = Tree::new("T");
        let mut s = String::new();
        append_value(&tree, Value::Date(19_000), &mut s);
        assert_eq!(s, "2022-01-08");
        s.clear();
        append_value(&tree, Value::GmtTimestamp(1_500_000), &mut s);
        assert_eq!(s, "1970-01-01T00:00:01.5Z");
        s.clear();
        append_value(&tree, Value::Time(3_723_000_000), &mut s);
        assert_eq!(s, "01:02:03");
        s.clear();
        append_value(
            &tree,
            Value::Interval {
                months: 14,
                micros: 90_061_000_000,
                qualifier: 0,
            },
            &mut s,
        );
        assert_eq!(s, "P1Y2M1DT1H1M1S");
    }
}
