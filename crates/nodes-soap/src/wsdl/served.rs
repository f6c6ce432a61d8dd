//! The files a WSDL reaches, as `GET path?wsdl` and `GET path?xsd=NAME` serve them: each
//! `wsdl:import/@location` and `xsd:import|include|redefine/@schemaLocation` that names a project
//! file is rewritten to `<endpoint>?xsd=NAME`, NAME being the file's path relative to the project
//! folder. Only the files the loader read are served, from the texts it kept: a name outside that
//! set is not found, so no request reaches the file system.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// A reference from one file to another: the byte range of the attribute value naming it.
#[derive(Clone, Debug)]
pub(super) struct Link {
    pub file: PathBuf,
    pub start: usize,
    pub end: usize,
    pub target: PathBuf,
}

/// One imported file: its name in `?xsd=`, its text, and its references to other files.
#[derive(Clone, Debug)]
struct ServedFile {
    name: String,
    text: String,
    links: Vec<(usize, usize, String)>,
}

/// The main WSDL's references and the files it reaches.
#[derive(Clone, Debug, Default)]
pub(super) struct Served {
    main_links: Vec<(usize, usize, String)>,
    files: Vec<ServedFile>,
}

/// `p` relative to `project_dir`, with `.` and `..` resolved as far as the path allows.
fn name_of(project_dir: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(project_dir).unwrap_or(p);
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if parts.last().is_some_and(|l| l != "..") {
                    parts.pop();
                } else {
                    parts.push("..".into());
                }
            }
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
        }
    }
    parts.join("/")
}

impl Served {
    /// The served set from the loader's `texts` (every file read, the main one included) and
    /// `links`.
    pub(super) fn build(
        project_dir: &Path,
        main: &Path,
        texts: HashMap<PathBuf, String>,
        links: Vec<Link>,
    ) -> Served {
        let mut by_file: HashMap<&Path, Vec<(usize, usize, String)>> = HashMap::new();
        for l in &links {
            by_file.entry(l.file.as_path()).or_default().push((
                l.start,
                l.end,
                name_of(project_dir, &l.target),
            ));
        }
        let main_links = by_file.remove(main).unwrap_or_default();
        let mut files: Vec<ServedFile> = texts
            .into_iter()
            .filter(|(p, _)| p != main)
            .map(|(p, text)| ServedFile {
                name: name_of(project_dir, &p),
                links: by_file.remove(p.as_path()).unwrap_or_default(),
                text,
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Served { main_links, files }
    }

    /// The main WSDL's references rewritten to `endpoint`, as edits of its text.
    pub(super) fn main_edits(&self, endpoint: &str) -> Vec<(usize, usize, String)> {
        edits(&self.main_links, endpoint)
    }

    /// The names `?xsd=` serves.
    #[cfg(test)]
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.name.as_str())
    }

    /// The file `name` with its references rewritten to `endpoint`; `None` when the WSDL does
    /// not reach a file of that name.
    pub fn file(&self, name: &str, endpoint: &str) -> Option<String> {
        let f = self.files.iter().find(|f| f.name == name)?;
        Some(rewrite(&f.text, edits(&f.links, endpoint)))
    }
}

fn edits(links: &[(usize, usize, String)], endpoint: &str) -> Vec<(usize, usize, String)> {
    links
        .iter()
        .map(|(s, e, name)| {
            let url = format!("{endpoint}?xsd={}", encode_query_value(name));
            let mut esc = String::with_capacity(url.len());
            sluice_parsers::soap::fault::escape(&url, &mut esc);
            (*s, *e, esc)
        })
        .collect()
}

/// `text` with each byte range of `edits` replaced (ranges that overlap an earlier one are
/// skipped).
pub(super) fn rewrite(text: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|(s, _, _)| *s);
    let mut out = String::with_capacity(text.len() + 64 * edits.len());
    let mut at = 0;
    for (s, e, with) in edits {
        if s < at || e > text.len() || s > e {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(&with);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

/// Percent-encode what a query value cannot carry as it is (`/` stays readable).
fn encode_query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The byte range of the value of attribute `name` in the start tag at `start`.
pub(super) fn attr_value_range(text: &str, start: usize, name: &str) -> Option<(usize, usize)> {
    let tag_end = start + text.get(start..)?.find('>')?;
    let tag = &text[start..tag_end];
    let mut from = 0;
    while let Some(i) = tag[from..].find(name) {
        let at = from + i;
        let before_ok = tag[..at].ends_with(|c: char| c.is_ascii_whitespace());
        let rest = tag[at + name.len()..].trim_start();
        if before_ok && let Some(rest) = rest.strip_prefix('=') {
            let rest_trim = rest.trim_start();
            let quote = rest_trim.chars().next()?;
            if quote == '"' || quote == '\'' {
                let len = rest_trim[1..].find(quote)?;
                let vs = start + (tag.len() - rest_trim.len()) + 1;
                return Some((vs, vs + len));
            }
        }
        from = at + name.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_of_resolves_parent_steps_inside_the_project() {
        let d = Path::new("/p");
        assert_eq!(
            name_of(d, Path::new("/p/services/../models/a.xsd")),
            "models/a.xsd"
        );
        assert_eq!(
            name_of(d, Path::new("/p/services/./b.xsd")),
            "services/b.xsd"
        );
    }

    #[test]
    fn rewrite_replaces_ranges_in_order_whatever_order_they_come_in() {
        let t = "a=\"x\" b=\"y\"";
        let out = rewrite(t, vec![(9, 10, "Y".into()), (3, 4, "X".into())]);
        assert_eq!(out, "a=\"X\" b=\"Y\"");
    }

    #[test]
    fn file_is_none_for_a_name_the_wsdl_does_not_reach() {
        let a = "<xsd:schema><xsd:include schemaLocation=\"b c.xsd\"/></xsd:schema>";
        let at = a.find("b c").unwrap();
        let mut texts = HashMap::new();
        texts.insert(PathBuf::from("/p/s/main.wsdl"), String::new());
        texts.insert(PathBuf::from("/p/m/a.xsd"), a.to_string());
        let links = vec![Link {
            file: PathBuf::from("/p/m/a.xsd"),
            start: at,
            end: at + 7,
            target: PathBuf::from("/p/m/b c.xsd"),
        }];
        let s = Served::build(Path::new("/p"), Path::new("/p/s/main.wsdl"), texts, links);
        assert_eq!(s.names().collect::<Vec<_>>(), vec!["m/a.xsd"]);
        let a = s.file("m/a.xsd", "http://h/e").unwrap();
        assert!(
            a.contains("schemaLocation=\"http://h/e?xsd=m/b%20c.xsd\""),
            "{a}"
        );
        assert!(s.file("../etc/passwd", "http://h/e").is_none());
        assert!(s.file("s/main.wsdl", "http://h/e").is_none());
    }
}
