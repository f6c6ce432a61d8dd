//! A small file written by storing into memory: two slots, each holding one whole record, used
//! in turn. A record is copied into the slot the last write did not use, so that a process
//! killed in the middle of the copy leaves the other slot, the last record written, intact; the
//! kernel's page cache keeps what was stored after the process is gone. A commit of a file
//! record then costs a memory copy rather than a system call (and ext4's update of the file's
//! times on each write).
//!
//! The file is `2 × S` bytes, slot `i` at `i × S`; S is a power of two, at least [`MIN_SLOT`],
//! grown when a record does not fit. The records' own format says which slot is newer and
//! whether a slot holds a whole record (see `checkpoint.rs`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// The smallest slot.
pub const MIN_SLOT: usize = 4096;

/// The two slots of an open file, mapped into memory.
pub struct Slots {
    file: File,
    map: *mut u8,
    /// The size of one slot.
    slot: usize,
    /// The slot the next record goes to.
    next: usize,
}

// SAFETY: the mapping is owned by this value alone (no copy of the pointer escapes), so moving
// it to another thread moves the only access to it.
unsafe impl Send for Slots {}

impl Slots {
    /// Map `file`, giving it two slots of at least [`MIN_SLOT`] bytes if it has no valid layout
    /// (its content is kept where it fits), with the next record going to slot `next`.
    pub fn map(file: File, next: usize) -> io::Result<Slots> {
        let len = file.metadata()?.len();
        let slot = match usize::try_from(len / 2) {
            Ok(s) if len.is_multiple_of(2) && s >= MIN_SLOT && s.is_power_of_two() => s,
            _ => {
                let s =
                    usize::try_from(len).map_or(MIN_SLOT, |l| l.next_power_of_two().max(MIN_SLOT));
                file.set_len(2 * s as u64)?;
                s
            }
        };
        let map = map_shared(&file, 2 * slot)?;
        Ok(Slots {
            file,
            map,
            slot,
            next: next & 1,
        })
    }

    /// Both slots' bytes, slot 0 first.
    #[cfg(test)]
    fn read(&self) -> (&[u8], &[u8]) {
        // SAFETY: `map` is a live mapping of `2 × slot` bytes, written only through `&mut self`.
        let all = unsafe { std::slice::from_raw_parts(self.map, 2 * self.slot) };
        all.split_at(self.slot)
    }

    /// Store `record` in the slot not holding the newest record, then make that slot the newest.
    pub fn write(&mut self, record: &[u8]) -> io::Result<()> {
        if record.len() > self.slot {
            self.grow(record.len())?;
        }
        let at = self.next * self.slot;
        // SAFETY: `at + record.len() <= 2 × slot`, the mapping's length, and the mapping is
        // writable; `record` cannot overlap it (it is not handed out mutably).
        unsafe { std::ptr::copy_nonoverlapping(record.as_ptr(), self.map.add(at), record.len()) };
        self.next ^= 1;
        Ok(())
    }

    /// Make room for a record of `need` bytes without ever leaving the file without the newest
    /// record: that record is first copied to slot 0 (a kill while copying leaves it in slot 1,
    /// still where the old layout reads it), then the file grows, which moves slot 1 to the
    /// new middle where the next write puts the new record.
    fn grow(&mut self, need: usize) -> io::Result<()> {
        let newest = self.next ^ 1;
        if newest == 1 {
            // SAFETY: the two slots are disjoint ranges of the live mapping.
            unsafe { std::ptr::copy_nonoverlapping(self.map.add(self.slot), self.map, self.slot) };
        }
        let slot = need.next_power_of_two();
        self.file.set_len(2 * slot as u64)?;
        let map = map_shared(&self.file, 2 * slot)?;
        unmap(self.map, 2 * self.slot);
        self.map = map;
        self.slot = slot;
        self.next = 1;
        Ok(())
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        unmap(self.map, 2 * self.slot);
    }
}

fn map_shared(file: &File, len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh shared mapping of an open file descriptor; the kernel checks the
    // arguments and reports failure as MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

fn unmap(p: *mut u8, len: usize) {
    // SAFETY: `p` is a mapping of `len` bytes made by `map_shared` and not used after this.
    unsafe { libc::munmap(p.cast(), len) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("sluice-slots-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn open(path: &std::path::Path) -> File {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap()
    }

    #[test]
    fn slots_alternate_and_survive_a_reopen_when_written_in_turn() {
        let dir = scratch("turn");
        let p = dir.join("s");
        let mut s = Slots::map(open(&p), 0).unwrap();
        s.write(b"first").unwrap();
        s.write(b"second").unwrap();
        s.write(b"third").unwrap();
        drop(s);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 2 * MIN_SLOT as u64);
        let s = Slots::map(open(&p), 0).unwrap();
        let (a, b) = s.read();
        assert_eq!(&a[..5], b"third");
        assert_eq!(&b[..6], b"second");
    }

    #[test]
    fn a_record_larger_than_a_slot_grows_both_keeping_the_newest_in_slot_0() {
        let dir = scratch("grow");
        let p = dir.join("s");
        let mut s = Slots::map(open(&p), 0).unwrap();
        s.write(b"old").unwrap();
        s.write(b"newest").unwrap();
        let big = vec![7u8; MIN_SLOT + 1];
        s.write(&big).unwrap();
        let (a, b) = s.read();
        assert_eq!(a.len(), 2 * MIN_SLOT);
        assert_eq!(&a[..6], b"newest");
        assert_eq!(&b[..big.len()], &big[..]);
        drop(s);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4 * MIN_SLOT as u64);
    }
}
