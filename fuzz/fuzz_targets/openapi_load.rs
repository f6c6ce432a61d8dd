//! Fuzz the OpenAPI loader; the body (and what it checks) is in `bodies/openapi_load.rs`,
//! shared with the short-form test that runs it on stable.
#![no_main]

#[path = "../bodies/openapi_load.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
