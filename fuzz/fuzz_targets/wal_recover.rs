//! Fuzz the queue-manager log recovery; the body (and what it checks) is in `bodies/wal_recover.rs`, shared with
//! the short-form test that runs it on stable.
#![no_main]

#[path = "../bodies/wal_recover.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
