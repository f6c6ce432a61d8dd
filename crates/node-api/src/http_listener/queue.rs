//! The queue between the listener and a flow's instance threads.
//!
//! An idle instance sleeps on a condition variable straight away. A general-purpose channel spins
//! and yields the processor for a while before it sleeps, which on a busy listener costs more
//! CPU than the whole echo of a small message: every idle instance spins once per request.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::HttpRequest;

/// Requests waiting for an instance of one HTTPInput node.
#[derive(Default)]
pub struct RequestQueue {
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Default)]
struct State {
    items: VecDeque<HttpRequest>,
    closed: bool,
}

impl RequestQueue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the queue inconsistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue a request for the next free instance; gives it back once the queue is closed.
    pub fn push(&self, req: HttpRequest) -> Result<(), Box<HttpRequest>> {
        let mut s = self.lock();
        if s.closed {
            return Err(Box::new(req));
        }
        s.items.push_back(req);
        drop(s);
        self.ready.notify_one();
        Ok(())
    }

    /// The next request, waiting up to `timeout` for one.
    pub fn pop(&self, timeout: Duration) -> Option<HttpRequest> {
        let mut s = self.lock();
        if s.items.is_empty() {
            s = self
                .ready
                .wait_timeout_while(s, timeout, |s| s.items.is_empty())
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        s.items.pop_front()
    }

    /// Accept requests again (a flow started after it was stopped).
    pub fn open(&self) {
        self.lock().closed = false;
    }

    /// Refuse further requests and hand back those still waiting.
    pub fn close(&self) -> Vec<HttpRequest> {
        let mut s = self.lock();
        s.closed = true;
        s.items.drain(..).collect()
    }
}
