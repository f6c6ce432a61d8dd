//! The string functions over CHARACTER text, worked on in place: the general forms in
//! `string` go through a list of units per call, whereas here a substring, a trim or a case
//! change of short text costs no heap allocation, and a result that is all of its source shares
//! it. Each returns `None` for arguments it does not take (other string types, a DECIMAL
//! length, a malformed trim singleton), which the general form then handles, errors included.
//! NULL arguments have been dealt with by the caller.

use super::string::TrimSpec;
use crate::char_string::{CharString, CharWriter};
use crate::error::ScalarError;
use crate::value::Value;

type Answer = Option<Result<Value, ScalarError>>;

/// The byte offset of character `n` (0-based) of `s`; its length when it has fewer.
fn offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// `part`, a slice of `source`, as a value: `source` itself when the slice is all of it.
fn slice_value(source: &CharString, part: &str) -> Value {
    if part.len() == source.len() {
        Value::Character(source.clone())
    } else {
        Value::Character(CharString::from(part))
    }
}

/// An INTEGER length of 0 or more.
fn length(v: &Value) -> Option<usize> {
    match v {
        Value::Integer(n) => usize::try_from(*n).ok(),
        _ => None,
    }
}

/// An optional length argument: `Some(None)` when absent, `None` when not taken here.
fn optional_length(v: Option<&Value>) -> Option<Option<usize>> {
    match v {
        None => Some(None),
        Some(l) => length(l).map(Some),
    }
}

fn character(v: &Value) -> Option<&CharString> {
    match v {
        Value::Character(s) => Some(s),
        _ => None,
    }
}

pub(super) fn left(source: &Value, len: &Value) -> Answer {
    let (s, n) = (character(source)?, length(len)?);
    Some(Ok(slice_value(s, &s[..offset(s, n)])))
}

pub(super) fn right(source: &Value, len: &Value) -> Answer {
    let (s, n) = (character(source)?, length(len)?);
    let skip = s.chars().count().saturating_sub(n);
    Some(Ok(slice_value(s, &s[offset(s, skip)..])))
}

pub(super) fn substring(source: &Value, start: &Value, len: Option<&Value>) -> Answer {
    let s = character(source)?;
    let Value::Integer(start) = *start else {
        return None;
    };
    let len = optional_length(len)?;
    // The same range as the general form: [start, start + len) clipped to 1..=total.
    let total = s.chars().count() as i64;
    let end = match len {
        Some(l) => start.saturating_add(l as i64),
        None => total + 1,
    };
    let from = start.clamp(1, total + 1);
    let to = end.clamp(from, total + 1);
    let a = offset(s, (from - 1) as usize);
    let b = a + offset(&s[a..], (to - from) as usize);
    Some(Ok(slice_value(s, &s[a..b])))
}

pub(super) fn substring_before(source: &Value, delimiter: &Value, len: Option<&Value>) -> Answer {
    let (s, d) = (character(source)?, character(delimiter)?);
    let len = optional_length(len)?;
    let Some(at) = s.find(d.as_str()) else {
        return Some(Ok(Value::Character(CharString::EMPTY)));
    };
    let before = &s[..at];
    let start = match len {
        Some(l) => offset(before, before.chars().count().saturating_sub(l)),
        None => 0,
    };
    Some(Ok(slice_value(s, &before[start..])))
}

pub(super) fn substring_after(source: &Value, delimiter: &Value, len: Option<&Value>) -> Answer {
    let (s, d) = (character(source)?, character(delimiter)?);
    let len = optional_length(len)?;
    let Some(at) = s.find(d.as_str()) else {
        return Some(Ok(Value::Character(CharString::EMPTY)));
    };
    let after = &s[at + d.len()..];
    let end = match len {
        Some(l) => offset(after, l),
        None => after.len(),
    };
    Some(Ok(slice_value(s, &after[..end])))
}

/// POSITION without REPEAT: the first occurrence at or after FROM.
pub(super) fn position(search: &Value, source: &Value, from: Option<&Value>) -> Answer {
    let (needle, s) = (character(search)?, character(source)?);
    if needle.is_empty() {
        return Some(Ok(Value::Integer(1)));
    }
    let start = match from {
        None => 1,
        Some(Value::Integer(f)) => (*f).max(1),
        Some(_) => return None,
    };
    let skip = offset(s, usize::try_from(start - 1).unwrap_or(usize::MAX));
    Some(Ok(Value::Integer(match s[skip..].find(needle.as_str()) {
        Some(at) => s[..skip + at].chars().count() as i64 + 1,
        None => 0,
    })))
}

pub(super) fn trim(spec: TrimSpec, singleton: Option<&Value>, source: &Value) -> Answer {
    let s = character(source)?;
    let pad = match singleton {
        None => ' ',
        Some(p) => {
            let mut chars = character(p)?.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => c,
                _ => return None,
            }
        }
    };
    let trimmed = match spec {
        TrimSpec::Leading => s.trim_start_matches(pad),
        TrimSpec::Trailing => s.trim_end_matches(pad),
        TrimSpec::Both => s.trim_matches(pad),
    };
    Some(Ok(slice_value(s, trimmed)))
}

/// ASCII text upper- or lower-cased, through a small buffer so that a short result stays
/// inline in the CharString as the char-at-a-time path leaves it.
fn ascii_cased(s: &str, upper: bool) -> CharString {
    let mut w = CharWriter::new();
    let mut buf = [0u8; 64];
    for chunk in s.as_bytes().chunks(buf.len()) {
        let out = &mut buf[..chunk.len()];
        out.copy_from_slice(chunk);
        if upper {
            out.make_ascii_uppercase();
        } else {
            out.make_ascii_lowercase();
        }
        // Cased ASCII is still ASCII, so UTF-8.
        w.push_str(std::str::from_utf8(out).unwrap_or_default());
    }
    w.finish()
}

pub(super) fn upper(source: &Value) -> Answer {
    let s = character(source)?;
    // Most message text is ASCII: case it a byte at a time rather than a char at a time.
    if s.is_ascii() {
        return Some(Ok(Value::Character(ascii_cased(s, true))));
    }
    let mut w = CharWriter::new();
    for c in s.chars() {
        for u in c.to_uppercase() {
            w.push(u);
        }
    }
    Some(Ok(Value::Character(w.finish())))
}

pub(super) fn lower(source: &Value) -> Answer {
    let s = character(source)?;
    // A capital sigma lower-cases by its place in a word, which `str::to_lowercase` knows.
    if s.contains('Σ') {
        return None;
    }
    if s.is_ascii() {
        return Some(Ok(Value::Character(ascii_cased(s, false))));
    }
    let mut w = CharWriter::new();
    for c in s.chars() {
        for l in c.to_lowercase() {
            w.push(l);
        }
    }
    Some(Ok(Value::Character(w.finish())))
}

pub(super) fn replace(source: &Value, search: &Value, replacement: Option<&Value>) -> Answer {
    let (s, find) = (character(source)?, character(search)?);
    let with = match replacement {
        None => "",
        Some(r) => character(r)?.as_str(),
    };
    if find.is_empty() || !s.contains(find.as_str()) {
        return Some(Ok(source.clone()));
    }
    let mut w = CharWriter::new();
    let mut done = 0;
    for (at, _) in s.match_indices(find.as_str()) {
        w.push_str(&s[done..at]);
        w.push_str(with);
        done = at + find.len();
    }
    w.push_str(&s[done..]);
    Some(Ok(Value::Character(w.finish())))
}

/// CONTAINS, STARTSWITH and ENDSWITH: UTF-8 matches byte for byte where text matches
/// character for character.
pub(super) fn predicate(source: &Value, other: &Value, test: fn(&str, &str) -> bool) -> Answer {
    let (s, o) = (character(source)?, character(other)?);
    Some(Ok(Value::Boolean(test(s, o))))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn text(v: Value) -> String {
        match v {
            Value::Character(s) => s.to_string(),
            other => panic!("CHARACTER expected, got {other:?}"),
        }
    }

    /// Characters `from..to` (0-based, clipped) by way of a list of characters.
    fn chars(s: &str, from: usize, to: usize) -> String {
        let c: Vec<char> = s.chars().collect();
        let to = to.min(c.len());
        c[from.min(to)..to].iter().collect()
    }

    fn run(a: Answer) -> String {
        text(a.expect("taken in place").expect("no error"))
    }

    fn c(s: &str) -> Value {
        Value::from_text(s)
    }

    proptest! {
        #[test]
        fn slices_count_characters_not_bytes(s in "\\PC{0,12}", a in -3i64..15, n in 0i64..15) {
            let v = c(&s);
            let total = s.chars().count();
            prop_assert_eq!(run(left(&v, &Value::Integer(n))), chars(&s, 0, n as usize));
            prop_assert_eq!(
                run(right(&v, &Value::Integer(n))),
                chars(&s, total.saturating_sub(n as usize), total)
            );
            let from = a.max(1) as usize - 1;
            let to = (a + n).max(1) as usize - 1;
            prop_assert_eq!(
                run(substring(&v, &Value::Integer(a), Some(&Value::Integer(n)))),
                chars(&s, from, to)
            );
            prop_assert_eq!(
                run(substring(&v, &Value::Integer(a), None)),
                chars(&s, from, total)
            );
        }

        #[test]
        fn delimited_substrings_and_positions_count_characters(
            s in "[aé€b]{0,10}",
            d in "[aé€]{1,2}",
            n in 0i64..6,
        ) {
            let (v, dv) = (c(&s), c(&d));
            let at = s.find(&d);
            let before = at.map_or(String::new(), |i| s[..i].to_string());
            let after = at.map_or(String::new(), |i| s[i + d.len()..].to_string());
            let bn = before.chars().count();
            prop_assert_eq!(run(substring_before(&v, &dv, None)), before.clone());
            prop_assert_eq!(
                run(substring_before(&v, &dv, Some(&Value::Integer(n)))),
                chars(&before, bn.saturating_sub(n as usize), bn)
            );
            prop_assert_eq!(run(substring_after(&v, &dv, None)), after.clone());
            prop_assert_eq!(
                run(substring_after(&v, &dv, Some(&Value::Integer(n)))),
                chars(&after, 0, n as usize)
            );
            let expected = at.map_or(0, |i| s[..i].chars().count() as i64 + 1);
            prop_assert_eq!(
                position(&dv, &v, None).unwrap().unwrap(),
                Value::Integer(expected)
            );
        }
    }

    #[test]
    fn trims_and_case_changes_keep_their_meaning() {
        assert_eq!(run(trim(TrimSpec::Both, None, &c("  ab c  "))), "ab c");
        assert_eq!(run(trim(TrimSpec::Leading, None, &c("  ab  "))), "ab  ");
        assert_eq!(
            run(trim(TrimSpec::Trailing, Some(&c("é")), &c("éaéé"))),
            "éa"
        );
        assert!(trim(TrimSpec::Both, Some(&c("ab")), &c("abab")).is_none());
        assert_eq!(run(upper(&c("straße"))), "STRASSE");
        assert_eq!(run(lower(&c("ÀB"))), "àb");
        // ASCII text longer than the casing buffer, cut across its chunks.
        let long = "Ab1-".repeat(40);
        assert_eq!(run(upper(&c(&long))), long.to_ascii_uppercase());
        assert_eq!(run(lower(&c(&long))), long.to_ascii_lowercase());
        assert!(lower(&c("ΟΔΟΣ")).is_none());
        assert_eq!(
            run(replace(&c("a-b-c"), &c("-"), Some(&c("+-")))),
            "a+-b+-c"
        );
        assert_eq!(run(replace(&c("abc"), &c(""), None)), "abc");
        assert_eq!(
            position(&c("c"), &c("abcabc"), Some(&Value::Integer(4))),
            Some(Ok(Value::Integer(6)))
        );
    }

    #[test]
    fn a_result_that_is_all_of_its_source_shares_it() {
        let long = c(&"x".repeat(100));
        let Some(Ok(Value::Character(t))) = trim(TrimSpec::Both, None, &long) else {
            panic!("trimmed");
        };
        let Value::Character(s) = &long else {
            unreachable!()
        };
        assert!(std::ptr::eq(t.as_str(), s.as_str()));
    }
}
