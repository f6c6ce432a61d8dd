//! The Sluice benchmark harness: a load driver in the manner of the seeds'
//! PerfHarness, the seeds' SaleList test message at any size and format,
//! CPU and memory readings from /proc, the seeds' figures (rate, % CPU busy,
//! CPU ms/msg) plus server and driver CPU per message and latency
//! percentiles, YAML suites, and Markdown / CSV / SVG reports with the seeds'
//! own figures beside ours.
//!
//! Transports plug in through [`driver::Transport`]: this crate has the HTTP
//! client and an in-crate echo server (the floor); others add theirs.

pub mod affinity;
pub mod chart;
pub mod cli;
pub mod driver;
pub mod error;
pub mod figures;
pub mod files;
pub mod floor;
pub mod http;
pub mod http1;
#[cfg(feature = "kafka")]
pub mod kafka;
pub mod message;
pub mod mqtt;
pub mod procfs;
pub mod report;
pub mod runner;
pub mod seeds;
pub mod server;
pub mod size;
pub mod suite;
pub mod tcpip;

pub use driver::{Transport, TransportFactory};
pub use error::BenchError;
