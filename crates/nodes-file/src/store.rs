//! Where FileInput's and FileOutput's folders are: the local file system, or a directory on an
//! SFTP server ([`crate::sftp`]). The nodes do their folder work (list, claim by rename, read a
//! file from an offset, archive, delete) through [`Store`], so that both places follow one life
//! of a file.

use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use crate::FileError;

/// A regular file in a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub modified: SystemTime,
}

/// A file opened for reading, positioned at the offset asked for, with its modification time.
pub struct Opened {
    pub reader: Box<dyn Read + Send>,
    pub modified: SystemTime,
}

/// The folder operations the file nodes need.
pub trait Store: Send + Sync {
    /// The regular files in `dir`, oldest first (then by name); none when `dir` does not exist.
    fn files(&self, dir: &Path) -> Result<Vec<Entry>, FileError>;
    /// Whether something is at `path`.
    fn exists(&self, path: &Path) -> Result<bool, FileError>;
    /// Create `dir` and its parents as needed.
    fn create_dir_all(&self, dir: &Path) -> Result<(), FileError>;
    /// Rename `from` to `to`; fails when `to` exists.
    fn rename(&self, from: &Path, to: &Path) -> Result<(), FileError>;
    /// Rename `from` to `to`, replacing a file at `to` (atomically where the store can).
    fn replace(&self, from: &Path, to: &Path) -> Result<(), FileError>;
    /// The length of the file at `path`, None when there is none.
    fn len(&self, path: &Path) -> Result<Option<u64>, FileError>;
    /// Remove the file at `path`.
    fn remove(&self, path: &Path) -> Result<(), FileError>;
    /// Open `path` for reading from `offset`.
    fn open(&self, path: &Path, offset: u64) -> Result<Opened, FileError>;
    /// Append `data` to `path` (created when missing); its length before and after.
    fn append(&self, path: &Path, data: &[u8]) -> Result<(u64, u64), FileError>;
    /// Write `data` as the whole of `path`, replacing what was there.
    fn write(&self, path: &Path, data: &[u8]) -> Result<(), FileError>;
    /// Add the bytes of `from` to the end of `to`, then remove `from`.
    fn append_file(&self, from: &Path, to: &Path) -> Result<(), FileError>;
    /// Whether a failed read of a file is worth trying again later (a remote connection that
    /// broke) rather than the file's failure.
    fn read_errors_are_transient(&self) -> bool;
}

/// Move `from` to `to`, creating `to`'s folder; an existing `to` is replaced only when `replace`.
pub fn move_in(store: &dyn Store, from: &Path, to: &Path, replace: bool) -> Result<(), FileError> {
    if let Some(dir) = to.parent() {
        store.create_dir_all(dir)?;
    }
    if replace {
        store.replace(from, to)
    } else {
        store.rename(from, to)
    }
}

/// The local file system.
pub struct Local;

impl Store for Local {
    fn files(&self, dir: &Path) -> Result<Vec<Entry>, FileError> {
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(FileError::io("list", dir)(e)),
        };
        let mut files: Vec<Entry> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let modified = e.metadata().and_then(|m| m.modified()).ok()?;
                Some(Entry { name, modified })
            })
            .collect();
        sort(&mut files);
        Ok(files)
    }

    fn exists(&self, path: &Path) -> Result<bool, FileError> {
        path.try_exists().map_err(FileError::io("look at", path))
    }

    fn create_dir_all(&self, dir: &Path) -> Result<(), FileError> {
        std::fs::create_dir_all(dir).map_err(FileError::io("create", dir))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        if to.exists() {
            return Err(FileError::Exists {
                path: to.to_path_buf(),
            });
        }
        std::fs::rename(from, to).map_err(FileError::io("move", from))
    }

    fn replace(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        std::fs::rename(from, to).map_err(FileError::io("move", from))
    }

    fn len(&self, path: &Path) -> Result<Option<u64>, FileError> {
        match std::fs::metadata(path) {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FileError::io("look at", path)(e)),
        }
    }

    fn remove(&self, path: &Path) -> Result<(), FileError> {
        std::fs::remove_file(path).map_err(FileError::io("delete", path))
    }

    fn open(&self, path: &Path, offset: u64) -> Result<Opened, FileError> {
        let mut file = std::fs::File::open(path).map_err(FileError::io("open", path))?;
        let modified = file
            .metadata()
            .and_then(|m| m.modified())
            .map_err(FileError::io("read", path))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(offset))
            .map_err(FileError::io("read", path))?;
        Ok(Opened {
            reader: Box::new(file),
            modified,
        })
    }

    fn append(&self, path: &Path, data: &[u8]) -> Result<(u64, u64), FileError> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(FileError::io("open", path))?;
        let before = f.metadata().map_err(FileError::io("read", path))?.len();
        f.write_all(data).map_err(FileError::io("write", path))?;
        Ok((before, before + data.len() as u64))
    }

    fn write(&self, path: &Path, data: &[u8]) -> Result<(), FileError> {
        std::fs::write(path, data).map_err(FileError::io("write", path))
    }

    fn append_file(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        let mut dest = std::fs::OpenOptions::new()
            .append(true)
            .open(to)
            .map_err(FileError::io("open", to))?;
        let mut src = std::fs::File::open(from).map_err(FileError::io("open", from))?;
        std::io::copy(&mut src, &mut dest).map_err(FileError::io("append to", to))?;
        std::fs::remove_file(from).map_err(FileError::io("delete", from))
    }

    fn read_errors_are_transient(&self) -> bool {
        false
    }
}

/// Oldest first, then by name.
pub fn sort(files: &mut [Entry]) {
    files.sort_by(|a, b| (a.modified, &a.name).cmp(&(b.modified, &b.name)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sort_puts_oldest_first_then_names_when_times_tie() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        let mut v = vec![
            Entry {
                name: "b".into(),
                modified: t,
            },
            Entry {
                name: "c".into(),
                modified: t - Duration::from_secs(1),
            },
            Entry {
                name: "a".into(),
                modified: t,
            },
        ];
        sort(&mut v);
        let names: Vec<&str> = v.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["c", "a", "b"]);
    }

    #[test]
    fn move_in_refuses_to_replace_when_not_told_to() {
        let d = std::env::temp_dir().join(format!("sluice-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a"), b"new").unwrap();
        std::fs::create_dir_all(d.join("arch")).unwrap();
        std::fs::write(d.join("arch/a"), b"old").unwrap();
        let r = move_in(&Local, &d.join("a"), &d.join("arch/a"), false);
        assert!(matches!(r, Err(FileError::Exists { .. })));
        move_in(&Local, &d.join("a"), &d.join("arch/a"), true).unwrap();
        assert_eq!(std::fs::read(d.join("arch/a")).unwrap(), b"new");
        let _ = std::fs::remove_dir_all(&d);
    }
}
