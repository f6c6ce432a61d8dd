//! The ESQL scalar value and the names of its types.

use std::fmt;

use bytes::Bytes;

use crate::char_string::CharString;
use crate::datetime::{Date, Time, Timestamp};
use crate::decimal::Decimal;
use crate::interval::{Interval, IntervalQualifier};

/// An ESQL bit string (`B'0101'`), one `bool` per bit, most significant first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct BitString(pub Vec<bool>);

impl BitString {
    /// Parses the digits of a bit literal (`0101`).
    pub fn parse(digits: &str) -> Option<BitString> {
        digits
            .chars()
            .map(|c| match c {
                '0' => Some(false),
                '1' => Some(true),
                _ => None,
            })
            .collect::<Option<Vec<bool>>>()
            .map(BitString)
    }

    /// The bits of some bytes, 8 per byte, most significant first.
    pub fn from_bytes(bytes: &[u8]) -> BitString {
        BitString(
            bytes
                .iter()
                .flat_map(|b| (0..8).rev().map(move |i| b >> i & 1 == 1))
                .collect(),
        )
    }

    /// The bytes for these bits, or `None` when the length is not a multiple of 8.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        if !self.0.len().is_multiple_of(8) {
            return None;
        }
        Some(
            self.0
                .chunks(8)
                .map(|c| c.iter().fold(0u8, |acc, &b| (acc << 1) | u8::from(b)))
                .collect(),
        )
    }

    /// The number of bits.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no bits.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The digits as `0` and `1` characters.
    pub fn digits(&self) -> String {
        self.0.iter().map(|&b| if b { '1' } else { '0' }).collect()
    }
}

/// A scalar ESQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL: no value.
    Null,
    /// BOOLEAN.
    Boolean(bool),
    /// INTEGER: 64-bit signed.
    Integer(i64),
    /// DECIMAL: exact, 34 digits.
    Decimal(Decimal),
    /// FLOAT: 64-bit binary floating point.
    Float(f64),
    /// CHARACTER: Unicode text (short text in place, longer text shared: cheap to clone).
    Character(CharString),
    /// BLOB: bytes.
    Blob(Bytes),
    /// BIT: a bit string.
    Bit(BitString),
    /// DATE.
    Date(Date),
    /// TIME, local.
    Time(Time),
    /// GMTTIME.
    GmtTime(Time),
    /// TIMESTAMP, local.
    Timestamp(Timestamp),
    /// GMTTIMESTAMP.
    GmtTimestamp(Timestamp),
    /// INTERVAL with its qualifier.
    Interval(Interval),
}

impl Value {
    /// The ESQL name of the value's type (`INTEGER`, `CHARACTER`, … and `NULL`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Boolean(_) => "BOOLEAN",
            Value::Integer(_) => "INTEGER",
            Value::Decimal(_) => "DECIMAL",
            Value::Float(_) => "FLOAT",
            Value::Character(_) => "CHARACTER",
            Value::Blob(_) => "BLOB",
            Value::Bit(_) => "BIT",
            Value::Date(_) => "DATE",
            Value::Time(_) => "TIME",
            Value::GmtTime(_) => "GMTTIME",
            Value::Timestamp(_) => "TIMESTAMP",
            Value::GmtTimestamp(_) => "GMTTIMESTAMP",
            Value::Interval(_) => "INTERVAL",
        }
    }

    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// An INTEGER.
    pub fn from_i64(n: i64) -> Value {
        Value::Integer(n)
    }

    /// A FLOAT.
    pub fn from_f64(f: f64) -> Value {
        Value::Float(f)
    }

    /// A BOOLEAN.
    pub fn from_bool(b: bool) -> Value {
        Value::Boolean(b)
    }

    /// A CHARACTER.
    pub fn from_text(s: &str) -> Value {
        Value::Character(CharString::from(s))
    }

    /// A CHARACTER taking ownership of the text.
    pub fn from_string(s: String) -> Value {
        Value::Character(CharString::from(s))
    }

    /// A BLOB.
    pub fn from_bytes(b: impl Into<Bytes>) -> Value {
        Value::Blob(b.into())
    }

    /// A DECIMAL.
    pub fn from_decimal(d: Decimal) -> Value {
        Value::Decimal(d)
    }

    /// A BOOLEAN for `Some`, NULL (UNKNOWN) for `None`.
    pub fn from_truth(t: Option<bool>) -> Value {
        t.map_or(Value::Null, Value::Boolean)
    }

    /// The truth of a BOOLEAN (`None` for NULL, which is UNKNOWN); an error for
    /// other types, as a condition must be BOOLEAN.
    pub fn truth(&self) -> Result<Option<bool>, crate::ScalarError> {
        match self {
            Value::Null => Ok(None),
            Value::Boolean(b) => Ok(Some(*b)),
            other => Err(crate::ScalarError::cast(
                crate::cast::to_character(other).unwrap_or_default(),
                "BOOLEAN",
            )),
        }
    }

    /// The text of a CHARACTER value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Character(s) => Some(s.as_str()),
            _ => None,
        }
    }
}

/// `CAST(value AS CHARACTER)`, with `NULL` for NULL.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return f.write_str("NULL");
        }
        match crate::cast::to_character(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => f.write_str(self.type_name()),
        }
    }
}

/// The target of a CAST or the declared type of a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    /// BOOLEAN
    Boolean,
    /// INTEGER (also INT)
    Integer,
    /// DECIMAL, optionally with precision and scale: `DECIMAL(10, 2)`.
    Decimal(Option<(u32, u32)>),
    /// FLOAT
    Float,
    /// CHARACTER (also CHAR)
    Character,
    /// BLOB
    Blob,
    /// BIT
    Bit,
    /// DATE
    Date,
    /// TIME
    Time,
    /// GMTTIME
    GmtTime,
    /// TIMESTAMP
    Timestamp,
    /// GMTTIMESTAMP
    GmtTimestamp,
    /// INTERVAL with an optional qualifier.
    Interval(Option<IntervalQualifier>),
}

impl DataType {
    /// Parses a type name as ESQL writes it in CAST and DECLARE (`INT`, `CHAR`,
    /// `DECIMAL(10,2)`, `INTERVAL DAY TO SECOND`; case-insensitive).
    pub fn parse(text: &str) -> Option<DataType> {
        let t = text.trim().to_ascii_uppercase();
        let t = t.as_str();
        if let Some(rest) = t.strip_prefix("INTERVAL") {
            let rest = rest.trim();
            if rest.is_empty() {
                return Some(DataType::Interval(None));
            }
            return IntervalQualifier::parse(rest).map(|q| DataType::Interval(Some(q)));
        }
        if let Some(rest) = t.strip_prefix("DECIMAL") {
            let rest = rest.trim();
            if rest.is_empty() {
                return Some(DataType::Decimal(None));
            }
            let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
            let mut nums = inner.split(',').map(|s| s.trim().parse::<u32>());
            let p = nums.next()?.ok()?;
            let s = match nums.next() {
                Some(s) => s.ok()?,
                None => 0,
            };
            if nums.next().is_some() || p == 0 || p > 34 || s > p {
                return None;
            }
            return Some(DataType::Decimal(Some((p, s))));
        }
        Some(match t {
            "BOOLEAN" => DataType::Boolean,
            "INTEGER" | "INT" => DataType::Integer,
            "FLOAT" => DataType::Float,
            "CHARACTER" | "CHAR" => DataType::Character,
            "BLOB" => DataType::Blob,
            "BIT" => DataType::Bit,
            "DATE" => DataType::Date,
            "TIME" => DataType::Time,
            "GMTTIME" => DataType::GmtTime,
            "TIMESTAMP" => DataType::Timestamp,
            "GMTTIMESTAMP" => DataType::GmtTimestamp,
            _ => return None,
        })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::Integer => f.write_str("INTEGER"),
            DataType::Decimal(None) => f.write_str("DECIMAL"),
            DataType::Decimal(Some((p, s))) => write!(f, "DECIMAL({p}, {s})"),
            DataType::Float => f.write_str("FLOAT"),
            DataType::Character => f.write_str("CHARACTER"),
            DataType::Blob => f.write_str("BLOB"),
            DataType::Bit => f.write_str("BIT"),
            DataType::Date => f.write_str("DATE"),
            DataType::Time => f.write_str("TIME"),
            DataType::GmtTime => f.write_str("GMTTIME"),
            DataType::Timestamp => f.write_str("TIMESTAMP"),
            DataType::GmtTimestamp => f.write_str("GMTTIMESTAMP"),
            DataType::Interval(None) => f.write_str("INTERVAL"),
            DataType::Interval(Some(q)) => write!(f, "INTERVAL {}", q.keyword()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_strings_convert_to_and_from_bytes() {
        let b = BitString::from_bytes(&[0x0a, 0x1b]);
        assert_eq!(b.digits(), "0000101000011011");
        assert_eq!(b.to_bytes(), Some(vec![0x0a, 0x1b]));
        assert_eq!(BitString::parse("101").map(|b| b.to_bytes()), Some(None));
        assert!(BitString::parse("12").is_none());
    }

    #[test]
    fn data_type_names_parse() {
        assert_eq!(DataType::parse("int"), Some(DataType::Integer));
        assert_eq!(
            DataType::parse("DECIMAL(10, 2)"),
            Some(DataType::Decimal(Some((10, 2))))
        );
        assert_eq!(DataType::parse("DECIMAL(2, 3)"), None);
        assert_eq!(
            DataType::parse("interval year to month"),
            Some(DataType::Interval(Some(IntervalQualifier::YearToMonth)))
        );
        assert_eq!(DataType::parse("VARCHAR"), None);
    }

    #[test]
    fn value_type_names_are_esql_names() {
        assert_eq!(Value::from_i64(1).type_name(), "INTEGER");
        assert_eq!(Value::from_text("a").type_name(), "CHARACTER");
        assert_eq!(Value::Null.type_name(), "NULL");
        assert_eq!(Value::from_truth(None), Value::Null);
        assert_eq!(Value::Float(0.5).to_string(), "5E-1");
        assert_eq!(Value::Null.to_string(), "NULL");
        assert_eq!(Value::Boolean(true).truth().unwrap(), Some(true));
        assert!(Value::Integer(1).truth().is_err());
    }
}
