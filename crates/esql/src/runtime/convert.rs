//! Values crossing between the scalar layer ([`sluice_esql_scalar::Value`]) and the message
//! tree ([`sluice_tree::Value`], whose strings are handles into the tree's buffers).

use bytes::Bytes;
use sluice_esql_scalar::{
    BitString, CharString, CharWriter, Date, Decimal, Interval, IntervalQualifier, Time, Timestamp,
    Value,
};
use sluice_tree::{NodeId, Tree, Value as TreeValue};

const QUALIFIERS: [IntervalQualifier; 13] = [
    IntervalQualifier::Year,
    IntervalQualifier::YearToMonth,
    IntervalQualifier::Month,
    IntervalQualifier::Day,
    IntervalQualifier::DayToHour,
    IntervalQualifier::DayToMinute,
    IntervalQualifier::DayToSecond,
    IntervalQualifier::Hour,
    IntervalQualifier::HourToMinute,
    IntervalQualifier::HourToSecond,
    IntervalQualifier::Minute,
    IntervalQualifier::MinuteToSecond,
    IntervalQualifier::Second,
];

fn qualifier_code(q: IntervalQualifier) -> u8 {
    QUALIFIERS.iter().position(|x| *x == q).unwrap_or(6) as u8
}

/// The scalar value of element `id` (character data is copied out of the tree: in place when
/// it is short, see [`CharString`]).
pub fn read(tree: &Tree, id: NodeId) -> Value {
    from_tree(tree, tree.value(id))
}

/// A tree value as a scalar value.
pub fn from_tree(tree: &Tree, v: TreeValue) -> Value {
    match v {
        TreeValue::Null => Value::Null,
        TreeValue::Boolean(b) => Value::Boolean(b),
        TreeValue::Integer(i) => Value::Integer(i),
        TreeValue::Float(f) => Value::Float(f),
        TreeValue::Decimal(t) => match Decimal::parse(&tree.str(t)) {
            Ok(d) => Value::Decimal(d),
            // A decimal the parser could not read stays visible as its text.
            Err(_) => Value::Character(CharString::from(tree.str(t).as_ref())),
        },
        TreeValue::Character(t) => Value::Character(CharString::from(tree.str(t).as_ref())),
        TreeValue::Blob(t) => Value::Blob(Bytes::copy_from_slice(tree.bytes(t))),
        TreeValue::Bit(t) => Value::Bit(BitString::parse(&tree.str(t)).unwrap_or_default()),
        TreeValue::Date(d) => Date::from_days(d as i64).map_or(Value::Null, Value::Date),
        TreeValue::Time(m) => Value::Time(Time::from_micros_wrapping(m)),
        TreeValue::GmtTime(m) => Value::GmtTime(Time::from_micros_wrapping(m)),
        TreeValue::Timestamp(m) => Timestamp::from_micros(m).map_or(Value::Null, Value::Timestamp),
        TreeValue::GmtTimestamp(m) => {
            Timestamp::from_micros(m).map_or(Value::Null, Value::GmtTimestamp)
        }
        TreeValue::Interval {
            months,
            micros,
            qualifier,
        } => {
            let q = QUALIFIERS
                .get(qualifier as usize)
                .copied()
                .unwrap_or(IntervalQualifier::DayToSecond);
            let i = if q.is_year_month() {
                Interval::months(months as i64, q)
            } else {
                Interval::micros(micros, q)
            };
            i.map_or(Value::Null, Value::Interval)
        }
    }
}

/// A scalar value stored into `tree` (strings are copied into the tree's heap).
pub fn to_tree(tree: &mut Tree, v: &Value) -> TreeValue {
    match v {
        Value::Null => TreeValue::Null,
        Value::Boolean(b) => TreeValue::Boolean(*b),
        Value::Integer(i) => TreeValue::Integer(*i),
        Value::Float(f) => TreeValue::Float(*f),
        Value::Decimal(d) => TreeValue::Decimal(tree.alloc_text(d.to_string().as_bytes())),
        Value::Character(s) => TreeValue::Character(tree.alloc_text(s.as_bytes())),
        Value::Blob(b) => TreeValue::Blob(tree.alloc_text(b)),
        Value::Bit(b) => TreeValue::Bit(tree.alloc_text(b.digits().as_bytes())),
        Value::Date(d) => TreeValue::Date(d.to_days() as i32),
        Value::Time(t) => TreeValue::Time(t.micros_of_day()),
        Value::GmtTime(t) => TreeValue::GmtTime(t.micros_of_day()),
        Value::Timestamp(t) => TreeValue::Timestamp(t.to_micros()),
        Value::GmtTimestamp(t) => TreeValue::GmtTimestamp(t.to_micros()),
        Value::Interval(i) => TreeValue::Interval {
            months: i.total_months() as i32,
            micros: i.total_micros(),
            qualifier: qualifier_code(i.qualifier()),
        },
    }
}

/// The text of a scalar value as CAST to CHARACTER gives it (NULL is the empty string).
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Character(s) => s.to_string(),
        other => sluice_esql_scalar::cast::to_character(other).unwrap_or_default(),
    }
}

/// [`text`] as CHARACTER text: a CHARACTER value's own (shared, not copied), and the short text
/// of a number in place, so that names computed at run time cost no heap allocation.
pub fn char_text(v: &Value) -> CharString {
    match v {
        Value::Character(s) => s.clone(),
        other => {
            let mut w = CharWriter::new();
            match sluice_esql_scalar::cast::write_character(other, &mut w) {
                Ok(()) => w.finish(),
                Err(_) => CharString::EMPTY,
            }
        }
    }
}
