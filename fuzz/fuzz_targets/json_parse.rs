//! Fuzz the JSON parser and serialiser; the body (and what it checks) is in `bodies/json_parse.rs`, shared with
//! the short-form test that runs it on stable.
#![no_main]

#[path = "../bodies/json_parse.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
