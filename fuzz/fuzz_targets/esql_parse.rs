//! Fuzz the ESQL parser and checker; the body (and what it checks) is in
//! `bodies/esql_parse.rs`, shared with the short-form test `crates/esql/tests/fuzz_short_form.rs`.
#![no_main]

#[path = "../bodies/esql_parse.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
