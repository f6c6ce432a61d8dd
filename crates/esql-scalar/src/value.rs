//! The ESQL scalar value; its types and their names are the tree's ([`ScalarType`], [`DataType`]).

use std::fmt;

use bytes::Bytes;

use crate::char_string::CharString;
use crate::datetime::{Date, Time, Timestamp};
use crate::decimal::Decimal;
use crate::interval::Interval;

pub use sluice_tree::{DataType, ScalarType};

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
    /// The value's type.
    pub const fn scalar_type(&self) -> ScalarType {
        match self {
            Value::Null => ScalarType::Null,
            Value::Boolean(_) => ScalarType::Boolean,
            Value::Integer(_) => ScalarType::Integer,
            Value::Decimal(_) => ScalarType::Decimal,
            Value::Float(_) => ScalarType::Float,
            Value::Character(_) => ScalarType::Character,
            Value::Blob(_) => ScalarType::Blob,
            Value::Bit(_) => ScalarType::Bit,
            Value::Date(_) => ScalarType::Date,
            Value::Time(_) => ScalarType::Time,
            Value::GmtTime(_) => ScalarType::GmtTime,
            Value::Timestamp(_) => ScalarType::Timestamp,
            Value::GmtTimestamp(_) => ScalarType::GmtTimestamp,
            Value::Interval(_) => ScalarType::Interval,
        }
    }

    /// The ESQL name of the value's type (`INTEGER`, `CHARACTER`, … and `NULL`).
    pub const fn type_name(&self) -> &'static str {
        self.scalar_type().name()
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
                ScalarType::Boolean,
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
            return f.write_str(ScalarType::Null.name());
        }
        match crate::cast::to_character(self) {
            Ok(s) => f.write_str(&s),
            Err(_) => f.write_str(self.type_name()),
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
