//! The global cache: named maps of ESQL scalars shared by every flow of a server, after the
//! product's global cache (`MbGlobalMap`: get, put, update, remove, containsKey, and a
//! time-to-live per map). It lives in the server's process; a map that sluice.yaml declares
//! `persistent` is written to the data folder and read back at the next start.
//!
//! Each map is split into shards, each behind its own read-write lock, so that flows using
//! different keys rarely wait for each other and readers never wait for readers.

mod persist;

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::RwLock;
use sluice_esql_scalar::Value;

/// Why a cache operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// `put` of a key the map already holds (the product's put does not replace: use update).
    #[error("the global cache map '{map}' already holds the key '{key}' (update replaces a value)")]
    KeyExists { map: String, key: String },
    /// `update` of a key the map does not hold.
    #[error("the global cache map '{map}' has no key '{key}' (put adds a key)")]
    KeyAbsent { map: String, key: String },
    /// A NULL value was given to put or update: a key without a value is a removed key.
    #[error(
        "a NULL value cannot be stored in the global cache map '{map}' (remove the key instead)"
    )]
    NullValue { map: String },
    /// A value of a type the cache does not hold (INTERVAL) was given to put or update.
    #[error(
        "the global cache holds no {type_name} values (store CAST(… AS CHARACTER) and cast it back)"
    )]
    Unsupported { type_name: &'static str },
    /// A persistent map's name cannot be a file name.
    #[error(
        "the global cache map name '{0}' cannot be persisted: use letters, digits, '.', '_' and '-'"
    )]
    BadName(String),
    /// Reading or writing a persistent map's file failed.
    #[error("global cache file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A persistent map's file holds a line that is not an entry.
    #[error("global cache file {path}, line {line}: {why}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// How a map behaves: from sluice.yaml's `cache.maps`, or the defaults for a map that is first
/// named by a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MapSettings {
    /// Written to the data folder and read back at start.
    pub persistent: bool,
    /// How long an entry lives after it was put or updated; None: until it is removed.
    pub ttl: Option<Duration>,
}

const SHARDS: usize = 16;

/// One value and when it expires (milliseconds since the Unix epoch).
#[derive(Debug, Clone)]
struct Entry {
    value: Value,
    expires_ms: Option<i64>,
}

impl Entry {
    fn live(&self, now_ms: i64) -> bool {
        self.expires_ms.is_none_or(|e| e > now_ms)
    }
}

/// One named map.
pub struct CacheMap {
    name: String,
    settings: MapSettings,
    hasher: RandomState,
    shards: [RwLock<HashMap<String, Entry>>; SHARDS],
    /// Changed since it was last written (persistent maps only).
    dirty: AtomicBool,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn expiry(now_ms: i64, ttl: Option<Duration>) -> Option<i64> {
    ttl.map(|t| now_ms.saturating_add(i64::try_from(t.as_millis()).unwrap_or(i64::MAX)))
}

impl CacheMap {
    fn new(name: &str, settings: MapSettings) -> CacheMap {
        CacheMap {
            name: name.to_string(),
            settings,
            hasher: RandomState::new(),
            shards: std::array::from_fn(|_| RwLock::new(HashMap::new())),
            dirty: AtomicBool::new(false),
        }
    }

    /// The map's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The map's settings.
    pub fn settings(&self) -> MapSettings {
        self.settings
    }

    fn shard(&self, key: &str) -> &RwLock<HashMap<String, Entry>> {
        // The modulo keeps the index below SHARDS, so the conversion cannot truncate.
        &self.shards[(self.hasher.hash_one(key) % SHARDS as u64) as usize]
    }

    fn changed(&self) {
        if self.settings.persistent {
            self.dirty.store(true, Ordering::Release);
        }
    }

    fn check(&self, value: &Value) -> Result<(), CacheError> {
        match value {
            Value::Null => Err(CacheError::NullValue {
                map: self.name.clone(),
            }),
            Value::Interval(_) => Err(CacheError::Unsupported {
                type_name: "INTERVAL",
            }),
            _ => Ok(()),
        }
    }

    /// The value of `key`, or None when the map does not hold it (or it expired).
    pub fn get(&self, key: &str) -> Option<Value> {
        self.get_at(key, now_ms())
    }

    fn get_at(&self, key: &str, now: i64) -> Option<Value> {
        let shard = self.shard(key).read();
        shard
            .get(key)
            .filter(|e| e.live(now))
            .map(|e| e.value.clone())
    }

    /// Whether the map holds `key`.
    pub fn contains(&self, key: &str) -> bool {
        let now = now_ms();
        self.shard(key).read().get(key).is_some_and(|e| e.live(now))
    }

    /// Adds `key`; an error when the map already holds it. `ttl` overrides the map's.
    pub fn put(&self, key: &str, value: Value, ttl: Option<Duration>) -> Result<(), CacheError> {
        self.put_at(key, value, ttl, now_ms())
    }

    fn put_at(
        &self,
        key: &str,
        value: Value,
        ttl: Option<Duration>,
        now: i64,
    ) -> Result<(), CacheError> {
        self.check(&value)?;
        let mut shard = self.shard(key).write();
        if shard.get(key).is_some_and(|e| e.live(now)) {
            return Err(CacheError::KeyExists {
                map: self.name.clone(),
                key: key.to_string(),
            });
        }
        let expires_ms = expiry(now, ttl.or(self.settings.ttl));
        shard.insert(key.to_string(), Entry { value, expires_ms });
        drop(shard);
        self.changed();
        Ok(())
    }

    /// Replaces the value of `key`; an error when the map does not hold it. The entry's
    /// time-to-live starts again.
    pub fn update(&self, key: &str, value: Value, ttl: Option<Duration>) -> Result<(), CacheError> {
        self.update_at(key, value, ttl, now_ms())
    }

    fn update_at(
        &self,
        key: &str,
        value: Value,
        ttl: Option<Duration>,
        now: i64,
    ) -> Result<(), CacheError> {
        self.check(&value)?;
        let mut shard = self.shard(key).write();
        match shard.get_mut(key).filter(|e| e.live(now)) {
            Some(e) => {
                e.value = value;
                e.expires_ms = expiry(now, ttl.or(self.settings.ttl));
            }
            None => {
                return Err(CacheError::KeyAbsent {
                    map: self.name.clone(),
                    key: key.to_string(),
                });
            }
        }
        drop(shard);
        self.changed();
        Ok(())
    }

    /// Removes `key`, giving its value (None when the map did not hold it).
    pub fn remove(&self, key: &str) -> Option<Value> {
        let now = now_ms();
        let removed = self.shard(key).write().remove(key);
        let value = removed.filter(|e| e.live(now)).map(|e| e.value);
        if value.is_some() {
            self.changed();
        }
        value
    }

    /// Removes every key, giving how many there were.
    pub fn clear(&self) -> usize {
        let now = now_ms();
        let mut n = 0;
        for s in &self.shards {
            let mut shard = s.write();
            n += shard.values().filter(|e| e.live(now)).count();
            shard.clear();
        }
        self.changed();
        n
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        let now = now_ms();
        self.shards
            .iter()
            .map(|s| s.read().values().filter(|e| e.live(now)).count())
            .sum()
    }

    /// Whether the map holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the expired entries (lookups already ignore them; this gives their memory back).
    pub fn sweep(&self) {
        let now = now_ms();
        for s in &self.shards {
            s.write().retain(|_, e| e.live(now));
        }
    }

    /// The live entries, for writing the map out.
    fn snapshot(&self, now: i64) -> Vec<(String, Entry)> {
        let mut out = Vec::new();
        for s in &self.shards {
            let shard = s.read();
            out.extend(
                shard
                    .iter()
                    .filter(|(_, e)| e.live(now))
                    .map(|(k, e)| (k.clone(), e.clone())),
            );
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// Every map of one server.
pub struct GlobalCache {
    maps: RwLock<HashMap<String, Arc<CacheMap>>>,
    declared: BTreeMap<String, MapSettings>,
    /// Where persistent maps are written: `DATA_DIR/cache`.
    dir: Option<PathBuf>,
}

impl Default for GlobalCache {
    fn default() -> Self {
        GlobalCache::in_memory()
    }
}

impl GlobalCache {
    /// A cache that writes nothing: maps are made as flows name them.
    pub fn in_memory() -> GlobalCache {
        GlobalCache {
            maps: RwLock::new(HashMap::new()),
            declared: BTreeMap::new(),
            dir: None,
        }
    }

    /// The cache of a server whose data folder is `data_dir` (None: nothing is written), with
    /// the maps sluice.yaml declares; persistent maps are read back from `DATA_DIR/cache`.
    pub fn open(
        data_dir: Option<&Path>,
        declared: BTreeMap<String, MapSettings>,
    ) -> Result<GlobalCache, CacheError> {
        let dir = data_dir.map(|d| d.join("cache"));
        let mut maps = HashMap::new();
        for (name, settings) in &declared {
            let map = CacheMap::new(name, *settings);
            if settings.persistent {
                if !persist::valid_name(name) {
                    return Err(CacheError::BadName(name.clone()));
                }
                if let Some(d) = &dir {
                    persist::load(&map, &d.join(persist::file_name(name)), now_ms())?;
                }
            }
            maps.insert(name.clone(), Arc::new(map));
        }
        Ok(GlobalCache {
            maps: RwLock::new(maps),
            declared,
            dir,
        })
    }

    /// The map named `name`, made (with the declared settings, or none) when first named.
    pub fn map(&self, name: &str) -> Arc<CacheMap> {
        if let Some(m) = self.maps.read().get(name) {
            return Arc::clone(m);
        }
        let mut maps = self.maps.write();
        let settings = self.declared.get(name).copied().unwrap_or_default();
        Arc::clone(
            maps.entry(name.to_string())
                .or_insert_with(|| Arc::new(CacheMap::new(name, settings))),
        )
    }

    /// Writes every persistent map changed since it was last written.
    pub fn flush(&self) -> Result<(), CacheError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let maps: Vec<Arc<CacheMap>> = self.maps.read().values().cloned().collect();
        for m in maps {
            if m.settings.persistent && m.dirty.swap(false, Ordering::AcqRel) {
                let written = std::fs::create_dir_all(dir)
                    .map_err(|source| CacheError::Io {
                        path: dir.clone(),
                        source,
                    })
                    .and_then(|()| {
                        persist::save(&m, &dir.join(persist::file_name(&m.name)), now_ms())
                    });
                if let Err(e) = written {
                    // Still to be written: the next flush tries again.
                    m.dirty.store(true, Ordering::Release);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Drops expired entries of every map.
    pub fn sweep(&self) {
        let maps: Vec<Arc<CacheMap>> = self.maps.read().values().cloned().collect();
        for m in maps {
            m.sweep();
        }
    }
}

/// Writes the cache's persistent maps in the background while the server runs; [`Flusher::stop`]
/// writes them a last time.
pub struct Flusher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    cache: Arc<GlobalCache>,
}

impl Flusher {
    /// Every `every`, writes the maps that changed and drops expired entries.
    pub fn start(cache: &Arc<GlobalCache>, every: Duration) -> Flusher {
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (Arc::clone(cache), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("cache-flush".into())
            .spawn(move || {
                while !s.load(Ordering::Acquire) {
                    std::thread::park_timeout(every);
                    if let Err(e) = c.flush() {
                        tracing::warn!("{e}");
                    }
                    c.sweep();
                }
            })
            .map_err(|e| tracing::warn!("global cache: no background writer: {e}"))
            .ok();
        Flusher {
            stop,
            thread,
            cache: Arc::clone(cache),
        }
    }

    /// Stops the background writer and writes what changed since its last round.
    pub fn stop(mut self) -> Result<(), CacheError> {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.cache.flush()
    }
}

impl Drop for Flusher {
    /// A server that gives up before it runs stops the writer without a last write.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }
}

#[cfg(test)]
mod tests;
