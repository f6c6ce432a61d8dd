//! Fuzz the DFDL parser and serialiser with the sample models; the body (and what it checks)
//! is in `bodies/dfdl_parse.rs`, shared with the short-form test
//! `crates/dfdl/tests/fuzz_short_form.rs`.
#![no_main]

#[path = "../bodies/dfdl_parse.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
