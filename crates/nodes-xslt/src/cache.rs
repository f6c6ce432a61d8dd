//! Compiled stylesheets, one copy per thread.
//!
//! A compiled stylesheet cannot move between threads (see `engine.rs`), and a flow instance is a
//! thread, so each instance compiles a stylesheet the first time it uses it and keeps it for
//! every later message: one compilation per instance and stylesheet, no lock on the message
//! path. Entries are keyed by the node's build generation, so a redeployed node never uses a
//! copy compiled from an older file.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Stylesheet, XsltError};

/// At most this many stylesheets per thread; a thread that uses more (messages naming many
/// stylesheets) starts again from empty rather than grow without bound.
const MAX_PER_THREAD: usize = 256;

thread_local! {
    static SHEETS: RefCell<HashMap<(u64, PathBuf), Rc<Stylesheet>>> =
        RefCell::new(HashMap::new());
}

/// A fresh generation for a node being built.
pub fn next_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The stylesheet at `path` compiled on this thread for the node of `generation`: from `source`
/// when the node read it at deploy, else read from the file now.
pub fn stylesheet(
    generation: u64,
    path: &Path,
    source: Option<&[u8]>,
) -> Result<Rc<Stylesheet>, XsltError> {
    let key = (generation, path.to_path_buf());
    if let Some(s) = SHEETS.with_borrow(|m| m.get(&key).cloned())
        && !s.is_worn()
    {
        return Ok(s);
    }
    let compiled = Rc::new(match source {
        Some(bytes) => Stylesheet::compile(bytes, path)?,
        None => {
            let bytes = std::fs::read(path).map_err(|source| XsltError::Read {
                file: path.display().to_string(),
                source,
            })?;
            Stylesheet::compile(&bytes, path)?
        }
    });
    SHEETS.with_borrow_mut(|m| {
        if m.len() >= MAX_PER_THREAD {
            m.clear();
        }
        m.insert(key, compiled.clone());
    });
    Ok(compiled)
}
