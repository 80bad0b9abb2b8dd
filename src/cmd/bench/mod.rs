//! `taintcheck bench`: measurements, printed as text or, with `--json`, as one JSON object that
//! carries every figure the text shows and the parameters of the run (`scripts/benchmarks.sh`
//! reads it to write `docs/benchmarks.md`). Measurements, not tests.
//!
//! - `bench model` (`model.rs`): the model checker's states per second against stateright's
//!   two-phase commit example (`two_phase.rs`), and the two reductions.
//! - `bench two-phase` (`two_phase.rs`): that example alone (for instruction counts).
//! - `bench runtime` (`runtime.rs`): the reference runtime under an eviction storm (virtual
//!   clock) and its eviction lateness at a steady rate (real clock).
//! - `bench oracle` (`oracle.rs`): how fast the oracle checks a long trace of the reference
//!   runtime (the scale scenario, `scale.rs`).
//! - `bench proxy` (`proxy.rs`): what `taintcheck proxy` adds to a request and takes from a
//!   watch's throughput, against a direct connection.

mod model;
mod oracle;
#[cfg(feature = "cluster")]
mod proxy;
mod runtime;
mod scale;
mod two_phase;

use crate::cmd::output::outln;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::process::ExitCode;

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    target: Target,
}

#[derive(Subcommand)]
enum Target {
    /// The runtime: an eviction storm on the virtual clock, then lateness on the real clock.
    Runtime(runtime::RuntimeBench),
    /// The oracle: check the scale scenario's trace and report its speed.
    Oracle(oracle::OracleBench),
    /// The model checker: unique states per second (1 and 2 threads) and the symmetry reduction.
    Model(model::ModelBench),
    /// Stateright's two-phase commit example alone (the model checker's reference).
    TwoPhase(two_phase::TwoPhaseBench),
    /// The recording proxy: added latency per request and watch throughput, against a direct
    /// connection (needs upstream/build.sh's control plane).
    #[cfg(feature = "cluster")]
    Proxy(proxy::ProxyBench),
    /// Not in this build (the `cluster` feature): the recording proxy's latency and throughput.
    #[cfg(not(feature = "cluster"))]
    Proxy(crate::cmd::absent::Absent),
}

pub fn run(args: BenchArgs) -> ExitCode {
    match args.target {
        Target::Runtime(args) => runtime::runtime(&args),
        Target::Oracle(args) => oracle::oracle(&args),
        Target::Model(args) => model::model(&args),
        Target::TwoPhase(args) => two_phase::bench(&args),
        #[cfg(feature = "cluster")]
        Target::Proxy(args) => proxy::proxy(&args),
        #[cfg(not(feature = "cluster"))]
        Target::Proxy(_) => crate::cmd::absent::run("bench proxy").unwrap_or_else(|f| f.report()),
    }
}

/// Prints a measurement: one JSON object with `--json`, else the text `describe` writes.
fn emit<T: Serialize>(json: bool, result: &T, describe: impl FnOnce(&T)) -> ExitCode {
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(result).expect("bench results serialize")
        );
    } else {
        describe(result);
    }
    ExitCode::SUCCESS
}
