//! Queue-manager log recovery on arbitrary files: checkpoint loading, segment replay, record
//! framing and checksums, commit-record decoding, torn-tail cutting, stray-file cleanup.
//!
//! The input describes a log directory, held in memory:
//!
//! * byte 0, flags — bits 0–1: number of segment files (0–3); bit 2: a checkpoint file comes
//!   first; bit 3: *reseal* (below); bits 4–5: number of the first segment; bit 6: the
//!   checkpoint is numbered one above the first segment instead of equal to it; bit 7: a
//!   `free-*.wal` spare and a `*.tmp` leftover are present too (their content is the next piece).
//! * then one piece per file: `len u16 LE` and `len` bytes (the last piece may be short).
//!
//! Without reseal a piece is the raw file. With reseal it is a list of `len u16 LE, payload`
//! entries and each payload is framed with a header carrying the correct checksum for that
//! file, so mutations reach the decoders behind the checksum.
//!
//! Checks: recovery never panics; when it succeeds, it recovers the same state a second time
//! from what it left behind, including a removal committed in between.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use sluice_qm::codec;
use sluice_qm::fs::{Filesystem, LogFile, ReadAt};
use sluice_qm::wal::{LiveMsg, Op, Recovered, Wal, WalConfig};

/// Files in memory, keyed by full path; directories exist implicitly.
#[derive(Clone, Default)]
pub struct MemFs {
    files: Arc<Mutex<BTreeMap<PathBuf, Vec<u8>>>>,
}

impl MemFs {
    fn files(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Vec<u8>>> {
        // A panic elsewhere in the run is the finding; the map itself stays usable.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Put a whole file.
    pub fn insert(&self, path: PathBuf, data: Vec<u8>) {
        self.files().insert(path, data);
    }

    /// Every file, by path (the seed writer of the short-form test reads the log from it).
    #[allow(dead_code)]
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        self.files().clone()
    }
}

fn not_found(p: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, p.display().to_string())
}

struct MemFile {
    fs: MemFs,
    path: PathBuf,
    pos: usize,
}

impl LogFile for MemFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut files = self.fs.files();
        let f = files.entry(self.path.clone()).or_default();
        let end = self.pos + buf.len();
        if f.len() < end {
            f.resize(end, 0);
        }
        f[self.pos..end].copy_from_slice(buf);
        self.pos = end;
        Ok(())
    }
    fn seek(&mut self, pos: u64) -> io::Result<()> {
        self.pos = usize::try_from(pos).map_err(io::Error::other)?;
        Ok(())
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(io::Error::other)?;
        self.fs
            .files()
            .entry(self.path.clone())
            .or_default()
            .resize(len, 0);
        Ok(())
    }
    fn sync_data(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A file of a [`MemFs`] opened for reading: reads what the file holds at the time.
struct MemReader {
    fs: MemFs,
    path: PathBuf,
}

impl ReadAt for MemReader {
    fn read_at(&self, off: u64, len: usize) -> io::Result<Vec<u8>> {
        let files = self.fs.files();
        let f = files.get(&self.path).ok_or_else(|| not_found(&self.path))?;
        let start = usize::try_from(off).map_err(io::Error::other)?.min(f.len());
        let end = start.saturating_add(len).min(f.len());
        Ok(f[start..end].to_vec())
    }
}

impl Filesystem for MemFs {
    fn create_dir_all(&self, _: &Path) -> io::Result<()> {
        Ok(())
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        Ok(self
            .files()
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn open_write(&self, p: &Path) -> io::Result<Box<dyn LogFile>> {
        self.files().entry(p.to_path_buf()).or_default();
        Ok(Box::new(MemFile {
            fs: self.clone(),
            path: p.to_path_buf(),
            pos: 0,
        }))
    }
    fn read(&self, p: &Path) -> io::Result<Vec<u8>> {
        self.files().get(p).cloned().ok_or_else(|| not_found(p))
    }
    fn open_read(&self, p: &Path) -> io::Result<Arc<dyn ReadAt>> {
        if !self.files().contains_key(p) {
            return Err(not_found(p));
        }
        Ok(Arc::new(MemReader {
            fs: self.clone(),
            path: p.to_path_buf(),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut files = self.files();
        let data = files.remove(from).ok_or_else(|| not_found(from))?;
        files.insert(to.to_path_buf(), data);
        Ok(())
    }
    fn remove(&self, p: &Path) -> io::Result<()> {
        self.files()
            .remove(p)
            .map(|_| ())
            .ok_or_else(|| not_found(p))
    }
    fn sync_dir(&self, _: &Path) -> io::Result<()> {
        Ok(())
    }
    fn exists(&self, p: &Path) -> bool {
        let files = self.files();
        files.contains_key(p) || files.keys().any(|k| k.parent() == Some(p))
    }
}

/// The log directory every run uses.
pub const DIR: &str = "/qm/log";
/// Number that checkpoint records are checksummed with instead of a segment number.
const CKPT_SEG: u64 = u64::MAX;

/// Small segments keep every run cheap; no checkpoint is taken by size during a run.
pub fn config() -> WalConfig {
    WalConfig {
        segment_size: 64 << 10,
        checkpoint_min_bytes: 1 << 30,
        free_segments: 1,
    }
}

/// Record header for `payload` in the file checksummed with `seg`.
pub fn header(seg: u64, payload: &[u8]) -> [u8; 8] {
    let len = payload.len() as u32;
    let mut h = crc32fast::Hasher::new();
    h.update(&seg.to_le_bytes());
    h.update(&len.to_le_bytes());
    h.update(payload);
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..].copy_from_slice(&h.finalize().to_le_bytes());
    out
}

/// Split off the next `len u16, bytes` piece (short when the input ends early).
fn piece<'a>(rest: &mut &'a [u8]) -> &'a [u8] {
    let len = match rest {
        [a, b, ..] => usize::from(u16::from_le_bytes([*a, *b])),
        _ => {
            let all = *rest;
            *rest = &[];
            return all;
        }
    };
    let body = &rest[2..];
    let n = len.min(body.len());
    *rest = &body[n..];
    &body[..n]
}

/// Frame each `len u16, payload` entry of `piece` as a record with a valid checksum.
fn reseal(seg: u64, mut piece_bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(piece_bytes.len() + 64);
    while !piece_bytes.is_empty() {
        let payload = piece(&mut piece_bytes);
        out.extend_from_slice(&header(seg, payload));
        out.extend_from_slice(payload);
    }
    out
}

/// Build the log directory an input describes.
pub fn layout(data: &[u8]) -> MemFs {
    let fs = MemFs::default();
    let Some((&flags, mut rest)) = data.split_first() else {
        return fs;
    };
    let dir = Path::new(DIR);
    let segments = u64::from(flags & 3);
    let first = u64::from((flags >> 4) & 3);
    let sealed = flags & 8 != 0;
    let file = |seg: u64, raw: &[u8]| {
        if sealed {
            reseal(seg, raw)
        } else {
            raw.to_vec()
        }
    };
    if flags & 4 != 0 {
        let n = first + u64::from((flags >> 6) & 1);
        let raw = piece(&mut rest);
        fs.insert(dir.join(format!("ckpt-{n:016x}.ckpt")), file(CKPT_SEG, raw));
    }
    for n in first..first + segments {
        let raw = piece(&mut rest);
        fs.insert(dir.join(format!("seg-{n:016x}.wal")), file(n, raw));
    }
    if flags & 128 != 0 {
        let raw = piece(&mut rest).to_vec();
        fs.insert(dir.join("free-00000000000000aa.wal"), raw.clone());
        fs.insert(dir.join(format!("ckpt-{first:016x}.tmp")), raw);
    }
    fs
}

/// What a recovery found, comparable across runs (messages by their encoding, so that a NaN
/// property compares equal to itself).
fn state(rec: &Recovered) -> BTreeMap<u64, (String, u64, Vec<u8>)> {
    rec.msgs
        .keys()
        .map(|seq| {
            let LiveMsg {
                queue,
                expire_ms,
                msg,
            } = rec
                .message(*seq)
                .unwrap_or_else(|e| panic!("recovered message {seq} does not read back: {e}"));
            (*seq, (queue, expire_ms, codec::encode(&msg)))
        })
        .collect()
}

/// Run one input.
pub fn run(data: &[u8]) {
    let fs = layout(data);
    let dir = Path::new(DIR);
    let Ok((wal, rec)) = Wal::open(Arc::new(fs.clone()), dir, config()) else {
        // Corruption that cannot be repaired is reported, not recovered: that is the contract.
        return;
    };
    let mut expected = state(&rec);
    for seq in expected.keys() {
        assert!(
            *seq < rec.next_seq,
            "seq {seq} at or above next_seq {}",
            rec.next_seq
        );
    }
    if let Some(&seq) = expected.keys().next() {
        wal.commit(vec![Op::Remove { seq }])
            .expect("a removal commits on a recovered log in memory");
        expected.remove(&seq);
    }
    wal.shutdown();
    drop(wal);

    let (wal, again) = match Wal::open(Arc::new(fs.clone()), dir, config()) {
        Ok(r) => r,
        Err(e) => panic!("the log recovery itself left does not open again: {e}"),
    };
    wal.shutdown();
    assert_eq!(
        state(&again),
        expected,
        "second recovery differs from the first"
    );
    assert!(again.next_seq >= rec.next_seq, "next_seq went backwards");
}
