//! `upstream --proxy`: the run's trace as the proxy recorded it (specs/proxy.md), judged as
//! the audit log's is, and compared with it.

use super::{conform, count, in_scenario_time, with_run, Release, UpstreamArgs};
use crate::cmd::failure::Failure;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use taintcheck_cluster::names::Names;
use taintcheck_cluster::session::Recording;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::scenario::Scenario;
use taintcheck_formats::trace::{to_line, TraceEvent, TraceRecord};

/// What the proxy recorded of a run, and the oracle's verdict on it.
#[derive(Serialize)]
pub struct ProxyReport {
    /// `conforms`, or the violation in words.
    pub conform: String,
    pub conforms: bool,
    /// The controller's requests the proxy forwarded (GET, PATCH, DELETE of pods and nodes).
    pub requests: usize,
    /// Its Events the proxy forwarded (one per occurrence).
    pub events: usize,
    /// Where the controller's requests and Events as the proxy forwarded them differ from
    /// those the API server's audit log shows (none: both saw the same).
    pub differences: Vec<String>,
    /// With `--schedule`: each hold, how long it held and what released it.
    pub steering: Vec<String>,
    pub trace: Option<String>,
    /// The proxy's trace in the scenario's names and time, line for line, for `reproduce`.
    #[serde(skip)]
    pub records: Vec<TraceRecord>,
}

/// The controller's requests (verb, pod, answer) and Events (pod, message) in a trace, each
/// with how often it occurs.
pub(super) fn outputs(trace: &[TraceRecord]) -> BTreeMap<String, usize> {
    let mut requests = BTreeMap::new();
    let mut out = BTreeMap::new();
    for r in trace {
        match &r.event {
            TraceEvent::Request {
                id,
                verb,
                namespace,
                name,
                ..
            } => {
                requests.insert(*id, format!("{verb:?} {namespace}/{name}"));
            }
            TraceEvent::Response { id, result, .. } => {
                let request = requests.remove(id).unwrap_or_default();
                *out.entry(format!("{request} answered {result:?}"))
                    .or_default() += 1;
            }
            TraceEvent::Event {
                namespace,
                name,
                message,
                ..
            } => {
                *out.entry(format!("event on {namespace}/{name}: {message}"))
                    .or_default() += 1;
            }
            _ => {}
        }
    }
    out
}

/// The proxy's `Steer` lines of a run, in words.
fn steering(log: &Path, names: &Names) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(log)
        .map_err(|e| Failure::usage(format!("{}: {e}", log.display())))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "Steer")
        .map(|v| {
            let line = if v["engaged"] == false {
                format!(
                    "hold {} never met {}: the controller did not do what the schedule awaits",
                    v["hold"],
                    v["what"].as_str().unwrap_or("")
                )
            } else {
                format!(
                    "hold {} kept {} back {:.1} ms, released by {}",
                    v["hold"],
                    v["what"].as_str().unwrap_or(""),
                    v["heldMs"].as_f64().unwrap_or(0.0),
                    v["releasedBy"].as_str().unwrap_or("")
                )
            };
            names.text_to_scenario(&line)
        })
        .collect())
}

/// What occurs a different number of times in the audit log's outputs and the proxy's.
fn differences(audit: &BTreeMap<String, usize>, proxy: &BTreeMap<String, usize>) -> Vec<String> {
    audit
        .keys()
        .chain(proxy.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|k| {
            let (a, p) = (
                audit.get(k).copied().unwrap_or(0),
                proxy.get(k).copied().unwrap_or(0),
            );
            (a != p).then(|| format!("{k}: {a} in the audit log, {p} through the proxy"))
        })
        .collect()
}

/// Imports the proxy's exchange log of the run (IMPORT-11), judges it as the audit log's trace
/// is judged, and compares the controller's outputs in it with the audit log's.
#[allow(clippy::too_many_arguments)]
pub(super) fn judge_proxy(
    args: &UpstreamArgs,
    scenario: &Scenario,
    release: &Release,
    profile: Profile,
    recording: &Recording,
    log: &Path,
    dir: &Path,
    audit: &BTreeMap<String, usize>,
) -> Result<ProxyReport, Failure> {
    let name = log.display().to_string();
    let reader = taintcheck_formats::limits::open_file(log).map_err(Failure::usage)?;
    let settings = Settings {
        end: Some(recording.end),
        ..Settings::default()
    };
    let imported = import_with([(name.as_str(), reader)], &settings).map_err(Failure::input)?;
    let trace = with_run(imported.trace, scenario, release, recording);
    let path = dir.join("proxy-trace.ndjson");
    let text: String = trace.iter().map(to_line).collect();
    std::fs::write(&path, text)
        .map_err(|e| Failure::usage(format!("{}: cannot write: {e}", path.display())))?;
    let (conforms, conform) = conform(&trace, profile, Duration(args.latency_bound_ms), release);
    Ok(ProxyReport {
        conform,
        conforms,
        requests: count(&trace, |e| matches!(e, TraceEvent::Request { .. })),
        events: count(&trace, |e| matches!(e, TraceEvent::Event { .. })),
        differences: differences(audit, &outputs(&trace)),
        steering: steering(log, &recording.names)?,
        trace: args.keep.as_ref().map(|_| path.display().to_string()),
        records: in_scenario_time(&trace, recording),
    })
}
