//! Fuzz target: see `taintcheck_fuzz::scenario`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taintcheck_fuzz::scenario(data));
