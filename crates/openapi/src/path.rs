//! Path templates such as `/orders/{id}/items`: a parameter takes one whole segment.

/// One segment of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    Parameter(String),
}

/// A parsed path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTemplate {
    pub text: String,
    pub segments: Vec<Segment>,
}

impl PathTemplate {
    /// Parse `/a/{b}`; a parameter must be a whole segment.
    pub fn parse(text: &str) -> Result<PathTemplate, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err("a path starts with `/`".into());
        };
        let mut segments = Vec::new();
        for s in rest.split('/') {
            if let Some(name) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                if name.is_empty() || name.contains(['{', '}']) {
                    return Err(format!("`{s}` is not a parameter"));
                }
                segments.push(Segment::Parameter(name.to_string()));
            } else if s.contains(['{', '}']) {
                return Err(format!(
                    "segment `{s}`: a parameter must be a whole segment, such as `{{id}}`"
                ));
            } else {
                segments.push(Segment::Literal(s.to_string()));
            }
        }
        Ok(PathTemplate {
            text: text.to_string(),
            segments,
        })
    }

    /// The parameters' names in order.
    pub fn parameter_names(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Parameter(n) => Some(n.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// How many segments are literal: the more, the more specific the template.
    pub fn literal_count(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| matches!(s, Segment::Literal(_)))
            .count()
    }

    /// The parameters' values (percent-decoded) when `path` matches.
    pub fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let rest = path.strip_prefix('/')?;
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut values = Vec::new();
        for (seg, part) in self.segments.iter().zip(parts) {
            match seg {
                Segment::Literal(l) if l == part => {}
                Segment::Literal(_) => return None,
                Segment::Parameter(_) if part.is_empty() => return None,
                Segment::Parameter(n) => values.push((n.clone(), percent_decode(part))),
            }
        }
        Some(values)
    }
}

/// `%2F` → `/`; `+` stays (it means a space only in form bodies and query strings).
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = b.get(i + 1..i + 3)
            && let Ok(hex) = std::str::from_utf8(h)
            && let Ok(v) = u8::from_str_radix(hex, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_matches_parameters_when_segments_line_up() {
        let t = PathTemplate::parse("/orders/{id}/items").unwrap();
        assert_eq!(
            t.matches("/orders/a%20b/items"),
            Some(vec![("id".into(), "a b".into())])
        );
        assert_eq!(t.matches("/orders/7"), None);
        assert_eq!(t.matches("/orders//items"), None);
        assert_eq!(t.matches("/order/7/items"), None);
    }

    #[test]
    fn template_parse_fails_when_a_parameter_is_part_of_a_segment() {
        assert!(PathTemplate::parse("/orders/x{id}").is_err());
        assert!(PathTemplate::parse("orders").is_err());
        assert!(PathTemplate::parse("/a/{}").is_err());
    }

    #[test]
    fn percent_decode_keeps_malformed_escapes_when_not_hex() {
        assert_eq!(percent_decode("a%2Fb%zz%4"), "a/b%zz%4");
    }
}
