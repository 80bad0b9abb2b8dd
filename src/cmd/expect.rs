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
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::scenario::Scenario;
use taintcheck_formats::trace::TraceRecord;
use taintcheck_oracle::expect::envelope;
use taintcheck_oracle::Error;
use taintcheck_runtime::driver::{run_scenario_streamed, ClockKind};

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
    let profile = args.behaviour.profile()?;
    let scenario = super::load_scenario(&args.scenario)?;
    let bound = args
        .latency_bound_ms
        .map_or_else(|| scenario.latency_bound(), Duration);
    let pods = envelope(
        &scenario,
        || Reference::run(&scenario, profile),
        profile,
        bound,
    )
    .map_err(|e| {
        let why = match e {
            // The reference run's line numbers mean nothing to the reader of a scenario.
            Error::Inconclusive { pod, limit, at, .. } => format!(
                "no envelope: more than {limit} states explain {pod}'s behaviours by {at} \
                 (latency bound {} ms)",
                bound.millis()
            ),
            e => e.to_string(),
        };
        Failure::input(format!("{}: {why}", args.scenario.display()))
    })?;
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

/// A reference run of the scenario on its own thread, on the virtual clock, its records handed
/// over as they are made through a short channel: the run waits while the envelope catches up,
/// and nothing of the trace is kept (ORACLE-10).
pub(crate) struct Reference {
    records: Option<Receiver<Option<TraceRecord>>>,
    run: Option<JoinHandle<()>>,
}

impl Reference {
    pub(crate) fn run(scenario: &Scenario, profile: Profile) -> Reference {
        let (send, records) = sync_channel(16);
        let scenario = scenario.clone();
        let run = std::thread::spawn(move || {
            let sink = send.clone();
            // A send fails only once the envelope has stopped reading (an error): the run then
            // goes on to its end unread.
            run_scenario_streamed(
                &scenario,
                profile,
                ClockKind::Virtual,
                Box::new(move |r| {
                    let _ = sink.send(Some(r));
                }),
            );
            let _ = send.send(None);
        });
        Reference {
            records: Some(records),
            run: Some(run),
        }
    }
}

impl Iterator for Reference {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        match self.records.as_ref()?.recv() {
            Ok(Some(record)) => return Some(record),
            Ok(None) => {}
            // The run ended without saying so: it panicked; so does the command, as it would
            // have on this thread.
            Err(_) => {
                if let Some(Err(panic)) = self.run.take().map(JoinHandle::join) {
                    std::panic::resume_unwind(panic);
                }
            }
        }
        self.records = None;
        None
    }
}

impl Drop for Reference {
    /// Stops reading first, so that a run still sending ends, then waits for it.
    fn drop(&mut self) {
        self.records = None;
        if let Some(run) = self.run.take() {
            let _ = run.join();
        }
    }
}
