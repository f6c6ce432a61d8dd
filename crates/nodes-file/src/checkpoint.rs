//! The restart checkpoint of an input file: how far FileInput got, written each time a record's
//! unit of work commits, so that after a crash (kill -9) processing resumes at the first record
//! not committed and no committed record is processed twice.
//!
//! It lives beside the file in the transit folder, as `.<name>.progress`, a file of two slots
//! written in turn through memory (see [`crate::slots`]): the newer whole checkpoint of the two
//! is the committed one, so a process killed while storing one still has the one before. Each
//! slot holds, all integers little-endian:
//!
//! ```text
//! "SLCP" | version u8 (2) | flags u8 (bit 0: end of data done; bit 1: the last record ended
//! with a delimiter) | sequence u64 | next offset u64 | records done u64 | delimiter length u16
//! | delimiter | outputs u32 | per output: path length u32, path (UTF-8), committed length u64
//! | CRC-32 of everything before it, u32
//! ```
//!
//! The sequence grows by one per checkpoint written and says which slot is newer. A shorter
//! checkpoint written over a longer one leaves stale bytes after its CRC; they are never read.
//! Version 1 (no sequence, one checkpoint at offset 0) is still read. When neither slot holds a
//! whole checkpoint (both torn by a power failure), that is reported and the file is processed
//! from its start.
//!
//! *Outputs* are the files FileOutput appended to in this unit of work (see [`Progress::wrote`]):
//! their committed lengths are part of the checkpoint, and recovery cuts them back to those
//! lengths, so that a record written by an invocation that did not commit is not there twice
//! after the record is processed again. A rollback (a record that failed) cuts them back too.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use sluice_node_api::{Resource, ResourceError};

use crate::FileError;
use crate::slots::{MIN_SLOT, Slots};

const MAGIC: &[u8; 4] = b"SLCP";
const VERSION: u8 = 2;

/// How far processing of an input file got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// Where the next record starts.
    pub offset: u64,
    /// Records processed (the last one's number).
    pub record: u64,
    /// The delimiter that ended the last record processed.
    pub delimiter: Option<Bytes>,
    /// Whether the last record ended with a delimiter.
    pub after_delimiter: bool,
    /// Whether End of Data was propagated and committed: only the file's disposal is left.
    pub done: bool,
    /// Output files written while processing this file, with their committed lengths.
    pub outputs: Vec<(PathBuf, u64)>,
}

impl Checkpoint {
    /// The checkpoint as one slot's bytes, with sequence number 0.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64);
        self.encode_into(0, &mut b);
        b
    }

    /// [`Checkpoint::encode`] with sequence number `seq` into `b` (cleared first), so that a
    /// commit reuses one buffer.
    pub fn encode_into(&self, seq: u64, b: &mut Vec<u8>) {
        b.clear();
        b.extend_from_slice(MAGIC);
        b.push(VERSION);
        b.push(u8::from(self.done) | (u8::from(self.after_delimiter) << 1));
        b.extend_from_slice(&seq.to_le_bytes());
        b.extend_from_slice(&self.offset.to_le_bytes());
        b.extend_from_slice(&self.record.to_le_bytes());
        let d = self.delimiter.as_deref().unwrap_or_default();
        let dlen = u16::try_from(d.len()).unwrap_or(u16::MAX);
        b.extend_from_slice(&dlen.to_le_bytes());
        b.extend_from_slice(&d[..usize::from(dlen)]);
        b.extend_from_slice(&(self.outputs.len() as u32).to_le_bytes());
        for (p, len) in &self.outputs {
            let s = p.to_string_lossy();
            b.extend_from_slice(&(s.len() as u32).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
            b.extend_from_slice(&len.to_le_bytes());
        }
        let crc = crc32fast::hash(b);
        b.extend_from_slice(&crc.to_le_bytes());
    }

    /// The newest whole checkpoint of a checkpoint file's content `b`, with the slot it is in
    /// and its sequence number; None when there is none.
    pub fn load(b: &[u8]) -> Option<(Checkpoint, usize, u64)> {
        let half = b.len() / 2;
        let slotted = b.len().is_multiple_of(2) && half >= MIN_SLOT && half.is_power_of_two();
        if !slotted {
            return Checkpoint::decode_seq(b).map(|(c, seq)| (c, 0, seq));
        }
        let (a, z) = b.split_at(half);
        match (Checkpoint::decode_seq(a), Checkpoint::decode_seq(z)) {
            (Some((c, s)), Some((_, t))) if s >= t => Some((c, 0, s)),
            (_, Some((c, t))) => Some((c, 1, t)),
            (Some((c, s)), None) => Some((c, 0, s)),
            (None, None) => None,
        }
    }

    /// The checkpoint in `b` (one slot), or None when it is not a whole, valid one.
    pub fn decode(b: &[u8]) -> Option<Checkpoint> {
        Checkpoint::decode_seq(b).map(|(c, _)| c)
    }

    fn decode_seq(b: &[u8]) -> Option<(Checkpoint, u64)> {
        let mut r = Cursor { b, at: 0 };
        if r.take(4)? != MAGIC {
            return None;
        }
        let version = r.take(1)?[0];
        if version != 1 && version != VERSION {
            return None;
        }
        let flags = r.take(1)?[0];
        let seq = if version == 1 { 0 } else { r.u64()? };
        let offset = r.u64()?;
        let record = r.u64()?;
        let dlen = u16::from_le_bytes(r.take(2)?.try_into().ok()?);
        let d = r.take(usize::from(dlen))?;
        let n = r.u32()?;
        let mut outputs = Vec::new();
        for _ in 0..n {
            let plen = r.u32()? as usize;
            let p = String::from_utf8(r.take(plen)?.to_vec()).ok()?;
            outputs.push((PathBuf::from(p), r.u64()?));
        }
        let end = r.at;
        let crc = r.u32()?;
        let c = Checkpoint {
            offset,
            record,
            delimiter: (dlen > 0).then(|| Bytes::copy_from_slice(d)),
            after_delimiter: flags & 2 != 0,
            done: flags & 1 != 0,
            outputs,
        };
        (crc32fast::hash(&b[..end]) == crc).then_some((c, seq))
    }

    /// Cut every output back to its committed length (what an invocation that did not commit
    /// appended goes).
    pub fn restore_outputs(&self) {
        for (p, len) in &self.outputs {
            cut_back(p, *len);
        }
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn cut_back(p: &Path, len: u64) {
    crate::output::OUTPUT_CHANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let Ok(f) = std::fs::OpenOptions::new().write(true).open(p) else {
        return;
    };
    if f.metadata().is_ok_and(|m| m.len() > len)
        && let Err(error) = f.set_len(len)
    {
        tracing::error!(%error, path = %p.display(), "Cannot cut an output file back to its committed length.");
    }
}

/// An output write done in the current unit of work.
enum Touched {
    /// Appended to the output at this index of the committed outputs: the file's length
    /// before and after. An index rather than the path, so that a record's append does not
    /// allocate.
    Appended {
        index: usize,
        before: u64,
        after: u64,
    },
    /// Appended to an output the checkpoint does not track yet.
    Wrote {
        path: PathBuf,
        before: u64,
        after: u64,
    },
    /// Finished: moved out of the transit folder.
    Finished(PathBuf),
}

/// The checkpoint as a resource of the invocation's unit of work: FileInput joins it for each
/// record, FileOutput reports its writes to it, and its commit writes the checkpoint.
pub struct Progress {
    /// None in a stand-in that holds the place of one lent to an invocation.
    file: Option<Slots>,
    path: PathBuf,
    /// The sequence number of the last checkpoint written.
    seq: u64,
    committed: Checkpoint,
    /// The checkpoint this invocation commits. Its `outputs` are not used: the committed
    /// outputs with this unit of work's writes are.
    pub next: Checkpoint,
    touched: Vec<Touched>,
    /// The encoded checkpoint, kept to be reused by the next commit.
    encoded: Vec<u8>,
    /// The committed lengths an unfinished commit changed, to undo them if its write fails.
    undo: Vec<(usize, u64)>,
}

impl Progress {
    /// Its key in the invocation's unit of work.
    pub const KEY: &str = "file-input";

    /// The checkpoint file of the input file at `input` (in the transit folder), opened or
    /// created, and what it held (None when new, empty or not valid).
    pub fn open(input: &Path) -> Result<(Progress, Option<Checkpoint>), FileError> {
        Progress::open_at(&progress_path(input))
    }

    /// [`Progress::open`] with the checkpoint file at `path` (its folder created).
    pub fn open_at(path: &Path) -> Result<(Progress, Option<Checkpoint>), FileError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(FileError::io("create", dir))?;
        }
        let path = path.to_path_buf();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(FileError::io("open", &path))?;
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut &file, &mut b).map_err(FileError::io("read", &path))?;
        let loaded = Checkpoint::load(&b);
        if loaded.is_none() && b.iter().any(|&x| x != 0) {
            tracing::warn!(path = %path.display(), "The checkpoint is not valid; the file is processed from its start.");
        }
        let (slot, seq) = loaded
            .as_ref()
            .map_or((1, 0), |(_, slot, seq)| (*slot, *seq));
        let found = loaded.map(|(c, _, _)| c);
        let slots = Slots::map(file, slot ^ 1).map_err(FileError::io("map", &path))?;
        let committed = found.clone().unwrap_or_default();
        Ok((
            Progress {
                file: Some(slots),
                path,
                seq,
                next: Checkpoint {
                    outputs: Vec::new(),
                    ..committed.clone()
                },
                committed,
                touched: Vec::new(),
                encoded: Vec::new(),
                undo: Vec::new(),
            },
            found,
        ))
    }

    /// A stand-in, with no file, for the time the real one is in an invocation's unit of work.
    pub fn detached() -> Progress {
        Progress {
            file: None,
            path: PathBuf::new(),
            seq: 0,
            committed: Checkpoint::default(),
            next: Checkpoint::default(),
            touched: Vec::new(),
            encoded: Vec::new(),
            undo: Vec::new(),
        }
    }

    /// Whether `path`'s committed length is in the checkpoint.
    pub fn tracks(&self, path: &Path) -> bool {
        self.output(path).is_some()
    }

    /// The index of `path` in the committed outputs. The paths' bytes are compared: they are
    /// the very paths FileOutput gave, and a byte compare is cheaper than `Path`'s, which
    /// walks components.
    fn output(&self, path: &Path) -> Option<usize> {
        self.committed
            .outputs
            .iter()
            .position(|(p, _)| p.as_os_str() == path.as_os_str())
    }

    /// FileOutput is about to write to `path`, whose length is `len`, for the first time under
    /// this checkpoint: the length is recorded at once, before the write, so that a crash
    /// before the commit cuts the write back.
    pub fn track(&mut self, path: &Path, len: u64) -> Result<(), FileError> {
        if self.tracks(path) {
            return Ok(());
        }
        self.committed.outputs.push((path.to_path_buf(), len));
        let r = self.write_committed();
        if r.is_err() {
            self.committed.outputs.pop();
        }
        r
    }

    /// FileOutput appended to `path`, which was `before` bytes long and is now `after`.
    pub fn wrote(&mut self, path: &Path, before: u64, after: u64) {
        let t = match self.output(path) {
            Some(index) => Touched::Appended {
                index,
                before,
                after,
            },
            None => Touched::Wrote {
                path: path.to_path_buf(),
                before,
                after,
            },
        };
        self.touched.push(t);
    }

    /// FileOutput finished `path` (moved it out of its transit folder).
    pub fn finished(&mut self, path: &Path) {
        self.touched.push(Touched::Finished(path.to_path_buf()));
    }

    /// What the last commit wrote.
    pub fn committed(&self) -> &Checkpoint {
        &self.committed
    }

    /// Write `next` now (outside a unit of work).
    pub fn save(&mut self) -> Result<(), FileError> {
        self.commit_now()
    }

    /// Remove the checkpoint file (its input file is disposed of).
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// Commit `next` with this unit of work's writes. The usual commit, appends to outputs
    /// already tracked, updates their lengths in place; one that adds or finishes an output
    /// works on a copy of the outputs.
    /// Write the committed checkpoint over the file's.
    fn write_committed(&mut self) -> Result<(), FileError> {
        self.committed.encode_into(self.seq + 1, &mut self.encoded);
        match self.file.as_mut() {
            Some(f) => f.write(&self.encoded),
            None => Err(std::io::Error::other(
                "the checkpoint has no file (this is a bug, please report it)",
            )),
        }
        .map_err(FileError::io("write", &self.path))?;
        self.seq += 1;
        Ok(())
    }

    fn commit_now(&mut self) -> Result<(), FileError> {
        let in_place = self
            .touched
            .iter()
            .all(|t| matches!(t, Touched::Appended { .. }));
        let saved = (!in_place).then(|| self.committed.outputs.clone());
        self.undo.clear();
        for t in self.touched.drain(..) {
            let outputs = &mut self.committed.outputs;
            match t {
                Touched::Appended { index, after, .. } if in_place => {
                    if let Some(o) = outputs.get_mut(index) {
                        self.undo.push((index, o.1));
                        o.1 = after;
                    }
                }
                Touched::Appended { index, after, .. } => {
                    // The index was taken before anything of this commit moved the outputs.
                    if let Some((path, _)) = saved.as_ref().and_then(|s| s.get(index)) {
                        set_len(outputs, path, after);
                    }
                }
                Touched::Wrote { path, after, .. } => set_len(outputs, &path, after),
                Touched::Finished(path) => {
                    outputs.retain(|(p, _)| p.as_os_str() != path.as_os_str());
                }
            }
        }
        let outputs = std::mem::take(&mut self.committed.outputs);
        let previous = std::mem::replace(
            &mut self.committed,
            Checkpoint {
                outputs,
                ..self.next.clone()
            },
        );
        let r = self.write_committed();
        if r.is_err() {
            // What is on disk is still the previous checkpoint.
            let outputs = match saved {
                Some(s) => s,
                None => {
                    let mut o = std::mem::take(&mut self.committed.outputs);
                    for &(i, len) in self.undo.iter().rev() {
                        if let Some(e) = o.get_mut(i) {
                            e.1 = len;
                        }
                    }
                    o
                }
            };
            self.committed = Checkpoint {
                outputs,
                ..previous
            };
        }
        r
    }
}

/// Set `path`'s committed length, adding it when it is not there yet.
fn set_len(outputs: &mut Vec<(PathBuf, u64)>, path: &Path, len: u64) {
    match outputs
        .iter_mut()
        .find(|(p, _)| p.as_os_str() == path.as_os_str())
    {
        Some(o) => o.1 = len,
        None => outputs.push((path.to_path_buf(), len)),
    }
}

/// Write `c` over the checkpoint file at offset 0, in one write (encoded into `buf`).
impl Resource for Progress {
    fn commit(&mut self) -> Result<(), ResourceError> {
        self.commit_now()
            .map_err(|e| ResourceError::new("the input file's checkpoint", e))
    }

    fn rollback(&mut self) {
        for t in self.touched.drain(..).rev() {
            match t {
                Touched::Appended { index, before, .. } => {
                    if let Some((path, _)) = self.committed.outputs.get(index) {
                        cut_back(path, before);
                    }
                }
                Touched::Wrote { path, before, .. } => cut_back(&path, before),
                Touched::Finished(_) => {}
            }
        }
        self.next = Checkpoint {
            outputs: Vec::new(),
            ..self.committed.clone()
        };
    }
}

/// Where the checkpoint of the input file `input` is kept.
pub fn progress_path(input: &Path) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    input.with_file_name(format!(".{name}.progress"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        Checkpoint {
            offset: 1234,
            record: 17,
            delimiter: Some(Bytes::from_static(b"\r\n")),
            after_delimiter: true,
            done: false,
            outputs: vec![(PathBuf::from("/out/mqsitransit/a.txt"), 999)],
        }
    }

    #[test]
    fn checkpoint_round_trips_when_encoded() {
        let c = sample();
        assert_eq!(Checkpoint::decode(&c.encode()), Some(c));
    }

    #[test]
    fn checkpoint_is_rejected_when_torn_or_corrupt() {
        let b = sample().encode();
        assert!(Checkpoint::decode(&b[..b.len() - 1]).is_none());
        let mut bad = b.clone();
        bad[10] ^= 1;
        assert!(Checkpoint::decode(&bad).is_none());
    }

    #[test]
    fn checkpoint_ignores_stale_bytes_when_a_shorter_one_overwrote_a_longer_one() {
        let mut b = sample().encode();
        let short = Checkpoint::default().encode();
        b[..short.len()].copy_from_slice(&short);
        assert_eq!(Checkpoint::decode(&b), Some(Checkpoint::default()));
    }

    #[test]
    fn load_takes_the_newer_slot_and_falls_back_when_it_is_torn() {
        let mut file = vec![0u8; 2 * MIN_SLOT];
        let mut b = Vec::new();
        let older = sample();
        older.encode_into(4, &mut b);
        file[..b.len()].copy_from_slice(&b);
        let newer = Checkpoint {
            record: 18,
            ..sample()
        };
        newer.encode_into(5, &mut b);
        file[MIN_SLOT..MIN_SLOT + b.len()].copy_from_slice(&b);
        assert_eq!(Checkpoint::load(&file), Some((newer, 1, 5)));
        file[MIN_SLOT + b.len() - 1] ^= 1;
        assert_eq!(Checkpoint::load(&file), Some((older, 0, 4)));
    }

    #[test]
    fn checkpoint_of_version_1_is_read_when_left_by_an_older_release() {
        let mut b = Checkpoint::default().encode();
        // Version 1 had no sequence number.
        b[4] = 1;
        b.drain(6..14);
        let n = b.len() - 4;
        let crc = crc32fast::hash(&b[..n]);
        b[n..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Checkpoint::load(&b), Some((Checkpoint::default(), 0, 0)));
    }

    #[test]
    fn commits_alternate_slots_and_the_last_is_found_when_reopened() {
        let dir = std::env::temp_dir().join(format!("sluice-cp-slots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.txt");
        let (mut p, _) = Progress::open(&input).unwrap();
        for r in 1..=5 {
            p.next.record = r;
            p.commit().unwrap();
        }
        drop(p);
        let (mut p, found) = Progress::open(&input).unwrap();
        assert_eq!(found.unwrap().record, 5);
        p.next.record = 6;
        p.commit().unwrap();
        drop(p);
        let (_, found) = Progress::open(&input).unwrap();
        assert_eq!(found.unwrap().record, 6);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rollback_cuts_outputs_back_when_the_record_failed() {
        let dir = std::env::temp_dir().join(format!("sluice-cp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.txt");
        let out = dir.join("out.txt");
        std::fs::write(&out, b"keep").unwrap();
        let (mut p, found) = Progress::open(&input).unwrap();
        assert!(found.is_none());
        std::fs::write(&out, b"keep+more").unwrap();
        p.wrote(&out, 4, 9);
        p.rollback();
        assert_eq!(std::fs::read(&out).unwrap(), b"keep");
        p.next.record = 1;
        p.wrote(&out, 4, 4);
        p.commit().unwrap();
        let (_, found) = Progress::open(&input).unwrap();
        let found = found.unwrap();
        assert_eq!(found.record, 1);
        assert_eq!(found.outputs, vec![(out.clone(), 4)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn track_records_the_length_before_the_first_write_when_nothing_committed_yet() {
        let dir = std::env::temp_dir().join(format!("sluice-cp-track-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in.txt");
        let out = dir.join("out.txt");
        std::fs::write(&out, b"before").unwrap();
        let (mut p, _) = Progress::open(&input).unwrap();
        p.track(&out, 6).unwrap();
        // The process dies after the write and before the commit.
        std::fs::write(&out, b"before+uncommitted").unwrap();
        drop(p);
        let (_, found) = Progress::open(&input).unwrap();
        found.unwrap().restore_outputs();
        assert_eq!(std::fs::read(&out).unwrap(), b"before");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
