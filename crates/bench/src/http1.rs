//! Just enough of HTTP/1.1's wire format for a cheap client and echo server:
//! a reusable read buffer, header-block parsing, and body framing by
//! Content-Length or chunked encoding. Nothing here allocates per message.

use std::io::{ErrorKind, Read};

use crate::error::BenchError;

/// The largest header block accepted (the buffer must hold it whole).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Size of the read buffer; bodies larger than this stream through it.
pub const READ_BUFFER_BYTES: usize = 256 * 1024;

/// What the header block of a request or response says about framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Head {
    /// The status code (responses) or 0 (requests).
    pub status: u16,
    /// Content-Length, when given.
    pub content_length: Option<u64>,
    /// `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// `Connection: close`, or HTTP/1.0 without keep-alive.
    pub close: bool,
}

/// A read buffer kept for the life of a connection.
pub struct ReadBuffer {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Default for ReadBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        ReadBuffer {
            buf: vec![0; READ_BUFFER_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Forgets buffered bytes (after a reconnect).
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Bytes buffered and not yet consumed.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.clear();
        }
    }

    /// Reads more bytes; `Ok(false)` at end of stream.
    fn fill<R: Read>(&mut self, stream: &mut R) -> Result<bool, BenchError> {
        if self.start > 0 && self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            return Err(BenchError::HttpProtocol("header block too large"));
        }
        loop {
            match stream.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(BenchError::io("reading from the connection", e)),
            }
        }
    }

    /// Reads until a whole header block is buffered and parses it; `None`
    /// when the stream ends cleanly before any byte of a new message.
    pub fn read_head<R: Read>(
        &mut self,
        stream: &mut R,
        response: bool,
    ) -> Result<Option<Head>, BenchError> {
        let mut searched = 0;
        loop {
            let data = self.buffered();
            if let Some(end) = find_blank_line(data, searched) {
                let head = parse_head(&data[..end], response)?;
                self.consume(end + 4);
                return Ok(Some(head));
            }
            searched = data.len().saturating_sub(3);
            if data.len() > MAX_HEADER_BYTES {
                return Err(BenchError::HttpProtocol("header block too large"));
            }
            if !self.fill(stream)? {
                return if self.buffered().is_empty() {
                    Ok(None)
                } else {
                    Err(BenchError::ConnectionClosed)
                };
            }
        }
    }

    /// Reads a body of `len` bytes, handing each piece to `sink`.
    pub fn read_exact_body<R: Read>(
        &mut self,
        stream: &mut R,
        len: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BenchError> {
        let mut remaining = len;
        while remaining > 0 {
            if self.buffered().is_empty() && !self.fill(stream)? {
                return Err(BenchError::ConnectionClosed);
            }
            let take = (self.buffered().len() as u64).min(remaining) as usize;
            sink(&self.buffered()[..take]);
            self.consume(take);
            remaining -= take as u64;
        }
        Ok(())
    }

    /// Reads a chunked body (and its trailers); returns its decoded length.
    pub fn read_chunked_body<R: Read>(
        &mut self,
        stream: &mut R,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, BenchError> {
        let mut total = 0u64;
        loop {
            let size = {
                let line = self.read_line(stream)?;
                let hex = line.split(|&b| b == b';').next().unwrap_or(&[]);
                parse_hex(hex).ok_or(BenchError::HttpProtocol("bad chunk size"))?
            };
            if size == 0 {
                // Trailers end with an empty line.
                while !self.read_line(stream)?.is_empty() {}
                return Ok(total);
            }
            self.read_exact_body(stream, size, sink)?;
            total += size;
            if !self.read_line(stream)?.is_empty() {
                return Err(BenchError::HttpProtocol("chunk not followed by CRLF"));
            }
        }
    }

    /// Reads until end of stream (a body framed by closing the connection).
    pub fn read_to_close<R: Read>(
        &mut self,
        stream: &mut R,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, BenchError> {
        let mut total = 0u64;
        loop {
            let data = self.buffered();
            total += data.len() as u64;
            sink(data);
            self.clear();
            if !self.fill(stream)? {
                return Ok(total);
            }
        }
    }

    /// The next CRLF-terminated line, without its CRLF.
    fn read_line<R: Read>(&mut self, stream: &mut R) -> Result<&[u8], BenchError> {
        loop {
            if let Some(at) = self.buffered().windows(2).position(|w| w == b"\r\n") {
                let start = self.start;
                self.consume(at + 2);
                // consume() may reset the indices; the bytes are still in place.
                return Ok(&self.buf[start..start + at]);
            }
            if self.buffered().len() > MAX_HEADER_BYTES {
                return Err(BenchError::HttpProtocol("line too long"));
            }
            if !self.fill(stream)? {
                return Err(BenchError::ConnectionClosed);
            }
        }
    }
}

/// The offset of `\r\n\r\n` in `data`, searching from `from`.
fn find_blank_line(data: &[u8], from: usize) -> Option<usize> {
    data.get(from..)?
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + from)
}

/// Parses a header block (without the blank line).
pub fn parse_head(block: &[u8], response: bool) -> Result<Head, BenchError> {
    let mut lines = block.split(|&b| b == b'\n').map(trim_cr);
    let first = lines
        .next()
        .ok_or(BenchError::HttpProtocol("empty header block"))?;
    let mut head = Head::default();
    let version_10 = if response {
        let mut parts = first.splitn(3, |&b| b == b' ');
        let version = parts.next().unwrap_or(&[]);
        if !version.starts_with(b"HTTP/1.") {
            return Err(BenchError::HttpProtocol("status line is not HTTP/1.x"));
        }
        head.status = parts
            .next()
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse().ok())
            .ok_or(BenchError::HttpProtocol("bad status code"))?;
        version == b"HTTP/1.0"
    } else {
        if first.split(|&b| b == b' ').count() < 3 {
            return Err(BenchError::HttpProtocol("bad request line"));
        }
        first.ends_with(b"HTTP/1.0")
    };
    let mut keep_alive = false;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(BenchError::HttpProtocol("header line without a colon"));
        };
        let name = &line[..colon];
        let value = trim_spaces(&line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let len = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or(BenchError::HttpProtocol("bad Content-Length"))?;
            head.content_length = Some(len);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            head.chunked = contains_token(value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            head.close |= contains_token(value, b"close");
            keep_alive |= contains_token(value, b"keep-alive");
        }
    }
    if version_10 && !keep_alive {
        head.close = true;
    }
    Ok(head)
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim_spaces(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| trim_spaces(t).eq_ignore_ascii_case(token))
}

fn parse_hex(digits: &[u8]) -> Option<u64> {
    let digits = trim_spaces(digits);
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc * 16 + u64::from(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.data.len().min(self.step).min(out.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn read_head_parses_content_length_response_split_across_reads() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
        let mut stream = Trickle { data: raw, step: 3 };
        let mut buf = ReadBuffer::new();
        let head = buf.read_head(&mut stream, true).ok().flatten();
        assert_eq!(
            head,
            Some(Head {
                status: 200,
                content_length: Some(5),
                chunked: false,
                close: false
            })
        );
        let mut body = Vec::new();
        assert!(
            buf.read_exact_body(&mut stream, 5, &mut |b| body.extend_from_slice(b))
                .is_ok()
        );
        assert_eq!(body, b"hello");
    }

    #[test]
    fn read_chunked_body_decodes_chunks_and_trailers() {
        let raw = b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
                    4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nX-Trailer: y\r\n\r\n";
        let mut stream = Trickle { data: raw, step: 7 };
        let mut buf = ReadBuffer::new();
        let head = buf
            .read_head(&mut stream, true)
            .ok()
            .flatten()
            .unwrap_or_default();
        assert_eq!(head.status, 500);
        assert!(head.chunked && head.close);
        let mut body = Vec::new();
        let len = buf.read_chunked_body(&mut stream, &mut |b| body.extend_from_slice(b));
        assert_eq!(len.ok(), Some(9));
        assert_eq!(body, b"Wikipedia");
        assert!(buf.buffered().is_empty());
    }

    #[test]
    fn read_head_rejects_garbage_and_truncation() {
        let mut buf = ReadBuffer::new();
        let mut garbage = Trickle {
            data: b"SSH-2.0-OpenSSH\r\n\r\n",
            step: 100,
        };
        assert!(buf.read_head(&mut garbage, true).is_err());
        let mut buf = ReadBuffer::new();
        let mut cut = Trickle {
            data: b"HTTP/1.1 200 OK\r\nContent-Le",
            step: 100,
        };
        assert!(matches!(
            buf.read_head(&mut cut, true),
            Err(BenchError::ConnectionClosed)
        ));
        let mut buf = ReadBuffer::new();
        let mut empty = Trickle {
            data: b"",
            step: 100,
        };
        assert!(matches!(buf.read_head(&mut empty, true), Ok(None)));
    }

    #[test]
    fn parse_head_reads_requests_and_http10_close() {
        let head = parse_head(b"POST /echo HTTP/1.0\r\nContent-Length: 3", false);
        assert_eq!(head.as_ref().map(|h| h.close).ok(), Some(true));
        assert_eq!(head.map(|h| h.content_length).ok(), Some(Some(3)));
        assert!(parse_head(b"POST /echo HTTP/1.1\r\nContent-Length: x", false).is_err());
    }
}
