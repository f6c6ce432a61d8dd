//! The code pages by CCSID, and conversion through one of them.

use std::fmt;

use encoding_rs::Encoding;

use crate::tables::{self, SingleByteTable};
use crate::{CodepageError, multi_byte, unicode};

/// How a page converts.
#[derive(Clone, Copy)]
enum Converter {
    Utf8,
    /// UTF-16 whose byte order the ENCODING chooses (1200, 13488, 17584).
    Utf16,
    /// UTF-16 little-endian whatever the ENCODING (1202).
    Utf16Le,
    Latin1,
    Ascii,
    Table(&'static SingleByteTable),
    Multi(&'static Encoding),
}

struct Entry {
    ccsid: u16,
    /// The name an XML declaration gives the page (IANA's where it has one).
    name: &'static str,
    converter: Converter,
}

const fn page(ccsid: u16, name: &'static str, converter: Converter) -> Entry {
    Entry {
        ccsid,
        name,
        converter,
    }
}

const fn table(ccsid: u16, name: &'static str, t: &'static SingleByteTable) -> Entry {
    page(ccsid, name, Converter::Table(t))
}

use Converter::{Ascii, Latin1, Multi, Utf8, Utf16, Utf16Le};
use encoding_rs::{BIG5_INIT, EUC_JP_INIT, EUC_KR_INIT, GB18030_INIT, GBK_INIT, SHIFT_JIS_INIT};

/// Every page, sorted by CCSID (a test checks the order).
static REGISTRY: &[Entry] = &[
    table(37, "IBM037", &tables::CCSID_37),
    table(273, "IBM273", &tables::CCSID_273),
    table(277, "IBM277", &tables::CCSID_277),
    table(278, "IBM278", &tables::CCSID_278),
    table(280, "IBM280", &tables::CCSID_280),
    table(284, "IBM284", &tables::CCSID_284),
    table(285, "IBM285", &tables::CCSID_285),
    table(297, "IBM297", &tables::CCSID_297),
    page(367, "US-ASCII", Ascii),
    table(437, "IBM437", &tables::CCSID_437),
    table(500, "IBM500", &tables::CCSID_500),
    table(813, "ISO-8859-7", &tables::CCSID_813),
    page(819, "ISO-8859-1", Latin1),
    table(850, "IBM850", &tables::CCSID_850),
    table(852, "IBM852", &tables::CCSID_852),
    table(855, "IBM855", &tables::CCSID_855),
    table(857, "IBM857", &tables::CCSID_857),
    table(858, "IBM00858", &tables::CCSID_858),
    table(862, "IBM862", &tables::CCSID_862),
    table(866, "IBM866", &tables::CCSID_866),
    table(870, "IBM870", &tables::CCSID_870),
    table(871, "IBM871", &tables::CCSID_871),
    table(912, "ISO-8859-2", &tables::CCSID_912),
    table(913, "ISO-8859-3", &tables::CCSID_913),
    table(914, "ISO-8859-4", &tables::CCSID_914),
    table(915, "ISO-8859-5", &tables::CCSID_915),
    table(916, "ISO-8859-8", &tables::CCSID_916),
    table(920, "ISO-8859-9", &tables::CCSID_920),
    table(923, "ISO-8859-15", &tables::CCSID_923),
    page(932, "Shift_JIS", Multi(&SHIFT_JIS_INIT)),
    page(943, "Shift_JIS", Multi(&SHIFT_JIS_INIT)),
    page(950, "Big5", Multi(&BIG5_INIT)),
    page(954, "EUC-JP", Multi(&EUC_JP_INIT)),
    page(970, "EUC-KR", Multi(&EUC_KR_INIT)),
    table(1025, "IBM1025", &tables::CCSID_1025),
    table(1026, "IBM1026", &tables::CCSID_1026),
    table(1047, "IBM1047", &tables::CCSID_1047),
    table(1140, "IBM01140", &tables::CCSID_1140),
    table(1141, "IBM01141", &tables::CCSID_1141),
    table(1142, "IBM01142", &tables::CCSID_1142),
    table(1143, "IBM01143", &tables::CCSID_1143),
    table(1144, "IBM01144", &tables::CCSID_1144),
    table(1145, "IBM01145", &tables::CCSID_1145),
    table(1146, "IBM01146", &tables::CCSID_1146),
    table(1147, "IBM01147", &tables::CCSID_1147),
    table(1148, "IBM01148", &tables::CCSID_1148),
    table(1149, "IBM01149", &tables::CCSID_1149),
    page(1200, "UTF-16", Utf16),
    page(1202, "UTF-16LE", Utf16Le),
    page(1208, "UTF-8", Utf8),
    page(1209, "UTF-8", Utf8),
    table(1250, "windows-1250", &tables::CCSID_1250),
    table(1251, "windows-1251", &tables::CCSID_1251),
    table(1252, "windows-1252", &tables::CCSID_1252),
    table(1253, "windows-1253", &tables::CCSID_1253),
    table(1254, "windows-1254", &tables::CCSID_1254),
    table(1255, "windows-1255", &tables::CCSID_1255),
    table(1256, "windows-1256", &tables::CCSID_1256),
    table(1257, "windows-1257", &tables::CCSID_1257),
    table(1258, "windows-1258", &tables::CCSID_1258),
    page(1363, "windows-949", Multi(&EUC_KR_INIT)),
    page(1381, "GBK", Multi(&GBK_INIT)),
    page(1386, "GBK", Multi(&GBK_INIT)),
    page(1392, "GB18030", Multi(&GB18030_INIT)),
    page(5050, "EUC-JP", Multi(&EUC_JP_INIT)),
    // 5346–5354 are IBM's CCSIDs for the Windows pages as they are today, with the euro
    // sign; the tables of 1250–1258 already have it.
    table(5346, "windows-1250", &tables::CCSID_1250),
    table(5347, "windows-1251", &tables::CCSID_1251),
    table(5348, "windows-1252", &tables::CCSID_1252),
    table(5349, "windows-1253", &tables::CCSID_1253),
    table(5350, "windows-1254", &tables::CCSID_1254),
    table(5351, "windows-1255", &tables::CCSID_1255),
    table(5352, "windows-1256", &tables::CCSID_1256),
    table(5353, "windows-1257", &tables::CCSID_1257),
    table(5354, "windows-1258", &tables::CCSID_1258),
    page(5488, "GB18030", Multi(&GB18030_INIT)),
    page(13488, "UTF-16", Utf16),
    page(17584, "UTF-16", Utf16),
    page(33722, "EUC-JP", Multi(&EUC_JP_INIT)),
];

/// Every CCSID [`CodePage::lookup`] accepts, in ascending order.
pub fn supported_ccsids() -> impl Iterator<Item = u16> {
    REGISTRY.iter().map(|e| e.ccsid)
}

/// Whether an ENCODING value asks for little-endian integers: its low nibble is 2
/// (MQENC_INTEGER_REVERSED), as in 546 (x86) and 273; 785 (z/OS, AIX) has 1.
fn little_endian(encoding: i64) -> bool {
    encoding & 0x0F == 2
}

/// A code page found by its CCSID, ready to convert.
#[derive(Clone, Copy)]
pub struct CodePage {
    ccsid: u16,
    name: &'static str,
    converter: Converter,
    /// Byte order of the UTF-16 pages; unused by the others.
    little_endian: bool,
}

impl fmt::Debug for CodePage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodePage")
            .field("ccsid", &self.ccsid)
            .field("name", &self.name)
            .finish()
    }
}

impl CodePage {
    /// The page of `ccsid`. `encoding` (an MQ or ESQL ENCODING: 546 little-endian, 785
    /// big-endian) only matters for UTF-16 CCSIDs 1200, 13488 and 17584, whose byte order it
    /// chooses; 1202 is always little-endian.
    pub fn lookup(ccsid: i64, encoding: i64) -> Result<CodePage, CodepageError> {
        let unknown = CodepageError::UnknownCcsid { ccsid };
        let key = u16::try_from(ccsid).map_err(|_| unknown.clone())?;
        let entry = REGISTRY
            .binary_search_by_key(&key, |e| e.ccsid)
            .ok()
            .and_then(|i| REGISTRY.get(i))
            .ok_or(unknown)?;
        Ok(CodePage {
            ccsid: entry.ccsid,
            name: entry.name,
            converter: entry.converter,
            little_endian: match entry.converter {
                Utf16Le => true,
                Utf16 => little_endian(encoding),
                _ => false,
            },
        })
    }

    /// The page with its UTF-16 byte order set by a byte-order mark, which wins over the
    /// CCSID's and the ENCODING's. Other pages are unchanged.
    pub(crate) fn with_byte_order(mut self, little_endian: bool) -> CodePage {
        if matches!(self.converter, Utf16 | Utf16Le) {
            self.little_endian = little_endian;
        }
        self
    }

    /// The CCSID.
    pub fn ccsid(&self) -> u16 {
        self.ccsid
    }

    /// The name an XML declaration's `encoding` gives this page (IANA's where it has one).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the page is UTF-8, so that text is already in it.
    pub fn is_utf8(&self) -> bool {
        matches!(self.converter, Utf8)
    }

    /// `bytes` in this page as text.
    pub fn decode(&self, bytes: &[u8]) -> Result<String, CodepageError> {
        let mut out = String::new();
        self.decode_into(bytes, &mut out)?;
        Ok(out)
    }

    /// Like [`CodePage::decode`], taking the bytes: valid UTF-8 becomes the `String`
    /// without a copy.
    pub fn decode_vec(&self, bytes: Vec<u8>) -> Result<String, CodepageError> {
        match self.converter {
            Utf8 => unicode::decode_utf8_vec(self.ccsid, bytes),
            _ => self.decode(&bytes),
        }
    }

    /// Appends `bytes`, decoded, to `out`; on error `out` is left as it was.
    pub fn decode_into(&self, bytes: &[u8], out: &mut String) -> Result<(), CodepageError> {
        let start = out.len();
        let result = match self.converter {
            Utf8 => unicode::decode_utf8_into(self.ccsid, bytes, out),
            Utf16 | Utf16Le => {
                unicode::decode_utf16_into(self.ccsid, self.little_endian, bytes, out)
            }
            Latin1 => {
                unicode::decode_latin1_into(bytes, out);
                Ok(())
            }
            Ascii => unicode::decode_ascii_into(self.ccsid, bytes, out),
            Converter::Table(t) => t.decode_into(bytes, out),
            Multi(encoding) => multi_byte::decode_into(self.ccsid, encoding, bytes, out),
        };
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    /// `text` as bytes of this page.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>, CodepageError> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// Appends `text`, encoded, to `out`; on error `out` is left as it was.
    pub fn encode_into(&self, text: &str, out: &mut Vec<u8>) -> Result<(), CodepageError> {
        let start = out.len();
        let result = match self.converter {
            Utf8 => {
                out.extend_from_slice(text.as_bytes());
                Ok(())
            }
            Utf16 | Utf16Le => {
                unicode::encode_utf16_into(self.little_endian, text, out);
                Ok(())
            }
            Latin1 => unicode::encode_latin1_into(self.ccsid, text, out),
            Ascii => unicode::encode_ascii_into(self.ccsid, text, out),
            Converter::Table(t) => t.encode_into(text, out),
            Multi(encoding) => multi_byte::encode_into(self.ccsid, encoding, text, out),
        };
        if result.is_err() {
            out.truncate(start);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_sorted_without_duplicates() {
        for pair in REGISTRY.windows(2) {
            assert!(
                pair[0].ccsid < pair[1].ccsid,
                "{} then {}",
                pair[0].ccsid,
                pair[1].ccsid
            );
        }
    }

    #[test]
    fn table_entries_name_their_own_ccsid() {
        for e in REGISTRY {
            if let Converter::Table(t) = e.converter {
                // The Windows aliases 5346–5354 share the 125x tables.
                let expected = if (5346..=5354).contains(&e.ccsid) {
                    e.ccsid - 5346 + 1250
                } else {
                    e.ccsid
                };
                assert_eq!(t.ccsid, expected, "entry {}", e.ccsid);
            }
        }
    }

    #[test]
    fn lookup_rejects_unknown_and_out_of_range_ccsids() {
        for ccsid in [0, -1, 4242, 65536, i64::MAX] {
            assert_eq!(
                CodePage::lookup(ccsid, 546).map(|p| p.ccsid()).unwrap_err(),
                CodepageError::UnknownCcsid { ccsid }
            );
        }
    }

    #[test]
    fn lookup_accepts_exactly_the_supported_ccsids() {
        let supported: Vec<u16> = supported_ccsids().collect();
        for ccsid in 0..=u16::MAX {
            assert_eq!(
                CodePage::lookup(i64::from(ccsid), 546).is_ok(),
                supported.binary_search(&ccsid).is_ok(),
                "CCSID {ccsid}"
            );
        }
    }

    #[test]
    fn encoding_chooses_the_utf16_byte_order_except_for_1202() {
        let be = CodePage::lookup(1200, 785).expect("1200");
        let le = CodePage::lookup(1200, 546).expect("1200");
        let always_le = CodePage::lookup(1202, 785).expect("1202");
        assert_eq!(be.encode("A").expect("A"), [0x00, 0x41]);
        assert_eq!(le.encode("A").expect("A"), [0x41, 0x00]);
        assert_eq!(always_le.encode("A").expect("A"), [0x41, 0x00]);
        assert_eq!(
            CodePage::lookup(13488, 785)
                .expect("13488")
                .encode("A")
                .expect("A"),
            [0x00, 0x41]
        );
    }

    #[test]
    fn failed_conversion_leaves_the_output_as_it_was() {
        let page = CodePage::lookup(37, 785).expect("37");
        let mut bytes = vec![0xC1];
        assert!(page.encode_into("AB€", &mut bytes).is_err());
        assert_eq!(bytes, [0xC1]);
        let ascii = CodePage::lookup(367, 546).expect("367");
        let mut text = String::from("x");
        assert!(ascii.decode_into(b"ab\xFF", &mut text).is_err());
        assert_eq!(text, "x");
    }

    #[test]
    fn decode_vec_takes_valid_utf8_without_a_copy() {
        let page = CodePage::lookup(1208, 546).expect("1208");
        let bytes = "Grüße".as_bytes().to_vec();
        let at = bytes.as_ptr();
        let text = page.decode_vec(bytes).expect("valid");
        assert_eq!(text.as_ptr(), at);
        assert!(page.decode_vec(vec![0xC3]).is_err());
    }
}
