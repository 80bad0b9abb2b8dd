//! `taintcheck conform TRACE|-`: does some legal behaviour of a profile explain a trace?
//! Exit 0 if so; 1 naming the first line none explains and why (and writing a witness scenario
//! with `--witness`); 2 on bad input (with the line number). `-` reads stdin as a stream and
//! stops at the first violation. Spec: specs/oracle.md.

use super::args::{non_negative_ms, profile_parser};
use super::failure::Failure;
use crate::cmd::output::{self, outln};
use clap::Args;
use serde_json::json;
use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::limits::Lines;
use taintcheck_model::oracle::{witness, Error, Options, Oracle, Violation};
use taintcheck_model::profile::Profile;
use taintcheck_model::scenario::parse_duration;
use taintcheck_model::time::{Duration, Time};
use taintcheck_model::trace::{TraceEvent, TraceReader, TraceRecord};

#[derive(Args)]
pub struct ConformArgs {
    /// The trace (NDJSON, specs/trace-format.md), or `-` for stdin, checked as it arrives.
    trace: String,
    /// The profile to check against (default: the trace header's profile, else latest;
    /// `taintcheck profiles` says which Kubernetes releases each mirrors).
    #[arg(long, value_parser = profile_parser())]
    profile: Option<Profile>,
    /// D: an API change reaches the controller, and a due timer fires, within D ms.
    #[arg(long, default_value_t = 1000, value_name = "D", value_parser = non_negative_ms())]
    latency_bound_ms: i64,
    /// The trace claims nothing happened after its last line until this instant (e.g. `400s`):
    /// deadlines up to it are checked too.
    #[arg(long, value_name = "INSTANT")]
    until: Option<String>,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    /// On a violation, write a scenario reproducing it (runnable with `taintcheck run`).
    #[arg(long, value_name = "OUT.yaml")]
    witness: Option<PathBuf>,
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
    let until = match args.until.as_deref().map(parse_duration) {
        None => None,
        Some(Some(d)) => Some(Time(d.millis())),
        Some(None) => {
            return bad_error(
                args,
                Failure::usage("--until: expected an instant such as 400s or 1.5s"),
            )
        }
    };
    let mut reader = TraceReader::new(&name);
    let mut oracle: Option<Oracle> = None;
    let mut profile = None;
    let mut kept: Vec<(usize, TraceRecord)> = Vec::new();
    let mut lines = Lines::new(BufReader::new(input));
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
            let header_profile = match &record.event {
                TraceEvent::Header { profile, .. } => profile.clone(),
                _ => None,
            };
            let p = match (args.profile, header_profile) {
                (Some(p), _) => p,
                (None, None) => Profile::latest(),
                (None, Some(wanted)) => match Profile::by_name(&wanted) {
                    Some(p) => p,
                    None => {
                        let names = Profile::NAMES.map(|n| format!("{n:?}")).join(", ");
                        let message = format!(
                            "profile: Unsupported value: {wanted:?}: supported values: {names}"
                        );
                        return bad(args, &name, n, &message);
                    }
                },
            };
            profile = Some(p);
            let options = Options::new(p, Duration(args.latency_bound_ms));
            oracle = Some(Oracle::with_options(options));
        }
        let o = oracle.as_mut().expect("created at the first record");
        if args.witness.is_some() {
            kept.push((n, record.clone()));
        }
        if let Err(e) = o.feed_line(n, &record) {
            return rejected(args, &name, e, &kept, profile.expect("set"), o);
        }
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
                let report = json!({
                    "verdict": "conforms",
                    "profile": p.name,
                    "latency_bound_ms": args.latency_bound_ms,
                    "summary": summary,
                });
                outln!("{report}");
            } else {
                outln!(
                    "{name}: conforms to {} (latency bound {} ms): {} lines, {} pods, largest \
                     frontier {} states",
                    p.name,
                    args.latency_bound_ms,
                    summary.records,
                    summary.pods,
                    summary.max_frontier
                );
            }
            ExitCode::SUCCESS
        }
        Err(Error::Violation(v)) => violation(args, &name, &v, &kept, p, observe.deletions),
        Err(e) => bad_error(args, Failure::input(e)),
    }
}

fn rejected(
    args: &ConformArgs,
    name: &str,
    e: Error,
    kept: &[(usize, TraceRecord)],
    profile: Profile,
    o: &Oracle,
) -> ExitCode {
    match e {
        Error::Violation(v) => violation(args, name, &v, kept, profile, o.observe().deletions),
        Error::BadInput(b) => bad(args, name, b.line, &b.message),
        inconclusive @ Error::Inconclusive { .. } => {
            bad_error(args, Failure::input(format!("{name}: {inconclusive}")))
        }
    }
}

fn violation(
    args: &ConformArgs,
    name: &str,
    v: &Violation,
    kept: &[(usize, TraceRecord)],
    profile: Profile,
    controller_deletes: bool,
) -> ExitCode {
    if let Some(path) = &args.witness {
        let text = witness::scenario(kept, v, profile.name, controller_deletes);
        let trace = std::path::Path::new(name);
        if let Err(failure) = output::write_file("--witness", path, &text, &[trace]) {
            return bad_error(args, failure);
        }
    }
    if args.json {
        let report = json!({
            "verdict": "violation",
            "profile": profile.name,
            "latency_bound_ms": args.latency_bound_ms,
            "violation": v,
        });
        outln!("{report}");
    } else {
        match v.line {
            Some(line) => outln!("{name}:{line}: {}", v.message),
            None => outln!("{name}: at the end ({}): {}", v.t, v.message),
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
