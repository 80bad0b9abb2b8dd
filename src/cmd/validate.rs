//! `taintcheck validate FILE...`: read Kubernetes manifests and validate every Pod and Node as
//! the API server would. Every problem goes to stderr as `file:line: field.path: message` (or,
//! with `--json`, into one JSON document on stdout); exit 2 if there is one.

use super::failure::{diagnostic_line, Failure, Outcome};
use crate::cmd::output::outln;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_formats::manifest::{self, Diagnostic};

#[derive(Args)]
pub struct ValidateArgs {
    /// Manifests as `kubectl get -o yaml|json` prints them (single objects, `kind: List`,
    /// multi-document YAML).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Validate as with the `TaintTolerationComparisonOperators` feature gate on (`Lt`/`Gt`).
    #[arg(long)]
    comparison_operators: bool,
    /// Print `{"objects", "valid", "errors": [{"file", "line", "path", "message"}]}` on stdout
    /// instead of text (`line` is null for a file that cannot be read, `path` for a problem
    /// with the document itself).
    #[arg(long)]
    json: bool,
}

pub fn run(args: &ValidateArgs) -> Outcome {
    let mut objects = 0;
    let mut problems: Vec<Diagnostic> = Vec::new();
    for file in &args.files {
        let read = manifest::read_file(file);
        problems.extend(read.errors.iter().cloned());
        problems.extend(
            read.objects
                .iter()
                .flat_map(|o| o.validate(args.comparison_operators)),
        );
        objects += read.objects.len();
    }
    if args.json {
        let errors: Vec<_> = problems
            .iter()
            .map(|d| {
                json!({
                    "file": d.file,
                    "line": d.line,
                    "path": (!d.path.is_empty()).then_some(&d.path),
                    "message": d.message,
                })
            })
            .collect();
        let report = json!({"objects": objects, "valid": problems.is_empty(), "errors": errors});
        outln!("{report}");
        return Ok(ExitCode::from(if problems.is_empty() { 0 } else { 2 }));
    }
    if !problems.is_empty() {
        let mut lines: Vec<String> = problems.iter().map(diagnostic_line).collect();
        lines.push(Failure::usage(format!("{} error(s)", problems.len())).text());
        return Err(Failure::Input(lines.join("\n")));
    }
    outln!("{objects} object(s) valid");
    Ok(ExitCode::SUCCESS)
}
