//! Text representation: encodings, DFDL string literals (delimiters, nil values) and calendar
//! patterns.

use std::borrow::Cow;

use sluice_codepage::CodePage;

/// A character encoding of text fields and delimiters. Delimiters are matched as bytes, so only
/// encodings where that is sound are accepted: UTF-8 and single-byte pages.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Encoding {
    Utf8,
    Ascii,
    Latin1,
    /// An EBCDIC single-byte code page.
    Page(CodePage),
}

impl Encoding {
    pub fn from_name(name: &str) -> Option<Encoding> {
        let up = name.to_ascii_uppercase().replace('_', "-");
        match up.as_str() {
            "UTF-8" | "UTF8" => Some(Encoding::Utf8),
            "US-ASCII" | "ASCII" => Some(Encoding::Ascii),
            "ISO-8859-1" | "ISO8859-1" | "LATIN1" => Some(Encoding::Latin1),
            _ => {
                let digits = up
                    .strip_prefix("IBM-")
                    .or_else(|| up.strip_prefix("IBM"))
                    .or_else(|| up.strip_prefix("CP"))?;
                let ccsid: i64 = digits.parse().ok()?;
                // EBCDIC single-byte pages only: delimiters are matched byte by byte.
                if !matches!(
                    ccsid,
                    37 | 273 | 277 | 278 | 280 | 284 | 285 | 297 | 500 | 871 | 1047 | 1140..=1148
                ) {
                    return None;
                }
                CodePage::lookup(ccsid, 785).ok().map(Encoding::Page)
            }
        }
    }

    /// Whether one character is one byte.
    pub fn single_byte(&self) -> bool {
        !matches!(self, Encoding::Utf8)
    }

    /// Whether decoded text is the bytes themselves (so the tree can point at the source).
    pub fn is_utf8_compatible(&self) -> bool {
        matches!(self, Encoding::Utf8 | Encoding::Ascii)
    }

    pub fn decode<'a>(&self, b: &'a [u8]) -> Result<Cow<'a, str>, String> {
        match self {
            Encoding::Utf8 => std::str::from_utf8(b)
                .map(Cow::Borrowed)
                .map_err(|e| format!("invalid UTF-8: {e}")),
            Encoding::Ascii => match b.iter().position(|c| !c.is_ascii()) {
                None => std::str::from_utf8(b)
                    .map(Cow::Borrowed)
                    .map_err(|e| e.to_string()),
                Some(i) => Err(format!("byte 0x{:02X} is not US-ASCII", b[i])),
            },
            Encoding::Latin1 => Ok(Cow::Owned(b.iter().map(|&c| c as char).collect())),
            Encoding::Page(p) => p.decode(b).map(Cow::Owned).map_err(|e| e.to_string()),
        }
    }

    pub fn encode(&self, s: &str, out: &mut Vec<u8>) -> Result<(), String> {
        match self {
            Encoding::Utf8 => out.extend_from_slice(s.as_bytes()),
            Encoding::Ascii => {
                if let Some(c) = s.chars().find(|c| !c.is_ascii()) {
                    return Err(format!("'{c}' cannot be written in US-ASCII"));
                }
                out.extend_from_slice(s.as_bytes());
            }
            Encoding::Latin1 => {
                for c in s.chars() {
                    let v = u32::from(c);
                    if v > 0xFF {
                        return Err(format!("'{c}' cannot be written in ISO-8859-1"));
                    }
                    out.push(v as u8);
                }
            }
            Encoding::Page(p) => p.encode_into(s, out).map_err(|e| e.to_string())?,
        }
        Ok(())
    }

    /// The number of characters in `b` (which decodes).
    pub fn char_count(&self, b: &[u8]) -> usize {
        match self {
            Encoding::Utf8 => b.iter().filter(|&&c| (c & 0xC0) != 0x80).count(),
            _ => b.len(),
        }
    }

    /// The byte length of the first `n` characters of `b`, or None when `b` is shorter.
    pub fn bytes_for_chars(&self, b: &[u8], n: usize) -> Option<usize> {
        if self.single_byte() {
            return (b.len() >= n).then_some(n);
        }
        let mut chars = 0;
        for (i, &c) in b.iter().enumerate() {
            if (c & 0xC0) != 0x80 {
                if chars == n {
                    return Some(i);
                }
                chars += 1;
            }
        }
        (chars == n).then_some(b.len())
    }
}

/// A list of DFDL string literals (an initiator, terminator, separator or nil values): the byte
/// strings that match when parsing, and the one written when serialising.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Delims {
    pub alts: Vec<Vec<u8>>,
    pub out: Vec<u8>,
    /// `%ES;` is one of the values (the empty string).
    pub empty: bool,
}

impl Delims {
    pub fn is_empty(&self) -> bool {
        self.alts.is_empty() && !self.empty
    }

    /// The length of the longest alternative that matches at the start of `data`.
    pub fn match_at(&self, data: &[u8]) -> Option<usize> {
        self.alts
            .iter()
            .filter(|a| data.starts_with(a))
            .map(Vec::len)
            .max()
    }

    /// Parse a whitespace-separated list of DFDL string literals.
    pub fn parse(s: &str, enc: &Encoding, newline: &[u8]) -> Result<Delims, String> {
        let mut d = Delims::default();
        for (i, lit) in s.split_ascii_whitespace().enumerate() {
            if lit == "%ES;" {
                d.empty = true;
                continue;
            }
            let (alts, out) = literal(lit, enc, newline)?;
            if i == 0 || d.out.is_empty() {
                d.out = out;
            }
            d.alts.extend(alts);
        }
        Ok(d)
    }
}

/// One DFDL string literal: every byte string it matches, and what it writes.
fn literal(lit: &str, enc: &Encoding, newline: &[u8]) -> Result<(Vec<Vec<u8>>, Vec<u8>), String> {
    let mut alts: Vec<Vec<u8>> = vec![Vec::new()];
    let mut out = Vec::new();
    let mut rest = lit;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("%%") {
            let mut b = Vec::new();
            enc.encode("%", &mut b)?;
            for a in &mut alts {
                a.extend_from_slice(&b);
            }
            out.extend_from_slice(&b);
            rest = after;
        } else if let Some(after) = rest.strip_prefix('%') {
            let (entity, tail) = after
                .split_once(';')
                .ok_or_else(|| format!("unterminated character entity in '{lit}'"))?;
            rest = tail;
            let choices: Vec<Vec<u8>> = match entity {
                "NL" => vec![b"\r\n".to_vec(), b"\n".to_vec(), b"\r".to_vec()],
                "CR" => vec![b"\r".to_vec()],
                "LF" => vec![b"\n".to_vec()],
                "SP" => bytes_of(" ", enc)?,
                "HT" => bytes_of("\t", enc)?,
                "WSP" => {
                    let mut v = bytes_of(" ", enc)?;
                    v.extend(bytes_of("\t", enc)?);
                    v
                }
                "NUL" => vec![vec![0]],
                e if e.starts_with("#x") || e.starts_with("#r") => {
                    let v = u8::from_str_radix(&e[2..], 16)
                        .map_err(|_| format!("bad byte entity '%{e};' in '{lit}'"))?;
                    vec![vec![v]]
                }
                e if e.starts_with('#') => {
                    let v: u32 = e[1..]
                        .parse()
                        .map_err(|_| format!("bad character entity '%{e};' in '{lit}'"))?;
                    let c = char::from_u32(v)
                        .ok_or_else(|| format!("bad character entity '%{e};' in '{lit}'"))?;
                    bytes_of(&c.to_string(), enc)?
                }
                e => return Err(format!("character entity '%{e};' is not supported")),
            };
            match entity {
                "NL" => out.extend_from_slice(newline),
                _ => out.extend_from_slice(choices.first().map(Vec::as_slice).unwrap_or(b"")),
            }
            let mut next = Vec::with_capacity(alts.len() * choices.len());
            for a in &alts {
                for c in &choices {
                    let mut v = a.clone();
                    v.extend_from_slice(c);
                    next.push(v);
                }
            }
            alts = next;
        } else {
            let end = rest.find('%').unwrap_or(rest.len());
            let mut b = Vec::new();
            enc.encode(&rest[..end], &mut b)?;
            for a in &mut alts {
                a.extend_from_slice(&b);
            }
            out.extend_from_slice(&b);
            rest = &rest[end..];
        }
    }
    Ok((alts, out))
}

fn bytes_of(s: &str, enc: &Encoding) -> Result<Vec<Vec<u8>>, String> {
    let mut b = Vec::new();
    enc.encode(s, &mut b)?;
    Ok(vec![b])
}

/// A piece of a calendar pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CalToken {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    /// Fraction digits of the second.
    Fraction(usize),
    Literal(String),
}

/// Read a calendar pattern (`yyyy-MM-dd'T'HH:mm:ss`, `yyyyMMdd`, `HHmmssSSS`).
pub(crate) fn calendar_pattern(p: &str) -> Result<Vec<CalToken>, String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let tok = match (c, run) {
            ('y', 4) => CalToken::Year,
            ('M', 2) => CalToken::Month,
            ('d', 2) => CalToken::Day,
            ('H', 2) => CalToken::Hour,
            ('m', 2) => CalToken::Minute,
            ('s', 2) => CalToken::Second,
            ('S', n) => CalToken::Fraction(n),
            ('\'', _) => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&x| x == '\'')
                    .ok_or_else(|| format!("unterminated quote in calendar pattern '{p}'"))?;
                let lit: String = chars[i + 1..i + 1 + end].iter().collect();
                i += end + 2;
                out.push(CalToken::Literal(if lit.is_empty() {
                    "'".into()
                } else {
                    lit
                }));
                continue;
            }
            (c, _) if c.is_ascii_alphabetic() => {
                return Err(format!(
                    "calendar pattern letter '{c}' (x{run}) is not supported in '{p}'"
                ));
            }
            (c, _) => {
                i += 1;
                out.push(CalToken::Literal(c.to_string()));
                continue;
            }
        };
        i += run;
        out.push(tok);
    }
    Ok(out)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The parts of a calendar value as a pattern reads or writes them.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CalParts {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub micros: i64,
}

impl CalParts {
    pub fn from_days(days: i64) -> CalParts {
        let (year, month, day) = civil_from_days(days);
        CalParts {
            year,
            month,
            day,
            micros: 0,
        }
    }

    pub fn from_timestamp(micros: i64) -> CalParts {
        let mut p = CalParts::from_days(micros.div_euclid(MICROS_PER_DAY));
        p.micros = micros.rem_euclid(MICROS_PER_DAY);
        p
    }

    pub fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    pub fn timestamp(&self) -> i64 {
        self.days() * MICROS_PER_DAY + self.micros
    }
}

/// Read `s` with a calendar pattern.
pub(crate) fn read_calendar(s: &str, pattern: &[CalToken]) -> Result<CalParts, String> {
    let mut p = CalParts {
        year: 1970,
        month: 1,
        day: 1,
        micros: 0,
    };
    let b = s.as_bytes();
    let mut at = 0usize;
    let num = |at: &mut usize, n: usize| -> Result<i64, String> {
        let digits = b
            .get(*at..*at + n)
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .ok_or_else(|| format!("'{s}' does not match the calendar pattern"))?;
        *at += n;
        Ok(digits
            .iter()
            .fold(0i64, |v, d| v * 10 + i64::from(d - b'0')))
    };
    let (mut h, mut mi, mut sec, mut frac) = (0i64, 0i64, 0i64, 0i64);
    for t in pattern {
        match t {
            CalToken::Year => p.year = num(&mut at, 4)?,
            CalToken::Month => p.month = num(&mut at, 2)? as u32,
            CalToken::Day => p.day = num(&mut at, 2)? as u32,
            CalToken::Hour => h = num(&mut at, 2)?,
            CalToken::Minute => mi = num(&mut at, 2)?,
            CalToken::Second => sec = num(&mut at, 2)?,
            CalToken::Fraction(n) => {
                let v = num(&mut at, *n)?;
                frac = if *n >= 6 {
                    v / 10i64.pow((*n - 6) as u32)
                } else {
                    v * 10i64.pow((6 - *n) as u32)
                };
            }
            CalToken::Literal(l) => {
                if !s[at.min(s.len())..].starts_with(l.as_str()) {
                    return Err(format!("'{s}' does not match the calendar pattern"));
                }
                at += l.len();
            }
        }
    }
    if at != b.len() {
        return Err(format!("'{s}' has characters after the calendar pattern"));
    }
    if !(1..=12).contains(&p.month) || !(1..=31).contains(&p.day) || h > 23 || mi > 59 || sec > 60 {
        return Err(format!("'{s}' is not a valid date or time"));
    }
    if civil_from_days(p.days()) != (p.year, p.month, p.day) {
        return Err(format!("'{s}' is not a valid date"));
    }
    p.micros = ((h * 60 + mi) * 60 + sec) * 1_000_000 + frac;
    Ok(p)
}

/// Write calendar parts with a pattern.
pub(crate) fn write_calendar(p: &CalParts, pattern: &[CalToken], out: &mut String) {
    use std::fmt::Write;
    let secs = p.micros / 1_000_000;
    for t in pattern {
        let _ = match t {
            CalToken::Year => write!(out, "{:04}", p.year),
            CalToken::Month => write!(out, "{:02}", p.month),
            CalToken::Day => write!(out, "{:02}", p.day),
            CalToken::Hour => write!(out, "{:02}", secs / 3600),
            CalToken::Minute => write!(out, "{:02}", secs / 60 % 60),
            CalToken::Second => write!(out, "{:02}", secs % 60),
            CalToken::Fraction(n) => {
                let f = p.micros % 1_000_000;
                let v = if *n >= 6 {
                    f * 10i64.pow((*n - 6) as u32)
                } else {
                    f / 10i64.pow((6 - *n) as u32)
                };
                write!(out, "{v:0width$}", width = *n)
            }
            CalToken::Literal(l) => write!(out, "{l}"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_across_eras() {
        for d in [-800_000i64, -1, 0, 1, 10_957, 19_000, 2_932_896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(days_from_civil(2000, 1, 1), 10_957);
    }

    #[test]
    fn delims_expand_newline_when_entity_used() {
        let d = Delims::parse("%NL; ; 100%%", &Encoding::Utf8, b"\r\n").unwrap();
        assert_eq!(d.alts[4], b"100%");
        assert_eq!(d.alts.len(), 5);
        assert_eq!(d.out, b"\r\n");
        assert_eq!(d.match_at(b"\r\nX"), Some(2));
    }

    #[test]
    fn calendar_reads_and_writes_when_pattern_compact() {
        let p = calendar_pattern("yyyyMMddHHmmss").unwrap();
        let parts = read_calendar("20261127224900", &p).unwrap();
        let mut s = String::new();
        write_calendar(&parts, &p, &mut s);
        assert_eq!(s, "20261127224900");
        assert!(read_calendar("20261327224900", &p).is_err());
    }
}
