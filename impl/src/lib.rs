//! taintcheck-runtime: the reference runtime. It runs the sans-IO core's one composed
//! `Controller` on real threads and timers, against an in-memory API server and informers, and
//! contains no eviction decision of its own (spec: specs/runtime.md).

pub mod api;
pub mod clock;
pub mod controller;
pub mod driver;
pub mod informer;
pub mod jitter;
pub mod mutants;
pub mod probe;
pub mod recorder;
pub mod replay;
pub mod schedule;
pub mod storm;
pub mod sync;
pub mod timeline;
pub mod timers;
