//! The core function library (XPath 1.0 §4).

use crate::xpath::ast::{Expr, Function};
use crate::xpath::error::XPathError;
use crate::xpath::eval::{Evaluator, Focus};
use crate::xpath::node::XNode;
use crate::xpath::value::XValue;

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// XPath's `round`: the closest integer, halves towards positive infinity.
fn round(x: f64) -> f64 {
    if x.is_nan() || x.is_infinite() {
        return x;
    }
    if (-0.5..0.0).contains(&x) {
        return -0.0;
    }
    (x + 0.5).floor()
}

/// `substring(s, start, len?)` with XPath's rounding and NaN rules: the character at position
/// p (from 1) is kept when `p >= round(start)` and `p < round(start) + round(len)`.
fn substring(s: &str, start: f64, len: Option<f64>) -> String {
    let first = round(start);
    let end = len.map(|l| first + round(l));
    s.chars()
        .enumerate()
        .filter(|(i, _)| {
            let p = (*i + 1) as f64;
            p >= first && end.is_none_or(|e| p < e)
        })
        .map(|(_, c)| c)
        .collect()
}

fn translate(s: &str, from: &str, to: &str) -> String {
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.chars().position(|f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

impl Evaluator<'_, '_> {
    /// The node a name function reads: its argument's first node, or the context node.
    fn name_subject(&mut self, args: &[Expr], f: &Focus) -> Result<Option<XNode>, XPathError> {
        match args.first() {
            Some(a) => self.first_node(a, f),
            None => Ok(Some(f.node)),
        }
    }

    /// A string argument, or the context node's string value when it is left out.
    fn string_arg(&mut self, args: &[Expr], f: &Focus) -> Result<String, XPathError> {
        match args.first() {
            Some(a) => self.eval_string(a, f),
            None => self.cx.string_value(f.node),
        }
    }

    fn two_strings(&mut self, args: &[Expr], f: &Focus) -> Result<(String, String), XPathError> {
        match args {
            [a, b, ..] => Ok((self.eval_string(a, f)?, self.eval_string(b, f)?)),
            _ => Err(XPathError::Internal(
                "a two-argument function lost an argument".to_owned(),
            )),
        }
    }

    fn arg(args: &[Expr], i: usize) -> Result<&Expr, XPathError> {
        args.get(i).ok_or_else(|| {
            XPathError::Internal("a function lost an argument checked when compiling".to_owned())
        })
    }

    pub(crate) fn call(
        &mut self,
        func: Function,
        args: &[Expr],
        f: &Focus,
    ) -> Result<XValue, XPathError> {
        use Function as F;
        Ok(match func {
            F::Last => match f.size {
                Some(n) => XValue::Number(n as f64),
                None => {
                    return Err(XPathError::Internal(
                        "last() evaluated without a context size".to_owned(),
                    ));
                }
            },
            F::Position => XValue::Number(f.position as f64),
            F::Count => XValue::Number(self.count(Self::arg(args, 0)?, f)? as f64),
            F::LocalName => {
                let s = match self.name_subject(args, f)? {
                    Some(n) => String::from_utf8_lossy(self.cx.local_name(n)?).into_owned(),
                    None => String::new(),
                };
                XValue::String(s)
            }
            F::NamespaceUri => {
                let s = match self.name_subject(args, f)? {
                    Some(n) => String::from_utf8_lossy(self.cx.namespace_uri(n)?).into_owned(),
                    None => String::new(),
                };
                XValue::String(s)
            }
            F::Name => {
                let s = match self.name_subject(args, f)? {
                    Some(n) => self.qualified_name(n)?,
                    None => String::new(),
                };
                XValue::String(s)
            }
            F::String => XValue::String(self.string_arg(args, f)?),
            F::Concat => {
                let mut s = String::new();
                for a in args {
                    s.push_str(&self.eval_string(a, f)?);
                }
                XValue::String(s)
            }
            F::StartsWith => {
                let (a, b) = self.two_strings(args, f)?;
                XValue::Boolean(a.starts_with(&b))
            }
            F::Contains => {
                let (a, b) = self.two_strings(args, f)?;
                XValue::Boolean(a.contains(&b))
            }
            F::SubstringBefore => {
                let (a, b) = self.two_strings(args, f)?;
                XValue::String(a.find(&b).map_or(String::new(), |i| a[..i].to_owned()))
            }
            F::SubstringAfter => {
                let (a, b) = self.two_strings(args, f)?;
                XValue::String(
                    a.find(&b)
                        .map_or(String::new(), |i| a[i + b.len()..].to_owned()),
                )
            }
            F::Substring => {
                let s = self.eval_string(Self::arg(args, 0)?, f)?;
                let start = self.eval_number(Self::arg(args, 1)?, f)?;
                let len = match args.get(2) {
                    Some(a) => Some(self.eval_number(a, f)?),
                    None => None,
                };
                XValue::String(substring(&s, start, len))
            }
            F::StringLength => XValue::Number(self.string_arg(args, f)?.chars().count() as f64),
            F::NormalizeSpace => {
                let s = self.string_arg(args, f)?;
                let words: Vec<&str> = s.split(is_xml_space).filter(|w| !w.is_empty()).collect();
                XValue::String(words.join(" "))
            }
            F::Translate => {
                let s = self.eval_string(Self::arg(args, 0)?, f)?;
                let from = self.eval_string(Self::arg(args, 1)?, f)?;
                let to = self.eval_string(Self::arg(args, 2)?, f)?;
                XValue::String(translate(&s, &from, &to))
            }
            F::Boolean => XValue::Boolean(self.eval_bool(Self::arg(args, 0)?, f)?),
            F::Not => XValue::Boolean(!self.eval_bool(Self::arg(args, 0)?, f)?),
            F::True => XValue::Boolean(true),
            F::False => XValue::Boolean(false),
            F::Number => match args.first() {
                Some(a) => XValue::Number(self.eval_number(a, f)?),
                None => XValue::Number(self.cx.number_value(f.node)?),
            },
            F::Sum => {
                let mut total = 0.0;
                for n in self.node_set(Self::arg(args, 0)?, f)? {
                    total += self.cx.number_value(n)?;
                }
                XValue::Number(total)
            }
            F::Floor => XValue::Number(self.eval_number(Self::arg(args, 0)?, f)?.floor()),
            F::Ceiling => XValue::Number(self.eval_number(Self::arg(args, 0)?, f)?.ceil()),
            F::Round => XValue::Number(round(self.eval_number(Self::arg(args, 0)?, f)?)),
        })
    }

    /// `name()`: the local name, prefixed with the compile-time prefix bound to the node's
    /// namespace (the tree keeps URIs, not the prefixes a message used).
    fn qualified_name(&self, n: XNode) -> Result<String, XPathError> {
        let local = String::from_utf8_lossy(self.cx.local_name(n)?).into_owned();
        let ns = self.cx.namespace_uri(n)?;
        if ns.is_empty() {
            return Ok(local);
        }
        Ok(
            match self.namespaces.iter().find(|(_, uri)| uri.as_bytes() == ns) {
                Some((prefix, _)) if !prefix.is_empty() => format!("{prefix}:{local}"),
                _ => local,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_follows_xpath_rounding_when_given_fractional_arguments() {
        assert_eq!(substring("12345", 1.5, Some(2.6)), "234");
        assert_eq!(substring("12345", 0.0, Some(3.0)), "12");
        assert_eq!(substring("12345", f64::NAN, Some(3.0)), "");
        assert_eq!(substring("12345", -42.0, Some(f64::INFINITY)), "12345");
        assert_eq!(
            substring("12345", f64::NEG_INFINITY, Some(f64::INFINITY)),
            ""
        );
        assert_eq!(substring("12345", 2.0, None), "2345");
    }

    #[test]
    fn round_takes_halves_up() {
        assert_eq!(round(2.5), 3.0);
        assert_eq!(round(-2.5), -2.0);
        assert!(round(-0.2).is_sign_negative());
    }

    #[test]
    fn translate_maps_and_removes_characters() {
        assert_eq!(translate("bar", "abc", "ABC"), "BAr");
        assert_eq!(translate("--aaa--", "abc-", "ABC"), "AAA");
    }
}
