//! Typed element values, as the message tree stores them.
//!
//! Values are `Copy`: character, decimal, BLOB and BIT data are [`Text`] handles into the tree's
//! buffers. Decimals are kept as their canonical decimal text, which is what parsers produce and
//! serialisers write; arithmetic on them belongs to the ESQL runtime.

use crate::data_type::ScalarType;
use crate::interval::IntervalQualifier;
use crate::text::Text;

/// The value of an element. Date and time values count from the Unix epoch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Value {
    /// No value (an element that is only a name, or an explicit NULL).
    #[default]
    Null,
    Boolean(bool),
    Integer(i64),
    Float(f64),
    /// A decimal number as its decimal text, for example `-12.50`.
    Decimal(Text),
    /// A character string.
    Character(Text),
    /// Bytes.
    Blob(Text),
    /// A bit string as the characters `0` and `1`.
    Bit(Text),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since midnight, local time.
    Time(i64),
    /// Microseconds since midnight, GMT.
    GmtTime(i64),
    /// Microseconds since the epoch, local time.
    Timestamp(i64),
    /// Microseconds since the epoch, GMT.
    GmtTimestamp(i64),
    /// A duration of months (year-month qualifiers) or microseconds (day-time qualifiers).
    Interval {
        months: i32,
        micros: i64,
        qualifier: IntervalQualifier,
    },
}

impl Value {
    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value's type.
    pub const fn scalar_type(&self) -> ScalarType {
        match self {
            Value::Null => ScalarType::Null,
            Value::Boolean(_) => ScalarType::Boolean,
            Value::Integer(_) => ScalarType::Integer,
            Value::Float(_) => ScalarType::Float,
            Value::Decimal(_) => ScalarType::Decimal,
            Value::Character(_) => ScalarType::Character,
            Value::Blob(_) => ScalarType::Blob,
            Value::Bit(_) => ScalarType::Bit,
            Value::Date(_) => ScalarType::Date,
            Value::Time(_) => ScalarType::Time,
            Value::GmtTime(_) => ScalarType::GmtTime,
            Value::Timestamp(_) => ScalarType::Timestamp,
            Value::GmtTimestamp(_) => ScalarType::GmtTimestamp,
            Value::Interval { .. } => ScalarType::Interval,
        }
    }

    /// The ESQL name of the value's type (`INTEGER`, … and `NULL`).
    pub const fn type_name(&self) -> &'static str {
        self.scalar_type().name()
    }
}
