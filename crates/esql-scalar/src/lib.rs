//! The ESQL scalar layer: values, type promotion, CAST, and the scalar built-in
//! functions, following the IBM App Connect Enterprise ESQL reference.
//!
//! - [`value`]: [`Value`], [`DataType`], [`BitString`]; [`char_string`] holds the text of
//!   CHARACTER values.
//! - [`decimal`], [`datetime`], [`interval`]: the DECIMAL (34-digit decimal128),
//!   DATE / TIME / TIMESTAMP and INTERVAL representations.
//! - [`arith`]: `+ - * /` with ESQL type promotion, unary minus, `||`.
//! - [`compare`]: comparisons with three-valued logic, LIKE, BETWEEN.
//! - [`mod@cast`]: CAST with CCSID, ENCODING, FORMAT and DEFAULT; [`codepage`] and
//!   [`float_format`] hold the byte and FLOAT text conversions it uses.
//! - [`functions`]: the built-in functions and [`call`], which dispatches by name.
//! - [`clock`]: the system clock and local time zone.
//!
//! Nothing here panics on input: every failure is a [`ScalarError`] with an
//! SQLSTATE-style code.

pub mod arith;
pub mod cast;
pub mod char_string;
pub mod clock;
pub mod codepage;
pub mod compare;
pub mod datetime;
pub mod decimal;
pub mod error;
pub mod float_format;
pub mod functions;
pub mod interval;
pub mod value;

pub use crate::cast::{CastOptions, cast, cast_many, cast_with};
pub use crate::char_string::{CharString, CharWriter};
pub use crate::datetime::{Date, Time, Timestamp};
pub use crate::decimal::{Decimal, RoundingMode};
pub use crate::error::ScalarError;
pub use crate::functions::call;
pub use crate::interval::{DatetimeField, Interval, IntervalQualifier};
pub use crate::value::{BitString, DataType, ScalarType, Value};

#[cfg(test)]
mod proptests;
