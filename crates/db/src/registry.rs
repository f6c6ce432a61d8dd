//! Open datasources, shared by file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;

use crate::datasource::IN_MEMORY;
use crate::{Datasource, DbError};

/// The datasources open by file. Everyone who opens the same file through one registry shares
/// one [`Datasource`], so that their work in one unit of work is one transaction rather than
/// two that wait for each other. A datasource closes when its last user lets go of it; the
/// registry does not keep it open.
#[derive(Default)]
pub struct Registry {
    open: Mutex<HashMap<PathBuf, Weak<Datasource>>>,
    /// PostgreSQL datasources by name and connection string: one pool for all their users.
    postgres: Mutex<HashMap<(String, String), Weak<Datasource>>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The registry of the process, which deployed flows share.
    pub fn global() -> &'static Registry {
        static GLOBAL: OnceLock<Registry> = OnceLock::new();
        GLOBAL.get_or_init(Registry::new)
    }

    /// The datasource `datasource` names: a file, relative to `base` unless absolute, shared
    /// with its other users; or `:memory:`, a private database that nobody else shares.
    pub fn open(&self, datasource: &str, base: &Path) -> Result<Arc<Datasource>, DbError> {
        if datasource == IN_MEMORY {
            return Datasource::open(datasource);
        }
        let path = base.join(datasource);
        // Held while opening, so that two first users of a file cannot both open it.
        let mut open = self.open.lock();
        open.retain(|_, d| d.strong_count() > 0);
        if let Some(d) = open.get(&path).and_then(Weak::upgrade) {
            return Ok(d);
        }
        let d = Datasource::open_file(&path)?;
        open.insert(path, Arc::downgrade(&d));
        Ok(d)
    }
}

impl Registry {
    /// The PostgreSQL datasource `name` for `conninfo`, shared with the other users of the
    /// same name and connection string so that they share its pool. Connects nothing.
    pub fn postgres(
        &self,
        name: &str,
        conninfo: &str,
        password: Option<&str>,
    ) -> Result<Arc<Datasource>, DbError> {
        let key = (name.to_string(), conninfo.to_string());
        let mut open = self.postgres.lock();
        open.retain(|_, d| d.strong_count() > 0);
        if let Some(d) = open.get(&key).and_then(Weak::upgrade) {
            return Ok(d);
        }
        let d = Datasource::postgres(name, conninfo, password)?;
        open.insert(key, Arc::downgrade(&d));
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(case: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sluice-db-{case}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[test]
    fn open_shares_one_datasource_when_the_file_is_the_same() {
        let dir = temp_dir("shared");
        let r = Registry::new();
        let a = r.open("a.sqlite", &dir).expect("open");
        let b = r.open("a.sqlite", &dir).expect("open again");
        let c = r.open("c.sqlite", &dir).expect("open other");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(a.name(), dir.join("a.sqlite").display().to_string());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn open_makes_a_new_datasource_when_the_last_user_let_go() {
        let dir = temp_dir("reopen");
        let r = Registry::new();
        let a = r.open("a.sqlite", &dir).expect("open");
        let weak = Arc::downgrade(&a);
        drop(a);
        assert!(
            weak.upgrade().is_none(),
            "the registry keeps no datasource open"
        );
        let b = r.open("a.sqlite", &dir).expect("reopen");
        b.statement()
            .expect("connection")
            .execute_batch("CREATE TABLE IF NOT EXISTS t(v)")
            .expect("usable");
        assert_eq!(r.open.lock().len(), 1, "the closed one is forgotten");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn open_gives_each_user_its_own_database_when_in_memory() {
        let r = Registry::new();
        let a = r.open(IN_MEMORY, Path::new(".")).expect("open");
        let b = r.open(IN_MEMORY, Path::new(".")).expect("open again");
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(r.open.lock().is_empty());
    }
}
