//! Binary encoding of messages, shared by the log and the client protocol.
//!
//! Layout (all integers little-endian):
//! ```text
//! msg_id[24] correl_id[24] group_id[24]
//! persistence u8 (bit 0x80: the extended fields below are present), priority u8, expiry i32,
//! encoding i32, coded_char_set_id i32, msg_type i32, feedback i32, backout_count u32,
//! msg_seq_number i32, msg_flags i32
//! 8 strings, each u16 length + UTF-8: reply_to_q reply_to_qmgr format put_appl_name
//!   put_date put_time user_identifier appl_identity_data
//! only with bit 0x80: report i32, put_appl_type i32, accounting_token[32],
//!   appl_origin_data (u16 + UTF-8)
//! property count u32, each: name (u16 + UTF-8), tag u8, value
//!   (0 bool u8 | 1 int i64 | 2 float f64 | 3 string u32+UTF-8 | 4 bytes u32+raw)
//! body length u32, body
//! ```
//! The body is written by the caller after [`encode_head`] so a 20 MB body is never copied
//! into an intermediate buffer; [`Reader::message`] slices it out of the input `Bytes`.

use bytes::Bytes;

use crate::model::{Message, Mqmd, MsgId, Persistence, PropertyValue};

/// Why bytes could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Input ended inside a field.
    #[error("truncated at byte {0}")]
    Truncated(usize),
    /// A field held a value outside its range.
    #[error("bad value: {0}")]
    Bad(String),
}

/// Append the descriptor, properties and body length; the body bytes must follow.
/// Flag in the persistence byte: the extended descriptor fields follow the fixed ones.
const EXTENDED: u8 = 0x80;

pub fn encode_head(msg: &Message, out: &mut Vec<u8>) {
    let md = &msg.md;
    out.extend_from_slice(&md.msg_id);
    out.extend_from_slice(&md.correl_id);
    out.extend_from_slice(&md.group_id);
    // The descriptor fields most messages leave at their defaults follow the fixed ones only
    // when one is set (flagged in the persistence byte), so those messages, and logs written
    // before the fields existed, keep the same bytes.
    let extended = md.report != 0
        || md.put_appl_type != 0
        || md.accounting_token != [0; 32]
        || !md.appl_origin_data.is_empty();
    out.push(md.persistence.code() | if extended { EXTENDED } else { 0 });
    out.push(md.priority);
    for v in [
        md.expiry,
        md.encoding,
        md.coded_char_set_id,
        md.msg_type,
        md.feedback,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&md.backout_count.to_le_bytes());
    out.extend_from_slice(&md.msg_seq_number.to_le_bytes());
    out.extend_from_slice(&md.msg_flags.to_le_bytes());
    for s in [
        &md.reply_to_q,
        &md.reply_to_qmgr,
        &md.format,
        &md.put_appl_name,
        &md.put_date,
        &md.put_time,
        &md.user_identifier,
        &md.appl_identity_data,
    ] {
        put_str16(out, s);
    }
    if extended {
        out.extend_from_slice(&md.report.to_le_bytes());
        out.extend_from_slice(&md.put_appl_type.to_le_bytes());
        out.extend_from_slice(&md.accounting_token);
        put_str16(out, &md.appl_origin_data);
    }
    out.extend_from_slice(&(msg.properties.len() as u32).to_le_bytes());
    for (name, v) in &msg.properties {
        put_str16(out, name);
        match v {
            PropertyValue::Bool(b) => {
                out.push(0);
                out.push(*b as u8);
            }
            PropertyValue::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_le_bytes());
            }
            PropertyValue::Float(f) => {
                out.push(2);
                out.extend_from_slice(&f.to_le_bytes());
            }
            PropertyValue::String(s) => {
                out.push(3);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            PropertyValue::Bytes(b) => {
                out.push(4);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
    out.extend_from_slice(&(msg.body.len() as u32).to_le_bytes());
}

/// Whole encoding in one buffer (head and body), for small messages and tests.
pub fn encode(msg: &Message) -> Vec<u8> {
    let mut v = Vec::with_capacity(256 + msg.body.len());
    encode_head(msg, &mut v);
    v.extend_from_slice(&msg.body);
    v
}

/// Append a string with a u16 length (strings longer than 65535 bytes are cut at a char boundary).
pub fn put_str16(out: &mut Vec<u8>, s: &str) {
    let mut n = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..n]);
}

/// Append bytes with a u32 length.
pub fn put_bytes32(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// A cursor over received bytes; slices share the input allocation.
pub struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    /// Read from `buf`.
    pub fn new(buf: Bytes) -> Reader {
        Reader { buf, pos: 0 }
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// Take the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated(self.pos));
        }
        let b = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(b)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        if self.remaining() < N {
            return Err(DecodeError::Truncated(self.pos));
        }
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(a)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.arr::<1>()?[0])
    }
    /// u16.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    /// u32.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    /// i32.
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.arr()?))
    }
    /// u64.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    /// A 24-byte id.
    pub fn id(&mut self) -> Result<MsgId, DecodeError> {
        self.arr()
    }
    /// String with u16 length.
    pub fn str16(&mut self) -> Result<String, DecodeError> {
        let n = self.u16()? as usize;
        self.utf8(n)
    }
    /// Bytes with u32 length.
    pub fn bytes32(&mut self) -> Result<Bytes, DecodeError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn utf8(&mut self, n: usize) -> Result<String, DecodeError> {
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| DecodeError::Bad("string is not UTF-8".into()))
    }

    /// A whole message as written by [`encode_head`] + body.
    pub fn message(&mut self) -> Result<Message, DecodeError> {
        let msg_id = self.id()?;
        let correl_id = self.id()?;
        let group_id = self.id()?;
        let pc = self.u8()?;
        let extended = pc & EXTENDED != 0;
        let persistence = Persistence::from_code(pc & !EXTENDED)
            .ok_or_else(|| DecodeError::Bad(format!("persistence {pc}")))?;
        let priority = self.u8()?;
        let expiry = self.i32()?;
        let encoding = self.i32()?;
        let coded_char_set_id = self.i32()?;
        let msg_type = self.i32()?;
        let feedback = self.i32()?;
        let backout_count = self.u32()?;
        let msg_seq_number = self.i32()?;
        let msg_flags = self.i32()?;
        let mut md = Mqmd {
            msg_id,
            correl_id,
            group_id,
            persistence,
            priority,
            expiry,
            encoding,
            coded_char_set_id,
            msg_type,
            feedback,
            backout_count,
            msg_seq_number,
            msg_flags,
            reply_to_q: self.str16()?,
            reply_to_qmgr: self.str16()?,
            format: self.str16()?,
            put_appl_name: self.str16()?,
            put_date: self.str16()?,
            put_time: self.str16()?,
            user_identifier: self.str16()?,
            appl_identity_data: self.str16()?,
            ..Mqmd::default()
        };
        if extended {
            md.report = self.i32()?;
            md.put_appl_type = self.i32()?;
            md.accounting_token = self.arr()?;
            md.appl_origin_data = self.str16()?;
        }
        let n = self.u32()? as usize;
        // The count is untrusted: the smallest property (empty name, bool) takes 4 bytes.
        let mut properties = Vec::with_capacity(n.min(self.remaining() / 4));
        for _ in 0..n {
            let name = self.str16()?;
            let v = match self.u8()? {
                0 => PropertyValue::Bool(self.u8()? != 0),
                1 => PropertyValue::Int(self.u64()? as i64),
                2 => PropertyValue::Float(f64::from_bits(self.u64()?)),
                3 => {
                    let n = self.u32()? as usize;
                    PropertyValue::String(self.utf8(n)?)
                }
                4 => PropertyValue::Bytes(self.bytes32()?),
                t => return Err(DecodeError::Bad(format!("property tag {t}"))),
            };
            properties.push((name, v));
        }
        let body = self.bytes32()?;
        Ok(Message {
            md,
            properties,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trips_with_properties() {
        let mut m = Message::new(&b"hello"[..]);
        m.md.correl_id = crate::model::id_from_str("abc");
        m.md.reply_to_q = "R".into();
        m.md.priority = 7;
        m.set_property("a", PropertyValue::Int(-3));
        m.set_property("b", PropertyValue::String("x".into()));
        m.set_property("c", PropertyValue::Bytes(Bytes::from_static(b"\x00\x01")));
        m.set_property("d", PropertyValue::Float(1.5));
        m.set_property("e", PropertyValue::Bool(true));
        let plain = encode(&m).len();
        m.md.report = 64;
        m.md.put_appl_type = 6;
        m.md.accounting_token[31] = 9;
        m.md.appl_origin_data = "origin".into();
        let enc = encode(&m);
        assert_eq!(
            enc.len(),
            plain + 4 + 4 + 32 + 2 + 6,
            "only a message that sets them pays"
        );
        let back = Reader::new(Bytes::from(enc.clone()))
            .message()
            .expect("decodes");
        assert_eq!(back, m);
        for cut in 0..enc.len() {
            assert!(
                Reader::new(Bytes::from(enc[..cut].to_vec()))
                    .message()
                    .is_err()
            );
        }
    }
}
