//! taintcheck-formats: what taintcheck reads and writes, each reader answering bad input with
//! its file, line and field path, at bounded cost.
//!
//! * [`yaml`]: the YAML layer every reader stands on (positions, bounded depth and size).
//! * [`manifest`]: `kubectl` manifests in and out; [`validate`] with [`field`]: the API server's
//!   validation, every error with its field path; [`taint_syntax`]: `kubectl taint` arguments
//!   and `Taint.ToString`.
//! * [`scenario`]: scenarios (what the runtime, the real control plane and `expect` run);
//!   [`trace`]: the observable trace (TRACE-*); [`recording`]: kubectl watch recordings and
//!   audit logs made into traces (IMPORT-*); [`schedule`]: the proxy's steering schedules
//!   (PROXY-8); [`random`]: random real-time scenarios (HARNESS-11).
//! * [`properties`]: the names of the built-in properties and the vocabulary of user-defined
//!   ones, as configurations and scenarios declare them.
//! * [`limits`]: the bounds on every input (specs/limits.md).
//!
//! The objects these formats carry are the core's ([`taintcheck_core::api`]); nothing here
//! decides anything about taints.

#![warn(missing_docs)]

pub mod field;
pub mod limits;
pub mod manifest;
pub mod properties;
pub mod random;
pub mod recording;
pub mod scenario;
pub mod schedule;
pub mod taint_syntax;
pub mod trace;
pub mod validate;
pub mod yaml;
