//! Record framing and payloads of the log and checkpoint files (format described in `wal/mod.rs`).

use bytes::Bytes;

use crate::codec::{self, DecodeError, Reader};
use crate::model::Message;

/// Record header: payload length u32 + crc32 u32.
pub const HEADER: usize = 8;
/// Payload type: a committed unit of work (list of [`Op`]).
pub const T_COMMIT: u8 = 1;
/// Payload type: the segment is closed, the next one continues the log.
pub const T_END: u8 = 2;
/// Payload type: checkpoint header.
pub const T_CKPT_HEAD: u8 = 10;
/// Payload type: checkpoint trailer.
pub const T_CKPT_END: u8 = 11;
/// Op tag: put.
const OP_PUT: u8 = 1;
/// Op tag: remove.
const OP_REMOVE: u8 = 2;
/// Op tag: backout count.
const OP_BACKOUT: u8 = 3;
/// Sequence number that stands in for the segment number in checkpoint files.
pub const CKPT_SEG: u64 = u64::MAX;
/// Records above this size are refused on read (guards against a garbage length).
pub const MAX_RECORD: u32 = 1 << 30;

/// One logged operation.
// Ops live only in short batches on their way to disk; boxing the message would cost an
// allocation per persistent put for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Op {
    /// A persistent message became part of a queue.
    Put {
        /// Log-wide unique message sequence number.
        seq: u64,
        /// Queue holding it.
        queue: String,
        /// Wall-clock expiry, unix milliseconds; 0 = never.
        expire_ms: u64,
        /// The message.
        msg: Message,
    },
    /// The message with this sequence number left its queue.
    Remove {
        /// Its sequence number.
        seq: u64,
    },
    /// The message's BackoutCount is now `count` (hardened when a get under syncpoint takes
    /// it, so a process crash while it is being processed still counts as a backout).
    Backout {
        /// Its sequence number.
        seq: u64,
        /// New BackoutCount.
        count: u32,
    },
}

/// A payload cut into parts so that large bodies are never copied into a buffer.
pub struct Parts {
    /// Small encoded pieces and bodies, in order.
    pub parts: Vec<Bytes>,
    /// Sum of the part lengths.
    pub len: usize,
}

impl Parts {
    fn push(&mut self, b: Bytes) {
        self.len += b.len();
        self.parts.push(b);
    }
}

/// Encode a commit payload.
pub fn commit_payload(ops: &[Op]) -> Parts {
    let mut p = Parts {
        parts: Vec::with_capacity(ops.len() * 2 + 1),
        len: 0,
    };
    let mut head = Vec::with_capacity(64 + ops.len() * 16);
    head.push(T_COMMIT);
    head.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for op in ops {
        match op {
            Op::Put {
                seq,
                queue,
                expire_ms,
                msg,
            } => {
                head.push(OP_PUT);
                head.extend_from_slice(&seq.to_le_bytes());
                head.extend_from_slice(&expire_ms.to_le_bytes());
                codec::put_str16(&mut head, queue);
                codec::encode_head(msg, &mut head);
                if msg.body.len() <= 4096 {
                    head.extend_from_slice(&msg.body);
                } else {
                    p.push(Bytes::from(std::mem::take(&mut head)));
                    p.push(msg.body.clone());
                }
            }
            Op::Backout { seq, count } => {
                head.push(OP_BACKOUT);
                head.extend_from_slice(&seq.to_le_bytes());
                head.extend_from_slice(&count.to_le_bytes());
            }
            Op::Remove { seq } => {
                head.push(OP_REMOVE);
                head.extend_from_slice(&seq.to_le_bytes());
            }
        }
    }
    if !head.is_empty() {
        p.push(Bytes::from(head));
    }
    p
}

/// A small payload held in one buffer.
pub fn simple_payload(bytes: Vec<u8>) -> Parts {
    let len = bytes.len();
    Parts {
        parts: vec![Bytes::from(bytes)],
        len,
    }
}

/// Record header for a payload in segment `seg`: length and crc32(seg ‖ len ‖ payload).
/// Including the segment number means stale records in a recycled file never validate.
pub fn header(seg: u64, p: &Parts) -> [u8; HEADER] {
    let len = p.len as u32;
    let mut h = crc32fast::Hasher::new();
    h.update(&seg.to_le_bytes());
    h.update(&len.to_le_bytes());
    for part in &p.parts {
        h.update(part);
    }
    let mut out = [0u8; HEADER];
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..].copy_from_slice(&h.finalize().to_le_bytes());
    out
}

/// Why reading records stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// A zero length word (preallocated, never written space) or the end of the file.
    Clean,
    /// A record whose length or checksum is wrong: a torn write, stale recycled data, or corruption.
    Bad,
}

/// Iterate the valid records of one file: yields payloads until the first invalid record.
pub struct Records {
    data: Bytes,
    seg: u64,
    /// Offset just past the last valid record.
    pub pos: usize,
    /// Set when iteration ended.
    pub stop: Option<Stop>,
}

impl Records {
    /// Records of `data`, checksummed for segment `seg`.
    pub fn new(data: Bytes, seg: u64) -> Records {
        Records {
            data,
            seg,
            pos: 0,
            stop: None,
        }
    }
}

impl Iterator for Records {
    type Item = Bytes;
    fn next(&mut self) -> Option<Bytes> {
        if self.stop.is_some() {
            return None;
        }
        let rest = self.data.len() - self.pos;
        if rest < HEADER {
            let tail_zero = self.data[self.pos..].iter().all(|b| *b == 0);
            self.stop = Some(if tail_zero { Stop::Clean } else { Stop::Bad });
            return None;
        }
        let h = &self.data[self.pos..self.pos + HEADER];
        let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let crc = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        if len == 0 && crc == 0 {
            self.stop = Some(Stop::Clean);
            return None;
        }
        if len > MAX_RECORD || (len as usize) > rest - HEADER {
            self.stop = Some(Stop::Bad);
            return None;
        }
        let start = self.pos + HEADER;
        let payload = self.data.slice(start..start + len as usize);
        let mut hs = crc32fast::Hasher::new();
        hs.update(&self.seg.to_le_bytes());
        hs.update(&len.to_le_bytes());
        hs.update(&payload);
        if hs.finalize() != crc {
            self.stop = Some(Stop::Bad);
            return None;
        }
        self.pos = start + len as usize;
        Some(payload)
    }
}

/// Decode the ops of a commit payload (type byte already checked by the caller).
pub fn decode_commit(payload: Bytes) -> Result<Vec<Op>, DecodeError> {
    let mut r = Reader::new(payload);
    let _t = r.u8()?;
    let n = r.u32()? as usize;
    // The count is untrusted: reserve no more ops than the bytes left could hold (the
    // smallest op, a REMOVE, takes 9 bytes).
    let mut ops = Vec::with_capacity(n.min(r.remaining() / 9));
    for _ in 0..n {
        match r.u8()? {
            OP_PUT => {
                let seq = r.u64()?;
                if seq == u64::MAX {
                    // Never assigned (numbering starts at 1); recovery continues at seq + 1.
                    return Err(DecodeError::Bad("sequence number u64::MAX".into()));
                }
                let expire_ms = r.u64()?;
                let queue = r.str16()?;
                let mut msg = r.message()?;
                // Copy the body out so a live message does not pin the whole segment buffer.
                msg.body = Bytes::copy_from_slice(&msg.body);
                ops.push(Op::Put {
                    seq,
                    queue,
                    expire_ms,
                    msg,
                });
            }
            OP_REMOVE => ops.push(Op::Remove { seq: r.u64()? }),
            OP_BACKOUT => ops.push(Op::Backout {
                seq: r.u64()?,
                count: r.u32()?,
            }),
            t => return Err(DecodeError::Bad(format!("op tag {t}"))),
        }
    }
    Ok(ops)
}
