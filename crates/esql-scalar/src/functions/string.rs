//! String manipulation functions over CHARACTER (characters), BLOB (bytes) and
//! BIT (bits): LENGTH, LEFT, RIGHT, SUBSTRING, POSITION, TRIM, UPPER, LOWER,
//! REPLACE, TRANSLATE, OVERLAY, REPLICATE, SPACE, CONTAINS, STARTSWITH, ENDSWITH.
//! Any NULL argument gives NULL.

use super::string_chars as chars;
use crate::error::ScalarError;
use crate::value::{BitString, Value};

/// Which string type a sequence came from, to rebuild a result of the same type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Character,
    Blob,
    Bit,
}

/// A string value as a sequence of units (characters, bytes or bits).
struct Units {
    kind: Kind,
    units: Vec<u32>,
}

fn units(function: &str, position: usize, v: &Value) -> Result<Units, ScalarError> {
    Ok(match v {
        Value::Character(s) => Units {
            kind: Kind::Character,
            units: s.chars().map(u32::from).collect(),
        },
        Value::Blob(b) => Units {
            kind: Kind::Blob,
            units: b.iter().map(|&x| u32::from(x)).collect(),
        },
        Value::Bit(b) => Units {
            kind: Kind::Bit,
            units: b.0.iter().map(|&x| u32::from(x)).collect(),
        },
        other => {
            return Err(ScalarError::arg(
                function,
                position,
                format!("expected CHARACTER, BLOB or BIT, not {}", other.type_name()),
            ));
        }
    })
}

fn same_kind(
    function: &str,
    position: usize,
    first: &Units,
    v: &Value,
) -> Result<Vec<u32>, ScalarError> {
    let u = units(function, position, v)?;
    if u.kind != first.kind {
        return Err(ScalarError::arg(
            function,
            position,
            "must be the same string type as the source",
        ));
    }
    Ok(u.units)
}

fn build(kind: Kind, units: &[u32]) -> Value {
    match kind {
        Kind::Character => {
            Value::from_string(units.iter().filter_map(|&u| char::from_u32(u)).collect())
        }
        Kind::Blob => Value::from_bytes(units.iter().map(|&u| u as u8).collect::<Vec<u8>>()),
        Kind::Bit => Value::Bit(BitString(units.iter().map(|&u| u != 0).collect())),
    }
}

fn int_arg(function: &str, position: usize, v: &Value) -> Result<i64, ScalarError> {
    match v {
        Value::Integer(i) => Ok(*i),
        Value::Decimal(d) if d.is_integer() => d.to_i64(crate::RoundingMode::Down),
        other => Err(ScalarError::arg(
            function,
            position,
            format!("expected INTEGER, not {}", other.type_name()),
        )),
    }
}

fn text_arg<'a>(function: &str, position: usize, v: &'a Value) -> Result<&'a str, ScalarError> {
    v.as_str().ok_or_else(|| {
        ScalarError::arg(
            function,
            position,
            format!("expected CHARACTER, not {}", v.type_name()),
        )
    })
}

fn find(hay: &[u32], needle: &[u32], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from.min(hay.len()));
    }
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

macro_rules! null_in_null_out {
    ($($arg:expr),*) => {
        if false $(|| $arg.is_null())* {
            return Ok(Value::Null);
        }
    };
}

/// LENGTH: characters, bytes or bits.
pub fn length(source: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(source);
    let n = match source {
        Value::Character(s) => s.chars().count(),
        Value::Blob(b) => b.len(),
        Value::Bit(b) => b.len(),
        other => {
            return Err(ScalarError::arg(
                "LENGTH",
                1,
                format!("expected a string, not {}", other.type_name()),
            ));
        }
    };
    Ok(Value::Integer(n as i64))
}

/// LEFT(source, length): the first `length` units.
pub fn left(source: &Value, len: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(source, len);
    if let Some(r) = chars::left(source, len) {
        return r;
    }
    let u = units("LEFT", 1, source)?;
    let n = int_arg("LEFT", 2, len)?;
    if n < 0 {
        return Err(ScalarError::arg(
            "LEFT",
            2,
            "the length must not be negative",
        ));
    }
    let n = (n as usize).min(u.units.len());
    Ok(build(u.kind, &u.units[..n]))
}

/// RIGHT(source, length): the last `length` units.
pub fn right(source: &Value, len: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(source, len);
    if let Some(r) = chars::right(source, len) {
        return r;
    }
    let u = units("RIGHT", 1, source)?;
    let n = int_arg("RIGHT", 2, len)?;
    if n < 0 {
        return Err(ScalarError::arg(
            "RIGHT",
            2,
            "the length must not be negative",
        ));
    }
    let n = (n as usize).min(u.units.len());
    Ok(build(u.kind, &u.units[u.units.len() - n..]))
}

/// SUBSTRING(source FROM start [FOR length]). The range [start, start+length) may
/// begin before position 1; the result is its overlap with the source.
pub fn substring(source: &Value, start: &Value, len: Option<&Value>) -> Result<Value, ScalarError> {
    null_in_null_out!(source, start);
    if len.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(r) = chars::substring(source, start, len) {
        return r;
    }
    let u = units("SUBSTRING", 1, source)?;
    let s = int_arg("SUBSTRING", 2, start)?;
    let total = u.units.len() as i64;
    let end = match len {
        Some(l) => {
            let l = int_arg("SUBSTRING", 3, l)?;
            if l < 0 {
                return Err(ScalarError::arg(
                    "SUBSTRING",
                    3,
                    "the length must not be negative",
                ));
            }
            s.saturating_add(l)
        }
        None => total + 1,
    };
    let from = s.clamp(1, total + 1);
    let to = end.clamp(from, total + 1);
    Ok(build(
        u.kind,
        &u.units[(from - 1) as usize..(to - 1) as usize],
    ))
}

/// SUBSTRING(source BEFORE delimiter [FOR length]): what precedes the first
/// occurrence (its last `length` units); empty when the delimiter is absent.
pub fn substring_before(
    source: &Value,
    delimiter: &Value,
    len: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, delimiter);
    if len.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(r) = chars::substring_before(source, delimiter, len) {
        return r;
    }
    let u = units("SUBSTRING", 1, source)?;
    let d = same_kind("SUBSTRING", 2, &u, delimiter)?;
    let Some(at) = find(&u.units, &d, 0) else {
        return Ok(build(u.kind, &[]));
    };
    let start = match len {
        Some(l) => at.saturating_sub(non_negative("SUBSTRING", 3, l)?),
        None => 0,
    };
    Ok(build(u.kind, &u.units[start..at]))
}

/// SUBSTRING(source AFTER delimiter [FOR length]): what follows the first
/// occurrence (its first `length` units); empty when the delimiter is absent.
pub fn substring_after(
    source: &Value,
    delimiter: &Value,
    len: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, delimiter);
    if len.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(r) = chars::substring_after(source, delimiter, len) {
        return r;
    }
    let u = units("SUBSTRING", 1, source)?;
    let d = same_kind("SUBSTRING", 2, &u, delimiter)?;
    let Some(at) = find(&u.units, &d, 0) else {
        return Ok(build(u.kind, &[]));
    };
    let start = at + d.len();
    let end = match len {
        Some(l) => start
            .saturating_add(non_negative("SUBSTRING", 3, l)?)
            .min(u.units.len()),
        None => u.units.len(),
    };
    Ok(build(u.kind, &u.units[start..end]))
}

fn non_negative(function: &str, position: usize, v: &Value) -> Result<usize, ScalarError> {
    let n = int_arg(function, position, v)?;
    usize::try_from(n).map_err(|_| ScalarError::arg(function, position, "must not be negative"))
}

/// POSITION(search IN source [FROM start] [REPEAT n]): the 1-based position of the
/// n-th occurrence, 0 when there are not that many. A negative REPEAT searches
/// backwards from FROM (default: the end) for occurrences starting at or before it.
pub fn position(
    search: &Value,
    source: &Value,
    from: Option<&Value>,
    repeat: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(search, source);
    if from.is_some_and(Value::is_null) || repeat.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if repeat.is_none()
        && let Some(r) = chars::position(search, source, from)
    {
        return r;
    }
    let src = units("POSITION", 2, source)?;
    let needle = same_kind("POSITION", 1, &src, search)?;
    let n = match repeat {
        Some(r) => int_arg("POSITION", 4, r)?,
        None => 1,
    };
    if needle.is_empty() {
        return Ok(Value::Integer(1));
    }
    let len = src.units.len() as i64;
    let hits = |i: usize| src.units.get(i..i + needle.len()) == Some(&needle[..]);
    if n >= 0 {
        let start = match from {
            Some(f) => int_arg("POSITION", 3, f)?.max(1),
            None => 1,
        };
        let mut count = 0;
        let mut i = (start - 1) as usize;
        while (i as i64) + needle.len() as i64 <= len {
            if hits(i) {
                count += 1;
                if count >= n.max(1) {
                    return Ok(Value::Integer(i as i64 + 1));
                }
            }
            i += 1;
        }
        return Ok(Value::Integer(0));
    }
    let start = match from {
        Some(f) => int_arg("POSITION", 3, f)?.min(len),
        None => len,
    };
    let mut count = 0;
    let mut i = start - 1;
    while i >= 0 {
        if hits(i as usize) {
            count += 1;
            if count >= -n {
                return Ok(Value::Integer(i + 1));
            }
        }
        i -= 1;
    }
    Ok(Value::Integer(0))
}

/// The TRIM specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSpec {
    /// LEADING
    Leading,
    /// TRAILING
    Trailing,
    /// BOTH (the default)
    Both,
}

/// `TRIM([spec] [singleton] FROM source)`: removes the singleton (default: a blank
/// for CHARACTER, X'00' for BLOB, B'0' for BIT) from one or both ends.
pub fn trim(
    spec: TrimSpec,
    singleton: Option<&Value>,
    source: &Value,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source);
    if singleton.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(r) = chars::trim(spec, singleton, source) {
        return r;
    }
    let u = units("TRIM", 2, source)?;
    let pad = match singleton {
        Some(s) => {
            let p = same_kind("TRIM", 1, &u, s)?;
            if p.len() != 1 {
                return Err(ScalarError::arg(
                    "TRIM",
                    1,
                    "the trim singleton must be one character",
                ));
            }
            p[0]
        }
        None if u.kind == Kind::Character => u32::from(' '),
        None => 0,
    };
    let mut start = 0;
    let mut end = u.units.len();
    if spec != TrimSpec::Trailing {
        while start < end && u.units[start] == pad {
            start += 1;
        }
    }
    if spec != TrimSpec::Leading {
        while end > start && u.units[end - 1] == pad {
            end -= 1;
        }
    }
    Ok(build(u.kind, &u.units[start..end]))
}

/// UPPER / UCASE.
pub fn upper(source: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(source);
    if let Some(r) = chars::upper(source) {
        return r;
    }
    Ok(Value::from_string(
        text_arg("UPPER", 1, source)?.to_uppercase(),
    ))
}

/// LOWER / LCASE.
pub fn lower(source: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(source);
    if let Some(r) = chars::lower(source) {
        return r;
    }
    Ok(Value::from_string(
        text_arg("LOWER", 1, source)?.to_lowercase(),
    ))
}

/// REPLACE(source, search [, replacement]): every occurrence of `search`
/// replaced (removed when there is no replacement).
pub fn replace(
    source: &Value,
    search: &Value,
    replacement: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, search);
    if replacement.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(r) = chars::replace(source, search, replacement) {
        return r;
    }
    let u = units("REPLACE", 1, source)?;
    let s = same_kind("REPLACE", 2, &u, search)?;
    let r = match replacement {
        Some(r) => same_kind("REPLACE", 3, &u, r)?,
        None => Vec::new(),
    };
    if s.is_empty() {
        return Ok(source.clone());
    }
    let mut out = Vec::with_capacity(u.units.len());
    let mut i = 0;
    while i < u.units.len() {
        if u.units[i..].starts_with(&s) {
            out.extend_from_slice(&r);
            i += s.len();
        } else {
            out.push(u.units[i]);
            i += 1;
        }
    }
    Ok(build(u.kind, &out))
}

/// TRANSLATE(source, search_chars [, replace_chars]): each unit found in
/// `search_chars` becomes the one at the same place in `replace_chars`, or is
/// removed when `replace_chars` is shorter.
pub fn translate(
    source: &Value,
    search: &Value,
    replacement: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, search);
    if replacement.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    let u = units("TRANSLATE", 1, source)?;
    let s = same_kind("TRANSLATE", 2, &u, search)?;
    let r = match replacement {
        Some(r) => same_kind("TRANSLATE", 3, &u, r)?,
        None => Vec::new(),
    };
    let out: Vec<u32> = u
        .units
        .iter()
        .filter_map(|c| match s.iter().position(|x| x == c) {
            Some(i) => r.get(i).copied(),
            None => Some(*c),
        })
        .collect();
    Ok(build(u.kind, &out))
}

/// OVERLAY(source PLACING text FROM start [FOR length]): replaces `length` units
/// (default: the length of `text`) at `start` with `text`.
pub fn overlay(
    source: &Value,
    placing: &Value,
    start: &Value,
    len: Option<&Value>,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, placing, start);
    if len.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    let u = units("OVERLAY", 1, source)?;
    let p = same_kind("OVERLAY", 2, &u, placing)?;
    let s = int_arg("OVERLAY", 3, start)?;
    if s < 1 {
        return Err(ScalarError::arg(
            "OVERLAY",
            3,
            "the start position must be at least 1",
        ));
    }
    let n = match len {
        Some(l) => non_negative("OVERLAY", 4, l)?,
        None => p.len(),
    };
    let from = ((s - 1) as usize).min(u.units.len());
    let to = from.saturating_add(n).min(u.units.len());
    let mut out = u.units[..from].to_vec();
    out.extend_from_slice(&p);
    out.extend_from_slice(&u.units[to..]);
    Ok(build(u.kind, &out))
}

/// The largest string REPLICATE or SPACE will build, to bound memory.
const MAX_BUILT: usize = 100 * 1024 * 1024;

/// REPLICATE(pattern, count): the pattern repeated.
pub fn replicate(pattern: &Value, count: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(pattern, count);
    let u = units("REPLICATE", 1, pattern)?;
    let n = non_negative("REPLICATE", 2, count)?;
    if u.units.len().saturating_mul(n) > MAX_BUILT {
        return Err(ScalarError::arg(
            "REPLICATE",
            2,
            "the result would be too large",
        ));
    }
    Ok(build(u.kind, &u.units.repeat(n)))
}

/// SPACE(n): `n` blanks.
pub fn space(count: &Value) -> Result<Value, ScalarError> {
    null_in_null_out!(count);
    let n = non_negative("SPACE", 1, count)?;
    if n > MAX_BUILT {
        return Err(ScalarError::arg(
            "SPACE",
            1,
            "the result would be too large",
        ));
    }
    Ok(Value::from_string(" ".repeat(n)))
}

fn predicate(
    function: &str,
    source: &Value,
    other: &Value,
    test: fn(&[u32], &[u32]) -> bool,
    text_test: fn(&str, &str) -> bool,
) -> Result<Value, ScalarError> {
    null_in_null_out!(source, other);
    if let Some(r) = chars::predicate(source, other, text_test) {
        return r;
    }
    let u = units(function, 1, source)?;
    let o = same_kind(function, 2, &u, other)?;
    Ok(Value::Boolean(test(&u.units, &o)))
}

/// CONTAINS(source, search).
pub fn contains(source: &Value, search: &Value) -> Result<Value, ScalarError> {
    predicate(
        "CONTAINS",
        source,
        search,
        |h, n| find(h, n, 0).is_some(),
        |h, n| h.contains(n),
    )
}

/// STARTSWITH(source, prefix).
pub fn starts_with(source: &Value, prefix: &Value) -> Result<Value, ScalarError> {
    predicate(
        "STARTSWITH",
        source,
        prefix,
        |h, n| h.starts_with(n),
        |h, n| h.starts_with(n),
    )
}

/// ENDSWITH(source, suffix).
pub fn ends_with(source: &Value, suffix: &Value) -> Result<Value, ScalarError> {
    predicate(
        "ENDSWITH",
        source,
        suffix,
        |h, n| h.ends_with(n),
        |h, n| h.ends_with(n),
    )
}

#[cfg(test)]
#[path = "string_tests.rs"]
mod tests;
