//! Record detection and record definition: how a byte stream is cut into records on input, and
//! how a message body is framed on output. Pure functions over buffers, so that every option is
//! tested without sockets.

use bytes::{Buf, Bytes, BytesMut};
use sluice_node_api::{ConfigError, properties, property_enum};
use sluice_nodes_core::domains::BodyParsing;
use sluice_nodes_core::record_scan::{RecordScanner, Scan};

use crate::TcpipError;

property_enum! {
    /// How an input or receive node finds the end of a record.
    pub enum Detection {
        /// Every record is `record_length_bytes` long.
        FixedLength = "fixed_length",
        /// Records end with (postfix) or are separated by (infix) a delimiter.
        Delimited = "delimited",
        /// Each record starts with its length, in the `length_prefix` format.
        LengthPrefixed = "length_prefixed",
        /// Everything the peer sends until it closes its output is one record.
        ConnectionClosed = "connection_closed",
        /// Records are found by parsing with the node's `domain` (XMLNSC: one top-level
        /// element; JSON: one value; DFDL: one message of the model), whitespace between them
        /// skipped.
        ParsedRecordSequence = "parsed_record_sequence",
    }
}

property_enum! {
    /// Which delimiter separates records.
    pub enum DelimiterKind {
        /// A line end: CR LF (DOS) or LF (Unix); either ends a record, neither is kept.
        LineEnd = "line_end",
        /// The bytes of `custom_delimiter` (text) or `custom_delimiter_hex`.
        Custom = "custom",
    }
}

property_enum! {
    /// Where the delimiter stands.
    pub enum DelimiterType {
        /// After every record: bytes left without a delimiter when the peer closes are an
        /// incomplete record.
        Postfix = "postfix",
        /// Between records: the bytes left when the peer closes are the last record.
        Infix = "infix",
    }
}

property_enum! {
    /// The length prefix of `length_prefixed` records: the number of bytes that follow it.
    pub enum LengthPrefix {
        /// One byte.
        U8 = "u8",
        /// Two bytes, big-endian (network order).
        U16Be = "u16_be",
        /// Four bytes, big-endian (network order).
        U32Be = "u32_be",
        /// Four bytes, little-endian.
        U32Le = "u32_le",
    }
}

properties! {
    /// How an input or receive node cuts the byte stream into records.
    pub struct RecordDetectionProps {
        /// How the end of a record is found: `fixed_length`, `delimited`, `length_prefixed`,
        /// `connection_closed` or `parsed_record_sequence` (with `domain` XMLNSC, JSON or DFDL;
        /// the product's Record detection).
        record_detection: Detection = "connection_closed",
        /// With `fixed_length`: the length of every record.
        record_length_bytes: u64 = "0",
        /// With `delimited`: `line_end` (DOS CR LF or Unix LF) or `custom`.
        delimiter: DelimiterKind = "line_end",
        /// With `delimiter: custom`: the delimiter as text (UTF-8).
        custom_delimiter: Option<String>,
        /// With `delimiter: custom`: the delimiter as hexadecimal bytes (`0d0a`, `1f`).
        custom_delimiter_hex: Option<String>,
        /// With `delimited`: `postfix` (after every record) or `infix` (between records).
        delimiter_type: DelimiterType = "postfix",
        /// With `length_prefixed`: `u8`, `u16_be`, `u32_be` or `u32_le`; the prefix is not part
        /// of the record.
        length_prefix: LengthPrefix = "u32_be",
        /// The longest record accepted (length-prefixed, delimited, connection-closed and parsed
        /// records); a longer one is a failure and the connection is closed.
        max_record_bytes: u64 = "104857600",
    }
}

/// Record detection, checked and ready to cut records.
#[derive(Clone, Debug)]
pub enum Framing {
    Fixed(usize),
    Delimited {
        /// `None` for line ends (LF, with a CR before it dropped too).
        delimiter: Option<Vec<u8>>,
        infix: bool,
        max: usize,
    },
    LengthPrefixed {
        prefix: LengthPrefix,
        max: usize,
    },
    ConnectionClosed {
        max: usize,
    },
    Parsed {
        scanner: RecordScanner,
        max: usize,
    },
}

/// The delimiter bytes from the `delimiter`, `custom_delimiter` and `custom_delimiter_hex`
/// properties; `None` for line ends.
pub fn delimiter_bytes(
    kind: DelimiterKind,
    text: Option<&str>,
    hex: Option<&str>,
) -> Result<Option<Vec<u8>>, ConfigError> {
    match (kind, text, hex) {
        (DelimiterKind::LineEnd, None, None) => Ok(None),
        (DelimiterKind::LineEnd, _, _) => Err(ConfigError::property(
            "delimiter",
            "a custom delimiter is given but `delimiter` is `line_end`",
        )
        .with_hint("set `delimiter: custom`")),
        (DelimiterKind::Custom, Some(_), Some(_)) => Err(ConfigError::property(
            "custom_delimiter_hex",
            "give `custom_delimiter` or `custom_delimiter_hex`, not both",
        )),
        (DelimiterKind::Custom, Some(t), None) if !t.is_empty() => Ok(Some(t.as_bytes().to_vec())),
        (DelimiterKind::Custom, None, Some(h)) => parse_hex(h)
            .filter(|b| !b.is_empty())
            .map(Some)
            .ok_or_else(|| {
                ConfigError::property(
                    "custom_delimiter_hex",
                    format!("`{h}` is not an even number of hexadecimal digits"),
                )
            }),
        (DelimiterKind::Custom, _, _) => Err(ConfigError::property(
            "custom_delimiter",
            "`delimiter: custom` needs a non-empty `custom_delimiter` or `custom_delimiter_hex`",
        )),
    }
}

/// Hexadecimal digits as bytes; `None` when they are not an even number of hex digits.
pub fn parse_hex(h: &str) -> Option<Vec<u8>> {
    let h = h.trim();
    if !h.len().is_multiple_of(2) || !h.is_ascii() {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).ok())
        .collect()
}

fn to_usize(name: &str, v: u64) -> Result<usize, ConfigError> {
    usize::try_from(v).map_err(|_| ConfigError::property(name, "is too large"))
}

impl Framing {
    /// The framing of a node's record detection; `parsing` is the node's domain, which finds
    /// the records of a parsed record sequence.
    pub fn from_props(
        p: &RecordDetectionProps,
        parsing: &BodyParsing,
    ) -> Result<Framing, ConfigError> {
        let max = to_usize("max_record_bytes", p.max_record_bytes)?;
        if max == 0 {
            return Err(ConfigError::property(
                "max_record_bytes",
                "must be at least 1",
            ));
        }
        Ok(match p.record_detection {
            Detection::FixedLength => {
                if p.record_length_bytes == 0 {
                    return Err(ConfigError::property(
                        "record_length_bytes",
                        "`record_detection: fixed_length` needs `record_length_bytes` of at least 1",
                    ));
                }
                Framing::Fixed(to_usize("record_length_bytes", p.record_length_bytes)?)
            }
            Detection::Delimited => Framing::Delimited {
                delimiter: delimiter_bytes(
                    p.delimiter,
                    p.custom_delimiter.as_deref(),
                    p.custom_delimiter_hex.as_deref(),
                )?,
                infix: p.delimiter_type == DelimiterType::Infix,
                max,
            },
            Detection::LengthPrefixed => Framing::LengthPrefixed {
                prefix: p.length_prefix,
                max,
            },
            Detection::ConnectionClosed => Framing::ConnectionClosed { max },
            Detection::ParsedRecordSequence => Framing::Parsed {
                scanner: parsing.record_scanner().ok_or_else(|| {
                    ConfigError::property(
                        "record_detection",
                        "`parsed_record_sequence` needs `domain` XMLNSC, JSON or DFDL",
                    )
                })?,
                max,
            },
        })
    }

    /// The next complete record in `buf`, taken out of it. `eof` says the peer closed its
    /// output, so that what is left is either the last record (infix, connection closed) or
    /// an incomplete one (an error carrying those bytes). `Ok(None)`: more bytes are needed,
    /// or the stream ended cleanly between records.
    pub fn next_record(&self, buf: &mut BytesMut, eof: bool) -> Result<Option<Bytes>, TcpipError> {
        let incomplete = |buf: &mut BytesMut, expected: String| {
            let partial = buf.split().freeze();
            Err(TcpipError::Incomplete {
                got: partial.len(),
                expected,
                partial,
            })
        };
        match self {
            Framing::Fixed(n) => {
                if buf.len() >= *n {
                    return Ok(Some(buf.split_to(*n).freeze()));
                }
                if eof && !buf.is_empty() {
                    return incomplete(buf, format!("a {n}-byte fixed-length record"));
                }
                Ok(None)
            }
            Framing::Delimited {
                delimiter,
                infix,
                max,
            } => {
                let found = match delimiter {
                    None => memchr_lf(buf).map(|i| {
                        let start = if i > 0 && buf[i - 1] == b'\r' {
                            i - 1
                        } else {
                            i
                        };
                        (start, i + 1)
                    }),
                    Some(d) => find(buf, d).map(|i| (i, i + d.len())),
                };
                if let Some((end, next)) = found {
                    if end > *max {
                        return too_long(buf, *max);
                    }
                    let rec = buf.split_to(end).freeze();
                    buf.advance(next - end);
                    return Ok(Some(rec));
                }
                if buf.len() > *max {
                    return too_long(buf, *max);
                }
                if eof && !buf.is_empty() {
                    if *infix {
                        return Ok(Some(buf.split().freeze()));
                    }
                    return incomplete(buf, "a record ending with its delimiter".into());
                }
                Ok(None)
            }
            Framing::LengthPrefixed { prefix, max } => {
                let width = match prefix {
                    LengthPrefix::U8 => 1,
                    LengthPrefix::U16Be => 2,
                    LengthPrefix::U32Be | LengthPrefix::U32Le => 4,
                };
                if buf.len() < width {
                    if eof && !buf.is_empty() {
                        return incomplete(buf, format!("a {width}-byte length prefix"));
                    }
                    return Ok(None);
                }
                let len = match prefix {
                    LengthPrefix::U8 => buf[0] as usize,
                    LengthPrefix::U16Be => u16::from_be_bytes([buf[0], buf[1]]) as usize,
                    LengthPrefix::U32Be => {
                        u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize
                    }
                    LengthPrefix::U32Le => {
                        u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize
                    }
                };
                if len > *max {
                    return too_long(buf, *max);
                }
                if buf.len() >= width + len {
                    buf.advance(width);
                    return Ok(Some(buf.split_to(len).freeze()));
                }
                if eof {
                    return incomplete(buf, format!("a record of {len} bytes after its prefix"));
                }
                Ok(None)
            }
            Framing::ConnectionClosed { max } => {
                if buf.len() > *max {
                    return too_long(buf, *max);
                }
                if eof && !buf.is_empty() {
                    return Ok(Some(buf.split().freeze()));
                }
                Ok(None)
            }
            Framing::Parsed { scanner, max } => match scanner.scan(buf, eof) {
                Ok(Scan::Record { start, end }) => {
                    if end - start > *max {
                        return too_long(buf, *max);
                    }
                    buf.advance(start);
                    Ok(Some(buf.split_to(end - start).freeze()))
                }
                Ok(Scan::Blank) => {
                    buf.clear();
                    Ok(None)
                }
                Ok(Scan::NeedMore) => {
                    // The whitespace before a record is no part of it.
                    let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
                    buf.advance(blank);
                    if buf.len() > *max {
                        return too_long(buf, *max);
                    }
                    if eof {
                        return incomplete(buf, format!("a {} record", scanner.domain()));
                    }
                    Ok(None)
                }
                Err(source) => Err(TcpipError::Malformed {
                    source,
                    partial: buf.split().freeze(),
                }),
            },
        }
    }

    /// Whether a record ends only when the peer closes (so reading waits for the end of the
    /// stream rather than for a record boundary).
    pub fn until_closed(&self) -> bool {
        matches!(self, Framing::ConnectionClosed { .. })
    }
}

fn too_long(buf: &mut BytesMut, max: usize) -> Result<Option<Bytes>, TcpipError> {
    let partial = buf.split().freeze();
    Err(TcpipError::RecordTooLong { max, partial })
}

fn memchr_lf(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

property_enum! {
    /// How an output node frames the body it sends (the product's Record definition).
    pub enum OutputRecord {
        /// The body's bytes as they are.
        Unchanged = "unchanged",
        /// Padded with `pad_byte_hex` to `record_length_bytes`; a longer body is an error.
        FixedLength = "fixed_length",
        /// The body followed by the delimiter.
        Delimited = "delimited",
    }
}

properties! {
    /// How an output node frames the body it sends.
    pub struct OutputRecordProps {
        /// `unchanged`, `fixed_length` (padded) or `delimited` (the delimiter appended).
        output_record: OutputRecord = "unchanged",
        /// With `output_record: fixed_length`: the record length.
        output_length_bytes: u64 = "0",
        /// With `output_record: fixed_length`: the padding byte, in hexadecimal (the product's
        /// default is a space, `20`).
        pad_byte_hex: String = "20",
        /// With `output_record: delimited`: `line_end` (writes LF) or `custom`.
        output_delimiter: DelimiterKind = "line_end",
        /// With `output_delimiter: custom`: the delimiter as text.
        output_custom_delimiter: Option<String>,
        /// With `output_delimiter: custom`: the delimiter as hexadecimal bytes.
        output_custom_delimiter_hex: Option<String>,
    }
}

/// The output record definition, checked.
#[derive(Clone, Debug)]
pub enum OutputFraming {
    Unchanged,
    Fixed { len: usize, pad: u8 },
    Delimited(Vec<u8>),
}

impl OutputFraming {
    pub fn from_props(p: &OutputRecordProps) -> Result<OutputFraming, ConfigError> {
        Ok(match p.output_record {
            OutputRecord::Unchanged => OutputFraming::Unchanged,
            OutputRecord::FixedLength => {
                if p.output_length_bytes == 0 {
                    return Err(ConfigError::property(
                        "output_length_bytes",
                        "`output_record: fixed_length` needs `output_length_bytes` of at least 1",
                    ));
                }
                let pad = match parse_hex(&p.pad_byte_hex).as_deref() {
                    Some([b]) => *b,
                    _ => {
                        return Err(ConfigError::property(
                            "pad_byte_hex",
                            format!("`{}` is not one byte in hexadecimal", p.pad_byte_hex),
                        ));
                    }
                };
                OutputFraming::Fixed {
                    len: to_usize("output_length_bytes", p.output_length_bytes)?,
                    pad,
                }
            }
            OutputRecord::Delimited => {
                let d = delimiter_bytes(
                    p.output_delimiter,
                    p.output_custom_delimiter.as_deref(),
                    p.output_custom_delimiter_hex.as_deref(),
                )
                .map_err(|mut e| {
                    e.property = e.property.map(|n| format!("output_{n}"));
                    e
                })?;
                OutputFraming::Delimited(d.unwrap_or_else(|| b"\n".to_vec()))
            }
        })
    }

    /// `body` framed as a record.
    pub fn frame(&self, body: Bytes) -> Result<Bytes, TcpipError> {
        match self {
            OutputFraming::Unchanged => Ok(body),
            OutputFraming::Fixed { len, .. } if body.len() == *len => Ok(body),
            OutputFraming::Fixed { len, .. } if body.len() > *len => {
                Err(TcpipError::OutputTooLong {
                    len: body.len(),
                    max: *len,
                })
            }
            OutputFraming::Fixed { len, pad } => {
                let mut out = BytesMut::with_capacity(*len);
                out.extend_from_slice(&body);
                out.resize(*len, *pad);
                Ok(out.freeze())
            }
            OutputFraming::Delimited(d) => {
                let mut out = BytesMut::with_capacity(body.len() + d.len());
                out.extend_from_slice(&body);
                out.extend_from_slice(d);
                Ok(out.freeze())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(f: &Framing, input: &[u8]) -> (Vec<Vec<u8>>, Option<TcpipError>) {
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match f.next_record(&mut buf, false) {
                Ok(Some(r)) => out.push(r.to_vec()),
                Ok(None) => break,
                Err(e) => return (out, Some(e)),
            }
        }
        loop {
            match f.next_record(&mut buf, true) {
                Ok(Some(r)) => out.push(r.to_vec()),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    fn delimited(d: Option<&[u8]>, infix: bool) -> Framing {
        Framing::Delimited {
            delimiter: d.map(<[u8]>::to_vec),
            infix,
            max: 100,
        }
    }

    #[test]
    fn fixed_length_cuts_records_and_reports_the_rest_when_the_stream_ends_inside_one() {
        let (recs, err) = all(&Framing::Fixed(3), b"abcdefgh");
        assert_eq!(recs, [b"abc".to_vec(), b"def".to_vec()]);
        match err {
            Some(TcpipError::Incomplete { got, partial, .. }) => {
                assert_eq!(got, 2);
                assert_eq!(&partial[..], b"gh");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn line_ends_end_records_when_dos_and_unix_are_mixed() {
        let (recs, err) = all(&delimited(None, false), b"one\r\ntwo\nthree\n");
        assert_eq!(recs, [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]);
        assert!(err.is_none());
    }

    #[test]
    fn infix_delimiter_makes_the_tail_the_last_record_when_the_stream_ends() {
        let (recs, err) = all(&delimited(Some(b"||"), true), b"a||b||c");
        assert_eq!(recs, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        assert!(err.is_none());
    }

    #[test]
    fn postfix_delimiter_reports_an_incomplete_record_when_the_tail_has_none() {
        let (recs, err) = all(&delimited(Some(b"|"), false), b"a|b");
        assert_eq!(recs, [b"a".to_vec()]);
        assert!(matches!(err, Some(TcpipError::Incomplete { got: 1, .. })));
    }

    #[test]
    fn delimited_fails_when_no_delimiter_comes_within_the_maximum() {
        let f = Framing::Delimited {
            delimiter: None,
            infix: false,
            max: 4,
        };
        let (_, err) = all(&f, b"abcdefgh");
        assert!(matches!(
            err,
            Some(TcpipError::RecordTooLong { max: 4, .. })
        ));
    }

    #[test]
    fn length_prefix_formats_give_the_bytes_after_the_prefix() {
        let cases: [(LengthPrefix, &[u8]); 4] = [
            (LengthPrefix::U8, b"\x02hi\x01!"),
            (LengthPrefix::U16Be, b"\x00\x02hi\x00\x01!"),
            (LengthPrefix::U32Be, b"\x00\x00\x00\x02hi\x00\x00\x00\x01!"),
            (LengthPrefix::U32Le, b"\x02\x00\x00\x00hi\x01\x00\x00\x00!"),
        ];
        for (prefix, input) in cases {
            let (recs, err) = all(&Framing::LengthPrefixed { prefix, max: 10 }, input);
            assert_eq!(recs, [b"hi".to_vec(), b"!".to_vec()], "{prefix:?}");
            assert!(err.is_none());
        }
    }

    #[test]
    fn length_prefix_fails_when_the_length_exceeds_the_maximum() {
        let f = Framing::LengthPrefixed {
            prefix: LengthPrefix::U16Be,
            max: 10,
        };
        let (_, err) = all(&f, b"\x01\x00abc");
        assert!(matches!(err, Some(TcpipError::RecordTooLong { .. })));
    }

    #[test]
    fn connection_closed_gives_everything_as_one_record_at_the_end() {
        let f = Framing::ConnectionClosed { max: 100 };
        let mut buf = BytesMut::from(&b"all of it"[..]);
        assert!(f.next_record(&mut buf, false).unwrap().is_none());
        assert_eq!(
            &f.next_record(&mut buf, true).unwrap().unwrap()[..],
            b"all of it"
        );
        assert!(f.next_record(&mut buf, true).unwrap().is_none());
    }

    #[test]
    fn parsed_sequence_waits_for_the_rest_of_a_record_and_fails_on_a_malformed_one() {
        let f = Framing::Parsed {
            scanner: RecordScanner::Xml,
            max: 100,
        };
        let mut buf = BytesMut::from(&b" <a><b/>"[..]);
        assert!(f.next_record(&mut buf, false).unwrap().is_none());
        buf.extend_from_slice(b"</a>\n<c>");
        assert_eq!(
            &f.next_record(&mut buf, false).unwrap().unwrap()[..],
            b"<a><b/></a>"
        );
        assert!(f.next_record(&mut buf, false).unwrap().is_none());
        assert!(matches!(
            f.next_record(&mut buf, true),
            Err(TcpipError::Incomplete { got: 3, .. })
        ));
        let (recs, err) = all(&f, b"<a/><a></b>");
        assert_eq!(recs, [b"<a/>".to_vec()]);
        assert!(matches!(err, Some(TcpipError::Malformed { .. })));
    }

    #[test]
    fn parsed_sequence_fails_when_a_record_exceeds_the_maximum() {
        let f = Framing::Parsed {
            scanner: RecordScanner::Json,
            max: 4,
        };
        let (_, err) = all(&f, b"[1,2,3]");
        assert!(matches!(err, Some(TcpipError::RecordTooLong { .. })));
    }

    #[test]
    fn custom_delimiter_is_read_from_hex_when_given_so() {
        let d = delimiter_bytes(DelimiterKind::Custom, None, Some("0D0a")).unwrap();
        assert_eq!(d, Some(b"\r\n".to_vec()));
        assert!(delimiter_bytes(DelimiterKind::Custom, None, Some("0D0")).is_err());
        assert!(delimiter_bytes(DelimiterKind::Custom, None, None).is_err());
        assert!(delimiter_bytes(DelimiterKind::LineEnd, Some("x"), None).is_err());
    }

    #[test]
    fn output_fixed_length_pads_and_refuses_a_longer_body() {
        let f = OutputFraming::Fixed { len: 5, pad: b'.' };
        assert_eq!(&f.frame(Bytes::from_static(b"ab")).unwrap()[..], b"ab...");
        assert!(matches!(
            f.frame(Bytes::from_static(b"abcdef")),
            Err(TcpipError::OutputTooLong { len: 6, max: 5 })
        ));
        let d = OutputFraming::Delimited(b"\r\n".to_vec());
        assert_eq!(&d.frame(Bytes::from_static(b"x")).unwrap()[..], b"x\r\n");
    }
}
