//! Fuzz `sluice import`'s flow and policy readers; the body (and what it checks) is in
//! `bodies/xmi_import.rs`, shared with the short-form test `crates/import/tests/fuzz_short_form.rs`.
#![no_main]

#[path = "../bodies/xmi_import.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
