//! Record detection: how a file is cut into records, streamed through a bounded buffer.
//!
//! The product's modes: the whole file is one record; records of a fixed length (the last one
//! may be shorter: what is left of the file); records separated by a delimiter — a line end
//! (`\n` or `\r\n`), a DOS (`\r\n`) or Unix (`\n`) line end only, or custom bytes — either
//! *postfix* (every record ends with the delimiter; a file that ends with one has no empty
//! record after it) or *infix* (the delimiter separates records, so a file that ends with one
//! has an empty last record); or a *parsed record sequence*, each record as long as the node's
//! domain parses (see `sluice_nodes_core::record_scan`), whitespace between records skipped and
//! a record cut short by the end of the file a failure. A file is never read whole in the record modes: the buffer holds
//! at most one record plus one read, and a record longer than the limit is an error rather than
//! an unbounded allocation.

use std::io::Read;

use bytes::Bytes;
use sluice_nodes_core::record_scan::{RecordScanner, Scan};

use crate::FileError;

/// The first read's buffer; it grows (doubling) only for a record longer than this.
const CHUNK: usize = 256 * 1024;

/// What ends a delimited record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delimiter {
    /// `\n` or `\r\n`, whichever each line has (the product's "DOS or UNIX line end").
    AnyLineEnd,
    /// These bytes exactly (`\r\n` for DOS, `\n` for Unix, or a custom delimiter).
    Bytes(Bytes),
}

/// How records are found in a file.
#[derive(Clone, Debug)]
pub enum Detection {
    WholeFile,
    FixedLength(usize),
    Delimited { delimiter: Delimiter, infix: bool },
    Parsed(RecordScanner),
}

/// One record of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub bytes: Bytes,
    /// Where it starts in the file.
    pub offset: u64,
    /// The delimiter that ended it (delimited records that had one): a shared handle, so
    /// that a record does not allocate for it.
    pub delimiter: Option<Bytes>,
}

/// Reads records one at a time from a byte stream.
pub struct RecordReader<R> {
    src: R,
    detection: Detection,
    limit: usize,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// The file offset of `buf[start]`.
    offset: u64,
    /// Whether the last record returned ended with a delimiter (an infix file that ends there
    /// has one more, empty, record).
    after_delimiter: bool,
    done: bool,
}

impl<R: Read> RecordReader<R> {
    /// Records from `src`, which is positioned at file offset `offset` (the start of a record;
    /// `after_delimiter` says whether the record before it ended with a delimiter).
    pub fn new(
        src: R,
        detection: Detection,
        limit: usize,
        offset: u64,
        after_delimiter: bool,
    ) -> RecordReader<R> {
        RecordReader {
            src,
            detection,
            limit: limit.max(1),
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            offset,
            after_delimiter,
            done: false,
        }
    }

    /// The file offset where the next record starts (the file's length at the end).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether the last record returned ended with a delimiter.
    pub fn after_delimiter(&self) -> bool {
        self.after_delimiter
    }

    /// The next record, or `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>, FileError> {
        if self.done {
            return Ok(None);
        }
        // Lent out for the call rather than cloned: a clone per record is an allocation.
        let detection = std::mem::replace(&mut self.detection, Detection::WholeFile);
        let r = match &detection {
            Detection::WholeFile => self.whole(),
            Detection::FixedLength(n) => self.fixed(*n),
            Detection::Delimited { delimiter, infix } => self.delimited(delimiter, *infix),
            Detection::Parsed(scanner) => self.parsed(scanner),
        };
        self.detection = detection;
        r
    }

    fn parsed(&mut self, scanner: &RecordScanner) -> Result<Option<Record>, FileError> {
        loop {
            let pending = &self.buf[self.start..self.end];
            match scanner.scan(pending, self.eof) {
                Ok(Scan::Record { start, end }) => {
                    if end - start > self.limit {
                        return Err(self.too_large());
                    }
                    self.skip(start);
                    return Ok(Some(self.take(end - start, 0, None)));
                }
                Ok(Scan::Blank) => {
                    self.skip(pending.len());
                    if self.eof {
                        self.done = true;
                        return Ok(None);
                    }
                }
                Ok(Scan::NeedMore) if self.eof => {
                    self.done = true;
                    let blank = pending
                        .iter()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                    return Err(FileError::Incomplete {
                        offset: self.offset + blank as u64,
                        got: pending.len() - blank,
                        domain: scanner.domain(),
                    });
                }
                Ok(Scan::NeedMore) if pending.len() > self.limit => {
                    return Err(self.too_large());
                }
                Ok(Scan::NeedMore) => {}
                Err(source) => {
                    self.done = true;
                    return Err(FileError::Malformed {
                        offset: self.offset,
                        source,
                    });
                }
            }
            self.fill()?;
        }
    }

    /// Pass over `n` bytes that belong to no record.
    fn skip(&mut self, n: usize) {
        self.start += n;
        self.offset += n as u64;
    }

    fn whole(&mut self) -> Result<Option<Record>, FileError> {
        while !self.eof {
            if self.end - self.start > self.limit {
                return Err(self.too_large());
            }
            self.fill()?;
        }
        if self.end - self.start > self.limit {
            return Err(self.too_large());
        }
        self.done = true;
        // An empty file is one empty record, as the product propagates it.
        Ok(Some(self.take(self.end - self.start, 0, None)))
    }

    fn fixed(&mut self, n: usize) -> Result<Option<Record>, FileError> {
        if n > self.limit {
            return Err(self.too_large());
        }
        while self.end - self.start < n && !self.eof {
            self.fill()?;
        }
        let have = (self.end - self.start).min(n);
        if have == 0 {
            self.done = true;
            return Ok(None);
        }
        Ok(Some(self.take(have, 0, None)))
    }

    fn delimited(&mut self, d: &Delimiter, infix: bool) -> Result<Option<Record>, FileError> {
        let mut scanned = 0;
        loop {
            let hay = &self.buf[self.start + scanned..self.end];
            let found = match d {
                Delimiter::AnyLineEnd => memchr::memchr(b'\n', hay).map(|i| {
                    let at = self.start + scanned + i;
                    if at > self.start && self.buf[at - 1] == b'\r' {
                        (at - 1, 2)
                    } else {
                        (at, 1)
                    }
                }),
                Delimiter::Bytes(b) => {
                    memchr::memmem::find(hay, b).map(|i| (self.start + scanned + i, b.len()))
                }
            };
            if let Some((at, len)) = found {
                let record_len = at - self.start;
                if record_len > self.limit {
                    return Err(self.too_large());
                }
                let delim = match d {
                    Delimiter::AnyLineEnd if len == 2 => Bytes::from_static(b"\r\n"),
                    Delimiter::AnyLineEnd => Bytes::from_static(b"\n"),
                    Delimiter::Bytes(b) => b.clone(),
                };
                self.after_delimiter = true;
                return Ok(Some(self.take(record_len, len, Some(delim))));
            }
            let pending = self.end - self.start;
            if pending > self.limit {
                return Err(self.too_large());
            }
            if self.eof {
                self.done = true;
                if pending > 0 {
                    self.after_delimiter = false;
                    return Ok(Some(self.take(pending, 0, None)));
                }
                if infix && self.after_delimiter {
                    self.after_delimiter = false;
                    return Ok(Some(self.take(0, 0, None)));
                }
                return Ok(None);
            }
            // A delimiter may straddle the end of what was read: search again from just
            // before it.
            let keep = match d {
                Delimiter::AnyLineEnd => 0,
                Delimiter::Bytes(b) => b.len().saturating_sub(1),
            };
            scanned = pending.saturating_sub(keep);
            self.fill()?;
        }
    }

    /// Take `len` bytes as a record and skip `skip` delimiter bytes after them.
    fn take(&mut self, len: usize, skip: usize, delimiter: Option<Bytes>) -> Record {
        let bytes = Bytes::copy_from_slice(&self.buf[self.start..self.start + len]);
        let r = Record {
            bytes,
            offset: self.offset,
            delimiter,
        };
        self.start += len + skip;
        self.offset += (len + skip) as u64;
        r
    }

    fn too_large(&mut self) -> FileError {
        self.done = true;
        FileError::RecordTooLarge {
            offset: self.offset,
            limit: self.limit,
        }
    }

    /// Read more: what is pending moves to the front, and the buffer grows only when a
    /// pending record fills it.
    fn fill(&mut self) -> Result<(), FileError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < CHUNK / 4 {
            let grown = (self.buf.len() * 2).max(CHUNK);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FileError::Read(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8], d: Detection) -> Vec<(String, u64, Option<String>)> {
        let mut r = RecordReader::new(data, d, 1 << 20, 0, false);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            out.push((
                String::from_utf8_lossy(&rec.bytes).into_owned(),
                rec.offset,
                rec.delimiter
                    .map(|d| String::from_utf8_lossy(&d).into_owned()),
            ));
        }
        out
    }

    fn texts(data: &[u8], d: Detection) -> Vec<String> {
        all(data, d).into_iter().map(|r| r.0).collect()
    }

    fn lines(infix: bool) -> Detection {
        Detection::Delimited {
            delimiter: Delimiter::AnyLineEnd,
            infix,
        }
    }

    #[test]
    fn any_line_end_splits_dos_and_unix_lines_when_mixed() {
        let got = all(b"a\r\nbb\nc", lines(false));
        assert_eq!(
            got,
            [
                ("a".into(), 0, Some("\r\n".into())),
                ("bb".into(), 3, Some("\n".into())),
                ("c".into(), 6, None),
            ]
        );
    }

    #[test]
    fn postfix_has_no_empty_record_when_the_file_ends_with_a_delimiter() {
        assert_eq!(texts(b"a\nb\n", lines(false)), ["a", "b"]);
    }

    #[test]
    fn infix_has_an_empty_last_record_when_the_file_ends_with_a_delimiter() {
        assert_eq!(texts(b"a\nb\n", lines(true)), ["a", "b", ""]);
        assert!(texts(b"", lines(true)).is_empty());
    }

    #[test]
    fn custom_delimiter_is_found_when_it_straddles_reads() {
        // Bigger than a chunk, so the delimiter after the long record spans two reads.
        let mut data = vec![b'x'; CHUNK - 2];
        data.extend_from_slice(b"#|#y#|#z");
        let d = Detection::Delimited {
            delimiter: Delimiter::Bytes(Bytes::from_static(b"#|#")),
            infix: false,
        };
        let got = texts(&data, d);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].len(), CHUNK - 2);
        assert_eq!(&got[1..], ["y", "z"]);
    }

    #[test]
    fn fixed_length_gives_a_short_last_record_when_the_file_is_not_a_multiple() {
        assert_eq!(
            texts(b"abcdefg", Detection::FixedLength(3)),
            ["abc", "def", "g"]
        );
    }

    #[test]
    fn whole_file_is_one_empty_record_when_the_file_is_empty() {
        assert_eq!(texts(b"", Detection::WholeFile), [""]);
    }

    #[test]
    fn reader_fails_when_a_record_exceeds_the_limit() {
        let mut r = RecordReader::new(&b"aaaaaaaa\nb"[..], lines(false), 4, 0, false);
        assert!(matches!(
            r.next_record(),
            Err(FileError::RecordTooLarge {
                offset: 0,
                limit: 4
            })
        ));
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn parsed_xml_records_span_reads_and_skip_whitespace_between_them() {
        // Bigger than a chunk, so that the first record spans two reads.
        let long = format!("<a>{}</a>", "x".repeat(CHUNK));
        let data = format!("{long}\n\n <b/><c>\n</c>\n");
        let got = all(data.as_bytes(), Detection::Parsed(RecordScanner::Xml));
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].0, long);
        assert_eq!(
            (got[1].0.as_str(), got[1].1),
            ("<b/>", long.len() as u64 + 3)
        );
        assert_eq!(got[2].0, "<c>\n</c>");
    }

    #[test]
    fn parsed_reader_fails_when_the_file_ends_inside_a_record() {
        let mut r = RecordReader::new(
            &b"{\"a\":1}\n {\"b\":"[..],
            Detection::Parsed(RecordScanner::Json),
            100,
            0,
            false,
        );
        assert_eq!(&r.next_record().unwrap().unwrap().bytes[..], b"{\"a\":1}");
        assert!(matches!(
            r.next_record(),
            Err(FileError::Incomplete {
                offset: 9,
                got: 5,
                domain: "JSON"
            })
        ));
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn parsed_reader_fails_with_the_file_offset_when_a_record_is_malformed() {
        let mut r = RecordReader::new(
            &b"<a/><b></c>"[..],
            Detection::Parsed(RecordScanner::Xml),
            100,
            0,
            false,
        );
        assert!(r.next_record().unwrap().is_some());
        assert!(matches!(
            r.next_record(),
            Err(FileError::Malformed { offset: 4, .. })
        ));
    }

    #[test]
    fn reader_resumes_numbering_offsets_when_started_mid_file() {
        let mut r = RecordReader::new(&b"c\nd"[..], lines(true), 100, 4, true);
        let first = r.next_record().unwrap().unwrap();
        assert_eq!(first.offset, 4);
        assert_eq!(r.next_record().unwrap().unwrap().offset, 6);
        assert!(r.next_record().unwrap().is_none());
        assert_eq!(r.offset(), 7);
    }
}
