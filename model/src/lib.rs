//! taintcheck-model: the stateright model of Kubernetes NoExecute taint eviction and its world,
//! the formats around it, and the conformance oracle, all driving the sans-IO controller core
//! ([`taintcheck_core`], re-exported as [`core`]). Every decision about taints, tolerations,
//! queues and timers is the core's; this crate composes, checks and explains.
//!
//! # Map
//!
//! * Objects and decisions, re-exported from the core under the paths users know: [`api`]
//!   (compact Kubernetes objects), [`time`] (the only notion of time, caller-supplied ms),
//!   [`matching`] (upstream's toleration matching), [`profile`] (Kubernetes versions as named
//!   behaviour switches), [`api_server`] (the API server's answers), and the containers that
//!   keep search states cheap to copy and fingerprint ([`shared`], [`small_map`], [`fx`]).
//! * Input formats: [`manifest`] (`kubectl` manifests in and out), [`validate`] with [`field`]
//!   (API-server validation, every error with its field path), [`taint_syntax`] (`kubectl
//!   taint` arguments and `Taint.ToString`), [`scenario`] (scenarios), [`trace`] (the
//!   observable trace), [`recording`] (kubectl watch recordings and audit logs into traces).
//! * Other components' rules: [`scheduler`] (the TaintToleration plugin), [`admission`]
//!   (admission-time tolerations); [`explain`] gathers them for `taintcheck explain`.
//! * [`check`]: the stateright model of the whole system (`taintcheck check` / `explore`).
//! * [`oracle`]: the conformance oracle over traces; [`conformance`]: its entry point for Rust
//!   test suites.
//!
//! # Determinism and I/O
//!
//! The sans-IO contract (no clock, no threads, no I/O) is the core's, and its own crate lets the
//! compiler keep it. This crate is deterministic as well: the same inputs give the same states,
//! traces, verdicts and reports. It reaches outside in two places only: [`check::run`] starts
//! stateright's checker threads and times the run (the one module that runs the checker), and
//! the readers of manifests and model configurations open the files a user names.

#![warn(missing_docs)]

pub mod admission;
pub mod check;
pub mod conformance;
pub mod explain;
pub mod field;
pub mod limits;
pub mod manifest;
pub mod oracle;
pub mod recording;
pub mod scenario;
pub mod scheduler;
pub mod taint_syntax;
pub mod trace;
pub mod validate;
pub mod yaml;

// The sans-IO core lives in its own crate, so that the compiler keeps every decision there; its
// modules are re-exported under the paths the model, the runtime and the oracle use.
pub use taintcheck_core as core;
#[cfg(any(test, feature = "proptest"))]
pub use taintcheck_core::strategies;
pub use taintcheck_core::{
    api, api_server, fx, matching, profile, releases, relist, shared, small_map, time,
};
