//! Decimal numbers kept digit by digit, as COBOL records hold them: packed decimal (two digits a
//! byte, the sign in the last half-byte), BCD (two digits a byte, no sign), and zoned decimal
//! (one digit a character, the sign "overpunched" into the first or last digit). A virtual
//! decimal point places the point without storing it (`binaryDecimalVirtualPoint`, or `V` in a
//! zoned number's `textNumberPattern`).
//!
//! Values travel as canonical number text (`-1234.50`, `7`), as the text representations do.

/// How a number's digits are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigitRep {
    /// `binaryNumberRep="packed"`, with the sign codes of `binaryPackedSignCodes`.
    Packed(SignCodes),
    /// `binaryNumberRep="bcd"`: digits only, never negative.
    Bcd,
    /// `textNumberRep="zoned"`: the overpunched sign leading or trailing, or none.
    Zoned {
        sign: Option<SignAt>,
        style: ZonedStyle,
        ebcdic: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignAt {
    Leading,
    Trailing,
}

/// `textZonedSignStyle`: which characters carry a sign in ASCII-based encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZonedStyle {
    /// `0`–`9` positive, `p`–`y` negative.
    Standard,
    /// `{`, `A`–`I` positive, `}`, `J`–`R` negative (EBCDIC's overpunch, translated).
    TranslatedEbcdic,
    /// `0`–`9` positive, space and `!`–`)` negative.
    CaRealiaModified,
    /// `0`–`9` positive, bytes 0x80–0x89 negative.
    TandemModified,
}

impl ZonedStyle {
    pub fn from_name(name: &str) -> Option<ZonedStyle> {
        Some(match name {
            "asciiStandard" => ZonedStyle::Standard,
            "asciiTranslatedEBCDIC" => ZonedStyle::TranslatedEbcdic,
            "asciiCARealiaModified" => ZonedStyle::CaRealiaModified,
            "asciiTandemModified" => ZonedStyle::TandemModified,
            _ => return None,
        })
    }

    /// The digit and sign a signed digit character stands for.
    fn read(self, c: u8) -> Option<(u8, bool)> {
        let in_run = |first: u8| c.checked_sub(first).filter(|d| *d <= 9);
        match self {
            ZonedStyle::Standard => in_run(b'0')
                .map(|d| (d, false))
                .or_else(|| in_run(b'p').map(|d| (d, true))),
            ZonedStyle::TranslatedEbcdic => match c {
                b'{' => Some((0, false)),
                b'}' => Some((0, true)),
                b'A'..=b'I' => Some((c - b'A' + 1, false)),
                b'J'..=b'R' => Some((c - b'J' + 1, true)),
                // Unsigned digits are read too, as positive.
                b'0'..=b'9' => Some((c - b'0', false)),
                _ => None,
            },
            ZonedStyle::CaRealiaModified => in_run(b'0')
                .map(|d| (d, false))
                .or_else(|| in_run(b' ').map(|d| (d, true))),
            ZonedStyle::TandemModified => in_run(b'0')
                .map(|d| (d, false))
                .or_else(|| in_run(0x80).map(|d| (d, true))),
        }
    }

    fn write(self, digit: u8, negative: bool) -> u8 {
        match (self, negative) {
            (_, false) if self != ZonedStyle::TranslatedEbcdic => b'0' + digit,
            (ZonedStyle::TranslatedEbcdic, false) if digit == 0 => b'{',
            (ZonedStyle::TranslatedEbcdic, false) => b'A' + digit - 1,
            (ZonedStyle::TranslatedEbcdic, true) if digit == 0 => b'}',
            (ZonedStyle::TranslatedEbcdic, true) => b'J' + digit - 1,
            (ZonedStyle::Standard, _) => b'p' + digit,
            (ZonedStyle::CaRealiaModified, _) => b' ' + digit,
            (ZonedStyle::TandemModified, _) => 0x80 + digit,
        }
    }
}

/// `binaryPackedSignCodes`: the half-bytes written for positive, negative, unsigned and zero.
/// Any of the standard codes reads (A, C, E, F positive; B, D negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SignCodes {
    pub positive: u8,
    pub negative: u8,
    pub unsigned: u8,
    pub zero: u8,
}

impl SignCodes {
    /// `"C D F C"`: four codes, each one of the standard ones for its place.
    pub fn parse(text: &str) -> Result<SignCodes, String> {
        let codes: Vec<&str> = text.split_whitespace().collect();
        let code = |i: usize, allowed: &[&str]| -> Result<u8, String> {
            let c = codes.get(i).copied().unwrap_or("");
            if allowed.contains(&c) {
                u8::from_str_radix(c, 16).map_err(|e| e.to_string())
            } else {
                Err(format!(
                    "'{text}' is not four sign codes (positive C or F, negative D, unsigned F, \
                     zero A, C or F)"
                ))
            }
        };
        if codes.len() != 4 {
            return Err(format!("'{text}' is not four sign codes"));
        }
        Ok(SignCodes {
            positive: code(0, &["C", "F"])?,
            negative: code(1, &["D"])?,
            unsigned: code(2, &["F"])?,
            zero: code(3, &["A", "C", "F"])?,
        })
    }
}

/// Digits as canonical number text with `scale` of them after the point: `("12345", 2)` →
/// `123.45`; an integer (scale 0) keeps no point. Leading zeros go, one is kept before a point.
fn canonical(negative: bool, digits: &[u8], scale: usize) -> String {
    let split = digits.len().saturating_sub(scale);
    let (int, frac) = digits.split_at(split);
    let int: Vec<u8> = int.iter().copied().skip_while(|&d| d == 0).collect();
    let mut out = String::with_capacity(digits.len() + 3);
    let zero = int.is_empty() && frac.iter().all(|&d| d == 0);
    if negative && !zero {
        out.push('-');
    }
    if int.is_empty() {
        out.push('0');
    }
    out.extend(int.iter().map(|d| char::from(b'0' + d)));
    if scale > 0 {
        out.push('.');
        for _ in frac.len()..scale {
            out.push('0');
        }
        out.extend(frac.iter().map(|d| char::from(b'0' + d)));
    }
    out
}

/// Canonical number text as exactly `count` digits with `scale` after the virtual point, and
/// whether it is negative. A value with more fraction digits, or too many integer digits, does
/// not fit.
fn digits_of(text: &str, count: usize, scale: usize) -> Result<(bool, Vec<u8>), String> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let frac = frac.trim_end_matches('0');
    let int = int.trim_start_matches('0');
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || (int.is_empty() && body.is_empty()) {
        return Err(format!("'{text}' is not a number"));
    }
    if frac.len() > scale {
        return Err(format!(
            "'{text}' has more than {scale} digits after the decimal point"
        ));
    }
    if int.len() + scale > count {
        return Err(format!("'{text}' does not fit in {count} digits"));
    }
    let mut out = vec![0u8; count - scale - int.len()];
    out.extend(int.bytes().map(|b| b - b'0'));
    out.extend(frac.bytes().map(|b| b - b'0'));
    out.resize(count, 0);
    let zero = out.iter().all(|&d| d == 0);
    Ok((negative && !zero, out))
}

/// The bytes of a packed or BCD field as canonical number text.
pub(crate) fn read_packed(raw: &[u8], rep: DigitRep, scale: usize) -> Result<String, String> {
    let nibbles = raw.iter().flat_map(|b| [b >> 4, b & 0x0F]);
    let (digits, negative): (Vec<u8>, bool) = match rep {
        DigitRep::Packed(_) => {
            let all: Vec<u8> = nibbles.collect();
            let Some((&sign, digits)) = all.split_last() else {
                return Err("an empty packed decimal".into());
            };
            let negative = match sign {
                0xA | 0xC | 0xE | 0xF => false,
                0xB | 0xD => true,
                other => return Err(format!("{other:X} is not a packed decimal sign")),
            };
            (digits.to_vec(), negative)
        }
        _ => (nibbles.collect(), false),
    };
    if let Some(d) = digits.iter().find(|&&d| d > 9) {
        return Err(format!("{d:X} is not a decimal digit"));
    }
    Ok(canonical(negative, &digits, scale))
}

/// Canonical number text as a packed or BCD field of `len` bytes; `signed` picks the positive
/// code over the unsigned one.
pub(crate) fn write_packed(
    text: &str,
    rep: DigitRep,
    len: usize,
    scale: usize,
    signed: bool,
) -> Result<Vec<u8>, String> {
    let (nibbles, sign) = match rep {
        DigitRep::Packed(codes) => {
            let (negative, digits) = digits_of(text, len * 2 - 1, scale)?;
            let zero = digits.iter().all(|&d| d == 0);
            let sign = if negative {
                if !signed {
                    return Err(format!("'{text}' is negative and the field is unsigned"));
                }
                codes.negative
            } else if !signed {
                codes.unsigned
            } else if zero {
                codes.zero
            } else {
                codes.positive
            };
            (digits, Some(sign))
        }
        _ => {
            let (negative, digits) = digits_of(text, len * 2, scale)?;
            if negative {
                return Err(format!("'{text}' is negative: BCD holds no sign"));
            }
            (digits, None)
        }
    };
    let all: Vec<u8> = nibbles.into_iter().chain(sign).collect();
    Ok(all.chunks(2).map(|p| (p[0] << 4) | p[1]).collect())
}

const EBCDIC_DIGIT: u8 = 0xF0;

/// The characters of a zoned field as canonical number text.
pub(crate) fn read_zoned(raw: &[u8], rep: DigitRep, scale: usize) -> Result<String, String> {
    let DigitRep::Zoned {
        sign,
        style,
        ebcdic,
    } = rep
    else {
        return Err("not a zoned number".into());
    };
    if raw.is_empty() {
        return Err("an empty zoned number".into());
    }
    let signed_at = match sign {
        Some(SignAt::Leading) => Some(0),
        Some(SignAt::Trailing) => Some(raw.len() - 1),
        None => None,
    };
    let mut negative = false;
    let mut digits = Vec::with_capacity(raw.len());
    for (i, &c) in raw.iter().enumerate() {
        let (d, neg) = if ebcdic {
            let (zone, d) = (c >> 4, c & 0x0F);
            let neg = match zone {
                0xF | 0xC | 0xA | 0xE => false,
                0xD | 0xB if Some(i) == signed_at => true,
                _ => return Err(format!("byte {c:02X} is not a zoned digit")),
            };
            if d > 9 {
                return Err(format!("byte {c:02X} is not a zoned digit"));
            }
            (d, neg)
        } else if Some(i) == signed_at {
            style
                .read(c)
                .ok_or_else(|| format!("'{}' is not a signed zoned digit", c.escape_ascii()))?
        } else if c.is_ascii_digit() {
            (c - b'0', false)
        } else {
            return Err(format!("'{}' is not a zoned digit", c.escape_ascii()));
        };
        negative |= neg;
        digits.push(d);
    }
    Ok(canonical(negative, &digits, scale))
}

/// Canonical number text as a zoned field of `len` characters.
pub(crate) fn write_zoned(
    text: &str,
    rep: DigitRep,
    len: usize,
    scale: usize,
) -> Result<Vec<u8>, String> {
    let DigitRep::Zoned {
        sign,
        style,
        ebcdic,
    } = rep
    else {
        return Err("not a zoned number".into());
    };
    let (negative, digits) = digits_of(text, len, scale)?;
    let signed_at = match sign {
        Some(SignAt::Leading) => 0,
        Some(SignAt::Trailing) => len - 1,
        None if negative => {
            return Err(format!("'{text}' is negative and the pattern has no sign"));
        }
        None => usize::MAX,
    };
    Ok(digits
        .iter()
        .enumerate()
        .map(|(i, &d)| match (ebcdic, i == signed_at) {
            (true, true) => (if negative { 0xD0 } else { 0xC0 }) | d,
            (true, false) => EBCDIC_DIGIT | d,
            (false, true) => style.write(d, negative),
            (false, false) => b'0' + d,
        })
        .collect())
}

/// A zoned number's `textNumberPattern`: digits (`0`, `#`, `9`), a `V` for the virtual
/// decimal point, and `+` first or last for where the sign is. Returns the sign's place and the
/// number of digits after the point.
pub(crate) fn zoned_pattern(pat: &str) -> Result<(Option<SignAt>, usize), String> {
    let p = pat.split(';').next().unwrap_or(pat);
    let (sign, body) = if let Some(b) = p.strip_prefix('+') {
        (Some(SignAt::Leading), b)
    } else if let Some(b) = p.strip_suffix('+') {
        (Some(SignAt::Trailing), b)
    } else {
        (None, p)
    };
    if let Some(c) = body.chars().find(|c| !matches!(c, '0' | '#' | '9' | 'V')) {
        return Err(format!(
            "'{c}' in the zoned pattern '{pat}' is not supported (digits, V and a leading or \
             trailing +)"
        ));
    }
    let scale = match body.split_once('V') {
        Some((_, frac)) if frac.contains('V') => {
            return Err(format!("'{pat}' has more than one V"));
        }
        Some((_, frac)) => frac.len(),
        None => 0,
    };
    Ok((sign, scale))
}

/// A packed, BCD or zoned field's bytes as canonical number text.
pub(crate) fn read(raw: &[u8], rep: DigitRep, scale: usize) -> Result<String, String> {
    match rep {
        DigitRep::Zoned { .. } => read_zoned(raw, rep, scale),
        _ => read_packed(raw, rep, scale),
    }
}

/// Canonical number text as a packed, BCD or zoned field: `length` bytes (characters, for
/// zoned) when the schema fixes it, else as few as the value needs.
pub(crate) fn write(
    text: &str,
    rep: DigitRep,
    length: Option<usize>,
    scale: usize,
    signed: bool,
) -> Result<Vec<u8>, String> {
    let needed = || {
        let body = text.trim().trim_start_matches(['-', '+']);
        let int = body.split('.').next().unwrap_or("").trim_start_matches('0');
        (int.len() + scale).max(1)
    };
    match rep {
        DigitRep::Zoned { .. } => write_zoned(text, rep, length.unwrap_or_else(needed), scale),
        DigitRep::Packed(_) => {
            let len = length.unwrap_or_else(|| needed() / 2 + 1);
            write_packed(text, rep, len, scale, signed)
        }
        DigitRep::Bcd => {
            let len = length.unwrap_or_else(|| needed().div_ceil(2));
            write_packed(text, rep, len, scale, signed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODES: SignCodes = SignCodes {
        positive: 0xC,
        negative: 0xD,
        unsigned: 0xF,
        zero: 0xC,
    };

    #[test]
    fn packed_reads_digits_sign_and_virtual_point() {
        let p = DigitRep::Packed(CODES);
        assert_eq!(read_packed(&[0x12, 0x34, 0x5C], p, 2).unwrap(), "123.45");
        assert_eq!(read_packed(&[0x00, 0x12, 0x3D], p, 0).unwrap(), "-123");
        assert_eq!(read_packed(&[0x00, 0x0F], p, 1).unwrap(), "0.0");
        assert!(
            read_packed(&[0x1A, 0x3C], p, 0)
                .unwrap_err()
                .contains("digit")
        );
        assert!(
            read_packed(&[0x12, 0x39], p, 0)
                .unwrap_err()
                .contains("sign")
        );
    }

    #[test]
    fn packed_writes_what_it_reads_with_the_sign_codes() {
        let p = DigitRep::Packed(CODES);
        assert_eq!(
            write_packed("123.45", p, 3, 2, true).unwrap(),
            [0x12, 0x34, 0x5C]
        );
        assert_eq!(write_packed("-7", p, 2, 0, true).unwrap(), [0x00, 0x7D]);
        assert_eq!(write_packed("7", p, 2, 0, false).unwrap(), [0x00, 0x7F]);
        assert_eq!(write_packed("0.5", p, 2, 1, true).unwrap(), [0x00, 0x5C]);
        assert!(
            write_packed("1234", p, 2, 0, true).is_err(),
            "4 digits in 3"
        );
        assert!(write_packed("1.25", p, 2, 1, true).is_err(), "a digit lost");
        assert!(write_packed("-1", p, 2, 0, false).is_err());
        for v in ["0", "-99.9", "12.3", "5"] {
            let b = write_packed(v, p, 3, 1, true).unwrap();
            let back = read_packed(&b, p, 1).unwrap();
            assert_eq!(
                back.parse::<f64>().unwrap(),
                v.parse::<f64>().unwrap(),
                "{v}"
            );
        }
    }

    #[test]
    fn bcd_holds_digits_only() {
        assert_eq!(
            read_packed(&[0x20, 0x26], DigitRep::Bcd, 0).unwrap(),
            "2026"
        );
        assert_eq!(
            write_packed("1127", DigitRep::Bcd, 2, 0, false).unwrap(),
            [0x11, 0x27]
        );
        assert!(write_packed("-1", DigitRep::Bcd, 2, 0, true).is_err());
    }

    #[test]
    fn zoned_reads_and_writes_each_sign_style() {
        let z = |sign, style, ebcdic| DigitRep::Zoned {
            sign,
            style,
            ebcdic,
        };
        let std = z(Some(SignAt::Trailing), ZonedStyle::Standard, false);
        assert_eq!(read_zoned(b"0012r", std, 2).unwrap(), "-1.22");
        assert_eq!(write_zoned("-1.22", std, 5, 2).unwrap(), b"0012r");
        let tr = z(Some(SignAt::Leading), ZonedStyle::TranslatedEbcdic, false);
        assert_eq!(read_zoned(b"J23", tr, 0).unwrap(), "-123");
        assert_eq!(write_zoned("123", tr, 3, 0).unwrap(), b"A23");
        assert_eq!(write_zoned("23", tr, 3, 0).unwrap(), b"{23");
        let eb = z(Some(SignAt::Trailing), ZonedStyle::Standard, true);
        assert_eq!(read_zoned(&[0xF1, 0xF2, 0xD3], eb, 0).unwrap(), "-123");
        assert_eq!(write_zoned("123", eb, 3, 0).unwrap(), [0xF1, 0xF2, 0xC3]);
        let unsigned = z(None, ZonedStyle::Standard, false);
        assert_eq!(read_zoned(b"0420", unsigned, 1).unwrap(), "42.0");
        assert!(write_zoned("-4", unsigned, 2, 0).is_err());
        assert_eq!(read_zoned(b"12x", std, 0).unwrap(), "-128");
        assert!(read_zoned(b"12z", std, 0).is_err());
        assert!(
            read_zoned(b"1r2", std, 0).is_err(),
            "a sign only where the pattern puts it"
        );
    }

    #[test]
    fn zoned_pattern_gives_sign_place_and_scale() {
        assert_eq!(
            zoned_pattern("+999V99").unwrap(),
            (Some(SignAt::Leading), 2)
        );
        assert_eq!(
            zoned_pattern("00000+").unwrap(),
            (Some(SignAt::Trailing), 0)
        );
        assert_eq!(zoned_pattern("#0V0").unwrap(), (None, 1));
        assert!(zoned_pattern("#,##0").is_err());
    }

    #[test]
    fn sign_codes_parse_and_refuse() {
        assert_eq!(SignCodes::parse("C D F C").unwrap(), CODES);
        assert_eq!(SignCodes::parse("F D F F").unwrap().positive, 0xF);
        assert!(SignCodes::parse("C D F").is_err());
        assert!(SignCodes::parse("D D F C").is_err());
    }
}
