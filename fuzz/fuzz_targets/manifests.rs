//! Fuzz target: see `taintcheck_fuzz::manifests`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taintcheck_fuzz::manifests(data));
