//! What an operator sees of queues and of the queue manager's memory and disk.

use serde::Serialize;

use crate::error::Result;
use crate::manager::{Object, QueueManager};
use crate::model::Mqmd;

/// One local queue's use of memory and disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    /// Messages on the queue (committed; MQ's CURDEPTH less uncommitted puts).
    pub depth: usize,
    /// Body bytes of those messages.
    pub bytes: u64,
    /// Body bytes of those that are on disk: persistent ones (in the log) and non-persistent
    /// ones paged out to the spill file.
    pub bytes_on_disk: u64,
    /// Messages held whole in memory (within the queue's window).
    pub in_memory: usize,
    /// Their body bytes.
    pub in_memory_bytes: u64,
    /// Age of the oldest message in milliseconds (MQ's MSGAGE), by its put date and time.
    pub oldest_age_ms: Option<u64>,
}

/// The queue manager's memory and disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StorageStats {
    /// Resident memory of the process, bytes (Linux; `None` elsewhere).
    pub process_rss: Option<u64>,
    /// Body bytes held whole in memory by all queues.
    pub queue_memory_bytes: u64,
    /// Bytes of the log directory's files (segments, checkpoints, spares).
    pub log_disk_bytes: u64,
    /// Bytes of the spill file (non-persistent messages paged out).
    pub spill_bytes: u64,
    /// Persistent messages live in the log.
    pub log_live_messages: usize,
}

/// A descriptor's PutDate and PutTime as unix milliseconds.
pub(crate) fn put_ms(md: &Mqmd) -> Option<u64> {
    let num = |s: &str| s.parse::<i64>().ok();
    let (d, t) = (md.put_date.as_str(), md.put_time.as_str());
    if d.len() != 8 || t.len() != 8 || !d.is_ascii() || !t.is_ascii() {
        return None;
    }
    let (y, m, day) = (num(&d[..4])?, num(&d[4..6])?, num(&d[6..])?);
    let (hh, mm, ss, cs) = (num(&t[..2])?, num(&t[2..4])?, num(&t[4..6])?, num(&t[6..])?);
    // Days from civil (Howard Hinnant's algorithm), the inverse of `put_date_time`.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let ms = ((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1000) + cs * 10;
    u64::try_from(ms).ok()
}

/// Resident set size of this process (Linux `/proc/self/statm`).
fn rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

impl QueueManager {
    /// Depth, bytes, bytes on disk, memory and oldest message age of a local queue (an
    /// alias: of its target).
    pub fn queue_stats(&self, name: &str) -> Result<QueueStats> {
        let q = self.resolve(name, false)?;
        let st = q.state.lock();
        Ok(st.stats())
    }

    /// The queue manager's memory and disk use.
    pub fn storage_stats(&self) -> StorageStats {
        let queues: Vec<_> = self
            .objects
            .read()
            .values()
            .filter_map(|o| match o {
                Object::Local(q) => Some(q.clone()),
                Object::Other(_) => None,
            })
            .collect();
        let queue_memory_bytes = queues
            .iter()
            .map(|q| q.state.lock().stats().in_memory_bytes)
            .sum();
        let log_disk_bytes = self
            .dir()
            .map(|d| d.join("log"))
            .and_then(|d| std::fs::read_dir(d).ok())
            .map(|rd| {
                rd.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        StorageStats {
            process_rss: rss(),
            queue_memory_bytes,
            log_disk_bytes,
            spill_bytes: self.pager.as_ref().map_or(0, |p| p.spill_bytes()),
            log_live_messages: self.pager.as_ref().map_or(0, |p| p.log_live()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::put_date_time;

    #[test]
    fn put_ms_inverts_put_date_time_to_the_hundredth() {
        for ms in [0u64, 1_709_214_307_890, 4_102_444_799_990] {
            let (d, t) = put_date_time(ms);
            let md = Mqmd {
                put_date: d,
                put_time: t,
                ..Mqmd::default()
            };
            assert_eq!(put_ms(&md), Some(ms / 10 * 10));
        }
    }

    #[test]
    fn put_ms_is_none_when_the_date_is_not_set() {
        assert_eq!(put_ms(&Mqmd::default()), None);
    }
}
