//! taintcheck-model: Kubernetes NoExecute taint eviction, made precise.
//!
//! * [`api`]: compact Kubernetes objects; [`time`]: the only notion of time (caller-supplied ms).
//! * [`matching`]: upstream's toleration matching, the single source of every match decision.
//! * [`profile`]: version profiles as named behaviour switches; [`core`]: the sans-IO controller.
//! * [`scenario`]: the scenario format; [`trace`]: the observable trace format.
//! * [`validate`] (with [`field`]): API-server validation; [`manifest`]: `kubectl` manifests in
//!   and out; [`taint_syntax`]: `kubectl taint` arguments and `Taint.ToString`.
//! * [`scheduler`]: the TaintToleration plugin; [`admission`]: admission-time tolerations;
//!   [`explain`]: what a node's taints mean for a pod.
//! * [`check`]: the stateright model of the whole system (`taintcheck check` / `explore`).
//! * [`oracle`]: the conformance oracle over traces, for Rust test suites through
//!   [`conformance`]; [`recording`]: `kubectl` watch recordings into traces.
//! * [`shared`] and [`small_map`]: the containers that keep search states cheap to copy and
//!   to fingerprint (the model's and the oracle's).
//!
//! Sans-IO contract: nothing in this crate reads a clock, spawns a thread, sleeps or performs I/O
//! on its own behalf. Inputs come in as arguments, decisions go out as values.

pub mod admission;
pub mod check;
pub mod conformance;
pub mod explain;
pub mod field;
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
pub use taintcheck_core::{api, api_server, fx, matching, profile, shared, small_map, time};
