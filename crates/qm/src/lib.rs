//! sluice-qm: the embedded queue manager — local, alias and model queues with IBM MQ
//! semantics, units of work, a write-ahead log with group commit and crash recovery, a
//! client protocol (`net`) and an IBM MQ-shaped REST messaging API (`rest`).
//!
//! ```
//! use sluice_qm::{QueueManager, QmConfig, QueueDef, Message, PutOptions, GetOptions};
//! let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
//! qm.define(QueueDef::local("IN")).unwrap();
//! qm.put("IN", Message::new("hello"), &PutOptions::default()).unwrap();
//! let m = qm.get("IN", &GetOptions::new()).unwrap().unwrap();
//! assert_eq!(&m.body[..], b"hello");
//! ```

pub mod codec;
mod error;
pub mod fs;
mod indoubt;
mod manager;
mod model;
pub mod net;
mod ops;
mod paging;
mod queue;
pub mod rest;
mod stats;
mod uow;
pub mod wal;

pub use error::{QmError, Result};
pub use indoubt::{DECISION_QUEUE, Decision};
pub use manager::{InputHandle, QmConfig, QueueManager, validate_name};
pub use model::*;
pub use ops::put_date_time;
pub use paging::MemoryWindow;
pub use stats::{QueueStats, StorageStats};
pub use uow::UnitOfWork;

#[cfg(test)]
mod tests;
