//! Data types as written in DECLARE, CAST and routine signatures.

use crate::syntax::span::Span;

/// A data type with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeSpec {
    pub ty: DataType,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DataType {
    Boolean,
    /// `INTEGER` or `INT`.
    Integer,
    /// `DECIMAL` with optional `(precision [, scale])`.
    Decimal {
        precision: Option<u32>,
        scale: Option<u32>,
    },
    Float,
    /// `CHARACTER` or `CHAR`.
    Character,
    Blob,
    Bit,
    Date,
    Time,
    GmtTime,
    Timestamp,
    GmtTimestamp,
    Interval(Option<IntervalQualifier>),
    /// `REFERENCE` (the `TO` target is the declaration's initial value).
    Reference,
    Row,
    /// `NAMESPACE` constant (also spelt `NAMESPACE` in DECLARE ... NAMESPACE 'uri').
    Namespace,
    /// `NAME` constant.
    Name,
}

/// The fields of a date-time value an interval or EXTRACT names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalUnit {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl IntervalUnit {
    /// The unit named by `word`, case-insensitively.
    pub fn from_word(word: &str) -> Option<IntervalUnit> {
        Some(match word.to_ascii_uppercase().as_str() {
            "YEAR" => IntervalUnit::Year,
            "MONTH" => IntervalUnit::Month,
            "DAY" => IntervalUnit::Day,
            "HOUR" => IntervalUnit::Hour,
            "MINUTE" => IntervalUnit::Minute,
            "SECOND" => IntervalUnit::Second,
            _ => return None,
        })
    }
}

/// `HOUR`, `HOUR TO MINUTE`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalQualifier {
    pub from: IntervalUnit,
    pub to: Option<IntervalUnit>,
}
