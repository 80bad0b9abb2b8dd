//! Fuzz target: see `taintcheck_fuzz::config`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taintcheck_fuzz::config(data));
