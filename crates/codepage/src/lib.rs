//! Code pages by CCSID: bytes ↔ text for ESQL's `CAST … CCSID`, `ASBITSTREAM` and
//! `PARSE`, the parsers, and the MQ nodes. It depends on nothing else of Sluice's.
//!
//! [`CodePage::lookup`] finds a page by its CCSID (and the ENCODING, which chooses the
//! byte order of UTF-16); [`CodePage::decode`] and [`CodePage::encode`] convert, and
//! [`decode`] / [`encode`] do both steps at once. [`body_to_utf8`] and [`body_from_utf8`]
//! convert whole message bodies, renaming an XML declaration's encoding.
//!
//! # Supported CCSIDs
//!
//! | family | CCSIDs |
//! |---|---|
//! | Unicode | 1208, 1209 (UTF-8); 1200, 13488, 17584 (UTF-16, byte order from the ENCODING); 1202 (UTF-16LE) |
//! | EBCDIC | 37, 273, 277, 278, 280, 284, 285, 297, 500, 871, 1047; 1140–1149 (the same with the euro); 870 (Latin-2), 1025 (Cyrillic), 1026 (Turkish) |
//! | ISO-8859 | 819 (-1), 912 (-2), 913 (-3), 914 (-4), 915 (-5), 813 (-7), 916 (-8), 920 (-9), 923 (-15); 367 (US-ASCII) |
//! | Windows | 1250–1258, and IBM's euro-era CCSIDs for them, 5346–5354 |
//! | DOS | 437, 850, 852, 855, 857, 858, 862, 866 |
//! | Japanese | 932, 943 (Shift-JIS, as Windows-31J); 954, 5050, 33722 (EUC-JP) |
//! | Chinese | 1381, 1386 (GBK); 1392, 5488 (GB18030); 950 (Big5) |
//! | Korean | 970 (EUC-KR); 1363 (Windows-949) |
//!
//! [`supported_ccsids`] lists them. Not here: the EBCDIC double-byte and mixed pages (930,
//! 939, 1390, 1399, 935, 1388, 937, 933, 1364), ISO-2022-JP, UTF-32, and the Arabic, Thai
//! and other pages not listed.
//!
//! # Behaviours on purpose
//!
//! **No substitution: a character or byte without a mapping fails the conversion.** The
//! product's integration node converts with ICU and, where a code point of the source has
//! no equivalent in the target, first tries the converter's fallback mappings and otherwise
//! throws a recoverable exception, which the flow can catch or which rolls the message
//! back; only its MRM parser substitutes (IBM Integration Bus / WebSphere Message Broker
//! documentation, "Code page converters"). So [`CodepageError::Unmappable`] (encoding) and
//! [`CodepageError::Invalid`] (decoding) carry the CCSID, the character or bytes, and the
//! offset. The substitution characters of IBM's other converters (SUB: 0x3F in EBCDIC,
//! 0x1A in ASCII-based pages, as Db2 and z/OS "enforced subset" conversions write) are
//! not used, because nothing here has the MRM domain. Fallback mappings are those of the
//! WHATWG encoders of the multi-byte pages (Shift-JIS writes U+00A5 YEN SIGN as 0x5C, for
//! example); the single-byte pages have none.
//!
//! **Every byte of the Windows pages decodes.** A byte that Windows-125x leaves undefined
//! in 0x80–0x9F stands for the C1 control of the same number, as Windows itself and web
//! browsers read it, so any byte string survives a decode and an encode (five bytes of
//! 1252, more of 1253, 1255, 1257). Other undefined bytes (ISO-8859-3, -7 and -8, 857, and
//! 1253, 1255 and 1257 above 0x9F) have no control of their number and fail to decode.
//! The EBCDIC, DOS and other ISO-8859 pages define all 256 bytes.
//!
//! **EBCDIC new line is NEL.** In every EBCDIC page 0x15 is NL (U+0085) and 0x25 is LF
//! (U+000A), as IBM's CDRA tables have it; 1047 too (z/OS UNIX's swapped variant is not
//! used), so a LF written to EBCDIC is 0x25.
//!
//! **UTF-16 byte order** comes from the ENCODING for 1200, 13488 and 17584 (little-endian
//! when its low nibble is 2, as in 546; big-endian otherwise, as in 785); 1202 is always
//! little-endian. Byte-order marks are handled by [`body_to_utf8`] only: [`decode`] keeps a
//! U+FEFF as text.
//!
//! **Multi-byte pages use the WHATWG tables** of `encoding_rs`: 932 and 943 are
//! Windows-31J (0x5C is a backslash, not a yen sign); 1381 and 1386 are GBK. Some read more
//! than they write, as the Encoding Standard has it: Shift-JIS reads its user-defined
//! area (0xF040–0xF9FC) as private-use characters but does not write them; 950 reads
//! Big5-HKSCS but writes only
//! Big5; the EUC-JP pages read JIS X 0212 but write only JIS X 0208; GBK reads GB18030's
//! four-byte sequences but cannot write them; 970 reads Windows-949 but writes only what
//! EUC-KR (KS X 1001) has, while 1363 writes all of Windows-949.
//!
//! **The tables are generated** from Python's codecs by `scripts/gen_codepage_tables.py`
//! (its header says how; CI needs no Python). 1140–1149 are their base pages with the euro
//! sign in place of the currency sign, so 1141 has 273's overline at 0xBC. The DOS pages
//! keep 0x00–0x1F and 0x7F as the ASCII controls.

mod body;
mod error;
mod multi_byte;
mod page;
mod tables;
mod unicode;

pub use crate::body::{body_from_utf8, body_to_utf8};
pub use crate::error::CodepageError;
pub use crate::page::{CodePage, supported_ccsids};

/// The ENCODING value for little-endian integers (Windows, Linux on x86): MQENC_NATIVE there.
pub const ENCODING_LITTLE_ENDIAN: i64 = 546;
/// The ENCODING value for big-endian integers (z/OS, AIX).
pub const ENCODING_BIG_ENDIAN: i64 = 785;

/// The CCSID of text when none is named: UTF-8.
pub const DEFAULT_CCSID: i64 = 1208;

/// `bytes` in CCSID `ccsid` (with ENCODING `encoding` for UTF-16) as text.
pub fn decode(bytes: &[u8], ccsid: i64, encoding: i64) -> Result<String, CodepageError> {
    CodePage::lookup(ccsid, encoding)?.decode(bytes)
}

/// `text` as bytes of CCSID `ccsid` (with ENCODING `encoding` for UTF-16).
pub fn encode(text: &str, ccsid: i64, encoding: i64) -> Result<Vec<u8>, CodepageError> {
    CodePage::lookup(ccsid, encoding)?.encode(text)
}
