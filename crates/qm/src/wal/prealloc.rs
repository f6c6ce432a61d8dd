//! Background preallocation of log segments: overwriting blocks that are already allocated
//! syncs faster than appending (here 1.4–6× in measurements), so a zero-filled spare
//! segment is kept ready in the free pool while the log is busy.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::fs::Filesystem;

static FILLS: AtomicU64 = AtomicU64::new(0);

/// Start filling a spare segment unless one is ready or being made.
pub(super) fn ensure_spare(
    fs: &Arc<dyn Filesystem>,
    dir: &Path,
    free: &Arc<Mutex<Vec<PathBuf>>>,
    busy: &Arc<AtomicBool>,
    size: u64,
) {
    if !free.lock().is_empty() || busy.swap(true, Ordering::AcqRel) {
        return;
    }
    let (fs, dir, free, b2) = (fs.clone(), dir.to_path_buf(), free.clone(), busy.clone());
    let spawned = std::thread::Builder::new()
        .name("qm-log-prealloc".into())
        .spawn(move || {
            match fill(&*fs, &dir, size) {
                Ok(p) => free.lock().push(p),
                Err(e) => tracing::warn!("cannot preallocate a {size}-byte log segment: {e}"),
            }
            b2.store(false, Ordering::Release);
        });
    if spawned.is_err() {
        busy.store(false, Ordering::Release);
    }
}

fn fill(fs: &dyn Filesystem, dir: &Path, size: u64) -> io::Result<PathBuf> {
    let n = FILLS.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("prealloc-{}-{n}.tmp", std::process::id()));
    let res = (|| {
        let mut f = fs.open_write(&tmp)?;
        f.set_len(0)?;
        let zeros = vec![0u8; 1 << 20];
        let mut done = 0u64;
        while done < size {
            let k = (size - done).min(zeros.len() as u64) as usize;
            f.write_all(&zeros[..k])?;
            done += k as u64;
            if done.is_multiple_of(8 << 20) {
                // Smaller flushes keep the log's own syncs from queueing behind one huge one.
                f.sync_data()?;
            }
        }
        f.sync_data()?;
        drop(f);
        // Unique across restarts too (a process id can come back): add the time.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("free-z{t:x}-{}-{n:x}.wal", std::process::id()));
        fs.rename(&tmp, &path)?;
        fs.sync_dir(dir)?;
        Ok(path)
    })();
    if res.is_err() {
        let _ = fs.remove(&tmp);
    }
    res
}
