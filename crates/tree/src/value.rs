//! Typed element values, as the message tree stores them.
//!
//! Values are `Copy`: character, decimal, BLOB and BIT data are [`Text`] handles into the tree's
//! buffers. Decimals are kept as their canonical decimal text, which is what parsers produce and
//! serialisers write; arithmetic on them belongs to the ESQL runtime.

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
    /// A duration of months and microseconds; `qualifier` is the ESQL interval qualifier code.
    Interval {
        months: i32,
        micros: i64,
        qualifier: u8,
    },
}

impl Value {
    /// Whether the value is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The ESQL name of the value's type.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Boolean(_) => "BOOLEAN",
            Value::Integer(_) => "INTEGER",
            Value::Float(_) => "FLOAT",
            Value::Decimal(_) => "DECIMAL",
            Value::Character(_) => "CHARACTER",
            Value::Blob(_) => "BLOB",
            Value::Bit(_) => "BIT",
            Value::Date(_) => "DATE",
            Value::Time(_) => "TIME",
            Value::GmtTime(_) => "GMTTIME",
            Value::Timestamp(_) => "TIMESTAMP",
            Value::GmtTimestamp(_) => "GMTTIMESTAMP",
            Value::Interval { .. } => "INTERVAL",
        }
    }
}
