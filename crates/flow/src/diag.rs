//! Problems found in project files, reported as `file:line:col: error: message` with the source
//! line, a caret and a hint.

use std::fmt;

/// One problem in a file, with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub col: usize,
    pub message: String,
    pub hint: Option<String>,
    /// The source line the problem is on, for the excerpt.
    pub source_line: String,
}

impl Diagnostic {
    /// A diagnostic at `line`/`col` (1-based) of `src`.
    pub fn at(
        file: &str,
        src: &str,
        line: usize,
        col: usize,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            file: file.to_string(),
            line,
            col,
            message: message.into(),
            hint: None,
            source_line: src
                .lines()
                .nth(line.saturating_sub(1))
                .unwrap_or("")
                .to_string(),
        }
    }

    /// A problem with a file or folder as a whole (it is missing, it cannot be read): reported
    /// without a line.
    pub fn whole(file: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.to_string(),
            line: 0,
            col: 0,
            message: message.into(),
            hint: None,
            source_line: String::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_hint_opt(mut self, hint: Option<String>) -> Diagnostic {
        self.hint = hint;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            writeln!(f, "{}: error: {}", self.file, self.message)?;
        } else {
            writeln!(
                f,
                "{}:{}:{}: error: {}",
                self.file, self.line, self.col, self.message
            )?;
        }
        if !self.source_line.is_empty() {
            let gutter = self.line.to_string().len();
            writeln!(f, "{:gutter$} |", "")?;
            writeln!(f, "{} | {}", self.line, self.source_line)?;
            let pad: String = self
                .source_line
                .chars()
                .take(self.col.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "{:gutter$} | {pad}^", "")?;
            if let Some(h) = &self.hint {
                write!(f, " {h}")?;
            }
            writeln!(f)?;
        } else if let Some(h) = &self.hint {
            writeln!(f, "  hint: {h}")?;
        }
        Ok(())
    }
}

/// `1 problem`, `3 problems`: a count with its noun.
pub fn counted(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The closest of `candidates` to `word`, when close enough to suggest.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&word.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| format!("did you mean `{c}`?"))
}
