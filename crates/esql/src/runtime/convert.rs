//! Values crossing between the scalar layer ([`sluice_esql_scalar::Value`]) and the message
//! tree ([`sluice_tree::Value`], whose strings are handles into the tree's buffers).

use bytes::Bytes;
use sluice_esql_scalar::{
    BitString, CharString, CharWriter, Date, Decimal, Interval, Time, Timestamp, Value,
};
use sluice_tree::{NodeId, Tree, Value as TreeValue};

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
            let i = if qualifier.is_year_month() {
                Interval::months(months as i64, qualifier)
            } else {
                Interval::micros(micros, qualifier)
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
            qualifier: i.qualifier(),
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

#[cfg(test)]
mod tests {
    use sluice_esql_scalar::IntervalQualifier;

    use super::*;

    #[test]
    fn interval_keeps_its_qualifier_through_a_tree_element_for_every_qualifier() {
        let mut tree = Tree::new("Root");
        let root = tree.root();
        for q in IntervalQualifier::ALL {
            let iv = if q.is_year_month() {
                Interval::months(-14, q)
            } else {
                Interval::micros(90_061_000_001, q)
            };
            let v = Value::Interval(iv.unwrap_or_else(|e| panic!("{q}: {e}")));
            let stored = to_tree(&mut tree, &v);
            tree.set_value(root, stored);
            assert_eq!(read(&tree, root), v, "{q}");
        }
    }

    #[test]
    fn every_scalar_type_is_the_same_in_the_tree() {
        let mut tree = Tree::new("Root");
        let values = [
            Value::Null,
            Value::Boolean(true),
            Value::Integer(-3),
            Value::Float(0.5),
            Value::Decimal(Decimal::from_i64(12)),
            Value::from_text("x"),
            Value::from_bytes(&b"\x01"[..]),
            Value::Bit(BitString(vec![true, false])),
            Value::Date(Date::from_days(19_000).unwrap_or_else(|e| panic!("{e}"))),
            Value::Time(Time::from_micros_wrapping(5)),
            Value::GmtTime(Time::from_micros_wrapping(6)),
            Value::Timestamp(Timestamp::from_micros(7).unwrap_or_else(|e| panic!("{e}"))),
            Value::GmtTimestamp(Timestamp::from_micros(8).unwrap_or_else(|e| panic!("{e}"))),
            Value::Interval(
                Interval::months(1, IntervalQualifier::Month).unwrap_or_else(|e| panic!("{e}")),
            ),
        ];
        for v in values {
            let t = to_tree(&mut tree, &v);
            assert_eq!(t.scalar_type(), v.scalar_type(), "{v:?}");
            assert_eq!(t.type_name(), v.type_name());
        }
    }
}
