//! `taintcheck expect SCENARIO`: the envelope of legal outcomes under a profile, per pod
//! incarnation (*must be deleted within [a, b]*, *must not be deleted*, *may be deleted*), each
//! with its reason, for another implementation to compare its own run with. The scenario's
//! environment is taken from a reference run on the runtime; the controller's behaviours are
//! explored by the oracle. Exit 2 on a bad scenario. Spec: specs/oracle.md (ORACLE-10).

use super::args::{non_negative_ms, ProfileArg};
use super::failure::{Failure, Outcome};
use crate::cmd::output::outln;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::oracle::expect::envelope;
use taintcheck_model::time::Duration;
use taintcheck_runtime::driver::{run_scenario, ClockKind};

#[derive(Args)]
pub struct ExpectArgs {
    /// The scenario file (YAML, see specs/scenario-format.md).
    scenario: PathBuf,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// D in ms (default: what the scenario's informers need: their largest lag, or the
    /// longest broken watch).
    #[arg(long, value_name = "D", value_parser = non_negative_ms())]
    latency_bound_ms: Option<i64>,
    /// Print the envelope as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &ExpectArgs) -> Outcome {
    let profile = args.behaviour.profile;
    let scenario = super::load_scenario(&args.scenario)?;
    let bound = args
        .latency_bound_ms
        .map_or_else(|| scenario.latency_bound(), Duration);
    let reference = run_scenario(&scenario, profile, ClockKind::Virtual);
    let pods = envelope(&scenario, &reference.records, profile, bound)
        .map_err(|e| Failure::input(format!("{}: {e}", args.scenario.display())))?;
    if args.json {
        let report = json!({
            "scenario": scenario.name,
            "profile": profile.name,
            "latency_bound_ms": bound.millis(),
            "until_ms": scenario.until.millis(),
            "pods": pods,
        });
        outln!("{report}");
    } else {
        outln!(
            "{} under {} (latency bound {} ms, until {}):",
            scenario.name,
            profile.name,
            bound.millis(),
            scenario.until
        );
        for p in &pods {
            outln!("  {p}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
