//! Fuzz target: see `taintcheck_fuzz::trace`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taintcheck_fuzz::trace(data));
