//! Expected-output files: `expected/<output>.txt` per output of a test case, compared with what a
//! run produced, or rewritten from it when blessing (`SLUICE_BLESS=1`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diff::line_diff;

/// Why a case's outputs do not match its expected files.
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    /// An expected file or folder could not be read, written or removed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// At least one output differs from its expected file; the text holds every difference.
    #[error("{0}")]
    Mismatch(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExpectedError + '_ {
    move |source| ExpectedError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether the run should rewrite expected files rather than compare (`SLUICE_BLESS=1`).
pub fn bless_requested() -> bool {
    std::env::var("SLUICE_BLESS").is_ok_and(|v| v == "1")
}

/// Compare `actual` (output name → text) with the `.txt` files in `dir`, or with `bless` make the
/// folder hold exactly `actual`.
pub fn check_outputs(
    dir: &Path,
    actual: &BTreeMap<String, String>,
    bless: bool,
) -> Result<(), ExpectedError> {
    let existing = existing_outputs(dir)?;
    if bless {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        for (name, path) in &existing {
            if !actual.contains_key(name) {
                std::fs::remove_file(path).map_err(io(path))?;
            }
        }
        for (name, text) in actual {
            let path = dir.join(format!("{name}.txt"));
            std::fs::write(&path, text).map_err(io(&path))?;
        }
        return Ok(());
    }
    let mut problems = String::new();
    for (name, path) in &existing {
        let Some(got) = actual.get(name) else {
            problems.push_str(&format!(
                "{}: nothing reached this output in this run\n",
                path.display()
            ));
            continue;
        };
        let want = std::fs::read_to_string(path).map_err(io(path))?;
        let d = line_diff(&want, got);
        if !d.is_empty() {
            problems.push_str(&format!(
                "{} differs (- expected, + actual):\n{d}",
                path.display()
            ));
        }
    }
    for (name, got) in actual {
        if !existing.contains_key(name) {
            problems.push_str(&format!(
                "{}: no expected file for this output; it produced:\n{got}\n",
                dir.join(format!("{name}.txt")).display()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ExpectedError::Mismatch(problems))
    }
}

/// The `.txt` files in `dir` by output name; none when the folder does not exist yet.
fn existing_outputs(dir: &Path) -> Result<BTreeMap<String, PathBuf>, ExpectedError> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(dir)(e)),
    };
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        if path.extension().is_some_and(|x| x == "txt")
            && let Some(stem) = path.file_stem()
        {
            out.insert(stem.to_string_lossy().into_owned(), path);
        }
    }
    Ok(out)
}
