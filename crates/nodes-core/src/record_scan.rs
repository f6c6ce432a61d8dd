//! Parsed record sequence: where one record ends in a byte stream, found by parsing with the
//! input domain (the product's "Parsed Record Sequence" record detection). File and TCP/IP
//! input nodes cut their streams with it.
//!
//! - XMLNSC: one complete top-level element is a record. What stands before it (an XML
//!   declaration, comments, processing instructions, a document type) belongs to the record;
//!   whitespace between records is skipped. End tags must match their start tags.
//! - JSON: one complete value (object, array, string, number, `true`, `false`, `null`).
//! - DFDL: the model's message type parsed from the start of what is pending; it takes the
//!   bytes it needs. A DFDL model cannot say whether a failed parse lacks bytes or has wrong
//!   ones, so while the stream is open a failed parse, or one that ends exactly where the
//!   bytes read so far end, waits for more bytes: the record fails at the end of the stream,
//!   past the record size limit, or when a reader's time limit runs out.
//!
//! The scanners are restartable by rescanning: a caller keeps the bytes pending and asks again
//! after each read.

use std::sync::Arc;

use sluice_dfdl::{DfdlError, DfdlParser};
use sluice_tree::TreeError;

/// What a scan of the pending bytes found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// A record: `data[start..end]`; what stands before `start` is whitespace to skip.
    Record { start: usize, end: usize },
    /// The bytes end inside a record: more are needed (at the end of the stream: the record
    /// is incomplete).
    NeedMore,
    /// Only whitespace is pending.
    Blank,
}

/// How records are found by parsing, per domain.
#[derive(Clone)]
pub enum RecordScanner {
    Xml,
    Json,
    Dfdl(Arc<DfdlParser>),
}

impl std::fmt::Debug for RecordScanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordScanner::Xml => "Xml",
            RecordScanner::Json => "Json",
            RecordScanner::Dfdl(_) => "Dfdl",
        })
    }
}

impl RecordScanner {
    /// The domain name, for errors.
    pub fn domain(&self) -> &'static str {
        match self {
            RecordScanner::Xml => "XMLNSC",
            RecordScanner::Json => "JSON",
            RecordScanner::Dfdl(_) => sluice_dfdl::DOMAIN,
        }
    }

    /// The first record in `data`. `eof` says no more bytes will come, so a value that could
    /// go on (a JSON number, a DFDL field up to the end of the data) ends there. A malformed
    /// record is a parse error whose offset is counted from the start of `data`.
    pub fn scan(&self, data: &[u8], eof: bool) -> Result<Scan, TreeError> {
        let Some(start) = data.iter().position(|b| !b.is_ascii_whitespace()) else {
            return Ok(Scan::Blank);
        };
        let rest = &data[start..];
        let found = match self {
            RecordScanner::Xml => xml_end(rest),
            RecordScanner::Json => json_end(rest, eof),
            RecordScanner::Dfdl(p) => dfdl_end(p, rest, eof),
        };
        let malformed = |offset: usize, message: String| TreeError::Parse {
            domain: self.domain(),
            offset: (start + offset) as u64,
            message: format!("no record can be parsed here: {message}"),
        };
        match found {
            Ok(Some(n)) => Ok(Scan::Record {
                start,
                end: start + n,
            }),
            Ok(None) => Ok(Scan::NeedMore),
            Err(Malformed { offset, message }) => Err(malformed(offset, message)),
        }
    }
}

struct Malformed {
    offset: usize,
    message: String,
}

fn bad(offset: usize, message: impl Into<String>) -> Result<Option<usize>, Malformed> {
    Err(Malformed {
        offset,
        message: message.into(),
    })
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

fn is_name_byte(b: u8) -> bool {
    !b.is_ascii_whitespace() && !matches!(b, b'>' | b'/' | b'=' | b'<' | b'"' | b'\'')
}

/// The length of the first complete top-level element in `d` (which starts with a
/// non-whitespace byte) and what precedes it; `None` when `d` ends first.
fn xml_end(d: &[u8]) -> Result<Option<usize>, Malformed> {
    let mut open: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    let mut seen_root = false;
    while i < d.len() {
        if d[i] != b'<' {
            if open.is_empty() && !d[i].is_ascii_whitespace() {
                return bad(i, "text outside an element");
            }
            i += 1;
            continue;
        }
        let tail = &d[i..];
        let skip_to = |from: usize, end: &[u8]| find(d, from, end).map(|e| e + end.len());
        let next = if tail.starts_with(b"<!--") || b"<!--".starts_with(tail) {
            skip_to(i + 4, b"-->")
        } else if tail.starts_with(b"<![CDATA[") || b"<![CDATA[".starts_with(tail) {
            if open.is_empty() && tail.len() >= 9 {
                return bad(i, "a CDATA section outside an element");
            }
            skip_to(i + 9, b"]]>")
        } else if tail.starts_with(b"<?") {
            skip_to(i + 2, b"?>")
        } else if tail.starts_with(b"<!") {
            if seen_root || !open.is_empty() {
                return bad(i, "a declaration inside the document");
            }
            doctype_end(d, i)
        } else if tail.starts_with(b"</") {
            let name_end = (i + 2..d.len()).find(|&j| !is_name_byte(d[j]));
            let Some(name_end) = name_end else {
                return Ok(None);
            };
            let name = &d[i + 2..name_end];
            let Some(close) = find(d, name_end, b">") else {
                return Ok(None);
            };
            match open.pop() {
                Some(o) if o == name => {}
                Some(o) => {
                    return bad(
                        i,
                        format!(
                            "the end tag </{}> does not match <{}>",
                            String::from_utf8_lossy(name),
                            String::from_utf8_lossy(o)
                        ),
                    );
                }
                None => return bad(i, "an end tag without a start tag"),
            }
            if open.is_empty() {
                return Ok(Some(close + 1));
            }
            Some(close + 1)
        } else {
            if seen_root && open.is_empty() {
                return bad(i, "a second top-level element");
            }
            let name_end = (i + 1..d.len()).find(|&j| !is_name_byte(d[j]));
            let Some(name_end) = name_end else {
                return Ok(None);
            };
            if name_end == i + 1 {
                return bad(i, "a '<' that starts no tag");
            }
            let Some(close) = tag_end(d, name_end) else {
                return Ok(None);
            };
            seen_root = true;
            if d[close - 1] == b'/' {
                if open.is_empty() {
                    return Ok(Some(close + 1));
                }
            } else {
                open.push(&d[i + 1..name_end]);
            }
            Some(close + 1)
        };
        match next {
            Some(n) => i = n,
            None => return Ok(None),
        }
    }
    Ok(None)
}

/// The `>` that ends a start tag, past quoted attribute values.
fn tag_end(d: &[u8], from: usize) -> Option<usize> {
    let mut quote = None;
    for (j, &b) in d.iter().enumerate().skip(from) {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return Some(j),
            _ => {}
        }
    }
    None
}

/// The end of a `<!DOCTYPE …>` declaration, past an internal subset in brackets.
fn doctype_end(d: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (j, &b) in d.iter().enumerate().skip(from + 2) {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[') => depth += 1,
            (None, b']') => depth = depth.saturating_sub(1),
            (None, b'>') if depth == 0 => return Some(j + 1),
            _ => {}
        }
    }
    None
}

/// The length of the first complete JSON value in `d` (which starts with a non-whitespace
/// byte); `None` when `d` ends first.
fn json_end(d: &[u8], eof: bool) -> Result<Option<usize>, Malformed> {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < d.len() {
        let b = d[i];
        match b {
            b'{' | b'[' => {
                stack.push(if b == b'{' { b'}' } else { b']' });
                i += 1;
            }
            b'}' | b']' => {
                if stack.pop() != Some(b) {
                    return bad(i, format!("an unexpected '{}'", b as char));
                }
                i += 1;
                if stack.is_empty() {
                    return Ok(Some(i));
                }
            }
            b'"' => {
                let mut j = i + 1;
                loop {
                    match d.get(j) {
                        None => return Ok(None),
                        Some(b'\\') => j += 2,
                        Some(b'"') => break,
                        Some(_) => j += 1,
                    }
                }
                i = j + 1;
                if stack.is_empty() {
                    return Ok(Some(i));
                }
            }
            _ if stack.is_empty() => {
                // A scalar at the top: it ends at the first byte that cannot continue it.
                let n = d
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.')));
                let n = match n {
                    Some(0) => return bad(0, format!("an unexpected '{}'", b as char)),
                    Some(n) => n,
                    None if eof => d.len(),
                    None => return Ok(None),
                };
                let word = &d[..n];
                let number = word[0] == b'-' || word[0].is_ascii_digit();
                if !number && !matches!(word, b"true" | b"false" | b"null") {
                    return bad(
                        0,
                        format!("'{}' is no JSON value", String::from_utf8_lossy(word)),
                    );
                }
                return Ok(Some(n));
            }
            _ => i += 1,
        }
    }
    Ok(None)
}

fn dfdl_end(p: &DfdlParser, d: &[u8], eof: bool) -> Result<Option<usize>, Malformed> {
    match p.message_length(d) {
        Ok(0) => bad(0, "the message type takes no bytes"),
        Ok(n) if n < d.len() || eof => Ok(Some(n)),
        Ok(_) => Ok(None),
        Err(_) if !eof => Ok(None),
        Err(DfdlError::Parse {
            offset,
            component,
            message,
        }) => bad(offset, format!("schema component '{component}': {message}")),
        Err(e) => bad(0, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every record of `data` fed in reads of `step` bytes, the scanner asked after each.
    fn records(s: &RecordScanner, data: &[u8], step: usize) -> Result<Vec<String>, TreeError> {
        let mut pending = Vec::new();
        let mut out = Vec::new();
        let mut fed = 0;
        loop {
            let eof = fed >= data.len();
            match s.scan(&pending, eof)? {
                Scan::Record { start, end } => {
                    out.push(String::from_utf8_lossy(&pending[start..end]).into_owned());
                    pending.drain(..end);
                }
                Scan::Blank if eof => return Ok(out),
                Scan::NeedMore if eof => {
                    return Err(TreeError::Parse {
                        domain: "test",
                        offset: 0,
                        message: "incomplete".into(),
                    });
                }
                Scan::Blank | Scan::NeedMore => {
                    let to = (fed + step).min(data.len());
                    pending.extend_from_slice(&data[fed..to]);
                    fed = to;
                }
            }
        }
    }

    const XML: &str =
        "<?xml version=\"1.0\"?>\n<a x='>'><b/><!-- </a> --><![CDATA[</a>]]></a>\n  <c>t</c><d/>";

    #[test]
    fn xml_records_are_whole_top_level_elements_when_read_in_any_chunks() {
        for step in [1, 2, 3, 7, 1000] {
            let got = records(&RecordScanner::Xml, XML.as_bytes(), step).unwrap();
            assert_eq!(
                got,
                [
                    "<?xml version=\"1.0\"?>\n<a x='>'><b/><!-- </a> --><![CDATA[</a>]]></a>",
                    "<c>t</c>",
                    "<d/>"
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn xml_scan_fails_when_an_end_tag_does_not_match() {
        let e = RecordScanner::Xml.scan(b" <a><b></a>", false).unwrap_err();
        assert!(
            matches!(&e, TreeError::Parse { offset: 7, message, .. } if message.contains("</a>")),
            "{e}"
        );
    }

    #[test]
    fn xml_scan_fails_when_text_stands_between_records() {
        assert!(RecordScanner::Xml.scan(b"oops<a/>", false).is_err());
    }

    #[test]
    fn xml_scan_needs_more_when_the_stream_ends_inside_a_record() {
        assert_eq!(
            RecordScanner::Xml.scan(b"<a><b>", true).unwrap(),
            Scan::NeedMore
        );
        assert!(records(&RecordScanner::Xml, b"<a/><b>", 2).is_err());
    }

    #[test]
    fn json_records_are_whole_values_when_read_in_any_chunks() {
        let data = br#"{"a":"}\"","b":[1,{"c":2}]} [3] "s" 42 true null"#;
        for step in [1, 4, 1000] {
            let got = records(&RecordScanner::Json, data, step).unwrap();
            assert_eq!(
                got,
                [
                    r#"{"a":"}\"","b":[1,{"c":2}]}"#,
                    "[3]",
                    "\"s\"",
                    "42",
                    "true",
                    "null"
                ],
                "step {step}"
            );
        }
    }

    #[test]
    fn json_number_waits_for_more_when_the_stream_is_open() {
        assert_eq!(
            RecordScanner::Json.scan(b"12", false).unwrap(),
            Scan::NeedMore
        );
        assert_eq!(
            RecordScanner::Json.scan(b"12", true).unwrap(),
            Scan::Record { start: 0, end: 2 }
        );
    }

    #[test]
    fn json_scan_fails_when_brackets_do_not_match() {
        assert!(RecordScanner::Json.scan(b"{\"a\":[1}", false).is_err());
        assert!(RecordScanner::Json.scan(b"nope", true).is_err());
    }

    fn dfdl() -> RecordScanner {
        let text = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:dfdl="http://www.ogf.org/dfdl/dfdl-1.0/">
<xs:annotation><xs:appinfo source="http://www.ogf.org/dfdl/">
<dfdl:format encoding="UTF-8" lengthKind="delimited" initiator="" terminator="" separator=""/>
</xs:appinfo></xs:annotation>
<xs:element name="R"><xs:complexType><xs:sequence>
<xs:element name="Id" type="xs:string" dfdl:lengthKind="explicit" dfdl:length="3"/>
<xs:element name="N" type="xs:int" dfdl:lengthKind="explicit" dfdl:length="2"/>
</xs:sequence></xs:complexType></xs:element>
</xs:schema>"#;
        let schema =
            sluice_dfdl::Schema::from_text("r.xsd", text, std::path::Path::new(".")).unwrap();
        RecordScanner::Dfdl(Arc::new(DfdlParser::new(Arc::new(schema), "R").unwrap()))
    }

    #[test]
    fn dfdl_records_take_what_the_model_needs_when_read_in_chunks() {
        for step in [1, 3, 100] {
            let got = records(&dfdl(), b"abc01xyz02", step).unwrap();
            assert_eq!(got, ["abc01", "xyz02"], "step {step}");
        }
    }

    #[test]
    fn dfdl_scan_fails_at_the_end_of_the_stream_when_the_record_is_malformed() {
        assert_eq!(dfdl().scan(b"abcXY", false).unwrap(), Scan::NeedMore);
        let e = dfdl().scan(b"abcXY", true).unwrap_err();
        assert!(matches!(e, TreeError::Parse { domain: "DFDL", .. }), "{e}");
    }
}
