//! The `Filesystem` seam: every byte the queue manager stores goes through this trait, so
//! tests can inject torn writes, failed fsyncs and a full disk ([`FaultFs`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

/// A file opened for writing by the log.
pub trait LogFile: Send {
    /// Write all of `buf` at the current position.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Move the write position.
    fn seek(&mut self, pos: u64) -> io::Result<()>;
    /// Change the file length (preallocation).
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// fdatasync.
    fn sync_data(&mut self) -> io::Result<()>;
}

/// A file opened for reading at any offset (the log's records, paged-out messages).
pub trait ReadAt: Send + Sync {
    /// Up to `len` bytes from offset `off`: fewer only at the end of the file.
    fn read_at(&self, off: u64, len: usize) -> io::Result<Vec<u8>>;
}

/// The file operations the queue manager needs.
pub trait Filesystem: Send + Sync + 'static {
    /// mkdir -p.
    fn create_dir_all(&self, p: &Path) -> io::Result<()>;
    /// Names of the entries of a directory.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Open for writing, creating when missing; never truncates.
    fn open_write(&self, p: &Path) -> io::Result<Box<dyn LogFile>>;
    /// Whole content of a file.
    fn read(&self, p: &Path) -> io::Result<Vec<u8>>;
    /// Open a file for reads at any offset.
    fn open_read(&self, p: &Path) -> io::Result<Arc<dyn ReadAt>>;
    /// Atomic rename.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Delete a file.
    fn remove(&self, p: &Path) -> io::Result<()>;
    /// fsync a directory so creations, renames and deletions in it are durable.
    fn sync_dir(&self, p: &Path) -> io::Result<()>;
    /// Does the path exist?
    fn exists(&self, p: &Path) -> bool;
    /// Hold the directory `dir` for this process until the returned file is closed, so that
    /// no second process writes the same log; an error of kind `WouldBlock` when another one
    /// holds it. Nothing to hold by default (a simulated file system within one test).
    fn lock_dir(&self, _dir: &Path) -> io::Result<Option<File>> {
        Ok(None)
    }
}

/// The file in a queue manager's directory that its process holds locked while it runs.
const LOCK_FILE: &str = "lock";

/// Write `data` to `path` atomically: temp file, fdatasync, rename, fsync of the directory.
pub fn write_atomic(fs: &dyn Filesystem, path: &Path, data: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    if fs.exists(&tmp) {
        fs.remove(&tmp)?;
    }
    {
        let mut f = fs.open_write(&tmp)?;
        f.set_len(0)?;
        f.write_all(data)?;
        f.sync_data()?;
    }
    fs.rename(&tmp, path)?;
    fs.sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// The real filesystem.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

struct StdFile(File);

struct StdReader(File);

impl ReadAt for StdReader {
    fn read_at(&self, off: u64, len: usize) -> io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut v = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match self.0.read_at(&mut v[got..], off + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        v.truncate(got);
        Ok(v)
    }
}

impl LogFile for StdFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }
    fn seek(&mut self, pos: u64) -> io::Result<()> {
        self.0.seek(SeekFrom::Start(pos)).map(|_| ())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }
}

impl Filesystem for StdFs {
    fn create_dir_all(&self, p: &Path) -> io::Result<()> {
        std::fs::create_dir_all(p)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(dir)? {
            v.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(v)
    }
    fn open_write(&self, p: &Path) -> io::Result<Box<dyn LogFile>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(p)?;
        Ok(Box::new(StdFile(f)))
    }
    fn read(&self, p: &Path) -> io::Result<Vec<u8>> {
        let mut v = Vec::new();
        File::open(p)?.read_to_end(&mut v)?;
        Ok(v)
    }
    fn open_read(&self, p: &Path) -> io::Result<Arc<dyn ReadAt>> {
        Ok(Arc::new(StdReader(File::open(p)?)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn remove(&self, p: &Path) -> io::Result<()> {
        std::fs::remove_file(p)
    }
    fn sync_dir(&self, p: &Path) -> io::Result<()> {
        File::open(p)?.sync_all()
    }
    fn exists(&self, p: &Path) -> bool {
        p.exists()
    }
    fn lock_dir(&self, dir: &Path) -> io::Result<Option<File>> {
        use std::os::fd::AsRawFd;
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))?;
        // SAFETY: flock on an open descriptor; the lock goes with the descriptor (and with
        // the process, however it ends).
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::WouldBlock {
                return Err(e);
            }
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() {
                "another process".to_string()
            } else {
                format!("process {holder}")
            };
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("in use by {who}: one queue manager directory serves one process"),
            ));
        }
        // Who holds it, for the message above (best effort).
        let _ = f.set_len(0);
        let _ = f.write_all(std::process::id().to_string().as_bytes());
        Ok(Some(f))
    }
}

/// Faults to inject, shared between a [`FaultFs`] and the test driving it.
#[derive(Debug, Default)]
pub struct Faults {
    /// Bytes that may still be written before writes fail with ENOSPC (`None` = unlimited).
    pub space_left: Option<u64>,
    /// Number of upcoming `sync_data` calls that fail with EIO.
    pub fail_syncs: u32,
    /// Record syncs (for [`FaultFs::power_cut`]) without asking the disk: for tests that
    /// simulate power cuts and do not need real durability, so they run at memory speed.
    pub simulated_syncs: bool,
    /// Per file: the range written since its last successful sync (what a power cut may
    /// lose). A range, not a high-water mark: the log zero-fills ahead of its end, so new
    /// records are often written below offsets already synced.
    dirty: HashMap<PathBuf, (u64, u64)>,
}

/// A [`Filesystem`] over the real one that can fail writes and syncs on demand, and can
/// simulate a power cut by cutting every file back to what was synced (plus a torn part).
#[derive(Clone, Default)]
pub struct FaultFs {
    faults: Arc<Mutex<Faults>>,
}

impl FaultFs {
    /// A fault-free wrapper; set faults through [`FaultFs::faults`].
    pub fn new() -> FaultFs {
        FaultFs::default()
    }
    /// The shared fault settings.
    pub fn faults(&self) -> &Arc<Mutex<Faults>> {
        &self.faults
    }
    /// Simulate a power cut: every file written through this filesystem loses what was
    /// written after its last successful sync, except the first `keep(unsynced)` bytes of it
    /// (a torn write); the file ends there. Call after the queue manager using it is dropped.
    pub fn power_cut(&self, keep: impl Fn(u64) -> u64) -> io::Result<()> {
        let mut f = self.faults.lock();
        for (path, (from, to)) in std::mem::take(&mut f.dirty) {
            if to > from && path.exists() {
                let cut = from + keep(to - from).min(to - from);
                let file = OpenOptions::new().write(true).open(&path)?;
                let len = file.metadata()?.len();
                if cut < len {
                    file.set_len(cut)?;
                }
            }
        }
        Ok(())
    }
}

struct FaultFile {
    inner: StdFile,
    path: PathBuf,
    pos: u64,
    faults: Arc<Mutex<Faults>>,
}

impl LogFile for FaultFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut f = self.faults.lock();
        let mut n = buf.len() as u64;
        let mut full = false;
        if let Some(left) = f.space_left.as_mut() {
            if n > *left {
                n = *left;
                full = true;
            }
            *left -= n;
        }
        let start = self.pos;
        self.inner.write_all(&buf[..n as usize])?;
        self.pos += n;
        let d = f.dirty.entry(self.path.clone()).or_insert((start, start));
        *d = (d.0.min(start), d.1.max(self.pos));
        if full {
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        Ok(())
    }
    fn seek(&mut self, pos: u64) -> io::Result<()> {
        self.pos = pos;
        self.inner.seek(pos)
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        let mut f = self.faults.lock();
        if f.fail_syncs > 0 {
            f.fail_syncs -= 1;
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        if !f.simulated_syncs {
            self.inner.sync_data()?;
        }
        f.dirty.remove(&self.path);
        Ok(())
    }
}

impl Filesystem for FaultFs {
    fn create_dir_all(&self, p: &Path) -> io::Result<()> {
        StdFs.create_dir_all(p)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        StdFs.list(dir)
    }
    fn open_write(&self, p: &Path) -> io::Result<Box<dyn LogFile>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(p)?;
        Ok(Box::new(FaultFile {
            inner: StdFile(f),
            path: p.to_path_buf(),
            pos: 0,
            faults: self.faults.clone(),
        }))
    }
    fn read(&self, p: &Path) -> io::Result<Vec<u8>> {
        StdFs.read(p)
    }
    fn open_read(&self, p: &Path) -> io::Result<Arc<dyn ReadAt>> {
        StdFs.open_read(p)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut f = self.faults.lock();
        if let Some(d) = f.dirty.remove(from) {
            f.dirty.insert(to.to_path_buf(), d);
        }
        StdFs.rename(from, to)
    }
    fn remove(&self, p: &Path) -> io::Result<()> {
        self.faults.lock().dirty.remove(p);
        StdFs.remove(p)
    }
    fn sync_dir(&self, p: &Path) -> io::Result<()> {
        if self.faults.lock().simulated_syncs {
            return Ok(());
        }
        StdFs.sync_dir(p)
    }
    fn exists(&self, p: &Path) -> bool {
        p.exists()
    }
}
