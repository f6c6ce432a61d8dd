//! Serialising: a tree that matches the model → data.

use sluice_tree::{NodeId, Tree, Value};

use crate::error::DfdlError;
use crate::model::*;
use crate::parse::{PVal, check_range, convert_text};
use crate::text::{CalParts, Delims, write_calendar};

pub(crate) struct Writer<'t, 'm> {
    tree: &'t mut Tree,
    pub out: Vec<u8>,
    /// The delimiters in scope (terminators and separators of the enclosing components), which
    /// an escape scheme keeps out of a field's value.
    scope: Vec<&'m Delims>,
}

fn err(component: &str, message: impl Into<String>) -> DfdlError {
    DfdlError::Unparse {
        component: component.to_string(),
        message: message.into(),
    }
}

impl<'t, 'm> Writer<'t, 'm> {
    pub fn new(tree: &'t mut Tree) -> Writer<'t, 'm> {
        Writer {
            tree,
            out: Vec::new(),
            scope: Vec::new(),
        }
    }

    /// Write the tree element `id` as the element `e`.
    pub fn root(&mut self, e: &'m Element, id: NodeId) -> Result<(), DfdlError> {
        self.element(e, Some(id))
    }

    fn element(&mut self, e: &'m Element, id: Option<NodeId>) -> Result<(), DfdlError> {
        self.out.extend_from_slice(&e.initiator.out);
        let pushed = !e.terminator.is_empty();
        if pushed {
            self.scope.push(&e.terminator);
        }
        let r = self.element_content(e, id);
        if pushed {
            self.scope.pop();
        }
        r?;
        self.out.extend_from_slice(&e.terminator.out);
        Ok(())
    }

    fn element_content(&mut self, e: &'m Element, id: Option<NodeId>) -> Result<(), DfdlError> {
        match &e.body {
            Body::Complex(g) => {
                let id = id.ok_or_else(|| err(&e.path, "the element is required but missing"))?;
                let children = self
                    .tree
                    .children(id)
                    .map_err(|x| err(&e.path, x.to_string()))?;
                let start = self.out.len();
                let mut at = 0usize;
                self.group(g, &children, &mut at)?;
                if at < children.len() {
                    let name =
                        String::from_utf8_lossy(self.tree.name_bytes(children[at])).into_owned();
                    return Err(err(
                        &e.path,
                        format!("the element '{name}' does not belong here"),
                    ));
                }
                if let Some(n) = e.complex_length {
                    let written = self.out.len() - start;
                    if written > n {
                        return Err(err(
                            &e.path,
                            format!("the content is {written} bytes, longer than the length {n}"),
                        ));
                    }
                    self.out.resize(start + n, b' ');
                }
            }
            Body::Simple(s) => self.simple(e, s, id)?,
        }
        Ok(())
    }

    fn group(
        &mut self,
        g: &'m Group,
        children: &[NodeId],
        at: &mut usize,
    ) -> Result<(), DfdlError> {
        self.out.extend_from_slice(&g.initiator.out);
        let pushed = !g.terminator.is_empty();
        if pushed {
            self.scope.push(&g.terminator);
        }
        let r = self.group_content(g, children, at);
        if pushed {
            self.scope.pop();
        }
        r?;
        self.out.extend_from_slice(&g.terminator.out);
        Ok(())
    }

    fn group_content(
        &mut self,
        g: &'m Group,
        children: &[NodeId],
        at: &mut usize,
    ) -> Result<(), DfdlError> {
        match g.kind {
            GroupKind::Sequence => self.sequence(g, children, at)?,
            GroupKind::Choice => {
                let next = children.get(*at).map(|&c| self.tree.name_bytes(c).to_vec());
                let branch = g
                    .members
                    .iter()
                    .find(|m| m.first_name().map(str::as_bytes) == next.as_deref())
                    .ok_or_else(|| {
                        err(
                            &g.path,
                            match &next {
                                Some(n) => format!(
                                    "no branch of the choice starts with '{}'",
                                    String::from_utf8_lossy(n)
                                ),
                                None => "the choice has no element to write".to_string(),
                            },
                        )
                    })?;
                match branch {
                    Term::Element(e) => {
                        let id = children.get(*at).copied();
                        *at += 1;
                        self.element(e, id)?;
                    }
                    Term::Group(sub) => self.group(sub, children, at)?,
                }
            }
        }
        Ok(())
    }

    fn sequence(
        &mut self,
        g: &'m Group,
        children: &[NodeId],
        at: &mut usize,
    ) -> Result<(), DfdlError> {
        let pushed = !g.separator.is_empty();
        if pushed {
            self.scope.push(&g.separator);
        }
        let r = self.sequence_members(g, children, at);
        if pushed {
            self.scope.pop();
        }
        r
    }

    fn sequence_members(
        &mut self,
        g: &'m Group,
        children: &[NodeId],
        at: &mut usize,
    ) -> Result<(), DfdlError> {
        let mut items = 0usize;
        let sep = |w: &mut Writer, items: usize, before: bool| {
            if g.separator.is_empty() {
                return;
            }
            let write = match (g.sep_pos, before) {
                (SepPos::Prefix, true) | (SepPos::Postfix, false) => true,
                (SepPos::Infix, true) => items > 0,
                _ => false,
            };
            if write {
                w.out.extend_from_slice(&g.separator.out);
            }
        };
        for m in &g.members {
            match m {
                Term::Element(e) => {
                    let mut found = Vec::new();
                    while let Some(&c) = children.get(*at) {
                        if self.tree.name_bytes(c) != e.name.as_bytes()
                            || e.max.is_some_and(|m| found.len() as u32 >= m)
                        {
                            break;
                        }
                        found.push(c);
                        *at += 1;
                    }
                    let wanted = match e.count {
                        Count::Occurs(Occurs::Fixed) => e.max.unwrap_or(e.min) as usize,
                        _ => e.min as usize,
                    };
                    if found.len() < wanted && e.default.is_none() {
                        return Err(err(
                            &e.path,
                            format!(
                                "{} occurrences are required, the tree has {}",
                                wanted,
                                found.len()
                            ),
                        ));
                    }
                    let total = found.len().max(wanted);
                    for i in 0..total {
                        sep(self, items, true);
                        self.element(e, found.get(i).copied())?;
                        items += 1;
                        sep(self, items, false);
                    }
                }
                Term::Group(sub) => {
                    sep(self, items, true);
                    self.group(sub, children, at)?;
                    items += 1;
                    sep(self, items, false);
                }
            }
        }
        Ok(())
    }

    fn simple(&mut self, e: &'m Element, s: &Simple, id: Option<NodeId>) -> Result<(), DfdlError> {
        let value = id.map(|i| self.tree.value(i)).unwrap_or(Value::Null);
        let value = if value.is_null() {
            if let (Some(nil), Some(_)) = (&e.nil, id) {
                let nil = nil.out.clone();
                return self.fit(e, s, nil);
            }
            match &e.default {
                Some(d) => Default::Text(d.clone()),
                None => return Err(err(&e.path, "the element has no value and no default")),
            }
        } else {
            Default::Tree(value)
        };
        let bytes = match value {
            Default::Tree(v) => self.encode(e, s, v)?,
            Default::Text(d) => {
                let pv = convert_text(&d, s).map_err(|m| err(&e.path, format!("default: {m}")))?;
                let v = match pv {
                    PVal::Int(i) => Value::Integer(i),
                    PVal::Bool(b) => Value::Boolean(b),
                    PVal::Date(d) => Value::Date(d),
                    PVal::Time(t) => Value::Time(t),
                    PVal::Timestamp(t) => Value::Timestamp(t),
                    _ => Value::Character(self.tree.alloc_text(d.as_bytes())),
                };
                self.encode(e, s, v)?
            }
        };
        self.fit(e, s, bytes)
    }

    /// Pad or check a field's bytes against its length, and append them.
    fn fit(&mut self, e: &'m Element, s: &Simple, mut bytes: Vec<u8>) -> Result<(), DfdlError> {
        if let Length::Explicit(n, units) = s.length {
            let have = match units {
                Units::Bytes => bytes.len(),
                Units::Characters => s.encoding.char_count(&bytes),
            };
            if have > n {
                if s.truncate && s.ty == Ty::String {
                    let keep = match units {
                        Units::Bytes => n,
                        Units::Characters => s.encoding.bytes_for_chars(&bytes, n).unwrap_or(n),
                    };
                    bytes.truncate(keep);
                } else {
                    return Err(err(
                        &e.path,
                        format!("the value is {have} long, longer than the length {n}"),
                    ));
                }
            } else if have < n {
                let missing = n - have;
                let p = s.pad.unwrap_or(s.fill);
                let (left, right) = match (s.pad.is_some(), s.justify) {
                    (false, _) | (true, Justify::Left) => (0, missing),
                    (true, Justify::Right) => (missing, 0),
                    (true, Justify::Center) => (missing / 2, missing - missing / 2),
                };
                self.out.extend(std::iter::repeat_n(p, left));
                self.out.extend_from_slice(&bytes);
                self.out.extend(std::iter::repeat_n(p, right));
                return Ok(());
            }
        }
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    fn encode(&mut self, e: &'m Element, s: &Simple, v: Value) -> Result<Vec<u8>, DfdlError> {
        let bad = |m: String| err(&e.path, m);
        if let Some(rep) = s.digits {
            let text = match v {
                Value::Integer(i) => i.to_string(),
                Value::Decimal(t) | Value::Character(t) => self.tree.str(t).into_owned(),
                other => return Err(bad(format!("a {} is not a number", other.type_name()))),
            };
            if let Ty::Int { bytes, signed } = s.ty {
                let i: i64 = text
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("'{text}' is not an integer")))?;
                check_range(i, bytes, signed).map_err(|m| bad(format!("{i}: {m}")))?;
            }
            let length = match s.length {
                Length::Explicit(n, _) => Some(n),
                _ => None,
            };
            return crate::numbers::write(&text, rep, length, s.scale, s.signed).map_err(bad);
        }
        if s.binary {
            return match s.ty {
                Ty::Int { bytes, signed } => {
                    let i = self.integer(v).map_err(bad)?;
                    check_range(i, bytes, signed).map_err(|m| err(&e.path, format!("{i}: {m}")))?;
                    let n = match s.length {
                        Length::Explicit(n, _) => n.min(8),
                        _ => usize::from(bytes),
                    };
                    let be = i.to_be_bytes();
                    let mut b = be[8 - n..].to_vec();
                    if !s.big_endian {
                        b.reverse();
                    }
                    Ok(b)
                }
                _ => match v {
                    Value::Blob(t) | Value::Character(t) => Ok(self.tree.bytes(t).to_vec()),
                    other => Err(bad(format!(
                        "a {} cannot be written as bytes",
                        other.type_name()
                    ))),
                },
            };
        }
        let text = match s.ty {
            Ty::String => self.text(v),
            Ty::Int { bytes, signed } => {
                let i = self.integer(v).map_err(bad)?;
                check_range(i, bytes, signed).map_err(|m| err(&e.path, format!("{i}: {m}")))?;
                format_number(&i.to_string(), s)
            }
            Ty::Decimal => {
                let t = match v {
                    Value::Decimal(t) | Value::Character(t) => self.tree.str(t).into_owned(),
                    Value::Integer(i) => i.to_string(),
                    Value::Float(f) => f.to_string(),
                    other => return Err(bad(format!("a {} is not a decimal", other.type_name()))),
                };
                format_number(&t, s)
            }
            Ty::Boolean => {
                let b = match v {
                    Value::Boolean(b) => b,
                    Value::Character(t) => match self.tree.bytes(t) {
                        b"true" | b"1" => true,
                        b"false" | b"0" => false,
                        _ => return Err(bad("not a boolean".into())),
                    },
                    other => return Err(bad(format!("a {} is not a boolean", other.type_name()))),
                };
                let rep = if b { &s.true_rep } else { &s.false_rep };
                return Ok(rep.clone());
            }
            Ty::Date | Ty::Time | Ty::DateTime => {
                let parts = match v {
                    Value::Date(d) => CalParts::from_days(i64::from(d)),
                    Value::Time(t) | Value::GmtTime(t) => CalParts {
                        year: 1970,
                        month: 1,
                        day: 1,
                        micros: t,
                    },
                    Value::Timestamp(t) | Value::GmtTimestamp(t) => CalParts::from_timestamp(t),
                    Value::Character(t) => {
                        // Text is written as it is: a flow may already hold the formatted form.
                        let mut b = Vec::new();
                        s.encoding.encode(&self.tree.str(t), &mut b).map_err(bad)?;
                        return Ok(b);
                    }
                    other => {
                        return Err(bad(format!(
                            "a {} is not a date or time",
                            other.type_name()
                        )));
                    }
                };
                let mut t = String::new();
                write_calendar(&parts, s.calendar.as_deref().unwrap_or(&[]), &mut t);
                t
            }
            Ty::HexBinary => match v {
                Value::Blob(t) => self
                    .tree
                    .bytes(t)
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect(),
                other => self.text(other),
            },
        };
        let mut b = Vec::with_capacity(text.len());
        s.encoding.encode(&text, &mut b).map_err(bad)?;
        match (&s.escape, &s.length) {
            (Some(scheme), Length::Delimited) => Ok(crate::escape::write(&b, scheme, |d| {
                self.scope.iter().any(|x| x.match_at(d).is_some())
            })),
            _ => Ok(b),
        }
    }

    fn integer(&self, v: Value) -> Result<i64, String> {
        match v {
            Value::Integer(i) => Ok(i),
            Value::Decimal(t) | Value::Character(t) => {
                let s = self.tree.str(t);
                s.trim()
                    .parse()
                    .map_err(|_| format!("'{s}' is not an integer"))
            }
            Value::Boolean(b) => Ok(i64::from(b)),
            other => Err(format!("a {} is not an integer", other.type_name())),
        }
    }

    fn text(&self, v: Value) -> String {
        match v {
            Value::Character(t) | Value::Decimal(t) | Value::Bit(t) => {
                self.tree.str(t).into_owned()
            }
            Value::Blob(t) => self
                .tree
                .bytes(t)
                .iter()
                .map(|b| format!("{b:02X}"))
                .collect(),
            Value::Integer(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Boolean(b) => b.to_string(),
            Value::Null => String::new(),
            Value::Date(d) => {
                let mut s = String::new();
                write_calendar(
                    &CalParts::from_days(i64::from(d)),
                    &crate::text::calendar_pattern("yyyy-MM-dd").unwrap_or_default(),
                    &mut s,
                );
                s
            }
            other => format!("{other:?}"),
        }
    }
}

enum Default {
    Tree(Value),
    Text(String),
}

/// Canonical number text (`-1234.5`) in the pattern's form: minimum integer digits, fraction
/// digits, grouping and the separators.
fn format_number(canon: &str, s: &Simple) -> String {
    let (neg, body) = match canon.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, canon.strip_prefix('+').unwrap_or(canon)),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    let int = int.trim_start_matches('0');
    let mut digits = String::new();
    for _ in int.len()..s.min_int_digits {
        digits.push('0');
    }
    digits.push_str(int);
    let mut out = String::with_capacity(digits.len() + frac.len() + 4);
    if neg {
        out.push('-');
    }
    if s.grouping {
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(s.group_sep as char);
            }
            out.push(c);
        }
    } else {
        out.push_str(&digits);
    }
    let frac = match s.frac_digits {
        Some(n) if frac.len() < n => format!("{frac:0<n$}"),
        _ => frac.to_string(),
    };
    if !frac.is_empty() {
        out.push(s.decimal_sep as char);
        out.push_str(&frac);
    }
    if out.is_empty() || out == "-" {
        out.push('0');
    }
    out
}
