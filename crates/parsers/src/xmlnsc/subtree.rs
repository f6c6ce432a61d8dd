//! Building a whole subtree: every remaining child of a folder and everything below them,
//! for a complete parse, or for a small folder met on demand (built rather than skipped, so
//! that navigation entering it later finds it ready).

use sluice_tree::{NodeId, Tree};

use super::XmlnscParser;
use super::build::{Builder, Pushed, depth_of, locate, parser_index, qname_at, start_of};
use super::flags;
use super::lexer::{Lexer, Span, Token};
use super::plain;
use super::scope;
use crate::error::Error;

/// Messages up to this size build a small folder as soon as an on-demand step meets it, rather
/// than leave it to be skipped: a flow that looks past a sibling (`invoice.Balance` after the
/// `Item`s) usually enters it later (`FOR sale AS invoice.Item[]`), and skipping first means
/// scanning its bytes twice; building it also lets the step's batch go on past it, one parse
/// call instead of several. This is the product's own rule, which parses everything up to the
/// field referenced; larger messages keep to skipping, so that their trees stay as small as
/// navigation needs.
pub(crate) const BUILD_PAST_MESSAGE_BYTES: usize = 1 << 20;
/// The content of a folder built rather than skipped ends within this many bytes.
const BUILD_PAST_FOLDER_BYTES: usize = 4096;

/// Build all of `c`, the open last child of an element being parsed on demand, when it is
/// small (see [`BUILD_PAST_MESSAGE_BYTES`]); true when it was built. Anything else (a large
/// folder, an error) takes back what was built and answers false, so that `c` stays open to be
/// skipped or entered as before and errors surface where they always did.
pub(super) fn build_past(p: &XmlnscParser, tree: &mut Tree, c: NodeId) -> bool {
    if tree.parser_flags(c) & (flags::OPEN_LAST | flags::FAILED) != 0 {
        return false;
    }
    let Some(buf) = locate(tree, c) else {
        return false;
    };
    let bytes = tree.buffer(buf).clone();
    if bytes.len() > BUILD_PAST_MESSAGE_BYTES {
        return false;
    }
    let Ok(index) = parser_index(tree, c) else {
        return false;
    };
    let keep = tree.peek_last_child(c);
    let mut b = Builder::new(p, tree, &bytes, buf, index);
    scope::from_ancestors(b.tree, c, buf, &mut b.scope);
    let depth = depth_of(b.tree, c);
    let mut frames = b.first_frame(c);
    let mut pos = b.tree.resume(c) as usize;
    let limit = pos.saturating_add(BUILD_PAST_FOLDER_BYTES);
    match b.all_inner(&mut frames, &mut pos, depth, limit) {
        Ok(true) => true,
        _ => {
            tree.discard_parsed(c, keep);
            false
        }
    }
}

/// One folder being built by [`Builder::all`].
struct Frame {
    id: NodeId,
    start: Option<usize>,
    qname: Option<Span>,
    mark: usize,
    /// The dependency flags of the folder and the children built so far, when all of them were
    /// built by this pass (then its end needs no walk over them).
    deps: Option<u8>,
}

impl Builder<'_, '_> {
    /// The stack of folders being built, holding `id`; room for a few levels more, so that a
    /// shallow folder is built with one allocation.
    fn first_frame(&self, id: NodeId) -> Vec<Frame> {
        let start = start_of(self.tree, self.bytes, id);
        let mut frames = Vec::with_capacity(8);
        frames.push(Frame {
            id,
            start,
            qname: start.and_then(|s| qname_at(self.bytes, s)),
            mark: self.scope.len(),
            deps: None,
        });
        frames
    }

    /// Build every remaining child of `id` and everything below them.
    pub(super) fn all(&mut self, id: NodeId, depth: usize) -> Result<(), Error> {
        let mut frames = self.first_frame(id);
        let mut pos = self.tree.resume(id) as usize;
        let r = self
            .all_inner(&mut frames, &mut pos, depth, usize::MAX)
            .map(|_| ());
        if let Err(e) = &r {
            for f in &frames {
                self.tree.set_pending(f.id, self.index, e.offset() as u32);
                let fl = self.tree.parser_flags(f.id) | flags::FAILED;
                self.tree.set_parser_flags(f.id, fl);
            }
        }
        r
    }

    /// Finish the innermost frame, whose end tag ends at `end`, and pass its dependency flags
    /// to the frame around it.
    #[inline(always)]
    fn close_frame(&mut self, frames: &mut Vec<Frame>, end: usize) {
        let Some(top) = frames.pop() else {
            return;
        };
        match top.deps {
            Some(d) => self.finish_with(top.id, top.start, end, d),
            None => self.finish(top.id, top.start, end),
        }
        self.scope.truncate(top.mark);
        if let Some(outer) = frames.last_mut()
            && let Some(d) = &mut outer.deps
        {
            *d |= self.tree.parser_flags(top.id) & flags::DEPS;
        }
    }

    /// Build until every frame is closed (true) or parsing passes byte `limit` (false).
    fn all_inner(
        &mut self,
        frames: &mut Vec<Frame>,
        pos: &mut usize,
        depth: usize,
        limit: usize,
    ) -> Result<bool, Error> {
        let mut tok = Token::Eof;
        loop {
            let Some(top) = frames.last() else {
                return Ok(true);
            };
            if *pos > limit {
                return Ok(false);
            }
            let top_id = top.id;
            let at = *pos;
            if self.bytes.get(at) == Some(&b'<') {
                if self.bytes.get(at + 1) == Some(&b'/') {
                    if let Some(q) = top.qname
                        && let Some(end) = plain::plain_end_tag(self.bytes, at, q)
                    {
                        *pos = end;
                        self.close_frame(frames, end);
                        continue;
                    }
                } else if let Some(r) = self.push_plain(top_id, at, depth + frames.len()) {
                    let (pushed, deps) = r?;
                    match pushed {
                        Pushed::Done { end } => {
                            *pos = end;
                            if let Some(top) = frames.last_mut()
                                && let Some(d) = &mut top.deps
                            {
                                *d |= deps;
                            }
                        }
                        Pushed::Folder { id, mark, content } => {
                            *pos = content;
                            frames.push(Frame {
                                id,
                                start: Some(at),
                                qname: Some((at + 1, content - 1)),
                                mark,
                                deps: Some(deps),
                            });
                        }
                    }
                    continue;
                }
            }
            let mut lx = Lexer::new(self.bytes, *pos, self.p.options.limits.max_attributes);
            lx.read_token(&mut self.attrs, &mut tok)?;
            *pos = lx.pos;
            match tok {
                Token::Start {
                    start,
                    name,
                    self_closing,
                    end,
                } => {
                    let d = depth + frames.len();
                    match self.push_element(top_id, start, name, self_closing, end, d)? {
                        Pushed::Done { end } => {
                            *pos = end;
                            let kid = self.tree.peek_last_child(top_id);
                            if let Some(top) = frames.last_mut()
                                && let Some(d) = &mut top.deps
                                && let Some(k) = kid
                            {
                                *d |= self.tree.parser_flags(k) & flags::DEPS;
                            }
                        }
                        Pushed::Folder { id, mark, content } => {
                            *pos = content;
                            let deps = self.tree.parser_flags(id) & flags::DEPS;
                            frames.push(Frame {
                                id,
                                start: Some(start),
                                qname: Some(name),
                                mark,
                                deps: Some(deps),
                            });
                        }
                    }
                }
                Token::End { name, end, .. } => {
                    if let Some(q) = top.qname {
                        self.check_end(q, name)?;
                    }
                    self.close_frame(frames, end);
                }
                Token::Eof => {
                    let s = top.start;
                    return Err(self.unclosed(s));
                }
                other => {
                    self.other_content(top_id, other)?;
                }
            }
        }
    }
}
