//! The common element recognised in one pass: a start tag without attributes whose name is plain
//! (ASCII, no prefix), followed either by plain text and the matching end tag, or by a child's
//! start tag. Record-shaped messages are almost all made of these, and for them the general path
//! ([`Builder::push_element`]) re-reads each byte several times: to lex the name, to look for a
//! prefix, to find the text's end, to check the text needs no decoding. Anything else is left to
//! the general path, which builds the same tree.

use sluice_tree::{NodeId, Value};

use super::build::{Builder, Pushed};
use super::field_type as ft;
use super::lexer::{CLASS, PLAIN_NAME_CHAR, Span};
use crate::error::Error;
use crate::swar;

#[inline(always)]
fn is_plain(b: u8) -> bool {
    (0x20..0x7f).contains(&b) && b != b'&'
}

/// The first '<' at or after `pos`, and whether every byte before it is plain: printable ASCII
/// other than '&', which a value takes as it stands (anything else is a reference to decode,
/// UTF-8 to check or a character to refuse). `None` when no '<' follows.
#[inline(always)]
pub(crate) fn text_run(buf: &[u8], pos: usize) -> Option<(usize, bool)> {
    let mut i = pos;
    let mut plain = true;
    while let Some(w) = swar::word_at(buf, i) {
        let lt = swar::equal(w, b'<');
        let bad = swar::control(w) | swar::del(w) | swar::non_ascii(w) | swar::equal(w, b'&');
        if let Some(k) = swar::first(lt) {
            return Some((i + k, plain && bad & swar::before_first(lt) == 0));
        }
        plain &= bad == 0;
        i += 8;
    }
    while let Some(&b) = buf.get(i) {
        if b == b'<' {
            return Some((i, plain));
        }
        plain &= is_plain(b);
        i += 1;
    }
    None
}

/// The end of the plain name at `pos` (ASCII name characters without ':', not starting with a
/// digit, '-' or '.'), or `None` when the name there is not plain or not a name.
#[inline(always)]
fn plain_name_end(buf: &[u8], pos: usize) -> Option<usize> {
    let &first = buf.get(pos)?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let mut p = pos + 1;
    while let Some(&b) = buf.get(p) {
        if CLASS[b as usize] & PLAIN_NAME_CHAR == 0 {
            break;
        }
        p += 1;
    }
    Some(p)
}

/// The end of the end tag at `pos` when it is exactly `</` + the name at `qname` + `>`.
#[inline(always)]
pub(crate) fn plain_end_tag(buf: &[u8], pos: usize, qname: Span) -> Option<usize> {
    let len = qname.1 - qname.0;
    let tag = buf.get(pos..pos + len + 3)?;
    (tag[1] == b'/'
        && tag[len + 2] == b'>'
        && sluice_tree::same_bytes(&tag[2..len + 2], &buf[qname.0..qname.1]))
    .then_some(pos + len + 3)
}

impl Builder<'_, '_> {
    /// Build the element whose start tag begins at `start` (a '<') when it is of the common
    /// kind (see the module comment), answering what it made and its dependency flags; `None`
    /// when it is not, and then nothing was changed.
    #[inline(always)]
    pub(crate) fn push_plain(
        &mut self,
        parent: NodeId,
        start: usize,
        depth: usize,
    ) -> Option<Result<(Pushed, u8), Error>> {
        let bytes = self.bytes;
        let name_end = plain_name_end(bytes, start + 1)?;
        if bytes.get(name_end) != Some(&b'>') || !self.p.opaque.is_empty() {
            return None;
        }
        let content = name_end + 1;
        let (lt, plain) = text_run(bytes, content)?;
        let qname = (start + 1, name_end);
        let leaf_end = plain_end_tag(bytes, lt, qname);
        if leaf_end.is_none() && matches!(bytes.get(lt + 1), None | Some(b'/' | b'!' | b'?')) {
            // Comments, CDATA, processing instructions or a wrong end tag: the general path
            // reads (and reports) them.
            return None;
        }
        let limits = &self.p.options.limits;
        if depth > limits.max_depth {
            return Some(Err(Error::DepthLimit {
                offset: start,
                limit: limits.max_depth,
            }));
        }
        self.seq += 1;
        let seq = self.seq;
        let mark = self.scope.len();
        let (ns, deps) = match self.resolve(b"", start, seq) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let name = self.src(qname);
        let Some(end) = leaf_end else {
            let id = self.tree.push_parsed_spanned(
                parent,
                ft::FOLDER,
                ns,
                name,
                Value::Null,
                None,
                deps,
            );
            return Some(Ok((Pushed::Folder { id, content, mark }, deps)));
        };
        let value = if plain {
            self.src((content, lt))
        } else {
            match self.value_text((content, lt), false) {
                Ok(v) => v,
                Err(e) => return Some(Err(e)),
            }
        };
        let span = self.span(start, end);
        self.tree.push_parsed_spanned(
            parent,
            ft::FIELD,
            ns,
            name,
            Value::Character(value),
            Some(span),
            deps,
        );
        Some(Ok((Pushed::Done { end }, deps)))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The byte-at-a-time meaning of [`text_run`].
    fn text_run_bytewise(buf: &[u8], pos: usize) -> Option<(usize, bool)> {
        let lt = pos + buf[pos..].iter().position(|&b| b == b'<')?;
        Some((lt, buf[pos..lt].iter().all(|&b| is_plain(b))))
    }

    #[test]
    fn text_run_finds_lt_in_every_lane_and_at_the_buffer_end() {
        for len in 0..20 {
            for at in 0..=len {
                let mut buf = vec![b'x'; len];
                if at < len {
                    buf[at] = b'<';
                }
                for pos in 0..=len {
                    assert_eq!(
                        text_run(&buf, pos),
                        text_run_bytewise(&buf, pos),
                        "{len} {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn text_run_marks_bytes_a_value_cannot_borrow() {
        for bad in [0u8, 0x09, 0x0a, 0x0d, 0x1f, b'&', 0x7f, 0x80, 0xc3, 0xff] {
            for at in 0..16 {
                let mut buf = vec![b'a'; 16];
                buf[at] = bad;
                buf.extend_from_slice(b"<");
                assert_eq!(text_run(&buf, 0), Some((16, false)), "{bad:#x} at {at}");
                // After the '<' it does not matter.
                let mut after = b"abc<".to_vec();
                after.extend_from_slice(&buf);
                assert_eq!(text_run(&after, 0), Some((3, true)));
            }
        }
        assert_eq!(text_run(b" ~ <", 0), Some((3, true)));
        assert_eq!(
            text_run("caf\u{e9}\u{1F600} \u{20AC}<".as_bytes(), 0),
            Some((13, false))
        );
    }

    #[test]
    fn plain_end_tag_needs_the_whole_tag_inside_the_buffer() {
        let buf = b"<ab>x</ab>";
        assert_eq!(plain_end_tag(buf, 5, (1, 3)), Some(10));
        assert_eq!(plain_end_tag(&buf[..9], 5, (1, 3)), None);
        assert_eq!(plain_end_tag(b"<ab>x</ac>", 5, (1, 3)), None);
        assert_eq!(plain_end_tag(b"<ab>x</ab >", 5, (1, 3)), None);
        assert_eq!(plain_end_tag(b"<ab>x<ab>", 5, (1, 3)), None);
    }

    #[test]
    fn plain_name_end_stops_before_prefixes_and_non_ascii() {
        assert_eq!(plain_name_end(b"<Code>", 1), Some(5));
        assert_eq!(plain_name_end(b"<_a-b.9 ", 1), Some(7));
        assert_eq!(plain_name_end(b"<abc", 1), Some(4));
        assert_eq!(plain_name_end(b"<p:a>", 1), Some(2));
        assert_eq!(plain_name_end("<caf\u{e9}>".as_bytes(), 1), Some(4));
        assert_eq!(plain_name_end(b"<9a>", 1), None);
        assert_eq!(plain_name_end(b"<:a>", 1), None);
        assert_eq!(plain_name_end("<\u{e9}>".as_bytes(), 1), None);
        assert_eq!(plain_name_end(b"<", 1), None);
    }

    proptest! {
        #[test]
        fn text_run_agrees_with_a_byte_loop(
            buf in prop::collection::vec(
                prop_oneof![any::<u8>(), Just(b'<'), Just(b'a'), Just(b'&')],
                0..64,
            ),
            pos in 0usize..64,
        ) {
            let pos = pos.min(buf.len());
            prop_assert_eq!(text_run(&buf, pos), text_run_bytewise(&buf, pos));
        }
    }
}
