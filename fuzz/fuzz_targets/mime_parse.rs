//! Fuzz the MIME parser and serialiser; the body (and what it checks) is in `bodies/mime_parse.rs`,
//! shared with the short-form test that runs it on stable.
#![no_main]

#[path = "../bodies/mime_parse.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
