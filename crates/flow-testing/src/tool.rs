//! Finding the real servers and tools that tests run (PostgreSQL, Mosquitto, xsltproc, …).
//!
//! A test that needs one skips with a printed reason when it is missing, except under
//! `CI=true`, where `.ci/run` installs it and a missing tool is a failure.

use std::path::{Path, PathBuf};

/// The first of `candidates` that exists: a bare name is looked up on the PATH, a path with a
/// `*` in one component is expanded (`/usr/lib/postgresql/*/bin/initdb`), any other path is
/// taken as it is. None, after printing why, when none exists and CI is not `true`.
///
/// # Panics
/// Under `CI=true` when none exists, so that CI cannot pass by skipping.
pub fn require_tool(what: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Some(found) = candidates.iter().find_map(|c| find(c)) {
        return Some(found);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} is missing (looked for {candidates:?}); .ci/run installs it"
    );
    eprintln!("skipped: {what} is not installed (looked for {candidates:?})");
    None
}

fn find(candidate: &str) -> Option<PathBuf> {
    if !candidate.contains('/') {
        let path = std::env::var_os("PATH")?;
        return std::env::split_paths(&path)
            .map(|dir| dir.join(candidate))
            .find(|p| p.is_file());
    }
    let Some((head, tail)) = candidate.split_once('*') else {
        return Path::new(candidate).is_file().then(|| candidate.into());
    };
    // The wildcard stands for one whole component: `head` ends at a separator.
    let (dir, prefix) = head.rsplit_once('/')?;
    let (suffix, rest) = tail.split_once('/').unwrap_or((tail, ""));
    let mut matches: Vec<PathBuf> = std::fs::read_dir(if dir.is_empty() { "/" } else { dir })
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            (name.starts_with(prefix) && name.ends_with(suffix)).then(|| e.path())
        })
        .collect();
    // The newest version first, as version folders sort.
    matches.sort();
    matches.into_iter().rev().find_map(|m| {
        let full = if rest.is_empty() { m } else { m.join(rest) };
        find(full.to_str()?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn require_tool_finds_a_command_on_the_path() {
        assert!(require_tool("sh", &["no-such-tool-here", "sh"]).is_some());
    }

    #[test]
    fn require_tool_expands_a_wildcard_component() {
        let dir = std::env::temp_dir().join(format!("sluice-tool-{}", std::process::id()));
        let bin = dir.join("v15").join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("tool"), b"").unwrap();
        let pattern = format!("{}/v*/bin/tool", dir.display());
        let found = find(&pattern);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, Some(bin.join("tool")));
    }

    #[test]
    fn require_tool_gives_none_when_nothing_matches_outside_ci() {
        if std::env::var("CI").as_deref() == Ok("true") {
            return;
        }
        assert_eq!(require_tool("nothing", &["/no/such/*/tool"]), None);
    }
}
