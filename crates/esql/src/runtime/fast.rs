//! Built-in functions resolved when the program is compiled, so that a call is a direct
//! function call rather than a lookup by name. Names the table does not cover go through the
//! scalar layer's dispatcher.

use sluice_esql_scalar::functions as f;
use sluice_esql_scalar::{RoundingMode, ScalarError, Value};

/// A built-in with a known argument count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FastFn {
    Length,
    Upper,
    Lower,
    Left,
    Right,
    Substring,
    SubstringBefore,
    SubstringAfter,
    Position,
    Trim(f::TrimSpec),
    Replace,
    Coalesce,
    Nullif,
    Abs,
    Mod,
    Round,
    Contains,
    StartsWith,
    EndsWith,
}

/// The direct form of `name` called with `argc` arguments, when there is one.
pub fn resolve(name: &str, argc: usize) -> Option<FastFn> {
    use FastFn::*;
    Some(match (name, argc) {
        ("LENGTH" | "CHARACTER_LENGTH" | "CHAR_LENGTH", 1) => Length,
        ("UPPER" | "UCASE", 1) => Upper,
        ("LOWER" | "LCASE", 1) => Lower,
        ("LEFT", 2) => Left,
        ("RIGHT", 2) => Right,
        ("SUBSTRING", 2 | 3) => Substring,
        ("SUBSTRING_BEFORE", 2 | 3) => SubstringBefore,
        ("SUBSTRING_AFTER", 2 | 3) => SubstringAfter,
        ("POSITION", 2..=4) => Position,
        ("TRIM" | "TRIM_BOTH", 1 | 2) => Trim(f::TrimSpec::Both),
        ("TRIM_LEADING", 1 | 2) => Trim(f::TrimSpec::Leading),
        ("TRIM_TRAILING", 1 | 2) => Trim(f::TrimSpec::Trailing),
        ("LTRIM", 1) => Trim(f::TrimSpec::Leading),
        ("RTRIM", 1) => Trim(f::TrimSpec::Trailing),
        ("REPLACE", 2 | 3) => Replace,
        ("COALESCE", 1..) => Coalesce,
        ("NULLIF", 2) => Nullif,
        ("ABS" | "ABSVAL", 1) => Abs,
        ("MOD", 2) => Mod,
        ("ROUND", 2) => Round,
        ("CONTAINS", 2) => Contains,
        ("STARTSWITH", 2) => StartsWith,
        ("ENDSWITH", 2) => EndsWith,
        _ => return None,
    })
}

/// Call a resolved built-in; the argument count was checked by [`resolve`].
pub fn call(func: FastFn, a: &[Value]) -> Result<Value, ScalarError> {
    use FastFn::*;
    let opt = |i: usize| a.get(i);
    let arg = |i: usize| a.get(i).unwrap_or(&Value::Null);
    match func {
        Length => f::length(arg(0)),
        Upper => f::upper(arg(0)),
        Lower => f::lower(arg(0)),
        Left => f::left(arg(0), arg(1)),
        Right => f::right(arg(0), arg(1)),
        Substring => f::substring(arg(0), arg(1), opt(2)),
        SubstringBefore => f::substring_before(arg(0), arg(1), opt(2)),
        SubstringAfter => f::substring_after(arg(0), arg(1), opt(2)),
        Position => f::position(arg(0), arg(1), opt(2), opt(3)),
        Trim(spec) => f::trim(spec, opt(1), arg(0)),
        Replace => f::replace(arg(0), arg(1), opt(2)),
        Coalesce => Ok(f::coalesce(a)),
        Nullif => f::nullif(arg(0), arg(1)),
        Abs => f::abs(arg(0)),
        Mod => f::modulo(arg(0), arg(1)),
        Round => f::round(arg(0), arg(1), RoundingMode::HalfEven),
        Contains => f::contains(arg(0), arg(1)),
        StartsWith => f::starts_with(arg(0), arg(1)),
        EndsWith => f::ends_with(arg(0), arg(1)),
    }
}
