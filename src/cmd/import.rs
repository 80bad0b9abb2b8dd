//! `taintcheck import FILE...`: real-cluster recordings (`kubectl get pods,nodes -A --watch
//! --output-watch-events -o json`, `kubectl get events -A --watch -o json`) into one trace
//! (specs/trace-format.md), for `taintcheck conform`. Exit 2 on a file that cannot be read.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::recording::import;
use taintcheck_model::trace::to_line;

#[derive(Args)]
pub struct ImportArgs {
    /// Recordings: streams of watch events or objects, as kubectl prints them with `-o json`.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Write the trace here instead of stdout.
    #[arg(short, long, value_name = "TRACE")]
    output: Option<PathBuf>,
}

pub fn run(args: &ImportArgs) -> ExitCode {
    let mut texts = Vec::new();
    for file in &args.files {
        match std::fs::read_to_string(file) {
            Ok(text) => texts.push((file.display().to_string(), text)),
            Err(e) => {
                eprintln!("{}: {e}", file.display());
                return ExitCode::from(2);
            }
        }
    }
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    let trace = match import(&files) {
        Ok(trace) => trace,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let text: String = trace.iter().map(to_line).collect();
    let written = match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display())),
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| format!("stdout: {e}")),
    };
    if let Err(e) = written {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    if args.output.is_some() {
        eprintln!("{} lines", trace.len());
    }
    ExitCode::SUCCESS
}
