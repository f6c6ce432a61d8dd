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
        Value::Date(_)
        | Value::Time(_)
        | Value::GmtTime(_)
        | Value::Timestamp(_)
        | Value::GmtTimestamp(_)
        | Value::Interval { .. } => {
            let mut bytes = Vec::new();
            crate::xpath::tree_api::text_form::write_value(tree, v, &mut bytes);
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
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
                qualifier: crate::IntervalQualifier::YearToMonth,
            },
            &mut s,
        );
        assert_eq!(s, "P1Y2M1DT1H1M1S");
    }
}
