//! Escape schemes (`dfdl:defineEscapeScheme`, `dfdl:escapeSchemeRef`): how a delimited text
//! field holds characters that would otherwise end it — an escape character before each one
//! (`\,`), or the whole value in an escape block (`"a, b"`).

use crate::error::DfdlError;
use crate::props::Loc;
use crate::text::{Delims, Encoding};
use crate::xml::XNode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EscapeKind {
    /// `escapeKind="escapeCharacter"`: the character after it is data.
    Character(u8),
    /// `escapeKind="escapeBlock"`: data between the start and end strings.
    Block { start: Vec<u8>, end: Vec<u8> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EscapeScheme {
    pub kind: EscapeKind,
    /// `escapeEscapeCharacter`: makes an escape character (or a block end) data.
    pub escape_escape: Option<u8>,
    /// `extraEscapedCharacters`: escaped when written, as delimiters are.
    pub extra: Vec<u8>,
    /// `generateEscapeBlock="always"`; else a block is written only when needed.
    pub always_block: bool,
}

/// One character of a scheme property, as a byte of the encoding.
fn one_byte(
    node: &XNode,
    name: &str,
    value: &str,
    enc: &Encoding,
) -> Result<Option<u8>, DfdlError> {
    if value.is_empty() {
        return Ok(None);
    }
    let d = Delims::parse(value, enc, b"\n").map_err(|m| node.err(format!("{name}: {m}")))?;
    match d.out.as_slice() {
        [b] => Ok(Some(*b)),
        _ => Err(node.err(format!(
            "{name} '{value}' must be one single-byte character"
        ))),
    }
}

/// The scheme a `dfdl:defineEscapeScheme` holds, for text in `enc`.
pub(crate) fn compile(define: &XNode, enc: &Encoding) -> Result<EscapeScheme, DfdlError> {
    let node = define
        .children
        .iter()
        .find(|c| c.local == "escapeScheme")
        .ok_or_else(|| define.err("dfdl:defineEscapeScheme needs a dfdl:escapeScheme"))?;
    let get = |name: &str| node.attr(name).unwrap_or("");
    for a in &node.attrs {
        if !matches!(
            a.local.as_str(),
            "escapeKind"
                | "escapeCharacter"
                | "escapeEscapeCharacter"
                | "escapeBlockStart"
                | "escapeBlockEnd"
                | "extraEscapedCharacters"
                | "generateEscapeBlock"
                | "escapeCharacterPolicy"
        ) {
            return Err(node.err(format!("'{}' is not an escape scheme property", a.local)));
        }
    }
    let kind = match get("escapeKind") {
        "escapeCharacter" => EscapeKind::Character(
            one_byte(node, "escapeCharacter", get("escapeCharacter"), enc)?
                .ok_or_else(|| node.err("escapeKind 'escapeCharacter' needs an escapeCharacter"))?,
        ),
        "escapeBlock" => {
            let literal = |name: &str| -> Result<Vec<u8>, DfdlError> {
                let d = Delims::parse(get(name), enc, b"\n")
                    .map_err(|m| node.err(format!("{name}: {m}")))?;
                if d.out.is_empty() {
                    return Err(node.err(format!("escapeKind 'escapeBlock' needs {name}")));
                }
                Ok(d.out)
            };
            EscapeKind::Block {
                start: literal("escapeBlockStart")?,
                end: literal("escapeBlockEnd")?,
            }
        }
        other => {
            return Err(node.err(format!(
                "escapeKind '{other}' is not escapeCharacter or escapeBlock"
            )));
        }
    };
    // Characters are escaped only where they would end the field (or are listed as extra).
    if !matches!(get("escapeCharacterPolicy"), "" | "whenNeeded") {
        return Err(node.err("escapeCharacterPolicy: only 'whenNeeded' is supported"));
    }
    let mut extra = Vec::new();
    for c in get("extraEscapedCharacters").split_whitespace() {
        extra.extend(one_byte(node, "extraEscapedCharacters", c, enc)?);
    }
    let always_block = match get("generateEscapeBlock") {
        "" | "whenNeeded" => false,
        "always" => true,
        other => {
            return Err(node.err(format!(
                "generateEscapeBlock '{other}' is not always or whenNeeded"
            )));
        }
    };
    Ok(EscapeScheme {
        kind,
        escape_escape: one_byte(
            node,
            "escapeEscapeCharacter",
            get("escapeEscapeCharacter"),
            enc,
        )?,
        extra,
        always_block,
    })
}

/// The scheme `escapeSchemeRef` names (a QName: the prefix is not checked), when not empty.
pub(crate) fn lookup<'a>(
    name: &str,
    schemes: &'a std::collections::HashMap<String, XNode>,
    loc: &Loc,
) -> Result<Option<&'a XNode>, DfdlError> {
    let name = name.trim();
    if name.is_empty() {
        return Ok(None);
    }
    let local = name.rsplit_once(':').map_or(name, |(_, l)| l);
    schemes.get(local).map(Some).ok_or_else(|| {
        DfdlError::schema(
            &loc.file,
            loc.line,
            format!("dfdl:escapeSchemeRef '{name}' names no dfdl:defineEscapeScheme"),
        )
    })
}

/// A delimited field at the start of `data` read through `scheme`: its length in the data, and
/// its value with the escapes removed. `ends` says whether a delimiter in scope starts at a
/// position.
pub(crate) fn scan(
    data: &[u8],
    scheme: &EscapeScheme,
    ends: impl Fn(&[u8]) -> bool,
) -> Result<(usize, Vec<u8>), String> {
    let mut value = Vec::new();
    match &scheme.kind {
        EscapeKind::Character(esc) => {
            let mut i = 0;
            while i < data.len() {
                let b = data[i];
                let next = data.get(i + 1).copied();
                if Some(b) == scheme.escape_escape && b != *esc && next == Some(*esc) {
                    value.push(*esc);
                    i += 2;
                } else if b == *esc {
                    // The escaped character is data, whatever it is.
                    value.extend(next);
                    i += 2;
                } else if ends(&data[i..]) {
                    return Ok((i, value));
                } else {
                    value.push(b);
                    i += 1;
                }
            }
            Ok((data.len(), value))
        }
        EscapeKind::Block { start, end } => {
            if !data.starts_with(start) {
                let n = (0..data.len())
                    .find(|&i| ends(&data[i..]))
                    .unwrap_or(data.len());
                return Ok((n, data[..n].to_vec()));
            }
            let mut i = start.len();
            loop {
                if i >= data.len() {
                    return Err("the escape block is not closed".into());
                }
                let b = data[i];
                if Some(b) == scheme.escape_escape && data[i + 1..].starts_with(end) {
                    value.extend_from_slice(end);
                    i += 1 + end.len();
                } else if data[i..].starts_with(end) {
                    return Ok((i + end.len(), value));
                } else {
                    value.push(b);
                    i += 1;
                }
            }
        }
    }
}

/// `value` as a delimited field through `scheme`: escaped so that none of its bytes ends the
/// field (`ends` says whether a delimiter in scope starts at a position).
pub(crate) fn write(value: &[u8], scheme: &EscapeScheme, ends: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    match &scheme.kind {
        EscapeKind::Character(esc) => {
            let mut out = Vec::with_capacity(value.len() + 4);
            for (i, &b) in value.iter().enumerate() {
                if b == *esc {
                    out.push(scheme.escape_escape.unwrap_or(*esc));
                } else if ends(&value[i..]) || scheme.extra.contains(&b) {
                    out.push(*esc);
                }
                out.push(b);
            }
            out
        }
        EscapeKind::Block { start, end } => {
            let needed = scheme.always_block
                || value.starts_with(start)
                || (0..value.len()).any(|i| ends(&value[i..]) || scheme.extra.contains(&value[i]));
            if !needed {
                return value.to_vec();
            }
            let mut out = Vec::with_capacity(value.len() + start.len() + end.len() + 2);
            out.extend_from_slice(start);
            let mut i = 0;
            while i < value.len() {
                if value[i..].starts_with(end) {
                    // An end inside the data is data: the escape-escape character says so.
                    if let Some(ee) = scheme.escape_escape {
                        out.push(ee);
                    }
                    out.extend_from_slice(end);
                    i += end.len();
                } else {
                    out.push(value[i]);
                    i += 1;
                }
            }
            out.extend_from_slice(end);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comma(d: &[u8]) -> bool {
        d.first() == Some(&b',')
    }

    fn character() -> EscapeScheme {
        EscapeScheme {
            kind: EscapeKind::Character(b'\\'),
            escape_escape: Some(b'\\'),
            extra: Vec::new(),
            always_block: false,
        }
    }

    fn block() -> EscapeScheme {
        EscapeScheme {
            kind: EscapeKind::Block {
                start: b"\"".to_vec(),
                end: b"\"".to_vec(),
            },
            escape_escape: Some(b'"'),
            extra: Vec::new(),
            always_block: false,
        }
    }

    #[test]
    fn escape_character_keeps_delimiters_and_itself_as_data() {
        let s = character();
        assert_eq!(scan(br"a\,b,c", &s, comma).unwrap(), (4, b"a,b".to_vec()));
        assert_eq!(scan(br"a\\,b", &s, comma).unwrap(), (3, br"a\".to_vec()));
        assert_eq!(write(br"a,b\c", &s, comma), br"a\,b\\c");
        for v in [&b"x,y"[..], br"\", b",,", b"plain"] {
            let w = write(v, &s, comma);
            assert_eq!(scan(&w, &s, comma).unwrap(), (w.len(), v.to_vec()), "{v:?}");
        }
    }

    #[test]
    fn escape_block_holds_delimiters_and_doubles_its_end() {
        let s = block();
        assert_eq!(
            scan(br#""a, b",c"#, &s, comma).unwrap(),
            (6, b"a, b".to_vec())
        );
        assert_eq!(
            scan(br#""say ""hi""",x"#, &s, comma).unwrap().1,
            br#"say "hi""#
        );
        assert_eq!(scan(b"plain,x", &s, comma).unwrap(), (5, b"plain".to_vec()));
        assert!(scan(br#""open"#, &s, comma).is_err());
        assert_eq!(write(b"plain", &s, comma), b"plain");
        assert_eq!(write(b"a, b", &s, comma), br#""a, b""#);
        assert_eq!(write(br#"say "hi", ok"#, &s, comma), br#""say ""hi"", ok""#);
        for v in [&b"x,y"[..], br#"""#, br#""quoted" start"#, b""] {
            let w = write(v, &s, comma);
            assert_eq!(scan(&w, &s, comma).unwrap(), (w.len(), v.to_vec()), "{v:?}");
        }
    }

    #[test]
    fn always_block_and_extra_characters_are_escaped_when_written() {
        let mut s = block();
        s.always_block = true;
        assert_eq!(write(b"x", &s, comma), br#""x""#);
        let mut c = character();
        c.extra = vec![b'|'];
        assert_eq!(write(b"a|b", &c, comma), br"a\|b");
    }
}
