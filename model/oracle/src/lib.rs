//! taintcheck-oracle, the conformance oracle: does some legal behaviour of a profile explain a
//! trace?
//! Spec: `specs/oracle.md` (ORACLE-*); trace format: `specs/trace-format.md` (TRACE-*).
//!
//! The oracle replays a trace ([`taintcheck_formats::trace`]) through the sans-IO core, keeping the set of
//! states (the *frontier*) consistent with every line so far, in the manner of TLA+ trace
//! validation: API changes are inputs, informer deliveries and every controller step are
//! silent, and each output the trace records (requests, events, or deletions, per TRACE-7) must
//! be produced by some state at the instant the trace shows it. The latency bound `D` makes the
//! timing precise: an API change is delivered within `D`, a due timer fires within `D`, so the
//! legal eviction times of a pod form a window. The frontier is kept per pod (P-compositional,
//! as Porcupine partitions histories), deduplicated, and moved through time only at candidate
//! instants, so checking is linear in the trace in practice.
//!
//! # Use from a Rust test suite
//!
//! Through [`crate::conformance`], which documents it with a running example.
//!
//! [`Oracle::feed`] returns at the first line no legal behaviour explains
//! ([`Error::Violation`], with the reason in plain words), or at bad input
//! ([`Error::BadInput`]); a stream (a harness piping events as they happen) is checked as it
//! arrives. [`Oracle::finish`] with an end instant also checks deadlines up to it.

#![warn(missing_docs)]

pub mod conformance;
pub mod expect;
mod frontier;
pub mod monitor;
mod output;
pub mod parallel;
mod replay;
mod state;
mod subsume;
mod throttle;
mod truth;
pub mod verdict;
pub mod witness;

pub use output::Observe;
pub use replay::{Footprint, Oracle};
pub use state::Fault;
pub use truth::Why;
pub use verdict::{BadInput, Error, Expected, Result, Summary, Violation};

use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::Duration;

/// The default bound on how long one step of a work goroutine, or the event recorder's
/// delivery of an event, may take (ORACLE-11).
pub const DEFAULT_STEP_SLACK: Duration = Duration(100);

/// How to check a trace.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The profile (the controller's behaviour switches) whose legal behaviours must explain
    /// the trace.
    pub profile: Profile,
    /// `D`: an API change reaches the controller, and a due timer fires, within this bound.
    pub latency_bound: Duration,
    /// `S`: a work goroutine's next step comes within this of the previous one (or of the
    /// answer it waited for), and an event reaches the trace within this of its emission.
    pub step_slack: Duration,
    /// Worker shards of the controller (upstream: 8).
    pub workers: usize,
    /// What the trace records; `None`: as its header says (TRACE-7).
    pub observe: Option<Observe>,
    /// Give up (inconclusive) when one pod's frontier holds more states than this.
    pub max_states: usize,
    /// The controller client's rate limit (`--qps`, `--burst`); `None`: the trace header's
    /// (TRACE-THROTTLE), and without one requests are never throttled (ORACLE-THROTTLE).
    pub rate_limit: Option<RateLimit>,
    /// Drop the states another subsumes (ORACLE-SUB). Off, the frontier keeps every state
    /// that differs: only to check the reduction against the frontier it reduces.
    pub subsume: bool,
    /// `expect`: explore every behaviour instead of matching outputs.
    pub(crate) explore: bool,
    /// [`parallel`]: this oracle keeps the components of the pods of one share only.
    pub(crate) share: Option<parallel::Share>,
}

impl Options {
    /// Options for `profile` and latency bound `D`, with upstream's 8 workers, observation as
    /// the trace's header says, and a limit of 100 000 states per pod.
    pub fn new(profile: Profile, latency_bound: Duration) -> Options {
        Options {
            profile,
            latency_bound,
            step_slack: DEFAULT_STEP_SLACK,
            workers: 8,
            observe: None,
            max_states: 100_000,
            rate_limit: None,
            subsume: true,
            explore: false,
            share: None,
        }
    }
}

impl Oracle {
    /// An oracle for `profile` with latency bound `latency_bound`.
    pub fn new(profile: Profile, latency_bound: Duration) -> Oracle {
        Oracle::with_options(Options::new(profile, latency_bound))
    }

    /// Checks a whole trace; see [`Oracle::finish`] for `until`.
    pub fn check(
        options: Options,
        records: &[taintcheck_formats::trace::TraceRecord],
        until: Option<taintcheck_core::time::Time>,
    ) -> Result<Summary> {
        let mut oracle = Oracle::with_options(options);
        for r in records {
            oracle.feed(r)?;
        }
        oracle.finish(until)
    }
}

#[cfg(test)]
mod tests;
