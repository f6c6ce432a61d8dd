//! Deploying a project archive (the product's BAR deploy) and rolling it back.
//!
//! An archive is a tar (optionally gzip-compressed) of a project folder: `flows/`, `subflows/`,
//! `apis/` and `esql/`, at its top or inside one top folder. It is unpacked beside the project,
//! validated as `sluice validate` does with the project's own sluice.yaml (an archive's
//! sluice.yaml is not used: the server's settings stay as they are), and only then swapped in
//! with renames while no rescan looks. The folders it replaced are kept in
//! `DATA_DIR/deploy/previous`, and a rollback swaps them back the same way. The running
//! server picks the new files up through its reload path ([`Deployment::rescan`]).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sluice_flow::Diagnostic;

use crate::ServerError;
use crate::deploy::Deployment;
use crate::project;

/// The folders of a project a deploy replaces.
pub const PARTS: &[&str] = &["flows", "subflows", "esql", "apis"];

/// Most bytes an archive may unpack to: a compressed archive cannot fill the disk.
pub const MAX_UNPACKED_BYTES: u64 = 512 * 1024 * 1024;

const STAGING: &str = ".sluice-deploy-new";
const OLD: &str = ".sluice-deploy-old";

/// What a deploy did.
#[derive(Debug)]
pub struct Deployed {
    /// Flows in the deployed project.
    pub flows: usize,
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ServerError {
    let path = path.to_path_buf();
    move |source| ServerError::DeployIo {
        action,
        path,
        source,
    }
}

fn bad(reason: impl Into<String>) -> ServerError {
    ServerError::BadArchive {
        reason: reason.into(),
    }
}

/// The entry's path inside the unpack folder, when it stays inside it.
fn safe_path(raw: &Path) -> Result<PathBuf, ServerError> {
    let mut out = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(bad(format!(
                    "entry {} leaves the archive (..)",
                    raw.display()
                )));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad(format!("entry {} is an absolute path", raw.display())));
            }
        }
    }
    Ok(out)
}

/// Unpack a tar or tar.gz into `into` (an empty folder): regular files and folders only.
pub fn unpack(bytes: &[u8], into: &Path) -> Result<(), ServerError> {
    let reader: Box<dyn Read + '_> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::read::GzDecoder::new(bytes))
    } else {
        Box::new(bytes)
    };
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(ServerError::ArchiveRead)?;
    let mut total = 0u64;
    let mut any = false;
    for entry in entries {
        let mut entry = entry.map_err(ServerError::ArchiveRead)?;
        let raw = entry.path().map_err(ServerError::ArchiveRead)?.into_owned();
        let rel = safe_path(&raw)?;
        let kind = entry.header().entry_type();
        if rel.as_os_str().is_empty() {
            continue;
        }
        let target = into.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(io_err("create", &target))?;
        } else if kind.is_file() {
            total = total.saturating_add(entry.header().size().unwrap_or(0));
            if total > MAX_UNPACKED_BYTES {
                return Err(bad(format!(
                    "it unpacks to more than {} MiB",
                    MAX_UNPACKED_BYTES >> 20
                )));
            }
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
            }
            let mut out = std::fs::File::create(&target).map_err(io_err("write", &target))?;
            std::io::copy(&mut entry, &mut out).map_err(ServerError::ArchiveRead)?;
            any = true;
        } else if kind.is_symlink() || kind.is_hard_link() {
            return Err(bad(format!("entry {} is a link", raw.display())));
        } else if kind.is_pax_global_extensions() {
            continue;
        } else {
            return Err(bad(format!(
                "entry {} is not a file or a folder",
                raw.display()
            )));
        }
    }
    if !any {
        return Err(bad("it holds no files (is it a tar or tar.gz?)"));
    }
    Ok(())
}

/// The project folder inside an unpacked archive: its top, or its only folder.
fn project_root(unpacked: &Path) -> Result<PathBuf, ServerError> {
    let has_parts = |d: &Path| PARTS.iter().any(|p| d.join(p).is_dir());
    if has_parts(unpacked) {
        return Ok(unpacked.to_path_buf());
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(unpacked)
        .map_err(io_err("read", unpacked))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match entries.as_slice() {
        [only] if only.is_dir() && has_parts(only) => Ok(only.clone()),
        _ => Err(bad(
            "it holds no flows/ folder (at its top or in one top folder)",
        )),
    }
}

/// Diagnostics of the unpacked copy, with paths as they are in the archive.
fn relative(problems: Vec<Diagnostic>, root: &Path) -> Vec<String> {
    let prefixes = [
        format!("{}/", root.display()),
        format!("{}/", project::display_path(root)),
    ];
    problems
        .iter()
        .map(|p| {
            let mut t = p.to_string();
            for pre in &prefixes {
                t = t.replace(pre.as_str(), "");
            }
            t
        })
        .collect()
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), ServerError> {
    std::fs::create_dir_all(to).map_err(io_err("create", to))?;
    for e in std::fs::read_dir(from).map_err(io_err("read", from))? {
        let e = e.map_err(io_err("read", from))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(io_err("copy", &src))?;
        }
    }
    Ok(())
}

/// Move a folder: a rename, or (to another filesystem) a copy and a removal.
fn move_dir(from: &Path, to: &Path) -> Result<(), ServerError> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    copy_dir(from, to)?;
    std::fs::remove_dir_all(from).map_err(io_err("remove", from))
}

fn remove_if_there(p: &Path) -> Result<(), ServerError> {
    match std::fs::remove_dir_all(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err("remove", p)(e)),
        _ => Ok(()),
    }
}

/// Put `new`'s parts in place of the project's, keeping the replaced ones in `previous`.
/// `new` is a folder inside the project, so the renames stay on one filesystem.
fn swap_in(dep: &Deployment, new: &Path, previous: &Path) -> Result<(), ServerError> {
    let dir = dep.dir();
    let old = dir.join(OLD);
    remove_if_there(&old)?;
    std::fs::create_dir_all(&old).map_err(io_err("create", &old))?;
    dep.exclusive(|| {
        let mut moved = Vec::new();
        for part in PARTS {
            let cur = dir.join(part);
            if cur.exists() {
                if let Err(e) = std::fs::rename(&cur, old.join(part)) {
                    undo(dir, &old, &moved);
                    return Err(io_err("move", &cur)(e));
                }
                moved.push(*part);
            }
        }
        for part in PARTS {
            let src = new.join(part);
            if src.exists()
                && let Err(e) = std::fs::rename(&src, dir.join(part))
            {
                for p in PARTS {
                    let _ = std::fs::remove_dir_all(dir.join(p));
                }
                undo(dir, &old, &moved);
                return Err(io_err("move", &src)(e));
            }
        }
        Ok(())
    })?;
    remove_if_there(previous)?;
    if let Some(parent) = previous.parent() {
        std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
    }
    move_dir(&old, previous)
}

/// Put back the parts moved aside after a failed swap.
fn undo(dir: &Path, old: &Path, moved: &[&str]) {
    for part in moved {
        let _ = std::fs::rename(old.join(part), dir.join(part));
    }
}

fn previous_dir(dep: &Deployment) -> Result<PathBuf, ServerError> {
    dep.data_dir()
        .map(|d| d.join("deploy").join("previous"))
        .ok_or(ServerError::NoDataDir)
}

/// Validate an archive and deploy it in place of the project's flows, subflows and ESQL.
pub fn deploy(dep: &Deployment, bytes: &[u8]) -> Result<Deployed, ServerError> {
    let _one = dep.deploying.lock();
    let previous = previous_dir(dep)?;
    let staging = dep.dir().join(STAGING);
    remove_if_there(&staging)?;
    std::fs::create_dir_all(&staging).map_err(io_err("create", &staging))?;
    let r = deploy_staged(dep, bytes, &staging, &previous);
    let _ = std::fs::remove_dir_all(&staging);
    r
}

fn deploy_staged(
    dep: &Deployment,
    bytes: &[u8],
    staging: &Path,
    previous: &Path,
) -> Result<Deployed, ServerError> {
    unpack(bytes, staging)?;
    let root = project_root(staging)?;
    // The server's settings, not the archive's: validated against the queues and datasources
    // the server has.
    let settings = root.join("sluice.yaml");
    let _ = std::fs::remove_file(&settings);
    let ours = dep.dir().join("sluice.yaml");
    if ours.exists() {
        std::fs::copy(&ours, &settings).map_err(io_err("copy", &ours))?;
    }
    let flows = crate::validate_with(&root, dep.registry()).map_err(|problems| {
        ServerError::InvalidArchive {
            problems: relative(problems, &root),
        }
    })?;
    swap_in(dep, &root, previous)?;
    dep.rescan();
    Ok(Deployed { flows })
}

/// Put the version before the last deploy (or rollback) back.
pub fn rollback(dep: &Deployment) -> Result<Deployed, ServerError> {
    let _one = dep.deploying.lock();
    let previous = previous_dir(dep)?;
    if !previous.is_dir() {
        return Err(ServerError::NoPreviousVersion);
    }
    let staging = dep.dir().join(STAGING);
    remove_if_there(&staging)?;
    copy_dir(&previous, &staging)?;
    let r = swap_in(dep, &staging, &previous);
    let _ = std::fs::remove_dir_all(&staging);
    r?;
    dep.rescan();
    Ok(Deployed {
        flows: project::deployable_files(dep.dir()).len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            // set_path refuses `..`; written raw so that the unpacker sees what an attacker sends.
            let name = &mut h.as_old_mut().name;
            name[..path.len()].copy_from_slice(path.as_bytes());
            if kind.is_symlink() {
                let _ = h.set_link_name("/etc/passwd");
            }
            h.set_cksum();
            b.append(&h, *data).expect("append");
        }
        b.into_inner().expect("tar")
    }

    fn temp(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("sluice-archive-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp");
        p
    }

    #[test]
    fn unpack_refuses_parent_absolute_and_link_entries_when_present() {
        let d = temp("refuse");
        for (path, kind) in [
            ("../evil.yaml", tar::EntryType::Regular),
            ("/abs/evil.yaml", tar::EntryType::Regular),
            ("flows/link.yaml", tar::EntryType::Symlink),
        ] {
            let t = tar_of(&[(path, kind, b"x")]);
            let e = unpack(&t, &d).expect_err(path);
            assert!(matches!(e, ServerError::BadArchive { .. }), "{path}: {e}");
        }
        assert!(!d.parent().expect("parent").join("evil.yaml").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unpack_writes_files_of_a_gzip_archive_when_they_are_plain() {
        let d = temp("gzip");
        let t = tar_of(&[("p/flows/a.yaml", tar::EntryType::Regular, b"nodes: {}\n")]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &t).expect("gzip");
        let gz = gz.finish().expect("gzip");
        unpack(&gz, &d).expect("unpack");
        assert_eq!(
            std::fs::read_to_string(d.join("p/flows/a.yaml")).expect("file"),
            "nodes: {}\n"
        );
        assert_eq!(project_root(&d).expect("root"), d.join("p"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unpack_refuses_bytes_when_they_are_not_a_tar() {
        let d = temp("junk");
        assert!(unpack(b"this is not a tar archive at all", &d).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
