//! taintcheck-runtime: the reference runtime. It drives the sans-IO core of `taintcheck-model`
//! with real threads, channels and timers, and contains no eviction decision of its own.

pub mod api;
pub mod clock;
pub mod controller;
pub mod driver;
pub mod informer;
pub mod mutants;
pub mod probe;
pub mod recorder;
pub mod storm;
pub mod sync;
pub mod timeline;
pub mod timers;
