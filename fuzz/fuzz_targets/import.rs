//! Fuzz target: see `taintcheck_fuzz::import`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taintcheck_fuzz::import(data));
