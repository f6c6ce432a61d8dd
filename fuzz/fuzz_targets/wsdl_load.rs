//! Fuzz the WSDL loader and the SOAP domain; the body (and what it checks) is in
//! `bodies/wsdl_load.rs`, shared with the short-form test `crates/nodes-soap/tests/fuzz_short_form.rs`.
#![no_main]

#[path = "../bodies/wsdl_load.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
