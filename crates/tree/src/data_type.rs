//! The scalar types of element values and ESQL values, their names, and the data types ESQL
//! declares variables as and casts values to.
//!
//! This is the one place the type names are spelt and read: the tree prints a value's type
//! through [`ScalarType::name`], and the ESQL scalar layer and parser read `INTEGER`,
//! `DECIMAL(10, 2)` or `INTERVAL DAY TO SECOND` through [`ScalarType::from_name`] and
//! [`DataType`].

use std::fmt;

use crate::interval::IntervalQualifier;

/// The type of a scalar value. The discriminant is the kind code under which an element keeps its
/// value ([`ScalarType::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ScalarType {
    /// The type of NULL: an element that has no value, or ESQL's NULL (UNKNOWN, as a BOOLEAN).
    /// No variable is declared as it and nothing is cast to it.
    Null,
    Boolean,
    Integer,
    Float,
    Decimal,
    Character,
    Blob,
    Bit,
    Date,
    Time,
    GmtTime,
    Timestamp,
    GmtTimestamp,
    Interval,
}

impl ScalarType {
    /// Every scalar type, in code order: `ALL[t.code()] == t`.
    pub const ALL: [ScalarType; 14] = [
        ScalarType::Null,
        ScalarType::Boolean,
        ScalarType::Integer,
        ScalarType::Float,
        ScalarType::Decimal,
        ScalarType::Character,
        ScalarType::Blob,
        ScalarType::Bit,
        ScalarType::Date,
        ScalarType::Time,
        ScalarType::GmtTime,
        ScalarType::Timestamp,
        ScalarType::GmtTimestamp,
        ScalarType::Interval,
    ];

    /// The type's ESQL name, such as `GMTTIMESTAMP`; `NULL` for [`ScalarType::Null`].
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Null => "NULL",
            ScalarType::Boolean => "BOOLEAN",
            ScalarType::Integer => "INTEGER",
            ScalarType::Float => "FLOAT",
            ScalarType::Decimal => "DECIMAL",
            ScalarType::Character => "CHARACTER",
            ScalarType::Blob => "BLOB",
            ScalarType::Bit => "BIT",
            ScalarType::Date => "DATE",
            ScalarType::Time => "TIME",
            ScalarType::GmtTime => "GMTTIME",
            ScalarType::Timestamp => "TIMESTAMP",
            ScalarType::GmtTimestamp => "GMTTIMESTAMP",
            ScalarType::Interval => "INTERVAL",
        }
    }

    /// The type named `word`, case-insensitively, including ESQL's short forms `INT` and `CHAR`.
    pub fn from_name(word: &str) -> Option<ScalarType> {
        if word.eq_ignore_ascii_case("INT") {
            return Some(ScalarType::Integer);
        }
        if word.eq_ignore_ascii_case("CHAR") {
            return Some(ScalarType::Character);
        }
        ScalarType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(word))
    }

    /// The kind code an element keeps its value under.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The type with kind code `code`; `None` for a code no type has.
    pub fn from_code(code: u8) -> Option<ScalarType> {
        ScalarType::ALL.get(usize::from(code)).copied()
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The most digits a DECIMAL holds.
pub const DECIMAL_MAX_PRECISION: u32 = 34;

/// The target of a CAST or the declared type of a variable: a scalar type other than NULL, with the
/// precision and scale of a DECIMAL or the qualifier of an INTERVAL when they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Boolean,
    /// `INTEGER` or `INT`.
    Integer,
    /// `DECIMAL`, or `DECIMAL(precision, scale)` (`DECIMAL(p)` has scale 0).
    Decimal(Option<(u32, u32)>),
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
    /// `INTERVAL`, or `INTERVAL` with a qualifier: `INTERVAL DAY TO SECOND`.
    Interval(Option<IntervalQualifier>),
}

impl DataType {
    /// The scalar type, without precision or qualifier.
    pub const fn scalar_type(self) -> ScalarType {
        match self {
            DataType::Boolean => ScalarType::Boolean,
            DataType::Integer => ScalarType::Integer,
            DataType::Decimal(_) => ScalarType::Decimal,
            DataType::Float => ScalarType::Float,
            DataType::Character => ScalarType::Character,
            DataType::Blob => ScalarType::Blob,
            DataType::Bit => ScalarType::Bit,
            DataType::Date => ScalarType::Date,
            DataType::Time => ScalarType::Time,
            DataType::GmtTime => ScalarType::GmtTime,
            DataType::Timestamp => ScalarType::Timestamp,
            DataType::GmtTimestamp => ScalarType::GmtTimestamp,
            DataType::Interval(_) => ScalarType::Interval,
        }
    }

    /// The data type of a scalar type, without precision or qualifier; `None` for NULL.
    pub const fn of(t: ScalarType) -> Option<DataType> {
        Some(match t {
            ScalarType::Null => return None,
            ScalarType::Boolean => DataType::Boolean,
            ScalarType::Integer => DataType::Integer,
            ScalarType::Float => DataType::Float,
            ScalarType::Decimal => DataType::Decimal(None),
            ScalarType::Character => DataType::Character,
            ScalarType::Blob => DataType::Blob,
            ScalarType::Bit => DataType::Bit,
            ScalarType::Date => DataType::Date,
            ScalarType::Time => DataType::Time,
            ScalarType::GmtTime => DataType::GmtTime,
            ScalarType::Timestamp => DataType::Timestamp,
            ScalarType::GmtTimestamp => DataType::GmtTimestamp,
            ScalarType::Interval => DataType::Interval(None),
        })
    }

    /// `DECIMAL(precision, scale)`; `None` unless 1 ≤ precision ≤ 34 and scale ≤ precision.
    pub fn decimal(precision: u32, scale: u32) -> Option<DataType> {
        ((1..=DECIMAL_MAX_PRECISION).contains(&precision) && scale <= precision)
            .then_some(DataType::Decimal(Some((precision, scale))))
    }

    /// The ESQL name of the type, without precision or qualifier.
    pub const fn name(self) -> &'static str {
        self.scalar_type().name()
    }

    /// Parses a type as ESQL writes it in CAST and DECLARE and as [`Display`](fmt::Display)
    /// prints it: `INT`, `CHARACTER`, `DECIMAL(10, 2)`, `INTERVAL DAY TO SECOND`
    /// (case-insensitive, any spacing).
    pub fn parse(text: &str) -> Option<DataType> {
        let text = text.trim();
        let end = text
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(text.len());
        let (word, rest) = text.split_at(end);
        let rest = rest.trim();
        let ty = DataType::of(ScalarType::from_name(word)?)?;
        if rest.is_empty() {
            return Some(ty);
        }
        match ty {
            DataType::Decimal(_) => {
                let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
                let (precision, scale) = match inner.split_once(',') {
                    Some((p, s)) => (p, Some(s)),
                    None => (inner, None),
                };
                let precision = precision.trim().parse().ok()?;
                let scale = match scale {
                    Some(s) => s.trim().parse().ok()?,
                    None => 0,
                };
                DataType::decimal(precision, scale)
            }
            DataType::Interval(_) => {
                IntervalQualifier::parse(rest).map(|q| DataType::Interval(Some(q)))
            }
            _ => None,
        }
    }
}

/// The type as ESQL writes it: `DECIMAL(10, 2)`, `INTERVAL DAY TO SECOND`.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match self {
            DataType::Decimal(Some((p, s))) => write!(f, "({p}, {s})"),
            DataType::Interval(Some(q)) => write!(f, " {q}"),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_type_round_trips_through_its_name_for_every_type() {
        for t in ScalarType::ALL {
            assert_eq!(ScalarType::from_name(t.name()), Some(t), "{t}");
            assert_eq!(ScalarType::from_name(&t.name().to_lowercase()), Some(t));
            assert_eq!(t.to_string(), t.name());
        }
        assert_eq!(ScalarType::from_name("int"), Some(ScalarType::Integer));
        assert_eq!(ScalarType::from_name("Char"), Some(ScalarType::Character));
        assert_eq!(ScalarType::from_name("VARCHAR"), None);
    }

    #[test]
    fn scalar_type_round_trips_through_its_code_for_every_type() {
        for (i, t) in ScalarType::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(t.code()), i, "{t}");
            assert_eq!(ScalarType::from_code(t.code()), Some(t));
        }
        assert_eq!(ScalarType::from_code(14), None);
    }

    /// Every data type ESQL can write, with and without precision or qualifier.
    fn every_data_type() -> Vec<DataType> {
        let mut all: Vec<DataType> = ScalarType::ALL
            .into_iter()
            .filter_map(DataType::of)
            .collect();
        all.extend([(1, 0), (10, 2), (34, 34)].map(|ps| DataType::Decimal(Some(ps))));
        all.extend(IntervalQualifier::ALL.map(|q| DataType::Interval(Some(q))));
        all
    }

    #[test]
    fn data_type_round_trips_through_its_name_for_every_type() {
        for t in every_data_type() {
            let name = t.to_string();
            assert_eq!(DataType::parse(&name), Some(t), "{name}");
            assert_eq!(DataType::parse(&name.to_lowercase()), Some(t), "{name}");
            assert_eq!(
                DataType::of(t.scalar_type()).map(DataType::name),
                Some(t.name())
            );
        }
        assert_eq!(DataType::of(ScalarType::Null), None);
    }

    #[test]
    fn data_type_parse_reads_esql_spellings() {
        assert_eq!(DataType::parse(" int "), Some(DataType::Integer));
        assert_eq!(DataType::parse("CHAR"), Some(DataType::Character));
        assert_eq!(
            DataType::parse("DECIMAL(10,2)"),
            Some(DataType::Decimal(Some((10, 2))))
        );
        assert_eq!(
            DataType::parse("decimal ( 7 )"),
            Some(DataType::Decimal(Some((7, 0))))
        );
        assert_eq!(
            DataType::parse("interval  year to month"),
            Some(DataType::Interval(Some(IntervalQualifier::YearToMonth)))
        );
    }

    #[test]
    fn data_type_parse_rejects_what_esql_does_not_write() {
        for bad in [
            "",
            "NULL",
            "VARCHAR",
            "INTEGER(3)",
            "DECIMAL(2, 3)",
            "DECIMAL(0)",
            "DECIMAL(35)",
            "DECIMAL(1, 2, 3)",
            "DECIMAL 5",
            "INTERVALDAY",
            "INTERVAL MONTH TO DAY",
            "INTEGER2",
        ] {
            assert_eq!(DataType::parse(bad), None, "{bad}");
        }
    }
}
