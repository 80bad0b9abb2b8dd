//! taintcheck-runtime: the reference runtime. It drives the sans-IO core of `taintcheck-model`
//! with real threads, channels and timers, and contains no eviction decision of its own.

pub mod api;
pub mod clock;
pub mod informer;
pub mod recorder;
pub mod sync;
pub mod timers;
