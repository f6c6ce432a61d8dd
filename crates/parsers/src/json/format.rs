//! Writing single values as JSON text, following the product's mapping from tree values to JSON:
//! CHARACTER, BIT, BLOB (hexadecimal), DATE, TIME and TIMESTAMP become strings; INTEGER, FLOAT
//! (`1.5E+0` form) and DECIMAL become numbers; BOOLEAN and NULL their literals.

use std::io::Write as _;

use sluice_tree::text_form;
use sluice_tree::{Tree, TreeError, Value};

use crate::json::error::serialize_error;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// 1 for the bytes a JSON string must escape: quote, backslash and control characters.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 1;
        i += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t
};

/// Write `s` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259).
pub(crate) fn write_string(out: &mut Vec<u8>, s: &[u8]) -> Result<(), TreeError> {
    let mut high = 0u8;
    let mut plain = true;
    for &b in s {
        high |= b;
        plain &= ESCAPE[b as usize] == 0;
    }
    if high >= 0x80 && std::str::from_utf8(s).is_err() {
        return Err(serialize_error(
            "character data is not valid UTF-8".to_owned(),
        ));
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    if plain {
        out.extend_from_slice(s);
        out.push(b'"');
        return Ok(());
    }
    let mut run = 0;
    for (i, &b) in s.iter().enumerate() {
        if ESCAPE[b as usize] == 0 {
            continue;
        }
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            _ => b"",
        };
        out.extend_from_slice(&s[run..i]);
        if esc.is_empty() {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ]);
        } else {
            out.extend_from_slice(esc);
        }
        run = i + 1;
    }
    out.extend_from_slice(&s[run..]);
    out.push(b'"');
    Ok(())
}

/// Write an integer in decimal without going through `fmt`.
pub(crate) fn write_integer(out: &mut Vec<u8>, i: i64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[at..]);
}

/// Write a FLOAT as the product does: a mantissa with at least one fractional digit, `E`, a sign
/// and the exponent (`1.5E+0`, `-2.0E-7`). Uses the shortest digits that read back exactly.
/// A FLOAT as the shortest JSON number that reads back as the same double (JSON users expect
/// their numbers back exactly), in the product's exponent form: `1.5E+0`.
pub(crate) fn write_float(out: &mut Vec<u8>, f: f64) -> Result<(), TreeError> {
    if !f.is_finite() {
        return Err(serialize_error(format!(
            "the FLOAT value {f} cannot be written as a JSON number"
        )));
    }
    let mark = out.len();
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{f:e}");
    let e = match out[mark..].iter().position(|&b| b == b'e') {
        Some(k) => mark + k,
        None => return Err(serialize_error("FLOAT formatting lost its exponent".into())),
    };
    let exponent: Vec<u8> = out[e + 1..].to_vec();
    let has_point = out[mark..e].contains(&b'.');
    out.truncate(e);
    if !has_point {
        out.extend_from_slice(b".0");
    }
    out.push(b'E');
    if exponent.first() != Some(&b'-') {
        out.push(b'+');
    }
    out.extend_from_slice(&exponent);
    Ok(())
}

/// Whether `s` is a number by the JSON grammar.
pub(crate) fn is_json_number(s: &[u8]) -> bool {
    let mut i = 0;
    let digit = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    if s.first() == Some(&b'-') {
        i += 1;
    }
    if !digit(i) {
        return false;
    }
    if s[i] == b'0' {
        i += 1;
    } else {
        while digit(i) {
            i += 1;
        }
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return false;
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return false;
        }
        while digit(i) {
            i += 1;
        }
    }
    i == s.len()
}

/// Write a scalar value as JSON.
pub(crate) fn write_value(tree: &Tree, v: Value, out: &mut Vec<u8>) -> Result<(), TreeError> {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Boolean(true) => out.extend_from_slice(b"true"),
        Value::Boolean(false) => out.extend_from_slice(b"false"),
        Value::Integer(i) => write_integer(out, i),
        Value::Float(f) => write_float(out, f)?,
        Value::Decimal(t) => {
            let s = tree.bytes(t);
            if !is_json_number(s) {
                return Err(serialize_error(format!(
                    "the DECIMAL value {} cannot be written as a JSON number",
                    String::from_utf8_lossy(s)
                )));
            }
            out.extend_from_slice(s);
        }
        Value::Character(t) | Value::Bit(t) => write_string(out, tree.bytes(t))?,
        Value::Blob(_)
        | Value::Date(_)
        | Value::Time(_)
        | Value::GmtTime(_)
        | Value::Timestamp(_)
        | Value::GmtTimestamp(_)
        | Value::Interval { .. } => {
            // These text forms hold nothing that needs escaping.
            out.push(b'"');
            text_form::write_value(tree, v, out);
            out.push(b'"');
        }
    }
    Ok(())
}
