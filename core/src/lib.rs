//! taintcheck-core: the sans-IO core of the NoExecute taint manager. Upstream's controller as
//! pure transition functions over ordered state (spec: specs/spec.md, "Controller"; profiles:
//! specs/profiles.md), with the objects it reads ([`api`], [`time`]), the one copy of toleration
//! matching ([`matching`]), the version profiles ([`profile`]) and the API server's answers
//! ([`api_server`]).
//!
//! Every decision about taints, tolerations, queues and timers lives in this crate; the model,
//! the runtime and the oracle drive it. It reads no clock, spawns no thread, sleeps never and
//! performs no I/O: inputs come in as arguments, decisions go out as values.
//!
//! Components: [`workqueue`] (client-go queue), [`intake`] (`NodeUpdated`/`PodUpdated`),
//! [`shards`] (FNV sharding, the worker's drain rule), [`timed_queue`] (`TimedWorkerQueue`),
//! [`handlers`] (`handleNodeUpdate`, `handlePodUpdate`, `processPodOnNode`), [`work`] (the
//! deletion work function), [`effect`] (what comes out); the handlers and work steps read a
//! [`Context`]. [`Controller`] composes them, once: the model explores it, the oracle replays
//! traces against it, the runtime runs it on threads (one per [`Actor`]), and [`driver`] runs
//! it sequentially for tests.
//!
//! # Calling the composed [`Controller`]
//!
//! Nothing here reads a clock: every call takes `now` (ms, [`crate::time::Time`]), which must
//! not decrease between calls.
//!
//! 1. Inputs: informer events go to [`Controller::node_observed`] / [`Controller::pod_observed`]
//!    (intake filters, then the work queues); they never run a handler by themselves.
//! 2. Steps: [`Controller::enabled_steps`] lists what can happen now, in a fixed order; the
//!    caller picks one (the model: every one; the driver: all in order; the runtime: each
//!    thread its own, [`Step::actor`]) and runs it with
//!    [`Controller::step`], passing the informer caches as a [`ClusterView`]. A step that is not
//!    enabled is a no-op. Each step is one upstream lock or goroutine boundary.
//! 3. Outputs: steps append [`Effect`]s: events to record, API requests to send, timers to
//!    arm or cancel, decisions to log. The caller performs them.
//! 4. API answers: [`Controller::pending_requests`] lists what awaits an answer; deliver it with
//!    [`Controller::api_responded`].
//! 5. Time: [`Controller::next_deadline`] is the earliest armed timer; at or after it,
//!    `enabled_steps` offers [`Step::FireTimer`].
//! 6. [`Controller::restarted`] loses all in-memory state (then re-deliver the caches as adds).
//! 7. Watching: a caller that runs every work on a goroutine of its own turns on
//!    [`Controller::report_work_steps`] and, after each call, takes the start, continuation
//!    and completion steps that call made ready from [`Controller::poll_work_steps`], rather
//!    than listing every work each time; [`Controller::worker_status`] and
//!    [`Controller::finished_work`] tell what a worker holds and how a work ended without
//!    reading the controller's parts.
//!
//! Nondeterminism the caller resolves: which enabled step runs next (Go's scheduler and `select`),
//! how the API server answers, and, under [`crate::profile::ImmediatePath::TwoNows`], whether two
//! `time.Now()` calls gave a positive delay: [`Step::WorkerContinue`] carries that choice
//! ([`Immediate`]) and `enabled_steps` offers both outcomes only where the step may need it.
//!
//! Identity: a work takes the smallest free [`WorkId`]; its timer ([`TimerId`]) and its one
//! outstanding request ([`RequestId`]) carry the same number, so states that differ only in
//! history compare equal. `ArmTimer` for an armed id replaces that timer.

#![warn(missing_docs)]

pub mod admission;
pub mod api;
pub mod api_server;
pub mod explain;
pub mod fx;
pub mod matching;
pub mod profile;
pub mod releases;
pub mod relist;
pub mod scheduler;
pub mod shared;
pub mod small_map;
#[cfg(any(test, feature = "proptest"))]
pub mod strategies;
pub mod throttle;
pub mod time;

pub mod arrivals;
pub mod cluster;
mod context;
pub mod controller;
pub mod driver;
pub mod effect;
pub mod handlers;
pub mod intake;
mod renaming;
pub mod shards;
pub mod timed_queue;
pub mod work;
mod work_ids;
mod worker;
pub mod workqueue;

pub use arrivals::Arrivals;
pub use cluster::Cluster;
pub use context::Context;
pub use controller::{Actor, Config, Controller, Listing, Step, WorkerStatus};
pub use effect::{
    ApiRequest, ApiResult, Decision, Effect, EventKind, EventRecord, FetchedPod, Note, RequestId,
    TimerId, Verb, WorkId, EVENT_REASON,
};
pub use intake::{node_updated, pod_updated, PodItem};
pub use renaming::Renaming;
pub use shards::{fnv1a32, shard_of, Shard, Shards};
pub use timed_queue::{Entry, Immediate, Outcome, TimedQueue, Work, WorkKey, WorkPhase};
pub use worker::{NodePhase, Worker};
pub use workqueue::WorkQueue;

use crate::api::{Node, Pod, PodKey};

/// The informer caches as the controller sees them (read-only, possibly stale).
pub trait ClusterView {
    /// The node lister.
    fn node(&self, name: &str) -> Option<&Node>;
    /// The pod lister.
    fn pod(&self, key: &PodKey) -> Option<&Pod>;
    /// The pod indexer on `spec.nodeName`, in a deterministic order.
    fn pods_on_node(&self, name: &str) -> Vec<&Pod>;
}
