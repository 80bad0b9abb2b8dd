//! `taintcheck run SCENARIO`: runs a scenario on the reference runtime, prints the timeline and
//! checks the scenario's expectations for the profile (exit 1 if one fails, 2 on bad input).

use super::args::ProfileArg;
use super::failure::Outcome;
use crate::cmd::output::{self, out, outln};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::scenario::{check, deletions};
use taintcheck_model::trace::{to_line, TraceRecord};
use taintcheck_runtime::driver::{run_scenario, ClockKind};
use taintcheck_runtime::timeline;

#[derive(Args)]
pub struct RunArgs {
    /// The scenario file (YAML, see specs/scenario-format.md).
    scenario: PathBuf,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Virtual time (deterministic, instant) or the real clock (the run lasts as long as the
    /// scenario).
    #[arg(long, value_enum, default_value_t = ClockArg::Virtual)]
    clock: ClockArg,
    /// Write the observable trace (NDJSON, specs/trace-format.md) to this file.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Print a JSON report instead of the timeline.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ClockArg {
    Virtual,
    Real,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    scenario: &'a str,
    profile: &'a str,
    passed: bool,
    failures: Vec<JsonFailure>,
    deletions: Vec<JsonDeletion>,
    trace: &'a [TraceRecord],
}

#[derive(Serialize)]
struct JsonFailure {
    line: usize,
    message: String,
}

#[derive(Serialize)]
struct JsonDeletion {
    t: i64,
    pod: String,
    uid: Option<String>,
}

pub fn run(args: RunArgs) -> Outcome {
    let scenario = super::load_scenario(&args.scenario)?;
    let profile = args.behaviour.profile;
    let clock = match args.clock {
        ClockArg::Virtual => ClockKind::Virtual,
        ClockArg::Real => ClockKind::Real,
    };
    let report = run_scenario(&scenario, profile, clock);
    if let Some(path) = &args.trace {
        let ndjson: String = report.records.iter().map(to_line).collect();
        output::write_file("--trace", path, &ndjson, &[args.scenario.as_path()])?;
    }
    let failures = check(&scenario.expectations_for(profile.name), &report.records);
    if args.json {
        let json = JsonReport {
            scenario: &scenario.name,
            profile: profile.name,
            passed: failures.is_empty(),
            failures: failures
                .iter()
                .map(|f| JsonFailure {
                    line: f.line,
                    message: f.message.clone(),
                })
                .collect(),
            deletions: deletions(&report.records)
                .into_iter()
                .map(|d| JsonDeletion {
                    t: d.at.millis(),
                    pod: d.pod.to_string(),
                    uid: d.uid.map(|u| u.to_string()),
                })
                .collect(),
            trace: &report.records,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&json).expect("reports always serialize")
        );
    } else {
        outln!("scenario {} under profile {}", scenario.name, profile.name);
        out!("{}", timeline::render(&report.records));
        let checked = scenario.expectations_for(profile.name);
        let total = checked.deleted.len()
            + checked.not_deleted.len()
            + checked.events.len()
            + checked.properties.len();
        if failures.is_empty() {
            outln!("expectations: {total} checked, all met");
        } else {
            for f in &failures {
                outln!("FAILED {}:{f}", args.scenario.display());
            }
            outln!("expectations: {total} checked, {} failed", failures.len());
        }
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
