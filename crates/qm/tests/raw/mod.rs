//! Client-protocol frames built and read by hand (see PROTOCOL.md), for tests that drive the
//! server below the client library.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;

use sluice_qm::net::Server;

/// One request frame.
pub fn frame(id: u32, op: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = ((5 + payload.len()) as u32).to_le_bytes().to_vec();
    f.extend_from_slice(&id.to_le_bytes());
    f.push(op);
    f.extend_from_slice(payload);
    f
}

/// A GET payload: queue, flags, wait in milliseconds, no match ids, no browse cursor.
pub fn get_payload(queue: &str, flags: u8, wait_ms: u32) -> Vec<u8> {
    let mut p = (queue.len() as u16).to_le_bytes().to_vec();
    p.extend_from_slice(queue.as_bytes());
    p.push(flags);
    p.extend_from_slice(&wait_ms.to_le_bytes());
    p.push(0); // no match ids
    p.push(0); // no browse cursor
    p
}

/// Read one response frame: (id, status).
pub fn read_answer(s: &mut TcpStream) -> (u32, u8) {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("length");
    let mut rest = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut rest).expect("frame");
    (
        u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]),
        rest[4],
    )
}

/// A raw connection that has done its CONNECT (request id 1).
pub fn connected(s: &Server) -> TcpStream {
    let mut raw = TcpStream::connect(s.local_addr()).expect("connect");
    raw.write_all(&frame(1, 1, &[0, 0, 0, 0, 0, 0, 1, 0]))
        .expect("connect frame");
    assert_eq!(read_answer(&mut raw), (1, 0));
    raw
}
