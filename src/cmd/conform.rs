//! `taintcheck conform TRACE|-`: does some legal behaviour of a profile explain a trace?
//! Exit 0 if so; 1 naming the first line none explains and why (and writing a witness scenario
//! with `--witness`); 2 on bad input (with the line number). `-` reads stdin as a stream and
//! stops at the first violation. Spec: specs/oracle.md.

use super::args::{gates_parser, non_negative_ms, profile_parser, with_gates, GateSettings};
use super::failure::Failure;
use crate::cmd::output::{self, outln};
use clap::Args;
use serde_json::json;
use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::limits::{self, Lines};
use taintcheck_formats::trace::{Clock, TraceEvent, TraceReader, TraceRecord};
use taintcheck_oracle::parallel::Parallel;
use taintcheck_oracle::{witness, Error, Options, Violation, DEFAULT_STEP_SLACK};

#[derive(Args)]
pub struct ConformArgs {
    /// The trace (NDJSON, specs/trace-format.md), or `-` for stdin, checked as it arrives.
    trace: String,
    /// The profile to check against (default: the trace header's profile, else latest): a
    /// name or a Kubernetes release (`--kubernetes 1.31.4`; `taintcheck profiles` lists them).
    #[arg(long, visible_alias = "kubernetes", value_parser = profile_parser())]
    profile: Option<Profile>,
    /// kube-controller-manager's gates where they differ from the release's defaults
    /// (`TaintTolerationComparisonOperators=true`).
    #[arg(long, value_name = "NAME=BOOL,...", value_parser = gates_parser)]
    feature_gates: Option<GateSettings>,
    /// D: an API change reaches the controller, and a due timer fires, within D ms.
    #[arg(long, default_value_t = 1000, value_name = "D", value_parser = non_negative_ms())]
    latency_bound_ms: i64,
    /// S: a deletion work's next step (the request after its event, the reaction to an answer)
    /// comes within S ms of the previous one, and an event reaches the trace within S ms of its
    /// emission (specs/oracle.md, ORACLE-11).
    #[arg(long, default_value_t = DEFAULT_STEP_SLACK.0, value_name = "S",
          value_parser = non_negative_ms())]
    step_slack_ms: i64,
    /// The controller's client is rate limited to QPS requests per second on average
    /// (`--kube-api-qps`, upstream default 20): a request may wait for its token, and no
    /// request may come before the token bucket allows it (specs/oracle.md, ORACLE-THROTTLE).
    /// Default: the trace header's `qps`/`burst` (TRACE-THROTTLE), else none; flags that
    /// disagree with the header are refused (exit 2).
    #[arg(long, value_name = "QPS", requires = "burst",
          value_parser = clap::value_parser!(u32).range(1..))]
    qps: Option<u32>,
    /// With `--qps`: BURST requests may go at once from a full bucket (`--kube-api-burst`,
    /// upstream default 30).
    #[arg(long, value_name = "BURST", requires = "qps",
          value_parser = clap::value_parser!(u32).range(1..))]
    burst: Option<u32>,
    /// The trace claims nothing happened after its last line until this instant: RFC 3339
    /// (`2025-11-25T08:10:00Z`, for a trace whose header has a `start`) or a duration from the
    /// trace's origin (`400s`, `5m`). Deadlines up to it are checked too. Default: the header's
    /// `end` (an imported recording's end), else the last line.
    #[arg(long, value_name = "INSTANT")]
    until: Option<String>,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    /// On a violation, write a scenario reproducing it (runnable with `taintcheck run`).
    #[arg(long, value_name = "OUT.yaml")]
    witness: Option<PathBuf>,
    /// Check the pods on N threads (default: every core); the verdict and message are the
    /// same for every N.
    #[arg(long, value_name = "N", value_parser = threads_parser())]
    threads: Option<usize>,
    /// While checking, write a line to stderr every SECONDS (default 10; 0: after every line):
    /// the line reached, its instant and, on one thread, what the oracle holds.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "10")]
    progress: Option<u64>,
}

/// `--progress`: how far the check has come, on stderr, so that a long trace or a stream
/// (`conform -`) is seen to advance before its end.
struct Progress {
    every: Option<std::time::Duration>,
    last: std::time::Instant,
}

impl Progress {
    fn new(seconds: Option<u64>) -> Progress {
        Progress {
            every: seconds.map(std::time::Duration::from_secs),
            last: std::time::Instant::now(),
        }
    }

    /// After line `n` (at `t`) was checked: a line on stderr if it is time for one.
    fn checked(&mut self, name: &str, n: usize, t: Time, clock: Clock, oracle: &Parallel) {
        let Some(every) = self.every else {
            return;
        };
        if self.last.elapsed() < every {
            return;
        }
        self.last = std::time::Instant::now();
        let held = oracle.footprint().map_or(String::new(), |f| {
            format!(" ({} pods tracked, {} states)", f.components, f.states)
        });
        output::eprint(&format!(
            "{name}: line {n} at {}: no violation found so far{held}\n",
            clock.at(t)
        ));
    }
}

fn threads_parser() -> impl clap::builder::TypedValueParser<Value = usize> {
    use clap::builder::TypedValueParser;
    clap::value_parser!(u16)
        .range(1..=limits::THREADS as i64)
        .map(usize::from)
}

pub fn run(args: &ConformArgs) -> ExitCode {
    let (name, input): (String, Box<dyn Read>) = if args.trace == "-" {
        ("-".into(), Box::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&args.trace) {
            Ok(_) if std::path::Path::new(&args.trace).is_dir() => {
                let message = format!("{}: cannot read file: it is a directory", args.trace);
                return bad_error(args, Failure::usage(message));
            }
            Ok(f) => (args.trace.clone(), Box::new(f)),
            Err(e) => {
                let message = format!("{}: cannot read file: {e}", args.trace);
                return bad_error(args, Failure::usage(message));
            }
        }
    };
    let mut reader = TraceReader::new(&name);
    let mut oracle: Option<Parallel> = None;
    let mut profile = None;
    let mut clock = Clock::default();
    let mut until: Option<Time> = None;
    let mut rate_limit: Option<RateLimit> = None;
    let mut kept: Vec<(usize, TraceRecord)> = Vec::new();
    let mut lines = Lines::new(BufReader::new(input));
    let mut progress = Progress::new(args.progress);
    let mut n = 0;
    loop {
        let text = match lines.next() {
            None => break,
            Some(Ok(text)) => text,
            Some(Err(e)) => return bad(args, &name, e.line, &e.message),
        };
        n += 1;
        let record = match reader.push_line(n, &text) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => return bad_error(args, Failure::input(e)),
        };
        if oracle.is_none() {
            let (header_profile, end) = match &record.event {
                TraceEvent::Header {
                    profile,
                    start,
                    end,
                    ..
                } => {
                    clock = Clock::new(*start);
                    (profile.clone(), *end)
                }
                _ => (None, None),
            };
            // `--until`, else the end of the recording the header states (TRACE-8).
            until = match args.until.as_deref().map(|u| clock.parse(u)) {
                None => end,
                Some(Ok(t)) => Some(t),
                Some(Err(e)) => return bad_error(args, Failure::usage(format!("--until: {e}"))),
            };
            let p = match (args.profile, header_profile) {
                (Some(p), _) => p,
                (None, None) => Profile::latest(),
                (None, Some(wanted)) => match Profile::by_name(&wanted) {
                    Some(p) => p,
                    None => {
                        let names = Profile::NAMES.map(|n| format!("{n:?}")).join(", ");
                        let message = format!(
                            "profile: Unsupported value: {wanted:?}: supported values: {names} \
                             or a Kubernetes release (\"1.31\", \"1.31.4\")"
                        );
                        return bad(args, &name, n, &message);
                    }
                },
            };
            let gates = args.feature_gates.as_ref().map_or(&[][..], |g| &g.0[..]);
            let p = match with_gates(p, gates) {
                Ok(p) => p,
                Err(failure) => return bad_error(args, failure),
            };
            profile = Some(p);
            let mut options = Options::new(p, Duration(args.latency_bound_ms));
            options.step_slack = Duration(args.step_slack_ms);
            options.rate_limit = match client_rate_limit(args, &record.event) {
                Ok(limit) => limit,
                Err(message) => {
                    return bad_error(args, Failure::usage(format!("{name}:{n}: {message}")))
                }
            };
            rate_limit = options.rate_limit;
            let threads = args.threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            oracle = Some(Parallel::new(options, threads));
        }
        let o = oracle.as_mut().expect("created at the first record");
        if args.witness.is_some() {
            kept.push((n, record.clone()));
        }
        let t = record.t;
        if let Err(e) = o.feed(n, record) {
            let found = Found {
                name: &name,
                kept: &kept,
                profile: profile.expect("set"),
                clock,
                controller_deletes: o.observe().deletions,
            };
            return rejected(args, e, &found);
        }
        progress.checked(&name, n, t, clock, o);
    }
    let Some(o) = oracle else {
        return bad(
            args,
            &name,
            n.max(1),
            "kind: expected the header line first (\"kind\":\"header\")",
        );
    };
    let observe = o.observe();
    let p = profile.expect("set with the oracle");
    match o.finish(until) {
        Ok(summary) => {
            if args.json {
                let mut report = json!({
                    "verdict": "conforms",
                    "profile": p.name,
                    "latency_bound_ms": args.latency_bound_ms,
                    "summary": summary,
                });
                if let Some(l) = rate_limit {
                    report["qps"] = json!(l.tokens());
                    report["burst"] = json!(l.burst());
                }
                outln!("{report}");
            } else {
                let client = rate_limit.map_or(String::new(), |l| format!(", client {l}"));
                outln!(
                    "{name}: conforms to {} (latency bound {} ms{client}): {} lines, {} pods, \
                     largest frontier {} states",
                    p.name,
                    args.latency_bound_ms,
                    summary.records,
                    summary.pods,
                    summary.max_frontier
                );
            }
            ExitCode::SUCCESS
        }
        // With several threads, an error at a line may surface only here: it reads as it
        // would have at its line. The end's own inconclusive frontier (line 0) reads as before.
        Err(e) if !matches!(e, Error::Inconclusive { line: 0, .. }) => {
            let found = Found {
                name: &name,
                kept: &kept,
                profile: p,
                clock,
                controller_deletes: observe.deletions,
            };
            rejected(args, e, &found)
        }
        Err(e) => bad_error(args, Failure::input(e)),
    }
}

/// The controller client's rate limit to check against (ORACLE-THROTTLE): the header's
/// (TRACE-THROTTLE), else `--qps`/`--burst`. Flags that disagree with the header are a usage
/// error rather than an override: the header records what the client ran with, and a CI job
/// whose flags and traces drift apart should fail loudly, not judge against a bucket the run
/// never had.
fn client_rate_limit(args: &ConformArgs, header: &TraceEvent) -> Result<Option<RateLimit>, String> {
    let flags = args
        .qps
        .zip(args.burst)
        .and_then(|(qps, burst)| RateLimit::qps(qps, burst));
    match (flags, header.rate_limit()) {
        (Some(given), Some(recorded)) if given != recorded => Err(format!(
            "--qps {} --burst {} disagree with the trace header's qps {}, burst {}: omit the \
             flags to use the header's rate limit",
            given.tokens(),
            given.burst(),
            recorded.tokens(),
            recorded.burst()
        )),
        (given, recorded) => Ok(recorded.or(given)),
    }
}

/// What a violation's report draws on besides the violation itself.
struct Found<'a> {
    name: &'a str,
    /// The lines kept for the witness.
    kept: &'a [(usize, TraceRecord)],
    profile: Profile,
    /// How the trace's instants are shown (wall-clock when its header has a `start`).
    clock: Clock,
    controller_deletes: bool,
}

fn rejected(args: &ConformArgs, e: Error, found: &Found) -> ExitCode {
    match e {
        Error::Violation(v) => violation(args, &v, found),
        Error::BadInput(b) => bad(args, found.name, b.line, &b.message),
        inconclusive @ Error::Inconclusive { .. } => bad_error(
            args,
            Failure::input(format!("{}: {inconclusive}", found.name)),
        ),
    }
}

fn violation(args: &ConformArgs, v: &Violation, found: &Found) -> ExitCode {
    let Found {
        name,
        profile,
        clock,
        ..
    } = *found;
    if let Some(path) = &args.witness {
        let context = witness::Source {
            records: found.kept,
            profile: profile.name,
            controller_deletes: found.controller_deletes,
            clock,
        };
        let text = witness::scenario(&context, v);
        let trace = std::path::Path::new(name);
        if let Err(failure) = output::write_file("--witness", path, &text, &[trace]) {
            return bad_error(args, failure);
        }
    }
    if args.json {
        let mut violation = json!(v);
        violation["time"] = clock.json(v.t);
        let report = json!({
            "verdict": "violation",
            "profile": profile.name,
            "latency_bound_ms": args.latency_bound_ms,
            "start": clock.start(),
            "violation": violation,
        });
        outln!("{report}");
    } else {
        match v.line {
            Some(line) => outln!("{name}:{line}: {}", v.message),
            None => outln!("{name}: at the end ({}): {}", clock.at(v.t), v.message),
        }
        if let Some(path) = &args.witness {
            outln!("witness: {} (taintcheck run {0})", path.display());
        }
    }
    ExitCode::from(1)
}

fn bad(args: &ConformArgs, name: &str, line: usize, message: &str) -> ExitCode {
    bad_error(args, Failure::input(format!("{name}:{line}: {message}")))
}

/// Bad input or arguments (exit 2): as the JSON verdict under `--json` (the message as stderr
/// would show it), else on stderr.
fn bad_error(args: &ConformArgs, failure: Failure) -> ExitCode {
    if args.json {
        let message = failure.text();
        outln!("{}", json!({"verdict": "bad_input", "message": message}));
        ExitCode::from(2)
    } else {
        failure.report()
    }
}
