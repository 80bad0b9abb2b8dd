//! `taintcheck upstream SCENARIO...`: scenarios on upstream's own controller of a Kubernetes
//! release, on a real kube-apiserver (specs/upstream-harness.md). Starts the control plane once,
//! then per scenario: the release's controller, the scenario played in real time, the run's
//! audit log and watches imported into a trace, judged by `conform` under the release's profile,
//! and its deletions compared with the scenario's `expect` and with `taintcheck expect`'s
//! envelope. Exit 0 when every scenario conforms and meets both, 1 on a finding, 2 on bad input
//! or a harness that cannot run (binaries missing: the command that builds them).

use super::args::{non_negative_ms, profile_parser, release_profile};
use super::expect::Reference;
use super::failure::{Failure, Outcome};
use super::output::outln;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration as StdDuration, Instant};
use taintcheck_cluster::play::unsupported;
use taintcheck_cluster::process::{Binaries, ControlPlane};
use taintcheck_cluster::proxy::steer::Schedule;
use taintcheck_cluster::session::{self, Cluster, Recording, Release};
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::scenario::{Deletion, RunCheck, Scenario};
use taintcheck_formats::trace::{to_line, TraceEvent, TraceRecord};
use taintcheck_oracle::expect::{envelope, Outcome as Envelope, PodEnvelope};
use taintcheck_oracle::{Error as OracleError, Options, Oracle};

mod proxy;
pub use proxy::ProxyReport;
use proxy::{judge_proxy, outputs};

#[derive(Args)]
pub struct UpstreamArgs {
    /// Scenario files (specs/scenario-format.md); real time, so keep them short
    /// (specs/scenarios/realtime/).
    #[arg(required = true, value_name = "SCENARIO")]
    scenarios: Vec<PathBuf>,
    /// The Kubernetes release whose controller runs (default: the newest built).
    #[arg(long, value_name = "1.X.Y")]
    kubernetes: Option<String>,
    /// The profile that judges the trace (default: the release's own, with `--feature-gates`).
    #[arg(long, value_parser = profile_parser())]
    profile: Option<Profile>,
    /// D in ms for `conform` and the envelope: an API change reaches the controller, and a due
    /// timer fires, within D. On 127.0.0.1 both take milliseconds; keep D below the scenarios'
    /// first operation (specs/upstream-harness.md, HARNESS-8).
    #[arg(long, default_value_t = 500, value_name = "D", value_parser = non_negative_ms())]
    latency_bound_ms: i64,
    /// Keep the files of the runs here: the control plane's logs and audit log, and per
    /// scenario its audit entries, watches, trace and the controller's log.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Upstream's binaries (built by `upstream/build.sh`).
    #[arg(long, value_name = "DIR", default_value = "upstream/bin")]
    bin: PathBuf,
    /// The API server's port on 127.0.0.1 (default: a free one).
    #[arg(long)]
    port: Option<u16>,
    /// `--feature-gates` for the controller.
    #[arg(long, value_name = "GATES", conflicts_with = "ours")]
    feature_gates: Option<String>,
    /// Run taintcheck's own controller (`taintcheck controller --profile PROFILE`) instead of
    /// upstream's, on the same control plane, judged under PROFILE.
    #[arg(long, value_name = "PROFILE", value_parser = profile_parser(), conflicts_with_all = ["kubernetes", "profile"])]
    ours: Option<Profile>,
    /// Run the controller through `taintcheck proxy` (specs/proxy.md) and judge the trace the
    /// proxy recorded too: what the controller sent and saw, without the audit log.
    #[arg(long)]
    proxy: bool,
    /// With `--proxy`: hold watch events back from the controller as this schedule says, in
    /// the scenario's names (JSON; specs/proxy.md, PROXY-8).
    #[arg(long, value_name = "FILE", requires = "proxy")]
    schedule: Option<PathBuf>,
    /// Print one JSON object per scenario.
    #[arg(long)]
    json: bool,
    /// Print nothing: the caller (`reproduce`) reports.
    #[arg(skip)]
    quiet: bool,
}

/// The controller's client limits, kube-controller-manager's defaults.
const QPS: u32 = 20;
const BURST: u32 = 30;

/// One scenario's verdict.
#[derive(Serialize)]
pub struct Report {
    pub scenario: String,
    pub kubernetes: String,
    pub profile: &'static str,
    /// `conforms`, or the violation in words.
    pub conform: String,
    pub conforms: bool,
    /// The scenario's expectations not met.
    pub expect_failures: Vec<String>,
    pub expectations: usize,
    /// Outcomes outside `taintcheck expect`'s envelope.
    pub envelope_failures: Vec<String>,
    pub incarnations: usize,
    /// Deletions by the controller, in scenario time.
    pub deletions: Vec<String>,
    /// The controller's requests the API server received (GET, PATCH, DELETE).
    pub requests: usize,
    /// Operations the API server refused.
    pub refused: Vec<String>,
    /// The latest an operation was applied after its instant, in ms.
    pub late_ms: u128,
    pub wall_ms: u128,
    pub scenario_ms: i64,
    pub trace: Option<String>,
    /// With `--proxy`: the proxy's trace judged by `conform`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyReport>,
}

impl Report {
    fn passed(&self) -> bool {
        self.conforms
            && self.expect_failures.is_empty()
            && self.envelope_failures.is_empty()
            && self
                .proxy
                .as_ref()
                .is_none_or(|p| p.conforms && p.differences.is_empty())
    }
}

pub fn run(args: &UpstreamArgs) -> Outcome {
    let reports = reports(args)?;
    Ok(if reports.iter().all(Report::passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

impl UpstreamArgs {
    /// One scenario through the proxy with a schedule, on a release's controller or on ours
    /// (`reproduce`).
    pub fn steered(
        scenario: PathBuf,
        schedule: Option<PathBuf>,
        kubernetes: Option<String>,
        ours: Option<Profile>,
        bin: PathBuf,
        keep: Option<PathBuf>,
        latency_bound_ms: i64,
    ) -> UpstreamArgs {
        UpstreamArgs {
            scenarios: vec![scenario],
            kubernetes,
            profile: None,
            latency_bound_ms,
            keep,
            bin,
            port: None,
            feature_gates: None,
            ours,
            proxy: true,
            schedule,
            json: false,
            quiet: true,
        }
    }
}

/// Runs every scenario and judges it, printing each verdict as it comes.
pub fn reports(args: &UpstreamArgs) -> Result<Vec<Report>, Failure> {
    let mut scenarios = Vec::new();
    for path in &args.scenarios {
        let scenario = super::load_scenario(path)?;
        let refused = unsupported(&scenario, args.proxy);
        if !refused.is_empty() {
            return Err(Failure::input(format!(
                "{}: cannot run on a real API server: {}",
                path.display(),
                refused.join("; ")
            )));
        }
        scenarios.push(scenario);
    }
    let bins = Binaries::new(&args.bin);
    let control_plane = bins.control_plane().map_err(Failure::usage)?;
    let (release, profile) = match args.ours {
        Some(profile) => (ours(profile, args)?, profile),
        None => upstream(args, &bins)?,
    };
    let (dir, temporary) = match &args.keep {
        Some(dir) => (dir.clone(), false),
        None => (
            std::env::temp_dir().join(format!("taintcheck-upstream-{}", std::process::id())),
            true,
        ),
    };
    let result = run_all(args, &scenarios, &control_plane, release, profile, &dir);
    // A run that failed keeps its files: its error names the logs to read there.
    if temporary && result.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// Which of a scenario's `expect` blocks (keyed by the named profiles) a profile meets: the
/// named profile with the same switches (`v1.18` for 1.18.0 to 1.18.8, `latest` for 1.35 and
/// later), else its own name, which no block has, so only `all` applies.
pub(super) fn expectation_key(profile: &Profile) -> &'static str {
    Profile::NAMES
        .into_iter()
        .find(|n| Profile::by_name(n).is_some_and(|p| p.switches() == profile.switches()))
        .unwrap_or(profile.name)
}

/// The profile of the release whose controller runs, with the gates it is given (PROFILE-R3).
/// The release's controller from `upstream/bin`, judged under `--profile` or its own.
fn upstream(args: &UpstreamArgs, bins: &Binaries) -> Result<(Release, Profile), Failure> {
    let version = match &args.kubernetes {
        Some(v) => v.clone(),
        None => bins.releases().pop().ok_or_else(|| {
            Failure::usage(format!(
                "{}: no controller is built: run `upstream/build.sh`",
                args.bin.display()
            ))
        })?,
    };
    let binary = bins.controller(&version).map_err(Failure::usage)?;
    let profile = match args.profile {
        Some(profile) => profile,
        None => release_profile(&version, args.feature_gates.as_deref())?,
    };
    let release = Release {
        version,
        binary,
        qps: QPS,
        burst: BURST,
        feature_gates: args.feature_gates.clone(),
        args: Vec::new(),
        through_proxy: args.proxy,
        schedule: schedule(args)?,
    };
    Ok((release, profile))
}

/// This very binary's `controller` command under `profile`, health on a free port.
fn ours(profile: Profile, options: &UpstreamArgs) -> Result<Release, Failure> {
    let binary = std::env::current_exe()
        .map_err(|e| Failure::usage(format!("cannot find taintcheck's own binary: {e}")))?;
    let args = [
        "controller",
        "--profile",
        profile.name,
        "--bind-address",
        "127.0.0.1:0",
    ];
    Ok(Release {
        version: format!("taintcheck --profile {}", profile.name),
        binary,
        qps: QPS,
        burst: BURST,
        feature_gates: None,
        args: args.map(String::from).to_vec(),
        through_proxy: options.proxy,
        schedule: schedule(options)?,
    })
}

/// `--schedule`'s schedule, read and checked.
fn schedule(args: &UpstreamArgs) -> Result<Option<Schedule>, Failure> {
    let Some(path) = &args.schedule else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    Schedule::parse(&path.display().to_string(), &text)
        .map(Some)
        .map_err(Failure::input)
}

fn run_all(
    args: &UpstreamArgs,
    scenarios: &[Scenario],
    control_plane: &Path,
    release: Release,
    profile: Profile,
    dir: &Path,
) -> Result<Vec<Report>, Failure> {
    let cp = ControlPlane::start(
        control_plane,
        &dir.join("controlplane"),
        args.port,
        StdDuration::from_secs(120),
    )
    .map_err(Failure::usage)?;
    if !args.json && !args.quiet {
        outln!(
            "control plane at {} ready in {:.1} s; Kubernetes {}'s controller, profile {}",
            cp.url(),
            cp.start_time().as_secs_f64(),
            release.version,
            profile.name
        );
    }
    let cluster = Cluster {
        kubeconfig: cp.kubeconfig(),
        audit_log: cp.audit_log(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("an async runtime: {e}")))?;
    let client = runtime
        .block_on(taintcheck_cluster::client(Some(&cluster.kubeconfig)))
        .map_err(Failure::usage)?;
    let mut reports = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        let run_dir = dir.join(&scenario.name);
        let begun = Instant::now();
        let suffix = format!("{:x}{i}", std::process::id() % 0xfff);
        let recording = runtime
            .block_on(session::run(
                &cluster, &client, &release, scenario, &run_dir, &suffix,
            ))
            .map_err(|e| Failure::usage(format!("{}: {e}", scenario.name)))?;
        let mut report = judge(args, scenario, &release, profile, &recording, &run_dir)?;
        report.wall_ms = begun.elapsed().as_millis();
        print(args, &report);
        reports.push(report);
    }
    Ok(reports)
}

/// Imports the run's files, checks the trace with the oracle, and compares the deletions with
/// the scenario's expectations and the envelope.
fn judge(
    args: &UpstreamArgs,
    scenario: &Scenario,
    release: &Release,
    profile: Profile,
    recording: &Recording,
    dir: &Path,
) -> Result<Report, Failure> {
    let mut files = Vec::new();
    let injected = match &recording.proxy_log {
        Some(log) => injected(log, dir)?,
        None => None,
    };
    let paths: Vec<&PathBuf> = std::iter::once(&recording.audit)
        .chain(&recording.watches)
        .chain(&injected)
        .collect();
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    for (path, name) in paths.iter().zip(&names) {
        files.push((
            name.as_str(),
            taintcheck_formats::limits::open_file(path).map_err(Failure::usage)?,
        ));
    }
    let settings = Settings {
        end: Some(recording.end),
        ..Settings::default()
    };
    let imported = import_with(files, &settings).map_err(Failure::input)?;
    let trace = with_run(imported.trace, scenario, release, recording);
    let trace_path = dir.join("trace.ndjson");
    let text: String = trace.iter().map(to_line).collect();
    std::fs::write(&trace_path, text)
        .map_err(|e| Failure::usage(format!("{}: cannot write: {e}", trace_path.display())))?;

    let requests = count(&trace, |e| matches!(e, TraceEvent::Request { .. }));
    let bound = Duration(args.latency_bound_ms);
    let (conforms, conform) = conform(&trace, profile, bound, release);
    let proxy = match &recording.proxy_log {
        Some(log) => {
            let audit = outputs(&trace);
            Some(judge_proxy(
                args, scenario, release, profile, recording, log, dir, &audit,
            )?)
        }
        None => None,
    };

    let in_scenario = in_scenario_time(&trace, recording);
    let mut check = RunCheck::new(scenario.expectations_for(expectation_key(&profile)));
    for r in &in_scenario {
        check.record(r);
    }
    let expectations = check.total();
    let deletions = check.deletions().to_vec();
    let expect_failures: Vec<String> = check.failures().iter().map(|f| f.to_string()).collect();

    let late = recording
        .played
        .iter()
        .map(|p| p.late)
        .max()
        .unwrap_or_default();
    // An envelope the oracle cannot compute (its state limit, issue 40) is this run's finding,
    // not the end of the batch: the runs after it are still judged.
    // The controller ran with the release's client limits, whatever the scenario says: the
    // envelope is computed under them (a storm's last eviction waits for its tokens).
    let mut limited = scenario.clone();
    limited.runtime.rate_limit = RateLimit::qps(release.qps, release.burst);
    let (incarnations, envelope_failures) = match envelope(
        &limited,
        || Reference::run(&limited, profile),
        profile,
        bound,
    ) {
        Ok(pods) => (
            pods.len(),
            outside(
                &pods,
                &deletions,
                Duration(recording.setup.as_millis() as i64),
                Duration(late.as_millis() as i64),
            ),
        ),
        Err(e) => (0, vec![format!("not judged: {e}")]),
    };

    Ok(Report {
        scenario: scenario.name.clone(),
        kubernetes: release.version.clone(),
        profile: profile.name,
        conform,
        conforms,
        expect_failures,
        expectations,
        envelope_failures,
        incarnations,
        deletions: deletions
            .iter()
            .map(|d| {
                let uid = d
                    .uid
                    .as_ref()
                    .map_or(String::new(), |u| format!(" (uid {u})"));
                format!("{}{uid} at {}", d.pod, d.at)
            })
            .collect(),
        requests,
        refused: recording
            .played
            .iter()
            .filter_map(|p| p.refused.as_ref().map(|r| format!("line {}: {r}", p.line)))
            .collect(),
        late_ms: late.as_millis(),
        wall_ms: 0,
        scenario_ms: scenario.until.millis(),
        trace: args.keep.as_ref().map(|_| trace_path.display().to_string()),
        proxy,
    })
}

/// The requests the proxy failed itself (`failRequests`, PROXY-10), which the API server never
/// saw, as a file of the proxy's exchanges for the audit log's import: the run's trace then shows
/// every answer the controller got. `None` when there are none.
fn injected(log: &Path, dir: &Path) -> Result<Option<PathBuf>, Failure> {
    let text = std::fs::read_to_string(log)
        .map_err(|e| Failure::usage(format!("{}: {e}", log.display())))?;
    let lines: String = text
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v["injected"] == true)
        })
        .map(|l| format!("{l}\n"))
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let path = dir.join("proxy-injected.ndjson");
    std::fs::write(&path, lines)
        .map_err(|e| Failure::usage(format!("{}: cannot write: {e}", path.display())))?;
    Ok(Some(path))
}

fn count(trace: &[TraceRecord], which: impl Fn(&TraceEvent) -> bool) -> usize {
    trace.iter().filter(|r| which(&r.event)).count()
}

/// The oracle's verdict on a run's trace, under the controller's client limits.
fn conform(
    trace: &[TraceRecord],
    profile: Profile,
    bound: Duration,
    release: &Release,
) -> (bool, String) {
    let mut options = Options::new(profile, bound);
    options.rate_limit = RateLimit::qps(release.qps, release.burst);
    let end = match &trace[0].event {
        TraceEvent::Header { end, .. } => *end,
        _ => None,
    };
    match Oracle::check(options, trace, end) {
        Ok(s) => (
            true,
            format!("conforms ({} lines, {} pods)", s.records, s.pods),
        ),
        Err(OracleError::Violation(v)) => (
            false,
            match v.line {
                Some(line) => format!("line {line}: {}", v.message),
                None => format!("at the end: {}", v.message),
            },
        ),
        Err(e) => (false, format!("not judged: {e}")),
    }
}

/// The imported trace with what the run knows and a recording cannot show: the scenario's
/// name, the controller's client limits (TRACE-THROTTLE) and its restarts (TRACE-5).
fn with_run(
    mut trace: Vec<TraceRecord>,
    scenario: &Scenario,
    release: &Release,
    recording: &Recording,
) -> Vec<TraceRecord> {
    let mut origin = 0;
    if let TraceEvent::Header {
        scenario: name,
        qps,
        burst,
        start,
        source,
        ..
    } = &mut trace[0].event
    {
        *name = Some(scenario.name.clone());
        *qps = Some(release.qps);
        *burst = Some(release.burst);
        *source = format!("upstream-{}:{source}", release.version);
        origin = start.map_or(0, |s| s.0.as_millisecond());
    }
    for at in &recording.restarts {
        let t = Time(at.as_millisecond() - origin);
        let i = trace.partition_point(|r| r.t <= t).max(1);
        trace.insert(
            i,
            TraceRecord {
                t,
                event: TraceEvent::ControllerRestarted,
            },
        );
    }
    trace
}

/// The trace in the scenario's names, UIDs and time (0 at the run's start; earlier lines, the
/// starting cluster's creation, at 0).
fn in_scenario_time(trace: &[TraceRecord], recording: &Recording) -> Vec<TraceRecord> {
    let origin = match &trace[0].event {
        TraceEvent::Header { start, .. } => start.map_or(0, |s| s.0.as_millisecond()),
        _ => 0,
    };
    let shift = origin - recording.start.as_millisecond();
    trace
        .iter()
        .map(|r| {
            let mut r = recording.names.to_scenario(r);
            r.t = Time((r.t.millis() + shift).max(0));
            r
        })
        .collect()
}

/// The envelope's outcomes the run's deletions contradict. The real run may lag the envelope,
/// which counts from each operation's instant, by as much as its operations were late.
/// The outcomes outside their envelope: a deletion may come as much as `early` before its
/// window (the scenario's cluster was created that long before its 0, under the running
/// controller's eyes) and `late` after it (the latest an operation was played after its
/// instant).
fn outside(
    pods: &[PodEnvelope],
    deletions: &[Deletion],
    early: Duration,
    late: Duration,
) -> Vec<String> {
    let mut out = Vec::new();
    for p in pods {
        let deleted = deletions
            .iter()
            .find(|d| d.pod == p.pod && d.uid.as_ref().is_none_or(|u| *u == p.uid));
        let window = |from: Time, to: Time| (Time(from.millis() - early.millis()), to.plus(late));
        let wrong = match (&p.outcome, deleted) {
            (Envelope::MustDelete { .. }, None) => Some("not deleted".to_string()),
            (Envelope::MustNotDelete, Some(d)) => Some(format!("deleted at {}", d.at)),
            (Envelope::MustDelete { from, to } | Envelope::MayDelete { from, to }, Some(d)) => {
                let (from, to) = window(*from, *to);
                (d.at < from || d.at > to)
                    .then(|| format!("deleted at {}, outside [{from}, {to}]", d.at))
            }
            _ => None,
        };
        if let Some(wrong) = wrong {
            out.push(format!("{p}: {wrong}"));
        }
    }
    out
}

fn print(args: &UpstreamArgs, r: &Report) {
    if args.quiet {
        return;
    }
    if args.json {
        outln!("{}", serde_json::to_string(r).unwrap_or_default());
        return;
    }
    let verdict = if r.passed() { "ok" } else { "FAILED" };
    outln!(
        "{} on Kubernetes {} ({}): {verdict}, wall {:.1} s for {:.1} s of scenario, operations \
         at most {} ms late",
        r.scenario,
        r.kubernetes,
        r.profile,
        r.wall_ms as f64 / 1000.0,
        r.scenario_ms as f64 / 1000.0,
        r.late_ms
    );
    outln!("  conform: {}", r.conform);
    if let Some(p) = &r.proxy {
        outln!(
            "  through the proxy: {} requests, {} events; conform: {}",
            p.requests,
            p.events,
            p.conform
        );
        for d in &p.differences {
            outln!("  proxy and audit log differ: {d}");
        }
        for h in &p.steering {
            outln!("  steered: {h}");
        }
    }
    if r.expect_failures.is_empty() {
        outln!("  expect: {} checked, all met", r.expectations);
    } else {
        for f in &r.expect_failures {
            outln!("  expect FAILED {f}");
        }
    }
    if r.envelope_failures.is_empty() {
        outln!(
            "  envelope: {} incarnations, every outcome inside",
            r.incarnations
        );
    } else {
        for f in &r.envelope_failures {
            outln!("  envelope FAILED {f}");
        }
    }
    for d in &r.deletions {
        outln!("  deleted {d}");
    }
    for refused in &r.refused {
        outln!("  refused by the API server: {refused}");
    }
    if let Some(t) = &r.trace {
        outln!("  trace: {t}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taintcheck_core::api::{PodKey, Uid};

    /// A deletion of a pod of the scenario's cluster may come before its window by as long as
    /// the cluster took to create, and after it by as late as operations were played; no more.
    #[test]
    fn a_window_stretches_by_the_setup_before_and_the_lateness_after() {
        let pod = PodKey::new("default", "p0");
        let uid = Uid("p0-1".into());
        let envelope = [PodEnvelope {
            pod: pod.clone(),
            uid: uid.clone(),
            outcome: Envelope::MustDelete {
                from: Time(1000),
                to: Time(2200),
            },
            reason: "it tolerates k1 for 1 s".into(),
        }];
        let at = |t| {
            [Deletion {
                at: Time(t),
                pod: pod.clone(),
                uid: Some(uid.clone()),
            }]
        };
        let judged = |t, early, late| outside(&envelope, &at(t), Duration(early), Duration(late));
        assert_eq!(judged(999, 0, 0).len(), 1);
        assert!(judged(999, 3, 0).is_empty());
        assert_eq!(judged(996, 3, 0).len(), 1);
        assert!(judged(2210, 0, 10).is_empty());
        assert_eq!(judged(2211, 3, 10).len(), 1);
        assert_eq!(
            judged(999, 0, 0),
            [
                "default/p0 (uid p0-1): must be deleted within [1.000s, 2.200s]: it tolerates k1 \
              for 1 s: deleted at 0.999s, outside [1.000s, 2.200s]"
            ]
        );
    }
}
