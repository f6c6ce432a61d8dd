//! Parsing: data → an infoset of elements in document order, which [`crate::build`] turns into
//! tree elements. Building a flat list first lets a failed speculative branch (an optional
//! occurrence, a choice branch) be dropped by truncation.

use crate::error::DfdlError;
use crate::model::*;
use crate::text::{Delims, read_calendar};

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PVal {
    Folder,
    Nil,
    /// Text that is the source bytes themselves.
    Src(u32, u32),
    Text(String),
    Int(i64),
    Decimal(String),
    Bool(bool),
    Date(i32),
    Time(i64),
    Timestamp(i64),
    /// Bytes that are the source bytes themselves.
    SrcBlob(u32, u32),
    Blob(Vec<u8>),
}

#[derive(Debug, Clone)]
pub(crate) struct INode<'s> {
    pub parent: u32,
    pub name: &'s str,
    pub value: PVal,
}

pub(crate) const NO_PARENT: u32 = u32::MAX;

enum Outcome {
    Present,
    /// A zero-length field of an optional element whose type has no empty value.
    Empty,
}

pub(crate) struct Ctx<'s, 'd> {
    data: &'d [u8],
    pos: usize,
    end: usize,
    scope: Vec<&'s Delims>,
    /// How many delimiters in scope start with each byte, so a scan tests one table entry
    /// per byte.
    first: [u16; 256],
    pub nodes: Vec<INode<'s>>,
    /// The error furthest into the data among branches that were given up, reported when the
    /// parse as a whole fails later at an earlier place.
    furthest: Option<(usize, DfdlError)>,
    /// The value of the last delimited field read through an escape scheme, escapes removed.
    unescaped: Option<Vec<u8>>,
}

/// Parse `data` as the element `root`.
pub(crate) fn parse<'s>(root: &'s Element, data: &[u8]) -> Result<Vec<INode<'s>>, DfdlError> {
    let mut c = run(root, data)?;
    if c.pos != data.len() {
        let e = c.err(
            &root.path,
            format!(
                "{} bytes of data remain after the message was parsed",
                data.len() - c.pos
            ),
        );
        return Err(c.prefer_furthest(e));
    }
    Ok(c.nodes)
}

/// Parse the element `root` from the start of `data`, leaving what follows it: the number of
/// bytes the element took (a record of a parsed record sequence).
pub(crate) fn parse_prefix(root: &Element, data: &[u8]) -> Result<usize, DfdlError> {
    Ok(run(root, data)?.pos)
}

fn run<'s, 'd>(root: &'s Element, data: &'d [u8]) -> Result<Ctx<'s, 'd>, DfdlError> {
    let mut c = Ctx {
        data,
        pos: 0,
        end: data.len(),
        scope: Vec::new(),
        first: [0; 256],
        nodes: Vec::with_capacity(data.len() / 8),
        furthest: None,
        unescaped: None,
    };
    match c.element(root, NO_PARENT) {
        Ok(Outcome::Present) => Ok(c),
        Ok(Outcome::Empty) => Err(c.err(root.path.as_str(), "the message is empty")),
        Err(e) => Err(c.prefer_furthest(e)),
    }
}

impl<'s> Ctx<'s, '_> {
    fn err(&self, component: &str, message: impl Into<String>) -> DfdlError {
        DfdlError::Parse {
            offset: self.pos,
            component: component.to_string(),
            message: message.into(),
        }
    }

    fn prefer_furthest(&mut self, e: DfdlError) -> DfdlError {
        let at = offset(&e);
        match self.furthest.take() {
            Some((o, f)) if o > at => f,
            _ => e,
        }
    }

    fn give_up(&mut self, e: DfdlError, mark: (usize, usize)) {
        let at = offset(&e);
        if self.furthest.as_ref().is_none_or(|(o, _)| at > *o) {
            self.furthest = Some((at, e));
        }
        self.pos = mark.0;
        self.nodes.truncate(mark.1);
    }

    fn eat(&mut self, d: &Delims) -> bool {
        match d.match_at(&self.data[self.pos..self.end]) {
            Some(n) => {
                self.pos += n;
                true
            }
            None => false,
        }
    }

    fn expect(&mut self, d: &Delims, what: &str, component: &str) -> Result<(), DfdlError> {
        if d.is_empty() || self.eat(d) {
            return Ok(());
        }
        let expected = String::from_utf8_lossy(&d.out).into_owned();
        Err(self.err(
            component,
            format!("expected the {what} '{}'", expected.escape_debug()),
        ))
    }

    fn element(&mut self, e: &'s Element, parent: u32) -> Result<Outcome, DfdlError> {
        self.expect(&e.initiator, "initiator", &e.path)?;
        let pushed = !e.terminator.is_empty();
        if pushed {
            self.push_scope(&e.terminator);
        }
        let r = self.element_content(e, parent);
        if pushed {
            self.pop_scope();
        }
        let r = r?;
        self.expect(&e.terminator, "terminator", &e.path)?;
        Ok(r)
    }

    fn element_content(&mut self, e: &'s Element, parent: u32) -> Result<Outcome, DfdlError> {
        match &e.body {
            Body::Complex(g) => {
                let me = self.nodes.len() as u32;
                self.nodes.push(INode {
                    parent,
                    name: &e.name,
                    value: PVal::Folder,
                });
                match e.complex_length {
                    Some(n) => {
                        if self.pos + n > self.end {
                            return Err(self.err(
                                &e.path,
                                format!("needs {n} bytes but {} remain", self.end - self.pos),
                            ));
                        }
                        let saved = self.end;
                        self.end = self.pos + n;
                        let r = self.group(g, me);
                        // Unused bytes of a fixed-length record are filler.
                        self.pos = self.end;
                        self.end = saved;
                        r?;
                    }
                    None => self.group(g, me)?,
                }
                Ok(Outcome::Present)
            }
            Body::Simple(s) => {
                let (start, end) = self.field(s, &e.path, parent)?;
                let unescaped = self.unescaped.take();
                let data = unescaped.as_deref().unwrap_or(self.data);
                let (start, end) = match &unescaped {
                    Some(v) => trim(v, 0, v.len(), s),
                    None => trim(data, start, end, s),
                };
                let raw = &data[start..end];
                if let Some(nil) = &e.nil
                    && ((raw.is_empty() && nil.empty) || nil.alts.iter().any(|a| a == raw))
                {
                    self.nodes.push(INode {
                        parent,
                        name: &e.name,
                        value: PVal::Nil,
                    });
                    return Ok(Outcome::Present);
                }
                if raw.is_empty() && !s.binary && !matches!(s.ty, Ty::String) {
                    if e.min == 0 || e.default.is_none() {
                        return Ok(Outcome::Empty);
                    }
                    // A required element with a default takes its default when empty.
                    let d = e.default.as_deref().unwrap_or("");
                    let value = convert_text(d, s).map_err(|m| self.err(&e.path, m))?;
                    self.nodes.push(INode {
                        parent,
                        name: &e.name,
                        value,
                    });
                    return Ok(Outcome::Present);
                }
                let value = match &unescaped {
                    Some(_) => self.value_of(s, raw, None),
                    None => self.value(s, start, end),
                };
                let value = value.map_err(|m| DfdlError::Parse {
                    offset: start,
                    component: e.path.clone(),
                    message: m,
                })?;
                self.nodes.push(INode {
                    parent,
                    name: &e.name,
                    value,
                });
                Ok(Outcome::Present)
            }
        }
    }

    /// The byte range of a simple field.
    fn field(
        &mut self,
        s: &Simple,
        component: &str,
        parent: u32,
    ) -> Result<(usize, usize), DfdlError> {
        let start = self.pos;
        let rest = &self.data[start..self.end];
        let length = match &s.length {
            Length::Expression(p, units) => {
                Length::Explicit(self.count(p, parent, component)? as usize, *units)
            }
            other => other.clone(),
        };
        let len = match length {
            Length::Expression(..) => 0,
            Length::Explicit(n, Units::Bytes) => {
                if rest.len() < n {
                    return Err(self.err(
                        component,
                        format!("needs {n} bytes but {} remain", rest.len()),
                    ));
                }
                n
            }
            Length::Explicit(n, Units::Characters) => {
                s.encoding.bytes_for_chars(rest, n).ok_or_else(|| {
                    self.err(component, format!("needs {n} characters but fewer remain"))
                })?
            }
            Length::Delimited => match &s.escape {
                Some(scheme) => {
                    let (n, value) = crate::escape::scan(rest, scheme, |d| self.ends_at(d))
                        .map_err(|m| self.err(component, m))?;
                    self.unescaped = Some(value);
                    n
                }
                None => self.scan(rest),
            },
        };
        self.pos = start + len;
        Ok((start, start + len))
    }

    fn push_scope(&mut self, d: &'s Delims) {
        for a in &d.alts {
            if let Some(&b) = a.first() {
                self.first[b as usize] += 1;
            }
        }
        self.scope.push(d);
    }

    fn pop_scope(&mut self) {
        if let Some(d) = self.scope.pop() {
            for a in &d.alts {
                if let Some(&b) = a.first() {
                    self.first[b as usize] -= 1;
                }
            }
        }
    }

    /// Whether a delimiter in scope starts `data`.
    fn ends_at(&self, data: &[u8]) -> bool {
        data.first().is_some_and(|&b| self.first[b as usize] != 0)
            && self.scope.iter().any(|d| d.match_at(data).is_some())
    }

    /// The length of the data before the first delimiter in scope.
    fn scan(&self, rest: &[u8]) -> usize {
        if self.scope.is_empty() {
            return rest.len();
        }
        for (i, &b) in rest.iter().enumerate() {
            if self.first[b as usize] != 0
                && self.scope.iter().any(|d| d.match_at(&rest[i..]).is_some())
            {
                return i;
            }
        }
        rest.len()
    }

    fn value(&self, s: &Simple, start: usize, end: usize) -> Result<PVal, String> {
        self.value_of(s, &self.data[start..end], Some((start, end)))
    }

    /// A field's bytes as a value; `src` is where they are in the data when they are the data's
    /// own (so text can point at them), None for bytes made by removing escapes.
    fn value_of(
        &self,
        s: &Simple,
        raw: &[u8],
        src: Option<(usize, usize)>,
    ) -> Result<PVal, String> {
        if let Some(rep) = s.digits {
            let text = crate::numbers::read(raw, rep, s.scale)?;
            return match s.ty {
                Ty::Int { bytes, signed } => {
                    let v: i64 = text
                        .parse()
                        .map_err(|_| format!("{text} is larger than the tree's INTEGER holds"))?;
                    check_range(v, bytes, signed).map_err(|m| format!("{text}: {m}"))?;
                    Ok(PVal::Int(v))
                }
                _ => Ok(PVal::Decimal(text)),
            };
        }
        if s.binary {
            return match s.ty {
                Ty::Int { bytes, signed } => {
                    binary_int(raw, s.big_endian, signed, bytes).map(PVal::Int)
                }
                _ => Ok(match src {
                    Some((start, end)) => PVal::SrcBlob(start as u32, end as u32),
                    None => PVal::Blob(raw.to_vec()),
                }),
            };
        }
        if let (Ty::String, true, Some((start, end))) = (s.ty, s.encoding.is_utf8_compatible(), src)
        {
            s.encoding.decode(raw)?;
            return Ok(PVal::Src(start as u32, end as u32));
        }
        let text = s.encoding.decode(raw)?;
        if s.ty == Ty::Boolean {
            return if raw == s.true_rep.as_slice() {
                Ok(PVal::Bool(true))
            } else if raw == s.false_rep.as_slice() {
                Ok(PVal::Bool(false))
            } else {
                Err(format!("'{text}' is not a boolean representation"))
            };
        }
        convert_text(&text, s)
    }

    fn group(&mut self, g: &'s Group, parent: u32) -> Result<(), DfdlError> {
        self.expect(&g.initiator, "initiator", &g.path)?;
        let pushed = !g.terminator.is_empty();
        if pushed {
            self.push_scope(&g.terminator);
        }
        let r = match g.kind {
            GroupKind::Sequence => self.sequence(g, parent),
            GroupKind::Choice => self.choice(g, parent),
        };
        if pushed {
            self.pop_scope();
        }
        r?;
        self.expect(&g.terminator, "terminator", &g.path)
    }

    fn sequence(&mut self, g: &'s Group, parent: u32) -> Result<(), DfdlError> {
        let sep = !g.separator.is_empty();
        if sep {
            self.push_scope(&g.separator);
        }
        let mut items = 0usize;
        let r = (|| {
            for m in &g.members {
                match m {
                    Term::Element(e) => self.occurrences(e, g, parent, &mut items)?,
                    Term::Group(sub) => {
                        self.sep_before(g, items, true)?;
                        self.group(sub, parent)?;
                        items += 1;
                        self.sep_after(g)?;
                    }
                }
            }
            Ok(())
        })();
        if sep {
            self.pop_scope();
        }
        r
    }

    /// The separator before an item; false when it is missing and the item is optional.
    fn sep_before(&mut self, g: &Group, items: usize, required: bool) -> Result<bool, DfdlError> {
        if g.separator.is_empty() {
            return Ok(true);
        }
        let wanted = match g.sep_pos {
            SepPos::Prefix => true,
            SepPos::Infix => items > 0,
            SepPos::Postfix => false,
        };
        if !wanted || self.eat(&g.separator) {
            return Ok(true);
        }
        if required {
            self.expect(&g.separator, "separator", &g.path)?;
        }
        Ok(false)
    }

    fn sep_after(&mut self, g: &Group) -> Result<(), DfdlError> {
        if g.sep_pos == SepPos::Postfix {
            self.expect(&g.separator, "separator", &g.path)?;
        }
        Ok(())
    }

    fn occurrences(
        &mut self,
        e: &'s Element,
        g: &'s Group,
        parent: u32,
        items: &mut usize,
    ) -> Result<(), DfdlError> {
        let (min, max) = match &e.count {
            Count::Occurs(Occurs::Fixed) => {
                let n = e.max.unwrap_or(e.min);
                (n, Some(n))
            }
            Count::Occurs(Occurs::Parsed) => (e.min, None),
            Count::Occurs(Occurs::Implicit) => (e.min, e.max),
            Count::Expression(p) => {
                let n = self.count(p, parent, &e.path)?;
                (n, Some(n))
            }
        };
        let mut n = 0u32;
        while max.is_none_or(|m| n < m) {
            let mark = (self.pos, self.nodes.len());
            let required = n < min;
            if !self.sep_before(g, *items, required)? {
                break;
            }
            if !required && self.pos >= self.end {
                self.pos = mark.0;
                break;
            }
            match self.element(e, parent) {
                Ok(Outcome::Present) => {
                    n += 1;
                    *items += 1;
                    self.sep_after(g)?;
                }
                Ok(Outcome::Empty) if !required => {
                    *items += 1;
                    self.sep_after(g)?;
                    break;
                }
                Ok(Outcome::Empty) => {
                    return Err(self.err(&e.path, "the element is required but its field is empty"));
                }
                Err(err) if !required => {
                    self.give_up(err, mark);
                    break;
                }
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Evaluate an occursCount path against the elements parsed so far.
    fn count(&self, p: &RelPath, parent: u32, component: &str) -> Result<u32, DfdlError> {
        let mut at = parent;
        for _ in 1..p.up {
            at = self
                .nodes
                .get(at as usize)
                .map(|n| n.parent)
                .unwrap_or(NO_PARENT);
        }
        for name in &p.down {
            at = self
                .nodes
                .iter()
                .enumerate()
                .rev()
                .find(|(_, n)| n.parent == at && n.name == name)
                .map(|(i, _)| i as u32)
                .ok_or_else(|| {
                    self.err(
                        component,
                        format!("occursCount: no element '{name}' before this one"),
                    )
                })?;
        }
        match self.nodes.get(at as usize).map(|n| &n.value) {
            Some(PVal::Int(v)) if *v >= 0 && *v <= i64::from(u32::MAX) => Ok(*v as u32),
            _ => Err(self.err(
                component,
                "occursCount does not name a non-negative integer",
            )),
        }
    }

    fn choice(&mut self, g: &'s Group, parent: u32) -> Result<(), DfdlError> {
        let rest = &self.data[self.pos..self.end];
        if let Some(branch) = g.members.iter().find(|m| {
            m.leading_initiator()
                .is_some_and(|d| d.match_at(rest).is_some())
        }) {
            return self.term(branch, parent);
        }
        let mut last = None;
        for m in g.members.iter().filter(|m| m.leading_initiator().is_none()) {
            let mark = (self.pos, self.nodes.len());
            match self.term(m, parent) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    last = Some(e.to_string());
                    self.give_up(e, mark);
                }
            }
        }
        Err(self.err(
            &g.path,
            match last {
                Some(l) => format!("no branch of the choice matches the data (last: {l})"),
                None => "no branch of the choice matches the data".to_string(),
            },
        ))
    }

    fn term(&mut self, t: &'s Term, parent: u32) -> Result<(), DfdlError> {
        match t {
            Term::Element(e) => match self.element(e, parent)? {
                Outcome::Present => Ok(()),
                Outcome::Empty => Err(self.err(&e.path, "the field is empty")),
            },
            Term::Group(g) => self.group(g, parent),
        }
    }
}

fn offset(e: &DfdlError) -> usize {
    match e {
        DfdlError::Parse { offset, .. } => *offset,
        _ => 0,
    }
}

/// The field without its padding, as `textTrimKind` asks.
fn trim(data: &[u8], mut start: usize, mut end: usize, s: &Simple) -> (usize, usize) {
    let Some(p) = s.trim else {
        return (start, end);
    };
    if s.binary {
        return (start, end);
    }
    let is_number = matches!(s.ty, Ty::Int { .. } | Ty::Decimal);
    if matches!(s.justify, Justify::Left | Justify::Center) {
        while end > start && data[end - 1] == p {
            end -= 1;
        }
    }
    if matches!(s.justify, Justify::Right | Justify::Center) {
        while start < end && data[start] == p {
            start += 1;
        }
        // A number padded with zeros keeps one zero.
        if is_number && start == end && end > 0 && p == b'0' {
            start -= 1;
        }
    }
    (start, end)
}

fn binary_int(raw: &[u8], big_endian: bool, signed: bool, bytes: u8) -> Result<i64, String> {
    if raw.is_empty() || raw.len() > 8 {
        return Err(format!(
            "a binary number of {} bytes is not supported",
            raw.len()
        ));
    }
    let mut v: u64 = 0;
    if big_endian {
        for &b in raw {
            v = (v << 8) | u64::from(b);
        }
    } else {
        for &b in raw.iter().rev() {
            v = (v << 8) | u64::from(b);
        }
    }
    let bits = raw.len() * 8;
    if signed && bits < 64 && v & (1 << (bits - 1)) != 0 {
        v |= !0u64 << bits;
    }
    if !signed && v > i64::MAX as u64 {
        return Err(format!("{v} is larger than the tree's INTEGER holds"));
    }
    let _ = bytes;
    Ok(v as i64)
}

/// A text field (decoded, trimmed) as a value of the simple type.
pub(crate) fn convert_text(text: &str, s: &Simple) -> Result<PVal, String> {
    match s.ty {
        Ty::String => Ok(PVal::Text(text.to_string())),
        Ty::Int { bytes, signed } => {
            let clean = number_text(text, s, false)?;
            let v: i64 = clean
                .parse()
                .map_err(|_| format!("'{text}' is not a valid integer"))?;
            check_range(v, bytes, signed).map_err(|m| format!("'{text}': {m}"))?;
            Ok(PVal::Int(v))
        }
        Ty::Decimal => Ok(PVal::Decimal(number_text(text, s, true)?)),
        Ty::Boolean => match text {
            t if t.as_bytes() == s.true_rep.as_slice() => Ok(PVal::Bool(true)),
            t if t.as_bytes() == s.false_rep.as_slice() => Ok(PVal::Bool(false)),
            _ => Err(format!("'{text}' is not a boolean representation")),
        },
        Ty::Date | Ty::Time | Ty::DateTime => {
            let pat = s.calendar.as_deref().unwrap_or(&[]);
            let p = read_calendar(text, pat)?;
            Ok(match s.ty {
                Ty::Date => PVal::Date(
                    i32::try_from(p.days()).map_err(|_| format!("'{text}' is out of range"))?,
                ),
                Ty::Time => PVal::Time(p.micros),
                _ => PVal::Timestamp(p.timestamp()),
            })
        }
        Ty::HexBinary => {
            let t = text.as_bytes();
            if !t.len().is_multiple_of(2) {
                return Err(format!("'{text}' is not hexadecimal byte pairs"));
            }
            t.chunks(2)
                .map(|p| {
                    std::str::from_utf8(p)
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .ok_or_else(|| format!("'{text}' is not hexadecimal"))
                })
                .collect::<Result<Vec<u8>, String>>()
                .map(PVal::Blob)
        }
    }
}

pub(crate) fn check_range(v: i64, bytes: u8, signed: bool) -> Result<(), String> {
    if bytes >= 8 {
        return if !signed && v < 0 {
            Err("a negative value for an unsigned type".into())
        } else {
            Ok(())
        };
    }
    let bits = u32::from(bytes) * 8;
    let (lo, hi) = if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    if v < lo || v > hi {
        return Err(format!("out of range {lo}..={hi}"));
    }
    Ok(())
}

/// Standard number text → canonical text (`-12.50`, `7`): grouping removed, the decimal
/// separator made `.`, a leading `+` dropped.
fn number_text(text: &str, s: &Simple, decimal: bool) -> Result<String, String> {
    let bad = || {
        format!(
            "'{text}' is not a valid {}",
            if decimal { "decimal" } else { "integer" }
        )
    };
    let t = text.trim_matches(' ');
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut out = String::with_capacity(digits.len() + 2);
    if neg {
        out.push('-');
    }
    let mut seen_point = false;
    let mut int_digits = 0usize;
    let mut frac_digits = 0;
    for &b in digits.as_bytes() {
        if b.is_ascii_digit() {
            out.push(b as char);
            if seen_point {
                frac_digits += 1;
            } else {
                int_digits += 1;
            }
        } else if b == s.group_sep && s.grouping && !seen_point {
        } else if b == s.decimal_sep && decimal && !seen_point {
            if int_digits == 0 {
                out.push('0');
            }
            out.push('.');
            seen_point = true;
        } else {
            return Err(bad());
        }
    }
    if int_digits + frac_digits == 0 || (seen_point && frac_digits == 0) {
        return Err(bad());
    }
    // Leading zeros are padding (`00.30` is 0.30): keep one before the point.
    let sign = usize::from(neg);
    let zeros = out[sign..]
        .bytes()
        .take_while(|&b| b == b'0')
        .count()
        .min(int_digits.saturating_sub(1));
    if zeros > 0 {
        out.replace_range(sign..sign + zeros, "");
    }
    Ok(out)
}
