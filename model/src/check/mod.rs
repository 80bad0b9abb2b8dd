//! The stateright model of the whole system: the API server's truth, two lagging informers, the
//! controller core ([`taintcheck_core::Controller`], every step an action), the API server's answers,
//! a budgeted environment and a bounded monotone clock. Spec: MODEL-*.
//!
//! Read [`transition`] first: [`TaintSys`], its initial state, the actions enabled in a state
//! and each action's successor; then [`system`]: its `impl Model` (init_states → actions →
//! next_state → properties), which adds the reduction and the properties' stateright form. The
//! modules they call, each holding one concern:
//!
//! * [`state`]: [`SysState`], the API server's objects, the informers, the environment's budget
//!   and the history variables; [`action`]: [`Action`] and [`EnvOp`].
//! * [`informer`]: informer delivery and re-lists, and the controller's view of the caches.
//! * `answer`: the API server's answers to the controller's requests.
//! * `environment`: the environment's operations, enabled and applied.
//! * `judge`: what a step commits, recorded for the properties; [`properties`]: the
//!   properties and what each reads in a state.
//! * [`symmetry`] and `representative`: what a run may rename, and the canonical state of an
//!   orbit (`rename_memo`: renamed parts remembered per thread); [`reduction`]: the
//!   partial-order reduction's ample sets.
//! * [`outcome`] and [`display`]: what a step did, and its rendering for people and the
//!   Explorer.
//! * [`config`]: what a run explores; [`cutoff`]: its toleration classes, and the
//!   configuration that keeps as many pods of each as a verdict can depend on; [`properties::vocabulary`] and [`properties::custom`]:
//!   user-defined properties, declared in a configuration or added from Rust ([`builder`]).
//!
//! Running the checker: [`apart`] checks each toleration class on its own; [`run`] is the one module that starts threads and reads the clock (the
//! checker's workers and the run's duration); [`shortest`] makes counterexamples and examples
//! shortest; [`partition`] splits a run into shares that scale out and merges their reports;
//! [`trace`] turns a path into data, [`itf`] and [`itf_state`] into an ITF trace, [`replay`]
//! into a schedule the reference runtime follows.
//!
//! Imports go one way (`model/tests/layers.rs` keeps it so): `system` → `reduction` →
//! `transition` → the operation modules (`answer`, `environment`, `informer`, `judge`),
//! `cutoff` and [`properties`] → `state` → `symmetry` → `config`; `run`, `partition`, `shortest` and the
//! rest sit above `system`.

pub mod action;
mod answer;
pub mod apart;
pub mod applicability;
pub mod builder;
pub mod config;
pub mod cutoff;
pub mod display;
mod environment;
pub mod expectation;
pub mod informer;
pub mod issue;
pub mod itf;
pub mod itf_state;
mod judge;
pub mod minimize;
pub mod outcome;
pub mod partition;
pub mod properties;
pub mod realtime;
pub mod reduction;
mod rename_memo;
pub mod replay;
mod representative;
pub mod run;
pub mod shortest;
pub mod state;
pub mod symmetry;
pub mod system;
pub mod trace;
pub mod transition;
pub mod upstream;

pub use action::{Action, EnvOp};
pub use config::{CheckConfig, OpKind, Overrides};
pub use outcome::Outcome;
pub use state::SysState;
pub use transition::TaintSys;
