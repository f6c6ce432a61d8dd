//! The namespaces of a folder of ESQL for `sluice esql check`: an ACE workspace holds
//! applications and libraries side by side (each a folder with `.project` and
//! `application.descriptor` or `library.descriptor`), and a Sluice project is a folder with
//! `sluice.yaml`. Each is compiled on its own, an application together with the libraries its
//! `.project` references, so the same module in two applications is not a clash.

use std::path::{Path, PathBuf};

use super::collect_esql;

/// One application, library or Sluice project.
#[derive(Debug, Clone, PartialEq)]
pub struct Namespace {
    /// Its name: `<name>` of `.project`, else the folder's name.
    pub name: String,
    pub dir: PathBuf,
    /// Its own ESQL files.
    pub files: Vec<PathBuf>,
    /// The projects its `.project` references (`<projects><project>Lib</project>`).
    pub references: Vec<String>,
}

/// What a folder holds: its namespaces, and ESQL files that belong to none.
#[derive(Debug, Default)]
pub struct Workspace {
    pub namespaces: Vec<Namespace>,
    pub loose: Vec<PathBuf>,
}

fn is_namespace(dir: &Path) -> bool {
    let ace = dir.join(".project").is_file()
        && (dir.join("application.descriptor").is_file()
            || dir.join("library.descriptor").is_file());
    ace || dir.join("sluice.yaml").is_file()
}

/// The text of every `<tag>…</tag>` in `xml` (the simple elements of an Eclipse `.project`).
fn elements<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else {
            break;
        };
        out.push(after[..j].trim());
        rest = &after[j + close.len()..];
    }
    out
}

fn namespace(dir: &Path) -> Namespace {
    let folder = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let project = std::fs::read_to_string(dir.join(".project")).unwrap_or_default();
    // The project's own name comes before its list of referenced projects.
    let own = project.split("<projects>").next().unwrap_or_default();
    let name = elements(own, "name")
        .first()
        .map(|n| n.to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or(folder);
    let references = elements(&project, "projects")
        .iter()
        .flat_map(|list| elements(list, "project"))
        .map(str::to_string)
        .collect();
    let mut files = Vec::new();
    collect_esql(dir, &mut files);
    Namespace {
        name,
        dir: dir.to_path_buf(),
        files,
        references,
    }
}

fn walk(dir: &Path, ws: &mut Workspace) {
    if is_namespace(dir) {
        ws.namespaces.push(namespace(dir));
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ws);
        } else if p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("esql"))
        {
            ws.loose.push(p);
        }
    }
}

/// The namespaces under `dir` (or `dir` itself when it is one) and the files outside them.
pub fn discover(dir: &Path) -> Workspace {
    let mut ws = Workspace::default();
    walk(dir, &mut ws);
    ws
}

impl Workspace {
    /// The files a namespace compiles with: its own, then those of the projects it references,
    /// theirs in turn, each once.
    pub fn visible(&self, ns: &Namespace) -> Vec<PathBuf> {
        let mut files = ns.files.clone();
        let mut seen = vec![ns.name.as_str()];
        let mut queue: Vec<&str> = ns.references.iter().map(String::as_str).collect();
        while let Some(r) = queue.pop() {
            if seen.contains(&r) {
                continue;
            }
            seen.push(r);
            if let Some(lib) = self.namespaces.iter().find(|n| n.name == r) {
                files.extend(lib.files.iter().cloned());
                queue.extend(lib.references.iter().map(String::as_str));
            }
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_reads_the_project_name_and_its_references() {
        let xml = "<projectDescription><name>OrderApp</name><projects><project>CommonLib</project><project>Util</project></projects></projectDescription>";
        assert_eq!(elements(xml, "name"), ["OrderApp"]);
        let lists = elements(xml, "projects");
        assert_eq!(elements(lists[0], "project"), ["CommonLib", "Util"]);
    }
}
