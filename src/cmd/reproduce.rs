//! `taintcheck reproduce PROPERTY --config C --kubernetes X.Y`: a violation the model found,
//! made to happen on the real controller of a release (or on ours, `--ours P`). The model's
//! shortest counterexample is checked first; then it is made into a real-time scenario and a
//! schedule (PROXY-11; or `specs/reproductions.json` gives them for the cell), which run on a
//! real kube-apiserver through the proxy (`upstream --proxy --schedule`), and the property is
//! read off the proxy's trace (ORACLE-MON). Exit 0 when the real run agrees with the model (violated and seen, or holding
//! and not seen) and its trace conforms; 1 when not; 2 on bad input, or for a cell the catalogue
//! says cannot be forced from outside the controller (with why). Spec: specs/proxy.md, PROXY-9.

use super::args::{profile_parser, release_profile};
use super::catalogue;
use super::failure::{Failure, Outcome};
use super::output::outln;
use super::upstream::{self, UpstreamArgs};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use taintcheck_cluster::process::Binaries;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::trace::Trace;
use taintcheck_model::check::{issue, realtime, shortest, TaintSys};
use taintcheck_oracle::monitor::{self, Sighting, MONITORED};

#[derive(Args)]
pub struct ReproduceArgs {
    /// The violated `always` property: its spec id (`EVICT-1`) or full name.
    pub property: String,
    /// The model's configuration: a name from specs/configs or a YAML path.
    #[arg(long)]
    config: String,
    /// The Kubernetes release whose controller runs: `1.X.Y`, or `1.X` for its newest built
    /// patch (default: the newest built).
    #[arg(long, value_name = "1.X[.Y]")]
    kubernetes: Option<String>,
    /// Run taintcheck's own controller under PROFILE instead (the same scenario and schedule).
    #[arg(long, value_name = "PROFILE", value_parser = profile_parser(), conflicts_with = "kubernetes")]
    ours: Option<Profile>,
    /// The catalogue of scenarios and schedules per cell.
    #[arg(long, value_name = "FILE", default_value = "specs/reproductions.json")]
    reproductions: PathBuf,
    /// Upstream's binaries (built by `upstream/build.sh`).
    #[arg(long, value_name = "DIR", default_value = "upstream/bin")]
    bin: PathBuf,
    /// Keep the run's files here (the proxy's log and trace, the audit log's trace).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// D in ms: an API change reaches the controller, and a due timer fires, within D (the
    /// liveness deadlines add it).
    #[arg(long, default_value_t = 500, value_name = "D")]
    latency_bound_ms: i64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// What `reproduce --json` prints.
#[derive(Serialize)]
struct Verdict {
    property: &'static str,
    config: String,
    race: String,
    controller: String,
    profile: &'static str,
    /// The model's shortest counterexample, in steps (`None`: the property holds).
    model_steps: Option<usize>,
    /// The property was seen violated on the real run.
    reproduced: bool,
    sightings: Vec<Sighting>,
    agrees: bool,
    conform: String,
    conforms: bool,
    /// The oracle on the trace of the API server's audit log of the same run.
    audit_conform: String,
    steering: Vec<String>,
    deletions: Vec<String>,
    wall_ms: u128,
    command: String,
}

pub fn run(args: &ReproduceArgs) -> Outcome {
    let info = issue::property(&args.property).ok_or_else(|| {
        Failure::usage(format!(
            "PROPERTY: Unsupported value: \"{}\": expected the id or name of an `always` \
             property (EVICT-1, ...)",
            args.property
        ))
    })?;
    let config = CheckConfig::load(&args.config).map_err(super::check::config_failure)?;
    let catalogue = catalogue::load(&args.reproductions)?;
    // A cell the catalogue has no scenario for runs the counterexample made into one (PROXY-11).
    let entry = catalogue.cell(info.id, &config.name);
    let (controller, version, profile) = match args.ours {
        Some(p) => (
            format!("taintcheck controller --profile {}", p.name),
            None,
            p,
        ),
        None => {
            let version = match &args.kubernetes {
                Some(v) => Binaries::new(&args.bin).resolve(v),
                None => Binaries::new(&args.bin).releases().pop().ok_or_else(|| {
                    Failure::usage(format!(
                        "{}: no controller is built: run `upstream/build.sh`",
                        args.bin.display()
                    ))
                })?,
            };
            let profile = release_profile(&version, None)?;
            (format!("upstream v{version}"), Some(version), profile)
        }
    };
    let key = upstream::expectation_key(&profile);
    let cannot = entry.and_then(|e| e.cannot.get(key).or_else(|| e.cannot.get("all")));
    if let Some(why) = cannot {
        return Err(Failure::usage(format!(
            "{} on {} cannot be forced on {controller} from outside the controller: {why}",
            info.id, config.name
        )));
    }
    if !MONITORED.contains(&info.id) {
        return Err(Failure::usage(format!(
            "{} is not read off a trace (the monitored properties: {})",
            info.id,
            MONITORED.join(", ")
        )));
    }
    // The model first: its shortest counterexample under the release's profile.
    let model = TaintSys::at_cutoff(profile, config.clone());
    let path = shortest::counterexamples(&model, &[info.name]).remove(info.name);
    let trace = path.as_ref().map(|p| Trace::of(&model, p));
    // The race's name where the catalogue gives one.
    let race = entry.map_or_else(String::new, |e| e.race.clone());
    let (scenario, schedule, notes) = match entry.and_then(|e| e.scenario.clone()) {
        Some(scenario) => (scenario, entry.and_then(|e| e.schedule.clone()), Vec::new()),
        None => derived(
            args,
            info.id,
            info.name,
            &config,
            profile,
            &model,
            trace.as_ref(),
        )?,
    };
    // A derived scenario written to a temporary directory goes when the run is over.
    let scratch = Scratch(
        (entry.and_then(|e| e.scenario.as_ref()).is_none() && args.keep.is_none())
            .then(|| scenario.parent().map(Path::to_path_buf))
            .flatten(),
    );
    if !args.json {
        match &trace {
            Some(t) => {
                let named = if race.is_empty() {
                    String::new()
                } else {
                    format!(" ({race})")
                };
                outln!(
                    "model: {} violated on {} under {}{named}; its shortest counterexample, {} \
                     steps:",
                    info.id,
                    model.config.name,
                    profile.name,
                    t.steps.len()
                );
                for s in &t.steps {
                    let outcome = if s.outcome.is_empty() {
                        String::new()
                    } else {
                        format!(" → {}", s.outcome.join("; "))
                    };
                    outln!(
                        "  {:>3}. t={}ms  {}{outcome}",
                        s.number,
                        s.time_ms,
                        s.action
                    );
                }
            }
            None => outln!(
                "model: {} holds on {} under {}: the real run should not show it",
                info.id,
                model.config.name,
                profile.name
            ),
        }
        if let Some(steps) = entry.and_then(|e| e.steps.as_ref()) {
            outln!("on the real controller: {steps}");
        }
        for note in &notes {
            outln!("derived: {note}");
        }
    }

    let upstream_args = UpstreamArgs::steered(
        scenario.clone(),
        schedule.clone(),
        version,
        args.ours,
        args.bin.clone(),
        args.keep.clone(),
        args.latency_bound_ms,
    );
    let mut reports = upstream::reports(&upstream_args)?;
    let report = reports.pop().expect("one scenario, one report");
    let proxy = report
        .proxy
        .expect("a run through the proxy has the proxy's report");
    // The model's deadlines have the configuration's processing bound as slack, its steps no
    // duration; a real controller's have the latency bound D too.
    let slack = Duration(args.latency_bound_ms + model.config.processing_bound_ms);
    let all = monitor::sightings(&proxy.records, profile.comparison_operators, slack);
    let sightings: Vec<Sighting> = all.into_iter().filter(|s| s.property == info.id).collect();
    let reproduced = !sightings.is_empty();
    let violated = trace.is_some();
    let agrees = reproduced == violated;
    let release = match args.ours {
        Some(p) => format!("--ours {}", p.name),
        None => format!("--kubernetes {}", report.kubernetes),
    };
    let command = format!(
        "taintcheck reproduce {} --config {} {release}",
        info.id, args.config
    );
    let out = Verdict {
        property: info.id,
        config: model.config.name.clone(),
        race,
        controller: controller.clone(),
        profile: profile.name,
        model_steps: trace.as_ref().map(|t| t.steps.len()),
        reproduced,
        sightings,
        agrees,
        conform: proxy.conform.clone(),
        conforms: proxy.conforms,
        audit_conform: report.conform.clone(),
        steering: proxy.steering.clone(),
        deletions: report.deletions.clone(),
        wall_ms: report.wall_ms,
        command,
    };
    // A scenario made in a temporary directory is named by what it is, not by a path that is
    // gone when the command ends.
    let shown = match &scratch.0 {
        Some(_) => "the counterexample's scenario and schedule (PROXY-11)".to_string(),
        None => match &schedule {
            Some(s) => format!("{} steered by {}", scenario.display(), s.display()),
            None => scenario.display().to_string(),
        },
    };
    print(args, &out, &shown, &proxy.trace);
    Ok(if agrees && out.conforms {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A temporary directory, removed when dropped.
struct Scratch(Option<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The scenario and schedule made from a counterexample (PROXY-11): the run's profile's, or,
/// where the property holds under it, the newest release's or 1.18's, so that a run of a
/// profile the model clears still meets the race. Written to `--keep`'s directory or a
/// temporary one.
fn derived(
    args: &ReproduceArgs,
    id: &'static str,
    name: &'static str,
    config: &CheckConfig,
    profile: Profile,
    model: &TaintSys,
    trace: Option<&Trace>,
) -> Result<(PathBuf, Option<PathBuf>, Vec<String>), Failure> {
    let from = match trace {
        Some(t) => Some((model.clone(), t.clone())),
        None => ["latest", "v1.18"]
            .into_iter()
            .filter_map(Profile::by_name)
            .filter(|p| *p != profile)
            .find_map(|p| {
                let m = TaintSys::at_cutoff(p, config.clone());
                let path = shortest::counterexamples(&m, &[name]).remove(name)?;
                let t = Trace::of(&m, &path);
                Some((m, t))
            }),
    };
    let Some((m, t)) = from else {
        return Err(Failure::usage(format!(
            "{id} holds on {} under {}, latest and v1.18: there is no counterexample to make a \
             scenario of",
            config.name, profile.name
        )));
    };
    let rt = realtime::realtime(&m, &t, id).map_err(|why| {
        Failure::usage(format!(
            "{id} on {}: the model's shortest counterexample under {} has no real-time \
             scenario: {why}",
            config.name, m.profile.name
        ))
    })?;
    let dir = match &args.keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("taintcheck-reproduce-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Failure::usage(format!("{}: {e}", dir.display())))?;
    let stem = format!("{}-{}", config.name, id.to_lowercase());
    let scenario = dir.join(format!("{stem}.yaml"));
    let schedule = dir.join(format!("{stem}.json"));
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
    };
    write(&scenario, &rt.scenario)?;
    write(&schedule, &rt.schedule.to_json())?;
    let mut notes = rt.notes;
    notes.insert(
        0,
        format!(
            "{} has no scenario for this cell: made from the counterexample under {} (PROXY-11)",
            args.reproductions.display(),
            m.profile.name
        ),
    );
    Ok((scenario, Some(schedule), notes))
}

fn print(args: &ReproduceArgs, o: &Verdict, run: &str, trace: &Option<String>) {
    if args.json {
        outln!("{}", serde_json::to_string(o).unwrap_or_default());
        return;
    }
    outln!(
        "real: {} ({}) through the proxy on a real kube-apiserver: {run}, {:.1} s",
        o.controller,
        o.profile,
        o.wall_ms as f64 / 1000.0
    );
    for s in &o.steering {
        outln!("  steered: {s}");
    }
    for d in &o.deletions {
        outln!("  deleted {d}");
    }
    for s in &o.sightings {
        outln!(
            "  {} seen at line {} ({} ms): {}",
            s.property,
            s.line,
            s.t.millis(),
            s.what
        );
    }
    outln!("  the proxy's trace: {}", o.conform);
    outln!("  the audit log's trace: {}", o.audit_conform);
    if let Some(t) = trace {
        outln!("  trace: {t}");
    }
    let verdict = match (o.reproduced, o.model_steps.is_some()) {
        (true, true) => format!(
            "Reproduced on {} in {:.1} s: {}",
            o.controller,
            o.wall_ms as f64 / 1000.0,
            o.command
        ),
        (false, false) => format!(
            "Not seen on {}, as the model says ({} holds under {})",
            o.controller, o.property, o.profile
        ),
        (false, true) => format!(
            "NOT reproduced on {}: the run did not show {} (the steering lines say where it \
             diverged)",
            o.controller, o.property
        ),
        (true, false) => format!(
            "SEEN on {} though the model says {} holds under {}: a finding",
            o.controller, o.property, o.profile
        ),
    };
    outln!("{verdict}");
}
