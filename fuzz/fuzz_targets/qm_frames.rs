//! Fuzz the queue-manager client protocol; the body (and what it checks) is in `bodies/qm_frames.rs`, shared with
//! the short-form test that runs it on stable.
#![no_main]

#[path = "../bodies/qm_frames.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
