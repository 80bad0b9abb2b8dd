//! taintcheck-model: the stateright model of Kubernetes NoExecute taint eviction and its world
//! ([`check`]: `taintcheck check` and `explore`), driving the sans-IO controller core
//! ([`taintcheck_core`]). Every decision about taints, tolerations, queues and timers is the
//! core's; this crate composes the controller with its world, explores every interleaving, and
//! explains what it finds. Its configurations and the properties they declare are read with
//! [`taintcheck_formats`].
//!
//! # Determinism and I/O
//!
//! The sans-IO contract (no clock, no threads, no I/O) is the core's, and its own crate lets the
//! compiler keep it. This crate is deterministic as well: the same inputs give the same states,
//! traces and reports. It reaches outside in two places only: [`check::run`] starts stateright's
//! checker threads and times the run (the one module that runs the checker), and the reader of
//! model configurations opens the files a user names.

#![warn(missing_docs)]

pub mod check;
