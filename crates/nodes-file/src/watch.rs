//! How FileInput learns that files arrived: the kernel's directory events (inotify, through the
//! `notify` crate) wake the instances as soon as a writer closes a file or a file is moved in,
//! and the polling interval stays as the fallback — for directories that cannot be watched, for
//! network file systems (another machine's writes raise no local event) and for events lost
//! when the kernel's queue overflows.
//!
//! Creating a file raises no wake-up: a file is taken when its writer closed it or when it was
//! renamed into the directory, so the usual write-then-rename and write-then-close producers
//! are never read half-written because of an event (polling may still see such a file, as it
//! always could).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use sluice_node_api::{StopSignal, property_enum};

property_enum! {
    /// How FileInput notices new files.
    pub enum WatchMode {
        /// Directory events where the directory can be watched, polling otherwise.
        Auto = "auto",
        /// Directory events; a directory that cannot be watched is logged as an error and
        /// polled.
        Inotify = "inotify",
        /// Only the polling interval (network file systems).
        Poll = "poll",
    }
}

/// The longest an instance waits before it looks at the stop signal again.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// Counts the directory events that may mean a new file; waiters wake when it moves.
#[derive(Default)]
struct Wake {
    events: Mutex<u64>,
    moved: Condvar,
}

impl Wake {
    fn bump(&self) {
        let mut n = self.events.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.wrapping_add(1);
        self.moved.notify_all();
    }
}

/// The watch of one input directory, shared by the node's instances.
pub struct DirWatch {
    mode: WatchMode,
    dir: PathBuf,
    wake: Arc<Wake>,
    watcher: Mutex<Option<RecommendedWatcher>>,
}

impl DirWatch {
    pub fn new(mode: WatchMode, dir: PathBuf) -> DirWatch {
        DirWatch {
            mode,
            dir,
            wake: Arc::default(),
            watcher: Mutex::new(None),
        }
    }

    /// Start watching (when the mode says so); a failure leaves polling alone in charge.
    pub fn start(&self, flow: &str) {
        if self.mode == WatchMode::Poll {
            return;
        }
        let wake = Arc::clone(&self.wake);
        let watched = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
            // An error may mean lost events: look again rather than miss a file.
            if r.as_ref().is_ok_and(|e| !may_add_a_file(e)) {
                return;
            }
            wake.bump();
        })
        .and_then(|mut w| {
            // A missing directory cannot be watched: it is made, so that files put into it
            // later are seen at once.
            std::fs::create_dir_all(&self.dir).map_err(notify::Error::io)?;
            w.watch(&self.dir, RecursiveMode::NonRecursive)?;
            Ok(w)
        });
        match watched {
            Ok(w) => {
                *self.watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(w);
            }
            Err(error) if self.mode == WatchMode::Inotify => {
                tracing::error!(%error, flow, dir = %self.dir.display(), "Cannot watch the input directory; it is polled instead.");
            }
            Err(error) => {
                tracing::info!(%error, flow, dir = %self.dir.display(), "The input directory cannot be watched; it is polled.");
            }
        }
    }

    /// Whether directory events are being received.
    pub fn is_watching(&self) -> bool {
        self.watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    pub fn stop(&self) {
        self.watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
    }

    /// The event count, taken before a look at the directory: a file that arrives during the
    /// look wakes the wait that follows it.
    pub fn seen(&self) -> u64 {
        *self.wake.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wait until an event after `seen`, until `poll` passed, or until the flow stops.
    pub fn wait(&self, seen: u64, poll: Duration, stop: &StopSignal) {
        let until = Instant::now() + poll;
        let mut n = self.wake.events.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            if *n != seen || now >= until || stop.is_stopped() {
                return;
            }
            let slice = (until - now).min(STOP_CHECK);
            n = match self.wake.moved.wait_timeout(n, slice) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

/// Whether an event may mean a file is ready to take: a writer closed it, or it was moved in.
fn may_add_a_file(e: &notify::Event) -> bool {
    if e.need_rescan() {
        return true;
    }
    matches!(
        e.kind,
        EventKind::Access(AccessKind::Close(AccessMode::Write))
            | EventKind::Modify(ModifyKind::Name(
                RenameMode::To | RenameMode::Both | RenameMode::Any
            ))
            | EventKind::Any
            | EventKind::Other
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sluice-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn wait_returns_when_a_written_file_is_closed_long_before_the_poll() {
        let dir = temp("close");
        let w = DirWatch::new(WatchMode::Inotify, dir.clone());
        w.start("test");
        assert!(w.is_watching());
        let stop = StopSignal::default();
        let seen = w.seen();
        let writer = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                std::fs::write(dir.join("a.txt"), b"x").unwrap();
            })
        };
        let t = Instant::now();
        w.wait(seen, Duration::from_secs(20), &stop);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        writer.join().unwrap();
        w.stop();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn poll_mode_waits_for_the_interval_when_a_file_arrives() {
        let dir = temp("poll");
        let w = DirWatch::new(WatchMode::Poll, dir.clone());
        w.start("test");
        assert!(!w.is_watching());
        std::fs::create_dir_all(&dir).unwrap();
        let stop = StopSignal::default();
        let seen = w.seen();
        std::fs::write(dir.join("a.txt"), b"x").unwrap();
        let t = Instant::now();
        w.wait(seen, Duration::from_millis(300), &stop);
        assert!(t.elapsed() >= Duration::from_millis(300));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
