//! `taintcheck expect SCENARIO`: the envelope of legal outcomes under a profile, per pod
//! incarnation (*must be deleted within [a, b]*, *must not be deleted*, *may be deleted*), each
//! with its reason, for another implementation to compare its own run with. The scenario's
//! environment is taken from a reference run on the runtime; the controller's behaviours are
//! explored by the oracle. Exit 2 on a bad scenario. Spec: specs/oracle.md (ORACLE-10).

use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::oracle::expect::envelope;
use taintcheck_model::profile::Profile;
use taintcheck_model::time::Duration;
use taintcheck_runtime::driver::{run_scenario, ClockKind};

#[derive(Args)]
pub struct ExpectArgs {
    /// The scenario file (YAML, see specs/scenario-format.md).
    scenario: PathBuf,
    /// The behaviour profile: v1.18, latest or fixed.
    #[arg(long, default_value = "latest")]
    profile: String,
    /// D in ms (default: what the scenario's informers need: their largest lag, or the
    /// longest broken watch).
    #[arg(long, value_name = "D")]
    latency_bound_ms: Option<i64>,
    /// Print the envelope as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &ExpectArgs) -> ExitCode {
    let Some(profile) = Profile::by_name(&args.profile) else {
        eprintln!(
            "--profile: Unsupported value: {:?}: supported values: {}",
            args.profile,
            Profile::NAMES.map(|n| format!("{n:?}")).join(", ")
        );
        return ExitCode::from(2);
    };
    let scenario = match super::load_scenario(&args.scenario) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let bound = match args.latency_bound_ms {
        Some(ms) if ms < 0 => {
            eprintln!("--latency-bound-ms: must not be negative");
            return ExitCode::from(2);
        }
        Some(ms) => Duration(ms),
        None => scenario.latency_bound(),
    };
    let reference = run_scenario(&scenario, profile, ClockKind::Virtual);
    let pods = match envelope(&scenario, &reference.records, profile, bound) {
        Ok(pods) => pods,
        Err(e) => {
            eprintln!("{}: {e}", args.scenario.display());
            return ExitCode::from(2);
        }
    };
    if args.json {
        let report = json!({
            "scenario": scenario.name,
            "profile": profile.name,
            "latency_bound_ms": bound.millis(),
            "until_ms": scenario.until.millis(),
            "pods": pods,
        });
        println!("{report}");
    } else {
        println!(
            "{} under {} (latency bound {} ms, until {}):",
            scenario.name,
            profile.name,
            bound.millis(),
            scenario.until
        );
        for p in &pods {
            println!("  {p}");
        }
    }
    ExitCode::SUCCESS
}
