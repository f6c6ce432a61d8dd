//! Byte-level JSON lexing over the message's bytes: white space, strings (borrowed when they hold
//! no escape, decoded otherwise), numbers, literals, and skipping a whole object or array without
//! building anything.
//!
//! Every function takes the position of the first byte to look at and returns the position just
//! after what it consumed; errors carry the byte offset where the problem is.

use crate::json::error::{Fail, JsonErrorKind, parse_error, unexpected};
use crate::swar;

/// Byte classes for the string scanner: 1 for bytes that end a run of plain string bytes.
static STRING_STOP: [u8; 256] = {
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

/// Byte classes for the container skipper: 1 for quotes and brackets.
static SKIP_STOP: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = 1;
    t[b'{' as usize] = 1;
    t[b'}' as usize] = 1;
    t[b'[' as usize] = 1;
    t[b']' as usize] = 1;
    t
};

/// The position of the first byte at or after `pos` that is not JSON white space.
#[inline]
pub(crate) fn skip_ws(src: &[u8], mut pos: usize) -> usize {
    while let Some(&b) = src.get(pos) {
        if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        pos += 1;
    }
    pos
}

/// Scan the string whose opening quote is at `pos`. Returns the position after the closing quote
/// and whether the string held escapes: if not, its value is the source bytes between the quotes;
/// if so, the decoded value is left in `decoded` (cleared first). Raw control characters, bad
/// escapes and invalid UTF-8 are errors.
#[inline]
pub(crate) fn scan_string(
    src: &[u8],
    pos: usize,
    decoded: &mut Vec<u8>,
) -> Result<(usize, bool), Fail> {
    let start = pos + 1;
    let mut i = start;
    let mut high = 0u8;
    // Eight bytes at a time up to the first quote, backslash or control character: a compare and
    // a branch per byte was most of the parse of a message of short names and values.
    while let Some(w) = swar::word_at(src, i) {
        let stop = swar::equal(w, b'"') | swar::equal(w, b'\\') | swar::control(w);
        if stop != 0 {
            if w & swar::before_first(stop) & swar::HIGH != 0 {
                high = 0x80;
            }
            i += (stop.trailing_zeros() / 8) as usize;
            break;
        }
        if w & swar::HIGH != 0 {
            high = 0x80;
        }
        i += 8;
    }
    while let Some(&b) = src.get(i) {
        if STRING_STOP[b as usize] != 0 {
            break;
        }
        high |= b;
        i += 1;
    }
    if src.get(i) == Some(&b'"') {
        if high >= 0x80 {
            check_utf8(src, start, i)?;
        }
        return Ok((i + 1, false));
    }
    scan_string_slow(src, pos, i, high, decoded)
}

#[cold]
fn scan_string_slow(
    src: &[u8],
    pos: usize,
    i: usize,
    high: u8,
    decoded: &mut Vec<u8>,
) -> Result<(usize, bool), Fail> {
    let start = pos + 1;
    match src.get(i) {
        None => Err(parse_error(pos, JsonErrorKind::UnterminatedString)),
        Some(b'\\') => {
            if high >= 0x80 {
                check_utf8(src, start, i)?;
            }
            decoded.clear();
            decoded.extend_from_slice(&src[start..i]);
            let end = decode_rest(src, pos, i, decoded)?;
            Ok((end, true))
        }
        Some(&b) => Err(parse_error(i, JsonErrorKind::ControlCharacter(b))),
    }
}

fn check_utf8(src: &[u8], start: usize, end: usize) -> Result<(), Fail> {
    std::str::from_utf8(&src[start..end])
        .map(|_| ())
        .map_err(|e| parse_error(start + e.valid_up_to(), JsonErrorKind::InvalidUtf8))
}

/// Continue a string at the backslash at `i`, decoding escapes into `out`.
fn decode_rest(src: &[u8], open: usize, mut i: usize, out: &mut Vec<u8>) -> Result<usize, Fail> {
    loop {
        let run = i;
        while let Some(&b) = src.get(i) {
            if STRING_STOP[b as usize] != 0 {
                break;
            }
            i += 1;
        }
        if i > run {
            check_utf8(src, run, i)?;
            out.extend_from_slice(&src[run..i]);
        }
        match src.get(i) {
            None => return Err(parse_error(open, JsonErrorKind::UnterminatedString)),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => i = decode_escape(src, i, out)?,
            Some(&b) => return Err(parse_error(i, JsonErrorKind::ControlCharacter(b))),
        }
    }
}

/// Decode the escape whose backslash is at `i`; returns the position after it.
fn decode_escape(src: &[u8], i: usize, out: &mut Vec<u8>) -> Result<usize, Fail> {
    let c = match src.get(i + 1) {
        None => return Err(parse_error(i, JsonErrorKind::UnterminatedString)),
        Some(&c) => c,
    };
    let simple = match c {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let (ch, next) = decode_unicode(src, i)?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            return Ok(next);
        }
        _ => {
            return Err(parse_error(
                i,
                JsonErrorKind::BadEscape("unknown escape character"),
            ));
        }
    };
    out.push(simple);
    Ok(i + 2)
}

fn hex4(src: &[u8], at: usize) -> Option<u32> {
    let digits = src.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

/// Decode `\uXXXX` (and its low surrogate partner) at backslash `i`.
fn decode_unicode(src: &[u8], i: usize) -> Result<(char, usize), Fail> {
    let bad = |m| parse_error(i, JsonErrorKind::BadEscape(m));
    let hi = hex4(src, i + 2).ok_or_else(|| bad("\\u needs four hexadecimal digits"))?;
    match hi {
        0xD800..=0xDBFF => {
            if src.get(i + 6..i + 8) != Some(b"\\u") {
                return Err(bad("unpaired high surrogate"));
            }
            let lo = hex4(src, i + 8).ok_or_else(|| bad("\\u needs four hexadecimal digits"))?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(bad("unpaired high surrogate"));
            }
            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            let ch = char::from_u32(cp).ok_or_else(|| bad("invalid code point"))?;
            Ok((ch, i + 12))
        }
        0xDC00..=0xDFFF => Err(bad("unpaired low surrogate")),
        _ => {
            let ch = char::from_u32(hi).ok_or_else(|| bad("invalid code point"))?;
            Ok((ch, i + 6))
        }
    }
}

/// A number as the JSON domain types it.
pub(crate) enum Number {
    /// No fraction and no exponent, within 64 bits.
    Integer(i64),
    /// An integer too large for 64 bits: kept as its text (a DECIMAL).
    BigInteger,
    /// A fraction or an exponent: FLOAT.
    Float(f64),
}

/// Scan the number starting at `pos`; returns it and the position after it. Inlined: the
/// number returned through memory is read back before its stores complete.
#[inline(always)]
pub(crate) fn scan_number(src: &[u8], pos: usize) -> Result<(Number, usize), Fail> {
    let mut i = pos;
    let neg = src.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let digit = |i: usize| src.get(i).is_some_and(u8::is_ascii_digit);
    if !digit(i) {
        return Err(parse_error(
            pos,
            JsonErrorKind::BadNumber("expected a digit"),
        ));
    }
    let mut acc: u64 = 0;
    let mut overflow = false;
    if src[i] == b'0' {
        i += 1;
        if digit(i) {
            return Err(parse_error(pos, JsonErrorKind::BadNumber("leading zero")));
        }
    } else {
        while digit(i) {
            let d = (src[i] - b'0') as u64;
            match acc.checked_mul(10).and_then(|a| a.checked_add(d)) {
                Some(a) => acc = a,
                None => overflow = true,
            }
            i += 1;
        }
    }
    let mut float = false;
    if src.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return Err(parse_error(
                i,
                JsonErrorKind::BadNumber("expected a digit after '.'"),
            ));
        }
        while digit(i) {
            i += 1;
        }
        float = true;
    }
    if matches!(src.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(src.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return Err(parse_error(
                i,
                JsonErrorKind::BadNumber("expected a digit in the exponent"),
            ));
        }
        while digit(i) {
            i += 1;
        }
        float = true;
    }
    if float {
        if let Some(f) = fast_float(&src[pos..i]) {
            return Ok((Number::Float(f), i));
        }
        // The bytes are ASCII digits, signs, '.' and 'e' only.
        let text = std::str::from_utf8(&src[pos..i])
            .map_err(|_| parse_error(pos, JsonErrorKind::BadNumber("not ASCII")))?;
        let f: f64 = text
            .parse()
            .map_err(|_| parse_error(pos, JsonErrorKind::BadNumber("not a number")))?;
        if !f.is_finite() {
            return Err(parse_error(
                pos,
                JsonErrorKind::BadNumber("out of the range of FLOAT"),
            ));
        }
        return Ok((Number::Float(f), i));
    }
    let n = if overflow {
        Number::BigInteger
    } else if neg {
        if acc <= 1u64 << 63 {
            Number::Integer((acc as i64).wrapping_neg())
        } else {
            Number::BigInteger
        }
    } else if acc <= i64::MAX as u64 {
        Number::Integer(acc as i64)
    } else {
        Number::BigInteger
    };
    Ok((n, i))
}

/// Exact powers of ten that an f64 holds without rounding.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of a valid JSON number text when its digits fit 2^53 and its decimal exponent is
/// within 22: then one correctly rounded multiplication or division gives the exact nearest f64
/// (Clinger's fast path). Other numbers return `None` and take the general parser.
pub(crate) fn fast_float(text: &[u8]) -> Option<f64> {
    let (neg, body) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut mantissa: u64 = 0;
    let mut digits = 0u32;
    let mut exp10: i32 = 0;
    let mut i = 0;
    let mut after_point = false;
    while let Some(&b) = body.get(i) {
        match b {
            b'0'..=b'9' => {
                if mantissa != 0 || b != b'0' {
                    digits += 1;
                }
                if digits > 15 {
                    return None;
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                if after_point {
                    exp10 -= 1;
                }
            }
            b'.' => after_point = true,
            _ => break,
        }
        i += 1;
    }
    if let Some(b'e' | b'E') = body.get(i) {
        let exp = std::str::from_utf8(&body[i + 1..])
            .ok()?
            .parse::<i32>()
            .ok()?;
        exp10 = exp10.checked_add(exp)?;
    }
    let m = mantissa as f64;
    let v = if exp10 >= 0 {
        m * *POW10.get(exp10 as usize)?
    } else {
        m / *POW10.get(exp10.unsigned_abs() as usize)?
    };
    Some(if neg { -v } else { v })
}

/// Check the literal `word` (true, false, null) at `pos`; returns the position after it.
pub(crate) fn expect_literal(src: &[u8], pos: usize, word: &'static [u8]) -> Result<usize, Fail> {
    if src.get(pos..pos + word.len()) == Some(word) {
        Ok(pos + word.len())
    } else {
        Err(unexpected(src, pos, "a value"))
    }
}

/// Skip the rest of an object or array whose content continues at `pos`, at nesting level one
/// inside it (`close` is its closing bracket). Only strings and brackets are looked at: the
/// content is checked when someone parses it. Returns the position after the closing bracket.
pub(crate) fn skip_container(
    src: &[u8],
    pos: usize,
    close: u8,
    max_depth: u32,
) -> Result<usize, Fail> {
    let mut stack: Vec<u8> = Vec::with_capacity(16);
    stack.push(close);
    let mut i = pos;
    loop {
        while let Some(&b) = src.get(i) {
            if SKIP_STOP[b as usize] != 0 {
                break;
            }
            i += 1;
        }
        let Some(&b) = src.get(i) else {
            return Err(parse_error(
                i,
                JsonErrorKind::UnexpectedEnd(if close == b'}' { "'}'" } else { "']'" }),
            ));
        };
        match b {
            b'"' => i = skip_string(src, i)?,
            b'{' | b'[' => {
                if stack.len() as u32 >= max_depth {
                    return Err(parse_error(i, JsonErrorKind::DepthLimit(max_depth)));
                }
                stack.push(if b == b'{' { b'}' } else { b']' });
                i += 1;
            }
            _ => {
                // b is '}' or ']'; the stack is never empty here.
                let want = stack.pop().unwrap_or(close);
                if want != b {
                    return Err(parse_error(
                        i,
                        JsonErrorKind::MismatchedBracket {
                            found: b as char,
                            expected: want as char,
                        },
                    ));
                }
                i += 1;
                if stack.is_empty() {
                    return Ok(i);
                }
            }
        }
    }
}

/// Skip the string whose opening quote is at `pos` without decoding it; returns the position
/// after its closing quote.
fn skip_string(src: &[u8], pos: usize) -> Result<usize, Fail> {
    let mut i = pos + 1;
    loop {
        match src[i.min(src.len())..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
        {
            None => return Err(parse_error(pos, JsonErrorKind::UnterminatedString)),
            Some(k) => {
                i += k;
                if src[i] == b'"' {
                    return Ok(i + 1);
                }
                // A backslash escapes the next byte (a quote or anything else).
                i += 2;
            }
        }
    }
}
