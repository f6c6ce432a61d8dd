//! Masking of output that varies from run to run, so that expected files hold only what a flow
//! decides: literal strings (temporary folders) and ISO 8601 timestamps are replaced by stable
//! placeholders.

/// Replacements applied to every output before it is compared.
#[derive(Clone, Debug, Default)]
pub struct Masker {
    literals: Vec<(String, String)>,
}

impl Masker {
    pub fn new() -> Masker {
        Masker::default()
    }

    /// Replace every occurrence of `text` with `placeholder`. Longer texts are replaced first,
    /// so that a path and its parent folder can both be masked.
    pub fn literal(mut self, text: impl Into<String>, placeholder: impl Into<String>) -> Masker {
        let text = text.into();
        if !text.is_empty() {
            self.literals.push((text, placeholder.into()));
            self.literals
                .sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        }
        self
    }

    /// `text` with every literal and timestamp masked.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (t, p) in &self.literals {
            out = out.replace(t.as_str(), p);
        }
        mask_timestamps(&out)
    }
}

/// Replace `YYYY-MM-DD[T ]hh:mm:ss[.fff][Z|±hh:mm]` with `<timestamp>`.
fn mask_timestamps(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(len) = timestamp_at(&b[i..]) {
            out.push_str(&s[copied..i]);
            out.push_str("<timestamp>");
            i += len;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// The length of the timestamp starting at `b[0]`, if one does.
fn timestamp_at(b: &[u8]) -> Option<usize> {
    // Digits and separators of `YYYY-MM-DDThh:mm:ss`; `d` stands for a digit.
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < SHAPE.len() {
        return None;
    }
    for (i, &want) in SHAPE.iter().enumerate() {
        let ok = match want {
            b'd' => b[i].is_ascii_digit(),
            b'T' => b[i] == b'T' || b[i] == b' ',
            sep => b[i] == sep,
        };
        if !ok {
            return None;
        }
    }
    let mut n = SHAPE.len();
    if b.get(n) == Some(&b'.') && b.get(n + 1).is_some_and(u8::is_ascii_digit) {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => n += 1,
        Some(b'+' | b'-') => {
            let digits = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
            if digits(n + 1) && digits(n + 2) {
                let colon = usize::from(b.get(n + 3) == Some(&b':'));
                if digits(n + 3 + colon) && digits(n + 4 + colon) {
                    n += 5 + colon;
                }
            }
        }
        _ => {}
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masker_hides_timestamps_with_fractions_and_offsets() {
        let m = Masker::new();
        assert_eq!(
            m.apply("at 2026-11-22T05:29:06.123456Z and 2026-01-02 03:04:05+01:00."),
            "at <timestamp> and <timestamp>."
        );
        assert_eq!(m.apply("2026-11-22 is a date"), "2026-11-22 is a date");
    }

    #[test]
    fn masker_replaces_longer_literals_first() {
        let m = Masker::new()
            .literal("/tmp/x", "<tmp>")
            .literal("/tmp/x/project", "<project>");
        assert_eq!(m.apply("/tmp/x/project/a /tmp/x/b"), "<project>/a <tmp>/b");
    }
}
