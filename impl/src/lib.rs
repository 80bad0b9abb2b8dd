//! taintcheck-runtime: the reference runtime. It runs the sans-IO core's one composed
//! `Controller` on real threads and timers, with informers, against a world ([`world`]): an
//! in-memory API server, or a real one through kube-rs (`kube_world`, feature `kube`: `taintcheck
//! controller`). It contains no eviction decision of its own (spec: specs/runtime.md).

pub mod api;
pub mod clock;
pub mod controller;
pub mod driver;
pub mod health;
pub mod informer;
pub mod jitter;
#[cfg(feature = "kube")]
pub mod kube_world;
pub mod metrics;
pub mod mutants;
pub mod probe;
pub mod recorder;
pub mod replay;
pub mod schedule;
pub mod storm;
pub mod sync;
pub mod timeline;
pub mod timers;
pub mod world;
