//! The OPTIONS, CCSID and ENCODING clauses of ASBITSTREAM and CREATE … PARSE.
//!
//! Domain parsers and serialisers work in UTF-8. PARSE transcodes the bytes from the CCSID
//! asked for to UTF-8 before the parser sees them; ASBITSTREAM transcodes what the serialiser
//! wrote to the CCSID asked for. Both go through `sluice_codepage`, as CAST … CCSID and the
//! MQ nodes do. ENCODING only changes binary numbers, which the XMLNSC,
//! JSON and BLOB domains do not have: it is accepted and has no effect there.

use bytes::Bytes;
use sluice_esql_scalar::Value;

use super::{Exec, Frame, R, RtError};
use crate::runtime::convert;
use crate::runtime::ir::{BitstreamIr, Ex};

/// The option bits, as the compiler defines the product's constants.
const FOLDER_BIT_STREAM: i64 = 1;
const EMBEDDED_BIT_STREAM: i64 = 2;
const PARSE_COMPLETE: i64 = 0x40;
const PARSE_IMMEDIATE: i64 = 0x80;

/// The clauses of one ASBITSTREAM or PARSE, evaluated.
#[derive(Debug, Clone, Default)]
pub(crate) struct BitstreamOptions {
    /// The CCSID asked for (`None`: UTF-8, as the serialisers write and parsers read).
    pub ccsid: Option<i64>,
    pub options: i64,
    /// The SET and TYPE clauses as text (empty when absent or NULL): the model and message
    /// type of a DFDL PARSE.
    pub set: String,
    pub ty: String,
}

impl BitstreamOptions {
    /// FolderBitStream or EmbeddedBitStream: the folder's subtree only, no document around it.
    pub fn folder(&self) -> bool {
        self.options & (FOLDER_BIT_STREAM | EMBEDDED_BIT_STREAM) != 0
    }

    /// ParseComplete or ParseImmediate: parse everything at once so that errors surface here.
    pub fn parse_now(&self) -> bool {
        self.options & (PARSE_COMPLETE | PARSE_IMMEDIATE) != 0
    }
}

fn ccsid_error(e: sluice_codepage::CodepageError, what: &str) -> RtError {
    let mut r = RtError::from(sluice_esql_scalar::ScalarError::from(e));
    r.exception.text = format!("{what}: {}", r.exception.text);
    r
}

/// Bytes of `ccsid` as UTF-8 for a parser (see [`sluice_codepage::body_to_utf8`]: a UTF-16
/// byte-order mark picks the byte order, and an XML declaration is made to say UTF-8).
pub(crate) fn to_utf8(bytes: Bytes, ccsid: i64, xml: bool) -> R<Bytes> {
    sluice_codepage::body_to_utf8(bytes, ccsid, xml)
        .map_err(|e| ccsid_error(e, &format!("PARSE with CCSID {ccsid}")))
}

/// UTF-8 from a serialiser as bytes of `ccsid` (an XML declaration names the new encoding).
pub(crate) fn from_utf8(bytes: Bytes, ccsid: i64, xml: bool) -> R<Bytes> {
    sluice_codepage::body_from_utf8(bytes, ccsid, xml)
        .map_err(|e| ccsid_error(e, &format!("ASBITSTREAM with CCSID {ccsid}")))
}

impl Exec<'_> {
    fn int_clause(&mut self, frame: &mut Frame, e: Option<&Ex>, what: &str) -> R<Option<i64>> {
        let Some(e) = e else { return Ok(None) };
        match self.scalar(frame, e)? {
            Value::Null => Ok(None),
            Value::Integer(i) => Ok(Some(i)),
            other => {
                match sluice_esql_scalar::cast(&other, sluice_esql_scalar::DataType::Integer) {
                    Ok(Value::Integer(i)) => Ok(Some(i)),
                    _ => Err(RtError::general(format!(
                        "{what} must be an INTEGER, not {}",
                        convert::text(&other)
                    ))),
                }
            }
        }
    }

    /// Evaluate the clauses. ENCODING, SET, TYPE and FORMAT are evaluated (their errors
    /// count) but change nothing in the domains this runtime has.
    pub(crate) fn bitstream_options(
        &mut self,
        frame: &mut Frame,
        o: &BitstreamIr,
    ) -> R<BitstreamOptions> {
        let options = self
            .int_clause(frame, o.options.as_ref(), "OPTIONS")?
            .unwrap_or(0);
        let ccsid = self.int_clause(frame, o.ccsid.as_ref(), "CCSID")?;
        self.int_clause(frame, o.encoding.as_ref(), "ENCODING")?;
        let mut text = |e: Option<&Ex>| -> R<String> {
            Ok(match e {
                Some(e) => match self.scalar(frame, e)? {
                    Value::Character(s) => s.to_string(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                },
                None => String::new(),
            })
        };
        let set = text(o.set.as_ref())?;
        let ty = text(o.ty.as_ref())?;
        text(o.format.as_ref())?;
        Ok(BitstreamOptions {
            ccsid,
            options,
            set,
            ty,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_parse_input_reads_as_utf8() {
        let le: Vec<u8> = "<a>é</a>"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let got = to_utf8(Bytes::from(le), 1202, true).expect("transcodes");
        assert_eq!(&got[..], "<a>é</a>".as_bytes());
    }

    #[test]
    fn unknown_ccsid_is_an_error_naming_the_statement() {
        let e = to_utf8(Bytes::from_static(b"x"), 4242, false).expect_err("unknown");
        assert_eq!(
            e.exception.text,
            "PARSE with CCSID 4242: Code page 4242 is not supported"
        );
        let e = from_utf8(Bytes::from_static(b"x"), 4242, false).expect_err("unknown");
        assert!(e.exception.text.contains("4242"), "{}", e.exception.text);
    }

    #[test]
    fn unmappable_character_is_a_conversion_exception() {
        let e = from_utf8(Bytes::from("<a>€</a>"), 819, true).expect_err("no euro in 819");
        assert_eq!(e.exception.kind, sluice_node_api::ExceptionKind::Conversion);
        assert!(
            e.exception
                .text
                .starts_with("ASBITSTREAM with CCSID 819: the character '€'"),
            "{}",
            e.exception.text
        );
    }
}
