//! Content-Transfer-Encoding (RFC 2045 section 6): base64 and quoted-printable, both ways.
//! `7bit`, `8bit` and `binary` (and an absent header) leave the bytes as they are.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::Error;

/// A transfer encoding the domain decodes on parse and applies on write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// 7bit, 8bit, binary, absent or unknown: the bytes are the content.
    Identity,
    Base64,
    QuotedPrintable,
}

impl Encoding {
    /// From a Content-Transfer-Encoding value.
    pub fn from_header(value: Option<&str>) -> Encoding {
        match value.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("base64") => Encoding::Base64,
            Some(v) if v.eq_ignore_ascii_case("quoted-printable") => Encoding::QuotedPrintable,
            _ => Encoding::Identity,
        }
    }
}

/// Undo the encoding of `data`, which starts at byte `offset` of the message (for errors).
pub fn decode(enc: Encoding, data: &[u8], offset: usize) -> Result<Vec<u8>, Error> {
    match enc {
        Encoding::Identity => Ok(data.to_vec()),
        Encoding::Base64 => {
            // Line breaks (every 76 characters) and other white space are not part of the data.
            let clean: Vec<u8> = data
                .iter()
                .copied()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            STANDARD.decode(&clean).map_err(|e| {
                Error::malformed(offset, format!("the base64 part body does not decode: {e}"))
            })
        }
        Encoding::QuotedPrintable => qp_decode(data, offset),
    }
}

/// Apply the encoding to `data`, appending to `out`.
pub fn encode(enc: Encoding, data: &[u8], out: &mut Vec<u8>) {
    match enc {
        Encoding::Identity => out.extend_from_slice(data),
        Encoding::Base64 => {
            let text = STANDARD.encode(data);
            for (i, line) in text.as_bytes().chunks(76).enumerate() {
                if i > 0 {
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(line);
            }
        }
        Encoding::QuotedPrintable => qp_encode(data, out),
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

fn qp_decode(data: &[u8], offset: usize) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b != b'=' {
            out.push(b);
            i += 1;
            continue;
        }
        let rest = &data[i + 1..];
        // A soft line break: `=` then optional trailing white space, then the line end.
        let ws = rest
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let after = &rest[ws..];
        if after.starts_with(b"\r\n") {
            i += 1 + ws + 2;
        } else if after.starts_with(b"\n") {
            i += 1 + ws + 1;
        } else if after.is_empty() {
            i = data.len();
        } else if let (Some(h), Some(l)) = (
            rest.first().copied().and_then(hex),
            rest.get(1).copied().and_then(hex),
        ) {
            out.push(h << 4 | l);
            i += 3;
        } else {
            return Err(Error::malformed(
                offset + i,
                "a quoted-printable '=' not followed by two hex digits or a line end",
            ));
        }
    }
    Ok(out)
}

fn qp_encode(data: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut col = 0;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let crlf = |j: usize| data.get(j) == Some(&b'\r') && data.get(j + 1) == Some(&b'\n');
        i += 1;
        let next_is_break = i == data.len() || crlf(i);
        // CRLF line breaks of the text stay line breaks; a space or tab before one is escaped
        // so that transports that strip trailing white space do not change the content. A lone
        // CR or LF is binary data and escaped.
        let literal = match b {
            b'\r' if data.get(i) == Some(&b'\n') => {
                out.extend_from_slice(b"\r\n");
                i += 1;
                col = 0;
                continue;
            }
            b' ' | b'\t' => !next_is_break,
            b'=' => false,
            33..=126 => true,
            _ => false,
        };
        let width = if literal { 1 } else { 3 };
        if col + width > 75 {
            out.extend_from_slice(b"=\r\n");
            col = 0;
        }
        if literal {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'=', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
        col += width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_across_line_breaks() {
        let d = decode(Encoding::Base64, b"aGVs\r\nbG8=\r\n", 0).ok();
        assert_eq!(d.as_deref(), Some(&b"hello"[..]));
    }

    #[test]
    fn base64_fails_with_offset_when_invalid() {
        let e = decode(Encoding::Base64, b"@@@", 17).err();
        assert_eq!(e.map(|e| e.offset()), Some(17));
    }

    #[test]
    fn base64_encode_wraps_lines_at_76() {
        let mut out = Vec::new();
        encode(Encoding::Base64, &[7u8; 100], &mut out);
        let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        assert_eq!(lines[0].len(), 77);
        assert_eq!(decode(Encoding::Base64, &out, 0).ok(), Some(vec![7u8; 100]));
    }

    #[test]
    fn quoted_printable_decodes_escapes_and_soft_breaks() {
        let d = decode(Encoding::QuotedPrintable, b"caf=C3=A9 =\r\nau lait", 0).ok();
        assert_eq!(d.as_deref(), Some("café au lait".as_bytes()));
    }

    #[test]
    fn quoted_printable_fails_with_offset_when_escape_bad() {
        let e = decode(Encoding::QuotedPrintable, b"ab=ZZ", 10).err();
        assert_eq!(e.map(|e| e.offset()), Some(12));
    }

    #[test]
    fn quoted_printable_round_trips_long_binary_lines() {
        let data: Vec<u8> = (0..=255u8).cycle().take(700).collect();
        let mut out = Vec::new();
        encode(Encoding::QuotedPrintable, &data, &mut out);
        assert!(out.split(|&b| b == b'\n').all(|l| l.len() <= 77));
        assert_eq!(decode(Encoding::QuotedPrintable, &out, 0).ok(), Some(data));
    }
}
