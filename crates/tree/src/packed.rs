//! The compact form in which an element stores its [`Value`]: a 4-bit kind and three words.
//!
//! Keeping the kind out of the payload lets an element hold name, value, links and source span in
//! one 64-byte cache line. Intervals, the one kind wider than three words, live in the tree's heap.

use crate::data_type::ScalarType;
use crate::interval::IntervalQualifier;
use crate::text::Text;
use crate::value::Value;

/// A value as an element stores it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Packed {
    pub kind: u8,
    pub words: [u32; 3],
}

// The kind is the value's scalar type code, which must fit the four bits an element has for it.
const _: () = assert!(ScalarType::ALL.len() <= 16);
const NULL: u8 = ScalarType::Null.code();
const BOOLEAN: u8 = ScalarType::Boolean.code();
const INTEGER: u8 = ScalarType::Integer.code();
const FLOAT: u8 = ScalarType::Float.code();
const DECIMAL: u8 = ScalarType::Decimal.code();
pub(crate) const CHARACTER: u8 = ScalarType::Character.code();
const BLOB: u8 = ScalarType::Blob.code();
const BIT: u8 = ScalarType::Bit.code();
const DATE: u8 = ScalarType::Date.code();
const TIME: u8 = ScalarType::Time.code();
const GMT_TIME: u8 = ScalarType::GmtTime.code();
const TIMESTAMP: u8 = ScalarType::Timestamp.code();
const GMT_TIMESTAMP: u8 = ScalarType::GmtTimestamp.code();
/// The words are a heap text of [`INTERVAL_BYTES`] bytes.
const INTERVAL: u8 = ScalarType::Interval.code();

/// An interval in the heap: months (4 bytes), microseconds (8), qualifier code (1), little-endian.
pub(crate) const INTERVAL_BYTES: usize = 13;

fn wide(kind: u8, v: i64) -> Packed {
    Packed {
        kind,
        words: [v as u32, (v >> 32) as u32, 0],
    }
}

fn text(kind: u8, t: Text) -> Packed {
    Packed {
        kind,
        words: t.to_raw(),
    }
}

impl Packed {
    /// Pack `v`; `store_interval` keeps an interval's bytes and returns their handle.
    #[inline]
    pub fn pack(v: Value, store_interval: impl FnOnce(&[u8]) -> Text) -> Packed {
        match v {
            Value::Null => Packed {
                kind: NULL,
                words: [0; 3],
            },
            Value::Boolean(b) => Packed {
                kind: BOOLEAN,
                words: [u32::from(b), 0, 0],
            },
            Value::Integer(i) => wide(INTEGER, i),
            Value::Float(f) => wide(FLOAT, f.to_bits() as i64),
            Value::Decimal(t) => text(DECIMAL, t),
            Value::Character(t) => text(CHARACTER, t),
            Value::Blob(t) => text(BLOB, t),
            Value::Bit(t) => text(BIT, t),
            Value::Date(d) => Packed {
                kind: DATE,
                words: [d as u32, 0, 0],
            },
            Value::Time(t) => wide(TIME, t),
            Value::GmtTime(t) => wide(GMT_TIME, t),
            Value::Timestamp(t) => wide(TIMESTAMP, t),
            Value::GmtTimestamp(t) => wide(GMT_TIMESTAMP, t),
            Value::Interval {
                months,
                micros,
                qualifier,
            } => {
                let mut b = [0u8; INTERVAL_BYTES];
                b[..4].copy_from_slice(&months.to_le_bytes());
                b[4..12].copy_from_slice(&micros.to_le_bytes());
                b[12] = qualifier.code();
                text(INTERVAL, store_interval(&b))
            }
        }
    }

    /// The value back; `interval_bytes` resolves an interval's heap handle.
    #[inline]
    pub fn unpack<'a>(self, interval_bytes: impl FnOnce(Text) -> &'a [u8]) -> Value {
        let [a, b, _] = self.words;
        let i = || (u64::from(b) << 32 | u64::from(a)) as i64;
        let t = || Text::from_raw(self.words);
        match self.kind {
            BOOLEAN => Value::Boolean(a != 0),
            INTEGER => Value::Integer(i()),
            FLOAT => Value::Float(f64::from_bits(i() as u64)),
            DECIMAL => Value::Decimal(t()),
            CHARACTER => Value::Character(t()),
            BLOB => Value::Blob(t()),
            BIT => Value::Bit(t()),
            DATE => Value::Date(a as i32),
            TIME => Value::Time(i()),
            GMT_TIME => Value::GmtTime(i()),
            TIMESTAMP => Value::Timestamp(i()),
            GMT_TIMESTAMP => Value::GmtTimestamp(i()),
            INTERVAL => {
                let raw = interval_bytes(t());
                let mut b = [0u8; INTERVAL_BYTES];
                if raw.len() == INTERVAL_BYTES {
                    b.copy_from_slice(raw);
                }
                let mut m = [0u8; 4];
                m.copy_from_slice(&b[..4]);
                let mut u = [0u8; 8];
                u.copy_from_slice(&b[4..12]);
                Value::Interval {
                    months: i32::from_le_bytes(m),
                    micros: i64::from_le_bytes(u),
                    // Only `pack` writes these bytes, so the code is always a qualifier's.
                    qualifier: IntervalQualifier::from_code(b[12])
                        .unwrap_or(IntervalQualifier::DayToSecond),
                }
            }
            _ => Value::Null,
        }
    }

    /// The text handle of a character, decimal, BLOB or BIT value.
    #[inline]
    pub fn text(self) -> Option<Text> {
        matches!(self.kind, DECIMAL | CHARACTER | BLOB | BIT).then(|| Text::from_raw(self.words))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_round_trips() {
        let mut heap = Vec::new();
        let values = [
            Value::Null,
            Value::Boolean(true),
            Value::Boolean(false),
            Value::Integer(i64::MIN),
            Value::Integer(-1),
            Value::Float(-0.48),
            Value::Float(f64::MAX),
            Value::Decimal(Text::src(1, 2, 3)),
            Value::Character(Text::from_static("abc")),
            Value::Blob(Text::EMPTY),
            Value::Bit(Text::src(0, 0, 8)),
            Value::Date(-719_162),
            Value::Time(86_399_999_999),
            Value::GmtTime(1),
            Value::Timestamp(-5),
            Value::GmtTimestamp(i64::MAX),
            Value::Interval {
                months: -14,
                micros: -3_600_000_001,
                qualifier: IntervalQualifier::HourToSecond,
            },
        ];
        for v in values {
            let p = Packed::pack(v, |b| {
                heap = b.to_vec();
                Text::from_static("")
            });
            assert_eq!(ScalarType::from_code(p.kind), Some(v.scalar_type()));
            assert_eq!(p.unpack(|_| &heap[..]), v, "{v:?}");
        }
    }

    #[test]
    fn every_interval_qualifier_round_trips_through_its_tree_code() {
        let mut heap = Vec::new();
        for qualifier in IntervalQualifier::ALL {
            let v = Value::Interval {
                months: 3,
                micros: 4,
                qualifier,
            };
            let p = Packed::pack(v, |b| {
                heap = b.to_vec();
                Text::from_static("")
            });
            assert_eq!(heap[INTERVAL_BYTES - 1], qualifier.code());
            assert_eq!(p.unpack(|_| &heap[..]), v, "{qualifier}");
        }
    }
}
