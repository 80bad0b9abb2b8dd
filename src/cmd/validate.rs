//! `taintcheck validate FILE...`: read Kubernetes manifests and validate every Pod and Node as
//! the API server would. Every problem goes to stderr as `file:line: field: message`.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::manifest;

#[derive(Args)]
pub struct ValidateArgs {
    /// Manifests as `kubectl get -o yaml|json` prints them (single objects, `kind: List`,
    /// multi-document YAML).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Validate as with the `TaintTolerationComparisonOperators` feature gate on (`Lt`/`Gt`).
    #[arg(long)]
    comparison_operators: bool,
}

pub fn run(args: &ValidateArgs) -> ExitCode {
    let mut objects = 0;
    let mut problems = 0;
    for file in &args.files {
        let read = manifest::read_file(file);
        let diagnostics = read.errors.iter().cloned().chain(
            read.objects
                .iter()
                .flat_map(|o| o.validate(args.comparison_operators)),
        );
        for d in diagnostics {
            eprintln!("{d}");
            problems += 1;
        }
        objects += read.objects.len();
    }
    if problems > 0 {
        eprintln!("{problems} error(s)");
        return ExitCode::from(2);
    }
    println!("{objects} object(s) valid");
    ExitCode::SUCCESS
}
