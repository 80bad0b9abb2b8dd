//! `taintcheck import FILE...`: real-cluster recordings (`kubectl get pods,nodes -A --watch
//! --output-watch-events -o json`, `kubectl get events -A --watch -o json`) into one trace
//! (specs/trace-format.md), for `taintcheck conform`. Exit 2 on a file that cannot be read or a
//! recording that cannot be parsed.

use super::failure::{Failure, Outcome};
use clap::Args;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::recording::import_counting;
use taintcheck_model::trace::to_line;

#[derive(Args)]
pub struct ImportArgs {
    /// Recordings: streams of watch events or objects, as kubectl prints them with `-o json`.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Write the trace here instead of stdout.
    #[arg(short, long, value_name = "TRACE")]
    output: Option<PathBuf>,
    /// Print `{"output", "lines", "skipped": {reason: count}}` on stdout (needs `--output`).
    #[arg(long, requires = "output")]
    json: bool,
}

pub fn run(args: &ImportArgs) -> Outcome {
    let mut texts = Vec::new();
    for file in &args.files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
        texts.push((file.display().to_string(), text));
    }
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    let imported = import_counting(&files).map_err(Failure::input)?;
    let text: String = imported.trace.iter().map(to_line).collect();
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?,
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| Failure::usage(format!("stdout: {e}")))?,
    }
    let lines = imported.trace.len();
    if args.json {
        let output = args.output.as_ref().map(|p| p.display().to_string());
        let summary = json!({"output": output, "lines": lines, "skipped": imported.skipped});
        println!("{summary}");
    } else if args.output.is_some() {
        eprintln!("{lines} lines");
    }
    Ok(ExitCode::SUCCESS)
}
