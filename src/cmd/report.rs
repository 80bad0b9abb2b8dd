//! `taintcheck report PROPERTY`: the upstream-ready issue for a violated property, on stdout or
//! in a file. Exit 1 when the property holds on the model (nothing to report), 2 on bad usage.
//! Spec: CHECK-5.

use super::check::ModelArgs;
use super::failure::{Failure, Outcome};
use super::output::{self, out};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::check::issue::{self, NoReport};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The violated `always` property: its spec id (`EVICT-1`) or full name.
    pub property: String,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the report (Markdown) to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE.md")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> Outcome {
    let model = args.model.model()?;
    let text = match issue::write(&model, &args.property, &args.model.command_line()) {
        Ok(text) => text,
        Err(NoReport::UnknownProperty(name)) => {
            return Err(Failure::usage(format!(
                "PROPERTY: Unsupported value: \"{name}\": expected the id or name of an \
                 `always` property (EVICT-1, ...)"
            )))
        }
        Err(NoReport::Holds(id)) => {
            eprintln!(
                "taintcheck: {id} holds on {}: nothing to report",
                args.model.command_line()
            );
            return Ok(ExitCode::from(1));
        }
    };
    match &args.output {
        Some(path) => {
            let config = std::path::Path::new(&args.model.config);
            output::write_file("-o", path, &text, &[config])?;
        }
        None => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
