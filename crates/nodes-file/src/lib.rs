//! File nodes, with the product's semantics: FileInput reads files dropped into a directory and
//! propagates one message per record; FileOutput writes records into a file that appears in its
//! directory when it is finished; FileRead reads a file in the middle of a flow.
//!
//! Folders, as the product names them, under the node's directory: `mqsitransitin` holds an
//! input file while it is processed (with its restart checkpoint), `mqsiarchive` the files
//! archived after success, `mqsibackout` the files that failed; `mqsitransit` holds an output
//! file while records are appended to it.

pub mod checkpoint;
pub mod input;
pub mod output;
pub mod pattern;
pub mod read;
pub mod records;
pub mod remote;
pub mod retry;
#[cfg(feature = "sftp")]
pub mod sftp;
mod slots;
pub mod store;
pub mod watch;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sluice_node_api::{NodeError, NodeSpec};
use sluice_tree::{NodeId, Text, Tree, TreeError, Value, field_type};

pub use input::FILE_INPUT;
pub use output::FILE_OUTPUT;
pub use read::FILE_READ;

/// The subfolder an input file is moved into while it is processed.
pub const TRANSIT_IN: &str = "mqsitransitin";
/// The subfolder an output file is written in until it is finished.
pub const TRANSIT_OUT: &str = "mqsitransit";
/// The default archive subfolder.
pub const ARCHIVE: &str = "mqsiarchive";
/// The subfolder a failed input file is moved into.
pub const BACKOUT: &str = "mqsibackout";

/// What went wrong with a file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A record (or a whole file, in whole-file mode) is longer than `max_record_bytes`.
    #[error("the record at offset {offset} is longer than the limit of {limit} bytes")]
    RecordTooLarge { offset: u64, limit: usize },
    /// A record of a parsed record sequence does not parse in the node's domain.
    #[error("the record at offset {offset} is malformed: {source}")]
    Malformed {
        offset: u64,
        #[source]
        source: sluice_tree::TreeError,
    },
    /// A parsed record sequence's file ends inside a record.
    #[error("the file ends after {got} bytes of the {domain} record at offset {offset}")]
    Incomplete {
        offset: u64,
        got: usize,
        domain: &'static str,
    },
    /// Reading a file's records failed.
    #[error("cannot read the file: {0}")]
    Read(#[source] std::io::Error),
    /// A file operation (open, write, rename, remove) failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is in the way and the node's action says not to replace it.
    #[error("{path} already exists")]
    Exists { path: PathBuf },
    /// An SFTP server's host key is not in the node's `known_hosts` file: the node does not
    /// connect.
    #[error(
        "the host key of {server} ({fingerprint}) is not in {known_hosts}: refusing to connect; add the server's key there (ssh-keyscan) once it is known to be the right one"
    )]
    UnknownHost {
        server: String,
        known_hosts: PathBuf,
        fingerprint: String,
    },
    /// An SFTP server's host key differs from the one of the same kind in `known_hosts`.
    #[error(
        "the host key of {server} ({fingerprint}) does not match line {line} of {known_hosts}: refusing to connect (the server was re-keyed, or this is not the server)"
    )]
    HostKeyChanged {
        server: String,
        known_hosts: PathBuf,
        line: usize,
        fingerprint: String,
    },
    /// The SFTP server refused the login.
    #[error("cannot log in to {server} as {user}: {reason}")]
    Login {
        server: String,
        user: String,
        reason: String,
    },
    /// A request to an SFTP server, or the connection to it, failed.
    #[error("cannot {action} on {server}: {source}")]
    Remote {
        server: String,
        action: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl FileError {
    /// The error of `action` on `path`.
    pub fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> FileError {
        let path = path.to_path_buf();
        move |source| FileError::Io {
            action,
            path,
            source,
        }
    }
}

impl From<FileError> for NodeError {
    fn from(e: FileError) -> NodeError {
        if let FileError::Malformed { source, .. } = e {
            return source.into();
        }
        NodeError::recoverable(e.to_string())
    }
}

/// Register the file node types.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&FILE_INPUT, &FILE_OUTPUT, &FILE_READ] {
        r(s);
    }
}

/// `path` made absolute against the current folder, as LocalEnvironment shows directories.
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Microseconds since the epoch.
pub fn epoch_micros(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// A UTC time as the file nodes write it in names and `TimeStamp`: `yyyyMMdd_HHmmss_ffffff`.
pub fn stamp(t: SystemTime) -> String {
    let micros = epoch_micros(t);
    let days = micros.div_euclid(86_400_000_000);
    let in_day = micros.rem_euclid(86_400_000_000);
    let (y, m, d) = sluice_tree::text_form::civil_from_days(days);
    let secs = in_day / 1_000_000;
    format!(
        "{y:04}{m:02}{d:02}_{:02}{:02}{:02}_{:06}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        in_day % 1_000_000
    )
}

/// Create `LocalEnvironment.<folder>.File` (or `LocalEnvironment.File` when `folder` is None)
/// with these fields, replacing one that is there.
pub fn write_file_folder(
    le: &mut Tree,
    folder: Option<&'static str>,
    fields: &[(&'static str, FieldValue)],
) -> Result<(), TreeError> {
    let root = le.root();
    let parent = match folder {
        Some(f) => match le.child_named(root, None, f.as_bytes(), 0)? {
            Some(p) => p,
            None => {
                le.create_last_child(root, field_type::NAME, Text::from_static(f), Value::Null)?
            }
        },
        None => root,
    };
    if let Some(old) = le.child_named(parent, None, b"File", 0)? {
        le.delete(old)?;
    }
    let file = le.create_last_child(
        parent,
        field_type::NAME,
        Text::from_static("File"),
        Value::Null,
    )?;
    for (name, v) in fields {
        let value = match v {
            FieldValue::Text(s) => Value::Character(le.alloc_text(s.as_bytes())),
            FieldValue::Int(i) => Value::Integer(*i),
            FieldValue::GmtTimestamp(t) => Value::GmtTimestamp(*t),
            FieldValue::Null => Value::Null,
        };
        le.create_last_child(file, field_type::NAME_VALUE, Text::from_static(name), value)?;
    }
    Ok(())
}

/// A field of a `File` folder in LocalEnvironment.
pub enum FieldValue {
    Text(String),
    Int(i64),
    GmtTimestamp(i64),
    Null,
}

/// The character value of `LocalEnvironment.<path>`, when it is set and not empty.
pub fn le_text(le: &mut Tree, path: &[&str]) -> Result<Option<String>, TreeError> {
    let root = le.root();
    let Some(id): Option<NodeId> = le.path(root, path)? else {
        return Ok(None);
    };
    Ok(le
        .value_bytes(id)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .filter(|s| !s.is_empty()))
}

/// Move `from` to `to`, creating `to`'s folder; an existing `to` is replaced only when `replace`.
pub fn move_file(from: &Path, to: &Path, replace: bool) -> Result<(), FileError> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(FileError::io("create", dir))?;
    }
    if !replace && to.exists() {
        return Err(FileError::Exists {
            path: to.to_path_buf(),
        });
    }
    std::fs::rename(from, to).map_err(FileError::io("move", from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_formats_utc_with_microseconds_when_given_a_time() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(stamp(t), "20231114_221320_123456");
    }
}
