//! Handles shared rather than copied: the source buffers and parsers of another tree that a
//! copy refers to, and the names flow logic gives element after element.

use std::sync::Arc;

use super::Tree;
use crate::text::{Text, same_bytes};

/// How many names [`Tree::intern_name`] remembers (two per set).
pub(super) const NAME_CACHE: usize = 32;

impl Tree {
    /// The index here of `other`'s buffer `buf`, adding it when this tree does not hold it yet.
    /// Copies between trees of one message meet the same few buffers over and over: finding
    /// one by address first spares a reference-count increment and decrement per copied text.
    pub(super) fn import_buffer(&mut self, other: &Tree, buf: u32) -> u32 {
        let b = &other.buffers[buf as usize];
        match self
            .buffers
            .iter()
            .position(|x| x.as_ptr() == b.as_ptr() && x.len() == b.len())
        {
            Some(i) => i as u32,
            None => {
                self.buffers.push(b.clone());
                (self.buffers.len() - 1) as u32
            }
        }
    }

    /// The index here of `other`'s parser `p`, adding it when this tree does not hold it yet.
    pub(super) fn import_parser(&mut self, other: &Tree, p: u16) -> u16 {
        let q = &other.parsers[usize::from(p)];
        match self.parsers.iter().position(|x| Arc::ptr_eq(x, q)) {
            Some(i) => i as u16,
            None => {
                self.parsers.push(q.clone());
                (self.parsers.len() - 1) as u16
            }
        }
    }

    /// Store a name (or other short text used many times) and return a handle to it; a name
    /// equal to one stored lately shares its bytes instead of taking more.
    pub fn intern_name(&mut self, s: &[u8]) -> Text {
        let (Some(&first), Some(&last)) = (s.first(), s.last()) else {
            return Text::EMPTY;
        };
        // Two ways per set, sets chosen by a multiplicative hash of a few bytes and the length.
        let key = u32::from(first)
            | u32::from(last) << 8
            | (s.len() as u32 & 0xFF) << 16
            | u32::from(s[s.len() / 2]) << 24;
        let set = (key.wrapping_mul(0x9E37_79B1) >> 28) as usize * 2;
        let names = &self.lookups.get_or_insert_default().names;
        let pair = [names[set], names[set + 1]];
        for cached in pair {
            if !cached.is_empty() && same_bytes(self.bytes(cached), s) {
                return cached;
            }
        }
        let t = self.alloc_text(s);
        if let Some(l) = self.lookups.as_mut() {
            l.names[set + 1] = pair[0];
            l.names[set] = t;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_share_one_handle_and_keep_their_bytes() {
        let mut t = Tree::new("Root");
        // The names a transformation gives its output, element after element.
        let names = [
            "Statement",
            "Type",
            "Style",
            "Customer",
            "Initials",
            "Name",
            "Balance",
            "Purchases",
            "Article",
            "Desc",
            "Cost",
            "Qty",
            "Amount",
        ];
        for n in names {
            let h = t.intern_name(n.as_bytes());
            assert_eq!(t.bytes(h), n.as_bytes());
        }
        let first_round = t.heap.len();
        for _ in 0..100 {
            for n in names {
                let h = t.intern_name(n.as_bytes());
                assert_eq!(t.bytes(h), n.as_bytes());
            }
        }
        assert_eq!(t.heap.len(), first_round, "names were stored again");
        let a = t.intern_name(b"Statement");
        assert_eq!(t.intern_name(b"Statement"), a);
        assert_eq!(t.intern_name(b""), Text::EMPTY);
    }

    #[test]
    fn names_that_share_a_set_are_told_apart() {
        let mut t = Tree::new("Root");
        // Far more names than slots: every answer must still hold the asked bytes.
        for round in 0..3 {
            for i in 0..100 {
                let n = format!("N{i}x{round}");
                let h = t.intern_name(n.as_bytes());
                assert_eq!(t.bytes(h), n.as_bytes());
            }
        }
    }

    #[test]
    fn tree_stays_small_since_messages_move_it_by_value() {
        // Three trees make a message, which flows pass from node to node by value.
        assert!(
            std::mem::size_of::<Tree>() <= 176,
            "{}",
            std::mem::size_of::<Tree>()
        );
    }
}
