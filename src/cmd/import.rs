//! `taintcheck import FILE...`: real-cluster recordings (kubectl watch recordings and API
//! server audit logs, specs/import.md) into one trace (specs/trace-format.md), for `taintcheck
//! conform`. What was skipped is counted per reason on stderr; `--strict` makes a skip that
//! loses information an error. Exit 2 on a file that cannot be read or a recording that cannot
//! be parsed. Recordings are streamed line by line (specs/limits.md).

use super::failure::{Failure, Outcome};
use super::output::{self, out, outln};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_formats::limits::open_file;
use taintcheck_formats::recording::{import_with, Settings};
use taintcheck_formats::trace::to_line;

#[derive(Args)]
pub struct ImportArgs {
    /// Recordings: `kubectl get KIND -A --watch --output-watch-events -o json` output (pods,
    /// nodes, events), audit logs (`--audit-log-path`) and `taintcheck proxy`'s exchange logs,
    /// in any mix.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Write the trace here instead of stdout.
    #[arg(short, long, value_name = "TRACE")]
    output: Option<PathBuf>,
    /// Print `{"output", "lines", "skipped": {reason: count}}` on stdout (needs `--output`).
    #[arg(long, requires = "output")]
    json: bool,
    /// The controller's audit user (repeatable; default: the node-controller service account,
    /// which kube-controller-manager gives it in every release, and taint-eviction-controller).
    #[arg(long = "controller-user", value_name = "USER")]
    controller_users: Vec<String>,
    /// When the recording ended (RFC 3339), if later than its last entry: `conform` checks
    /// deadlines up to it.
    #[arg(long, value_name = "INSTANT")]
    end: Option<String>,
    /// Fail (exit 2) when anything that loses information was skipped (an event without a
    /// time, a deletion of an unseen object, a write whose object the audit log lacks).
    #[arg(long)]
    strict: bool,
}

pub fn run(args: &ImportArgs) -> Outcome {
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let mut files = Vec::new();
    for (path, name) in args.files.iter().zip(&names) {
        files.push((name.as_str(), open_file(path).map_err(Failure::usage)?));
    }
    let mut settings = Settings::default();
    if !args.controller_users.is_empty() {
        settings.controller_users = args.controller_users.iter().cloned().collect();
    }
    if let Some(end) = &args.end {
        let at = end.parse().map_err(|_| {
            Failure::usage(format!(
                "--end: {end:?}: expected an RFC 3339 instant such as 2025-11-25T08:10:00Z"
            ))
        })?;
        settings.end = Some(at);
    }
    let imported = import_with(files, &settings).map_err(Failure::input)?;
    let lossy: Vec<String> = imported
        .skipped
        .iter()
        .filter(|(why, _)| why.loses_information())
        .map(|(why, n)| format!("{n} {}", reason(why)))
        .collect();
    if args.strict && !lossy.is_empty() {
        return Err(Failure::input(format!(
            "--strict: skipped {}",
            lossy.join(", ")
        )));
    }
    let text: String = imported.trace.iter().map(to_line).collect();
    match &args.output {
        Some(path) => {
            let inputs: Vec<&std::path::Path> = args.files.iter().map(|f| f.as_path()).collect();
            output::write_file("-o", path, &text, &inputs)?;
        }
        None => out!("{text}"),
    }
    let lines = imported.trace.len();
    if !imported.skipped.is_empty() {
        let all: Vec<String> = imported
            .skipped
            .iter()
            .map(|(why, n)| format!("{n} {}", reason(why)))
            .collect();
        eprintln!("skipped: {}", all.join(", "));
    }
    if args.json {
        let output = args.output.as_ref().map(|p| p.display().to_string());
        let summary = json!({"output": output, "lines": lines, "skipped": imported.skipped});
        outln!("{summary}");
    } else if args.output.is_some() {
        eprintln!("{lines} lines");
    }
    Ok(ExitCode::SUCCESS)
}

/// A skip reason as its JSON name.
fn reason(why: &impl serde::Serialize) -> String {
    serde_json::to_value(why)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
