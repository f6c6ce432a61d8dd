//! YAML read into a small tree that keeps every value's line and column.

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use crate::diag::Diagnostic;

/// A YAML value with its place (1-based line and column).
#[derive(Clone, Debug)]
pub struct Yaml {
    pub line: usize,
    pub col: usize,
    pub kind: YamlKind,
}

#[derive(Clone, Debug)]
pub enum YamlKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Yaml>),
    /// Keys in file order.
    Map(Vec<(Yaml, Yaml)>),
}

impl Yaml {
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            YamlKind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A scalar as text (numbers and booleans as written).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.kind {
            YamlKind::Str(s) => Some(s.clone()),
            YamlKind::Int(i) => Some(i.to_string()),
            YamlKind::Float(f) => Some(f.to_string()),
            YamlKind::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    pub fn describe(&self) -> &'static str {
        match self.kind {
            YamlKind::Null => "nothing",
            YamlKind::Bool(_) => "a boolean",
            YamlKind::Int(_) => "an integer",
            YamlKind::Float(_) => "a number",
            YamlKind::Str(_) => "a string",
            YamlKind::Seq(_) => "a list",
            YamlKind::Map(_) => "a mapping",
        }
    }
}

/// Parse one YAML document.
pub fn parse(file: &str, src: &str) -> Result<Yaml, Diagnostic> {
    let docs = MarkedYaml::load_from_str(src).map_err(|e| {
        let m = e.marker();
        let mut message = format!("invalid YAML: {}", e.info());
        // The reader notices a missing `}` or `]` only where the next line starts: point at the
        // bracket that was left open.
        if let Some((open, line, col)) = unclosed_bracket(src, m.line()) {
            message.push_str(&format!(
                " (the `{open}` at line {line}, column {col} is not closed)"
            ));
        }
        Diagnostic::at(file, src, m.line(), m.col() + 1, message)
    })?;
    match docs.into_iter().next() {
        Some(d) => Ok(convert(&d)),
        None => Err(Diagnostic::at(file, src, 1, 1, "the file is empty")),
    }
}

/// The innermost `{` or `[` still open at the end of line `upto` (1-based), with its line and
/// column, outside quoted scalars and comments.
fn unclosed_bracket(src: &str, upto: usize) -> Option<(char, usize, usize)> {
    let mut open: Vec<(char, usize, usize)> = Vec::new();
    for (i, text) in src.lines().take(upto).enumerate() {
        let mut quote: Option<char> = None;
        let mut prev = ' ';
        let mut chars = text.chars().enumerate().peekable();
        while let Some((col, c)) = chars.next() {
            match quote {
                Some('"') if c == '\\' => {
                    chars.next();
                }
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    // A quote opens a scalar only where one can start.
                    '"' | '\'' if prev.is_whitespace() || "{[,:".contains(prev) => quote = Some(c),
                    '#' if prev.is_whitespace() => break,
                    '{' | '[' => open.push((c, i + 1, col + 1)),
                    '}' | ']' => {
                        open.pop();
                    }
                    _ => {}
                },
            }
            prev = c;
        }
    }
    open.pop()
}

fn convert(y: &MarkedYaml<'_>) -> Yaml {
    // The reader leaves some nodes (e.g. a scalar that is only a tag) at line 0.
    let line = y.span.start.line().max(1);
    let col = y.span.start.col() + 1;
    let kind = match &y.data {
        YamlData::Value(Scalar::Null) => YamlKind::Null,
        YamlData::Value(Scalar::Boolean(b)) => YamlKind::Bool(*b),
        YamlData::Value(Scalar::Integer(i)) => YamlKind::Int(*i),
        YamlData::Value(Scalar::FloatingPoint(f)) => YamlKind::Float(f.into_inner()),
        YamlData::Value(Scalar::String(s)) => YamlKind::Str(s.to_string()),
        YamlData::Representation(s, _, _) => YamlKind::Str(s.to_string()),
        YamlData::Sequence(items) => YamlKind::Seq(items.iter().map(convert).collect()),
        YamlData::Mapping(m) => {
            YamlKind::Map(m.iter().map(|(k, v)| (convert(k), convert(v))).collect())
        }
        YamlData::Tagged(_, inner) => return convert(inner),
        YamlData::Alias(_) | YamlData::BadValue => YamlKind::Null,
    };
    Yaml { line, col, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unclosed_brace_is_named_where_it_opened() {
        let src = "flow: d\nnodes:\n  in: { type: HTTPInput, path: '/a{b', wires: { out: [c] }\n  c: { type: Filter }\n";
        let e = parse("d.yaml", src).unwrap_err();
        assert!(
            e.message
                .contains("the `{` at line 3, column 7 is not closed"),
            "{}",
            e.message
        );
    }

    #[test]
    fn brackets_in_quotes_comments_and_words_do_not_count() {
        let src = "a: \"{\" # {\nb: it's [x]\nc: { d: 1 }\n";
        assert_eq!(unclosed_bracket(src, 3), None);
        assert_eq!(unclosed_bracket("a: [1, {b: 2}", 1), Some(('[', 1, 4)));
    }
}
