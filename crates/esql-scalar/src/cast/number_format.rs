//! FORMAT patterns for numbers (`#,##0.00;(#,##0.00)`), in both directions.
//!
//! The pattern language is the one the ESQL reference shares with ICU's decimal
//! format: `0` a required digit, `#` an optional one, `,` the grouping separator,
//! `.` the decimal point, `E0` an exponent, `%` and `‰` scale by 100 and 1000,
//! quoted text and other characters are literal prefix or suffix, `;` introduces
//! the pattern for negative numbers. `:groupsep=chars` and `:decsep=chars` after
//! the subpatterns choose other separators (used in the pattern and the text).
//! Rounding is half-even.

use crate::decimal::{Decimal, RoundingMode};
use crate::error::ScalarError;

/// Stand-ins for the separators inside a pattern, after custom ones are mapped.
const GROUP: char = '\u{E000}';
const POINT: char = '\u{E001}';

/// A parsed FORMAT expression.
struct Pattern {
    positive: SubPattern,
    negative: Option<SubPattern>,
    group: String,
    point: String,
}

#[derive(Debug, Clone, Default)]
struct SubPattern {
    prefix: String,
    suffix: String,
    min_int: usize,
    grouping: usize,
    min_frac: usize,
    max_frac: usize,
    exponent_digits: Option<usize>,
    multiplier: i64,
}

fn bad(pattern: &str, reason: &str) -> ScalarError {
    ScalarError::InvalidFormat {
        pattern: pattern.to_string(),
        reason: reason.to_string(),
    }
}

/// Splits on `sep` outside quotes.
fn split_unquoted(pattern: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    for c in pattern.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == sep && !quoted {
            parts.push(String::new());
        } else if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

/// Reads literal affix text, resolving quotes and noting `%` / `‰`.
fn affix(chars: &[char], multiplier: &mut i64) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                out.push(chars[i]);
                i += 1;
            }
            i += 1;
            continue;
        }
        if c == '%' {
            *multiplier = 100;
        } else if c == '‰' {
            *multiplier = 1000;
        }
        out.push(c);
        i += 1;
    }
    out
}

fn parse_sub(pattern: &str, sub: &str) -> Result<SubPattern, ScalarError> {
    let chars: Vec<char> = sub.chars().collect();
    let is_num = |c: char| matches!(c, '#' | '0' | GROUP | POINT);
    // The number part starts at the first digit symbol outside quotes.
    let mut quoted = false;
    let mut start = None;
    for (i, &c) in chars.iter().enumerate() {
        if c == '\'' {
            quoted = !quoted;
        } else if !quoted && is_num(c) {
            start = Some(i);
            break;
        }
    }
    let start = start.ok_or_else(|| bad(pattern, "no digit symbols (# or 0)"))?;
    let mut end = start;
    while end < chars.len() && is_num(chars[end]) {
        end += 1;
    }
    let mut exponent_digits = None;
    if end < chars.len() && matches!(chars[end], 'E' | 'e') {
        let mut e = end + 1;
        while e < chars.len() && chars[e] == '0' {
            e += 1;
        }
        if e == end + 1 {
            return Err(bad(pattern, "E must be followed by 0s"));
        }
        exponent_digits = Some(e - end - 1);
        end = e;
    }
    let mut sp = SubPattern {
        multiplier: 1,
        exponent_digits,
        ..SubPattern::default()
    };
    sp.prefix = affix(&chars[..start], &mut sp.multiplier);
    sp.suffix = affix(&chars[end..], &mut sp.multiplier);
    let number: String = chars[start..end]
        .iter()
        .take_while(|c| !matches!(**c, 'E' | 'e'))
        .collect();
    let (int, frac) = match number.split_once(POINT) {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (number.clone(), String::new()),
    };
    if frac.contains(POINT) || frac.contains(GROUP) {
        return Err(bad(pattern, "misplaced separator in the fraction"));
    }
    sp.min_int = int.chars().filter(|c| *c == '0').count();
    // The group size is the digit count after the last separator (0: no grouping).
    sp.grouping = int.chars().rev().position(|c| c == GROUP).unwrap_or(0);
    sp.min_frac = frac.chars().take_while(|c| *c == '0').count();
    sp.max_frac = frac.chars().count();
    if frac.chars().skip(sp.min_frac).any(|c| c == '0') {
        return Err(bad(pattern, "0 after # in the fraction"));
    }
    Ok(sp)
}

/// Maps the chosen separators (outside quotes) to the internal stand-ins.
fn canonical(sub: &str, group: &str, point: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut rest = sub;
    while let Some(c) = rest.chars().next() {
        if c == '\'' {
            quoted = !quoted;
        } else if !quoted && rest.starts_with(group) {
            out.push(GROUP);
            rest = &rest[group.len()..];
            continue;
        } else if !quoted && rest.starts_with(point) {
            out.push(POINT);
            rest = &rest[point.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn parse_pattern(pattern: &str) -> Result<Pattern, ScalarError> {
    let mut sections = split_unquoted(pattern, ':').into_iter();
    let subpatterns = sections.next().unwrap_or_default();
    let (mut group, mut point) = (",".to_string(), ".".to_string());
    for option in sections {
        let (key, value) = option
            .split_once('=')
            .ok_or_else(|| bad(pattern, "expected groupsep=… or decsep=… after ':'"))?;
        if value.is_empty() {
            return Err(bad(pattern, "an empty separator"));
        }
        match key.trim().to_ascii_lowercase().as_str() {
            "groupsep" => group = value.to_string(),
            "decsep" => point = value.to_string(),
            other => return Err(bad(pattern, &format!("unknown parameter '{other}'"))),
        }
    }
    if group == point {
        return Err(bad(pattern, "groupsep and decsep must differ"));
    }
    let parts = split_unquoted(&subpatterns, ';');
    if parts.len() > 2 {
        return Err(bad(pattern, "more than one ';'"));
    }
    let positive = parse_sub(pattern, &canonical(&parts[0], &group, &point))?;
    let negative = match parts.get(1) {
        Some(n) => Some(parse_sub(pattern, &canonical(n, &group, &point))?),
        None => None,
    };
    Ok(Pattern {
        positive,
        negative,
        group,
        point,
    })
}

fn group(int_digits: &str, size: usize, sep: &str) -> String {
    if size == 0 || int_digits.len() <= size {
        return int_digits.to_string();
    }
    let mut out = String::new();
    let first = int_digits.len() % size;
    for (i, c) in int_digits.chars().enumerate() {
        if i > 0 && (i + size - first).is_multiple_of(size) {
            out.push_str(sep);
        }
        out.push(c);
    }
    out
}

/// Splits a non-negative decimal into integer and fraction digit strings.
fn digits_of(d: &Decimal) -> (String, String) {
    let text = d.abs().to_plain_string();
    match text.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (text, String::new()),
    }
}

/// Formats a number with a FORMAT pattern.
pub fn format_number(value: &Decimal, pattern: &str) -> Result<String, ScalarError> {
    let pat = parse_pattern(pattern)?;
    let (pos, neg) = (&pat.positive, pat.negative.as_ref());
    let scaled = value.checked_mul(Decimal::from_i64(pos.multiplier))?;
    let negative = scaled.is_negative();
    let mut body = String::new();
    let mut magnitude = scaled.abs();
    let mut exponent = 0i64;
    if let Some(exp_digits) = pos.exponent_digits {
        if !magnitude.is_zero() {
            // Normalise to min_int integer digits (at least one).
            let int_digits = pos.min_int.max(1) as i64;
            let c = magnitude.coefficient().unsigned_abs().to_string().len() as i64;
            let adjusted = c + i64::from(magnitude.exponent()) - 1;
            exponent = adjusted - (int_digits - 1);
            magnitude = Decimal::from_parts(
                magnitude.coefficient().abs(),
                magnitude.exponent() - exponent as i32,
            )?;
        }
        let rounded = magnitude.round_to(pos.max_frac as i64, RoundingMode::HalfEven)?;
        body.push_str(&render(&rounded, pos, &pat));
        body.push('E');
        if exponent < 0 {
            body.push('-');
        }
        body.push_str(&format!(
            "{:0width$}",
            exponent.unsigned_abs(),
            width = exp_digits
        ));
    } else {
        let rounded = magnitude.round_to(pos.max_frac as i64, RoundingMode::HalfEven)?;
        body.push_str(&render(&rounded, pos, &pat));
    }
    let all_zero = !body.chars().any(|c| ('1'..='9').contains(&c));
    Ok(match (negative && !all_zero, neg) {
        (true, Some(n)) => format!("{}{body}{}", n.prefix, n.suffix),
        (true, None) => format!("-{}{body}{}", pos.prefix, pos.suffix),
        (false, _) => format!("{}{body}{}", pos.prefix, pos.suffix),
    })
}

fn render(rounded: &Decimal, sp: &SubPattern, pat: &Pattern) -> String {
    let (int, frac) = digits_of(rounded);
    let int = int.trim_start_matches('0');
    let int = if int.len() < sp.min_int {
        format!("{}{int}", "0".repeat(sp.min_int - int.len()))
    } else {
        int.to_string()
    };
    let mut frac = frac;
    while frac.len() > sp.min_frac && frac.ends_with('0') {
        frac.pop();
    }
    while frac.len() < sp.min_frac {
        frac.push('0');
    }
    let mut out = group(&int, sp.grouping, &pat.group);
    if out.is_empty() && frac.is_empty() {
        out.push('0');
    }
    if !frac.is_empty() {
        out.push_str(&pat.point);
        out.push_str(&frac);
    }
    out
}

/// Parses text written with a FORMAT pattern back into a number.
pub fn parse_number(text: &str, pattern: &str) -> Result<Decimal, ScalarError> {
    let pat = parse_pattern(pattern)?;
    let (pos, neg) = (&pat.positive, pat.negative.as_ref());
    let t = text.trim();
    let fail = || {
        ScalarError::cast_because(
            text,
            "a number",
            format!("it does not match FORMAT '{pattern}'"),
        )
    };
    let strip = |s: &'_ str, p: &str, x: &str| -> Option<String> {
        s.strip_prefix(p)
            .and_then(|r| r.strip_suffix(x))
            .map(str::to_string)
    };
    let negative_form = neg
        .filter(|n| n.prefix != pos.prefix || n.suffix != pos.suffix)
        .and_then(|n| strip(t, &n.prefix, &n.suffix));
    let (negative, core) = if let Some(core) = negative_form {
        (true, core)
    } else if let Some(core) = strip(t, &pos.prefix, &pos.suffix) {
        match core.strip_prefix('-') {
            Some(c) => (true, c.to_string()),
            None => (false, core),
        }
    } else if let Some(core) = t
        .strip_prefix('-')
        .and_then(|r| strip(r, &pos.prefix, &pos.suffix))
    {
        (true, core)
    } else {
        return Err(fail());
    };
    let mut cleaned = String::with_capacity(core.len());
    let mut rest = core.as_str();
    while let Some(c) = rest.chars().next() {
        if rest.starts_with(pat.group.as_str()) {
            rest = &rest[pat.group.len()..];
        } else if rest.starts_with(pat.point.as_str()) {
            cleaned.push('.');
            rest = &rest[pat.point.len()..];
        } else {
            cleaned.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if cleaned.is_empty()
        || !cleaned
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'E' | 'e' | '-' | '+'))
    {
        return Err(fail());
    }
    let d = Decimal::parse(&cleaned).map_err(|_| fail())?;
    let d = if pos.multiplier != 1 {
        d.checked_div(Decimal::from_i64(pos.multiplier))?
    } else {
        d
    };
    Ok(if negative { -d } else { d })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn number_format_groups_and_pads() {
        assert_eq!(
            format_number(&d("1234567.891"), "#,##0.00").unwrap(),
            "1,234,567.89"
        );
        assert_eq!(format_number(&d("0.5"), "#,##0.00").unwrap(), "0.50");
        assert_eq!(format_number(&d("7"), "000").unwrap(), "007");
        assert_eq!(format_number(&d("1.5"), "#.##").unwrap(), "1.5");
        assert_eq!(format_number(&d("2.345"), "0.00").unwrap(), "2.34");
        assert_eq!(
            format_number(&d("-12.5"), "#,##0.00;(#,##0.00)").unwrap(),
            "(12.50)"
        );
        assert_eq!(format_number(&d("-12.5"), "0.0").unwrap(), "-12.5");
        assert_eq!(format_number(&d("0.256"), "0.0%").unwrap(), "25.6%");
        assert_eq!(format_number(&d("12"), "'$'#,##0.00").unwrap(), "$12.00");
        assert_eq!(format_number(&d("12345"), "0.00E00").unwrap(), "1.23E04");
        let european = "#.##0,00:groupsep=.:decsep=,";
        assert_eq!(
            format_number(&d("1234567.891"), european).unwrap(),
            "1.234.567,89"
        );
        assert_eq!(
            format_number(&d("1234.5"), "# ##0.0:groupsep= ").unwrap(),
            "1 234.5"
        );
    }

    #[test]
    fn number_format_parses_back() {
        assert_eq!(
            parse_number("1,234,567.89", "#,##0.00").unwrap(),
            d("1234567.89")
        );
        assert_eq!(
            parse_number("(12.50)", "#,##0.00;(#,##0.00)").unwrap(),
            d("-12.5")
        );
        assert_eq!(parse_number("-3", "0").unwrap(), d("-3"));
        assert_eq!(parse_number("25.6%", "0.0%").unwrap(), d("0.256"));
        assert_eq!(parse_number("$12.00", "'$'0.00").unwrap(), d("12"));
        assert_eq!(
            parse_number("1.234,5", "#.##0,0:groupsep=.:decsep=,").unwrap(),
            d("1234.5")
        );
        assert!(parse_number("abc", "0.00").is_err());
    }

    #[test]
    fn number_format_rejects_bad_patterns() {
        assert!(format_number(&d("1"), "abc").is_err());
        assert!(format_number(&d("1"), "0;0;0").is_err());
        assert!(format_number(&d("1"), "0.#0").is_err());
        assert!(format_number(&d("1"), "0.0:sep=x").is_err());
        assert!(format_number(&d("1"), "0.0:groupsep=.").is_err());
    }
}
