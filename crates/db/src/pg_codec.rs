//! PostgreSQL's side of [`SqlValue`]: parameters sent and result values read in the server's
//! binary format, and ESQL's `?` markers turned into PostgreSQL's `$n`.
//!
//! Values are encoded by the type the server says a parameter has, not by the value's own
//! variant, so that an ESQL INTEGER fills a NUMERIC column and an ESQL CHARACTER a DATE one,
//! as they do through ODBC. NUMERIC goes through decimal text both ways: never a float.

use std::error::Error as StdError;

use bytes::{BufMut, BytesMut};
use postgres::types::{FromSql, IsNull, ToSql, Type};

use crate::connection::{SqlValue, SqlValueRef};
use crate::datetime;

type BoxError = Box<dyn StdError + Sync + Send>;

/// Days from 1970-01-01 (ESQL's and this crate's epoch) to 2000-01-01 (PostgreSQL's).
const PG_EPOCH_DAYS: i64 = 10_957;
const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * 86_400_000_000;

/// Turn `?` markers into `$1`, `$2`, …, leaving alone those inside string literals (also
/// `E'…'` and dollar-quoted ones), quoted identifiers and comments. Gives the SQL and the
/// number of markers.
pub(crate) fn number_markers(sql: &str) -> (String, usize) {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'?' => {
                out.push_str(&sql[copied..i]);
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
                i += 1;
                copied = i;
            }
            b'\'' => {
                let escapes =
                    i > 0 && matches!(b[i - 1], b'E' | b'e') && !ident_char_before(b, i - 1);
                i = skip_quoted(b, i + 1, b'\'', escapes);
            }
            b'"' => i = skip_quoted(b, i + 1, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p + 1);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i + 2),
            b'$' if !ident_char_before(b, i) => i = skip_dollar_quoted(b, i),
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    (out, n)
}

fn ident_char_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$')
}

/// The index after the closing `quote` (a doubled quote stays inside).
fn skip_quoted(b: &[u8], mut i: usize, quote: u8, backslash_escapes: bool) -> usize {
    while i < b.len() {
        if backslash_escapes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// Block comments nest in PostgreSQL.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// `$tag$ … $tag$`; a `$` that does not open one (a `$1` marker written by hand) is one byte.
fn skip_dollar_quoted(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphabetic() || b[j] == b'_') {
        j += 1;
    }
    if b.get(j) != Some(&b'$') {
        return i + 1;
    }
    let tag = &b[i..=j];
    let body = j + 1;
    b[body..]
        .windows(tag.len())
        .position(|w| w == tag)
        .map_or(b.len(), |p| body + p + tag.len())
}

fn cannot(v: &SqlValue, ty: &Type) -> BoxError {
    format!(
        "cannot give {} to a parameter of type {}; CAST the marker in the SQL",
        v.kind(),
        ty.name()
    )
    .into()
}

fn int_of(v: &SqlValue) -> Option<i64> {
    match v {
        SqlValue::Integer(i) => Some(*i),
        SqlValue::Boolean(b) => Some(i64::from(*b)),
        SqlValue::Real(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(*f as i64),
        SqlValue::Decimal(t) | SqlValue::Text(t) => {
            let t = t.trim();
            t.parse().ok().or_else(|| {
                let (whole, frac) = t.split_once('.')?;
                frac.bytes()
                    .all(|c| c == b'0')
                    .then(|| whole.parse().ok())?
            })
        }
        _ => None,
    }
}

fn float_of(v: &SqlValue) -> Option<f64> {
    match v {
        SqlValue::Real(f) => Some(*f),
        SqlValue::Integer(i) => Some(*i as f64),
        SqlValue::Decimal(t) | SqlValue::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

/// The text PostgreSQL would take for the value in a text-typed parameter.
fn text_of(v: &SqlValue) -> String {
    match v {
        SqlValue::Null => String::new(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(f) => f.to_string(),
        SqlValue::Text(t) | SqlValue::Decimal(t) => t.clone(),
        SqlValue::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        SqlValue::Boolean(b) => if *b { "true" } else { "false" }.to_string(),
        SqlValue::Date(d) => datetime::date_text(*d),
        SqlValue::Time(t) => datetime::time_text(*t),
        SqlValue::Timestamp(t) | SqlValue::TimestampUtc(t) => datetime::timestamp_text(*t),
    }
}

impl ToSql for SqlValue {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if matches!(self, SqlValue::Null) {
            return Ok(IsNull::Yes);
        }
        let bad = || cannot(self, ty);
        match *ty {
            Type::BOOL => {
                let b = match self {
                    SqlValue::Boolean(b) => *b,
                    SqlValue::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
                        "true" | "t" | "1" | "yes" | "on" => true,
                        "false" | "f" | "0" | "no" | "off" => false,
                        _ => return Err(bad()),
                    },
                    other => int_of(other).ok_or_else(bad)? != 0,
                };
                out.put_u8(u8::from(b));
            }
            Type::INT2 => out.put_i16(i16::try_from(int_of(self).ok_or_else(bad)?)?),
            Type::INT4 => out.put_i32(i32::try_from(int_of(self).ok_or_else(bad)?)?),
            Type::INT8 | Type::OID => out.put_i64(int_of(self).ok_or_else(bad)?),
            Type::FLOAT4 => out.put_f32(float_of(self).ok_or_else(bad)? as f32),
            Type::FLOAT8 => out.put_f64(float_of(self).ok_or_else(bad)?),
            Type::NUMERIC => {
                let text = match self {
                    SqlValue::Real(f) if !f.is_finite() => return Err(bad()),
                    SqlValue::Blob(_) | SqlValue::Date(_) | SqlValue::Time(_) => {
                        return Err(bad());
                    }
                    other => text_of(other),
                };
                encode_numeric(text.trim(), out).ok_or_else(bad)?;
            }
            Type::BYTEA => match self {
                SqlValue::Blob(b) => out.put_slice(b),
                SqlValue::Text(t) => out.put_slice(t.as_bytes()),
                _ => return Err(bad()),
            },
            Type::DATE => {
                let days = match self {
                    SqlValue::Date(d) => *d,
                    SqlValue::Timestamp(t) | SqlValue::TimestampUtc(t) => {
                        t.div_euclid(86_400_000_000)
                    }
                    SqlValue::Text(t) => datetime::parse_date(t.trim()).ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                out.put_i32(i32::try_from(days - PG_EPOCH_DAYS)?);
            }
            Type::TIME => {
                let micros = match self {
                    SqlValue::Time(t) => *t,
                    SqlValue::Text(t) => datetime::parse_time(t.trim()).ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                out.put_i64(micros);
            }
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let micros = match self {
                    SqlValue::Timestamp(t) | SqlValue::TimestampUtc(t) => *t,
                    SqlValue::Date(d) => d * 86_400_000_000,
                    SqlValue::Text(t) => datetime::parse_timestamp(t.trim()).ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                out.put_i64(micros - PG_EPOCH_MICROS);
            }
            Type::JSONB => {
                out.put_u8(1);
                out.put_slice(text_of(self).as_bytes());
            }
            Type::TEXT
            | Type::VARCHAR
            | Type::BPCHAR
            | Type::NAME
            | Type::UNKNOWN
            | Type::JSON
            | Type::XML => out.put_slice(text_of(self).as_bytes()),
            _ => return Err(bad()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn to_sql_checked(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        self.to_sql(ty, out)
    }
}

/// A value of a result column, decoded from the binary format by the column's type.
pub(crate) struct Cell<'r>(pub SqlValueRef<'r>);

fn be<const N: usize>(raw: &[u8]) -> Result<[u8; N], BoxError> {
    raw.try_into()
        .map_err(|_| format!("a value of {} bytes where {N} were expected", raw.len()).into())
}

impl<'r> FromSql<'r> for Cell<'r> {
    fn from_sql(ty: &Type, raw: &'r [u8]) -> Result<Cell<'r>, BoxError> {
        let v = match *ty {
            Type::BOOL => SqlValueRef::Boolean(raw.first().is_some_and(|b| *b != 0)),
            Type::INT2 => SqlValueRef::Integer(i64::from(i16::from_be_bytes(be(raw)?))),
            Type::INT4 => SqlValueRef::Integer(i64::from(i32::from_be_bytes(be(raw)?))),
            Type::OID => SqlValueRef::Integer(i64::from(u32::from_be_bytes(be(raw)?))),
            Type::INT8 => SqlValueRef::Integer(i64::from_be_bytes(be(raw)?)),
            Type::FLOAT4 => SqlValueRef::Real(f64::from(f32::from_be_bytes(be(raw)?))),
            Type::FLOAT8 => SqlValueRef::Real(f64::from_be_bytes(be(raw)?)),
            Type::NUMERIC => match decode_numeric(raw)? {
                Numeric::Finite(text) => SqlValueRef::Decimal(text),
                Numeric::Special(f) => SqlValueRef::Real(f),
            },
            Type::BYTEA => SqlValueRef::Blob(raw),
            Type::DATE => {
                let d = i64::from(i32::from_be_bytes(be(raw)?));
                SqlValueRef::Date(
                    finite(d, i64::from(i32::MAX), i64::from(i32::MIN))? + PG_EPOCH_DAYS,
                )
            }
            Type::TIME => SqlValueRef::Time(i64::from_be_bytes(be(raw)?)),
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let t = i64::from_be_bytes(be(raw)?);
                let t = finite(t, i64::MAX, i64::MIN)?.saturating_add(PG_EPOCH_MICROS);
                if *ty == Type::TIMESTAMP {
                    SqlValueRef::Timestamp(t)
                } else {
                    SqlValueRef::TimestampUtc(t)
                }
            }
            Type::JSONB => SqlValueRef::Text(raw.get(1..).unwrap_or_default()),
            Type::TEXT
            | Type::VARCHAR
            | Type::BPCHAR
            | Type::NAME
            | Type::UNKNOWN
            | Type::JSON
            | Type::XML
            | Type::CHAR => SqlValueRef::Text(raw),
            _ => {
                return Err(format!(
                    "columns of type {} are not read; CAST the column to TEXT in the SQL",
                    ty.name()
                )
                .into());
            }
        };
        Ok(Cell(v))
    }

    fn from_sql_null(_: &Type) -> Result<Cell<'r>, BoxError> {
        Ok(Cell(SqlValueRef::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// PostgreSQL's `infinity` dates and timestamps have no ESQL counterpart.
fn finite(v: i64, infinity: i64, minus_infinity: i64) -> Result<i64, BoxError> {
    if v == infinity || v == minus_infinity {
        Err("an infinite date or timestamp has no ESQL value".into())
    } else {
        Ok(v)
    }
}

enum Numeric {
    Finite(String),
    Special(f64),
}

const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

/// NUMERIC's binary form: digit count, weight (of the first base-10000 digit), sign, display
/// scale, then the base-10000 digits. Decoded to plain decimal text with `dscale` places.
fn decode_numeric(raw: &[u8]) -> Result<Numeric, BoxError> {
    let short = || -> BoxError { "a NUMERIC value too short".into() };
    let word = |i: usize| -> Result<u16, BoxError> {
        Ok(u16::from_be_bytes(be(raw
            .get(i..i + 2)
            .ok_or_else(short)?)?))
    };
    let ndigits = usize::from(word(0)?);
    let weight = i64::from(word(2)? as i16);
    let sign = word(4)?;
    let dscale = usize::from(word(6)?);
    match sign {
        NUMERIC_NAN => return Ok(Numeric::Special(f64::NAN)),
        NUMERIC_PINF => return Ok(Numeric::Special(f64::INFINITY)),
        NUMERIC_NINF => return Ok(Numeric::Special(f64::NEG_INFINITY)),
        _ => {}
    }
    let mut digits = Vec::with_capacity(ndigits);
    for k in 0..ndigits {
        digits.push(word(8 + 2 * k)?);
    }
    let digit = |pos: i64| -> u16 {
        usize::try_from(pos)
            .ok()
            .and_then(|p| digits.get(p).copied())
            .unwrap_or(0)
    };
    let mut s = String::new();
    if sign == NUMERIC_NEG && digits.iter().any(|d| *d != 0) {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        s.push_str(&digit(0).to_string());
        for pos in 1..=weight {
            s.push_str(&format!("{:04}", digit(pos)));
        }
    }
    if dscale > 0 {
        let mut frac = String::with_capacity(dscale + 4);
        let mut pos = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(pos)));
            pos += 1;
        }
        frac.truncate(dscale);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(Numeric::Finite(s))
}

/// Plain or exponent decimal text (`-12.50`, `1.5E+3`) in NUMERIC's binary form; None when
/// the text is not a number.
fn encode_numeric(text: &str, out: &mut BytesMut) -> Option<()> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(p) => (&rest[..p], rest[p + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (whole.is_empty() && frac.is_empty())
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|c| c.is_ascii_digit())
        || exponent.abs() > 10_000
    {
        return None;
    }
    let all: String = format!("{whole}{frac}");
    // The decimal point sits after `point` digits of `all` (may be outside it).
    let point = whole.len() as i64 + exponent;
    let scale = (all.len() as i64 - point).max(0);
    let (int_part, frac_part) = if point <= 0 {
        (
            String::new(),
            format!("{}{all}", "0".repeat(usize::try_from(-point).ok()?)),
        )
    } else if point as usize >= all.len() {
        (
            format!("{all}{}", "0".repeat(point as usize - all.len())),
            String::new(),
        )
    } else {
        (
            all[..point as usize].to_string(),
            all[point as usize..].to_string(),
        )
    };
    let int_part = int_part.trim_start_matches('0');
    let int_groups = int_part.len().div_ceil(4);
    let padded_int = format!("{}{int_part}", "0".repeat(int_groups * 4 - int_part.len()));
    let frac_groups = frac_part.len().div_ceil(4);
    let padded_frac = format!(
        "{frac_part}{}",
        "0".repeat(frac_groups * 4 - frac_part.len())
    );
    let mut groups: Vec<u16> = padded_int
        .as_bytes()
        .chunks(4)
        .chain(padded_frac.as_bytes().chunks(4))
        .map(|c| c.iter().fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0')))
        .collect();
    let mut weight = int_groups as i64 - 1;
    let leading = groups.iter().take_while(|g| **g == 0).count();
    groups.drain(..leading);
    weight -= leading as i64;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_u16(u16::try_from(groups.len()).ok()?);
    out.put_i16(i16::try_from(weight).ok()?);
    out.put_u16(if negative && !groups.is_empty() {
        NUMERIC_NEG
    } else {
        0
    });
    out.put_u16(u16::try_from(scale).ok()?);
    for g in groups {
        out.put_u16(g);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let mut buf = BytesMut::new();
        encode_numeric(text, &mut buf).expect("a number");
        match decode_numeric(&buf).expect("decodes") {
            Numeric::Finite(s) => s,
            Numeric::Special(f) => f.to_string(),
        }
    }

    #[test]
    fn numeric_keeps_every_digit_when_encoded_and_decoded() {
        assert_eq!(round_trip("0"), "0");
        assert_eq!(round_trip("12345678.90123"), "12345678.90123");
        assert_eq!(round_trip("-0.0001"), "-0.0001");
        assert_eq!(round_trip("10000"), "10000");
        assert_eq!(round_trip("1.10"), "1.10");
        assert_eq!(round_trip("1.5E+3"), "1500");
        assert_eq!(round_trip("25E-3"), "0.025");
        assert_eq!(
            round_trip("1234567890123456789012345678901234.5"),
            "1234567890123456789012345678901234.5"
        );
        assert_eq!(round_trip("-0.00"), "0.00");
    }

    #[test]
    fn numeric_is_refused_when_text_is_no_number() {
        for bad in ["", "-", "1.2.3", "abc", "1e", "."] {
            assert!(encode_numeric(bad, &mut BytesMut::new()).is_none(), "{bad}");
        }
    }

    #[test]
    fn markers_are_numbered_when_outside_literals_identifiers_and_comments() {
        let (sql, n) = number_markers(
            "SELECT ?, '?', 'it''s ?', \"a?\", E'\\'?', $$ ? $$, $q$ ? $q$ -- ?\n, ? /* ? /* ? */ */ , ?",
        );
        assert_eq!(
            sql,
            "SELECT $1, '?', 'it''s ?', \"a?\", E'\\'?', $$ ? $$, $q$ ? $q$ -- ?\n, $2 /* ? /* ? */ */ , $3"
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn markers_leave_sql_alone_when_it_has_none() {
        assert_eq!(
            number_markers("SELECT $1, 'x'"),
            ("SELECT $1, 'x'".to_string(), 0)
        );
    }
}
