//! The TCP/IP transport: one connection per requester to the server's TCP/IP port, each
//! request a fixed-length record (the test message padded with spaces or cut to the record
//! length, as a TCPIPServerInput with fixed-length record detection expects), each reply the
//! record echoed back; or, for parsed record sequence, each request the XML message as it is
//! and each reply its top-level element echoed back with a line end after it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;
use crate::suite::TcpipRecords;

/// Makes a [`TcpipClient`] per requester.
pub struct TcpipFactory {
    addr: String,
    records: TcpipRecords,
    record_bytes: usize,
}

impl TcpipFactory {
    pub fn new(
        host: &str,
        port: u16,
        records: TcpipRecords,
        record_bytes: usize,
    ) -> Result<TcpipFactory, BenchError> {
        if records == TcpipRecords::Fixed && record_bytes == 0 {
            return Err(BenchError::InvalidSetting(
                "tcpip transport: record_bytes must be at least 1".into(),
            ));
        }
        Ok(TcpipFactory {
            addr: format!("{host}:{port}"),
            records,
            record_bytes,
        })
    }
}

impl TransportFactory for TcpipFactory {
    fn create(&self, _requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        let stream = TcpStream::connect(&self.addr)
            .map_err(|e| BenchError::io(format!("connecting to {}", self.addr), e))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| BenchError::io("setting a read timeout", e))?;
        if self.records == TcpipRecords::Xml {
            return Ok(Box::new(XmlRecordClient {
                stream,
                reply: Vec::new(),
            }));
        }
        Ok(Box::new(TcpipClient {
            stream,
            record: vec![b' '; self.record_bytes],
            reply: vec![0; self.record_bytes],
        }))
    }

    fn describe(&self) -> String {
        match self.records {
            TcpipRecords::Fixed => {
                format!("tcpip {} ({}-byte records)", self.addr, self.record_bytes)
            }
            TcpipRecords::Xml => format!("tcpip {} (parsed XML records)", self.addr),
        }
    }
}

/// One requester's connection.
pub struct TcpipClient {
    stream: TcpStream,
    /// The record sent: the message, padded or cut.
    record: Vec<u8>,
    reply: Vec<u8>,
}

impl Transport for TcpipClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        let n = msg.len().min(self.record.len());
        self.record[..n].copy_from_slice(&msg[..n]);
        self.record[n..].fill(b' ');
        self.stream
            .write_all(&self.record)
            .map_err(|e| BenchError::io("sending a TCP/IP record", e))?;
        match self.stream.read_exact(&mut self.reply) {
            Ok(()) => Ok(self.reply.len()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(BenchError::ConnectionClosed)
            }
            Err(e) => Err(BenchError::io("reading a TCP/IP record", e)),
        }
    }
}

/// One requester's connection sending XML messages for parsed record sequence.
pub struct XmlRecordClient {
    stream: TcpStream,
    reply: Vec<u8>,
}

impl Transport for XmlRecordClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        self.stream
            .write_all(msg)
            .map_err(|e| BenchError::io("sending a TCP/IP record", e))?;
        // The record is the message without the whitespace around it; the echo adds a line end.
        self.reply.resize(msg.trim_ascii().len() + 1, 0);
        match self.stream.read_exact(&mut self.reply) {
            Ok(()) => Ok(self.reply.len()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(BenchError::ConnectionClosed)
            }
            Err(e) => Err(BenchError::io("reading a TCP/IP record", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_pads_the_message_to_the_record_length_when_it_is_shorter() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 8];
            s.read_exact(&mut buf).unwrap();
            s.write_all(&buf).unwrap();
            buf
        });
        let f = TcpipFactory::new("127.0.0.1", port, TcpipRecords::Fixed, 8).unwrap();
        let mut t = f.create(0).unwrap();
        assert_eq!(t.round_trip(b"abc").unwrap(), 8);
        assert_eq!(&echo.join().unwrap(), b"abc     ");
    }

    #[test]
    fn xml_round_trip_reads_the_trimmed_message_and_a_line_end_when_records_are_parsed() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 9];
            s.read_exact(&mut buf).unwrap();
            s.write_all(b"<a>1</a>\n").unwrap();
            buf
        });
        let f = TcpipFactory::new("127.0.0.1", port, TcpipRecords::Xml, 0).unwrap();
        let mut t = f.create(0).unwrap();
        assert_eq!(t.round_trip(b"<a>1</a>\n").unwrap(), 9);
        assert_eq!(&echo.join().unwrap(), b"<a>1</a>\n");
    }
}
