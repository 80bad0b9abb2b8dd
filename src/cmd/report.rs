//! `taintcheck report PROPERTY`: the upstream-ready issue for a violated property, on stdout or
//! in a file. Exit 1 when the property holds on the model (nothing to report), 2 on bad usage.
//! Spec: CHECK-5.

use super::args::release_profile;
use super::catalogue;
use super::check::ModelArgs;
use super::failure::{Failure, Outcome};
use super::output::{self, out};
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_core::profile::Profile;
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
    let mut text = match issue::write(&model, &args.property, &args.model.command_line()) {
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
    if let Some(info) = issue::property(&args.property) {
        text.push_str(&reproduced(info.id, &model.config.name, &model.profile)?);
    }
    match &args.output {
        Some(path) => {
            let config = std::path::Path::new(&args.model.config);
            output::write_file("-o", path, &text, &[config])?;
        }
        None => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// "Reproduced on upstream vX.Y.Z" for each run the catalogue (specs/reproductions.json, PROXY-9)
/// claims for this cell, among the releases with the report's profile's switches (or `fixed`'s
/// own controller), with the command that reruns it; nothing without a catalogue here.
fn reproduced(property: &str, config: &str, profile: &Profile) -> Result<String, Failure> {
    let path = Path::new("specs/reproductions.json");
    if !path.is_file() {
        return Ok(String::new());
    }
    let catalogue = catalogue::load(path)?;
    let Some(cell) = catalogue.cell(property, config) else {
        return Ok(String::new());
    };
    let mut lines = Vec::new();
    for target in &cell.reproduced_on {
        let ours = Profile::NAMES.contains(&target.as_str());
        let (who, flag) = match Profile::by_name(target).filter(|_| ours) {
            Some(p) if p.name == profile.name => (
                format!("taintcheck's own controller (`taintcheck controller --profile {target}`)"),
                format!("--ours {target}"),
            ),
            Some(_) => continue,
            None => match release_profile(target, None) {
                Ok(p) if p.switches() == profile.switches() => (
                    format!("upstream v{target}"),
                    format!("--kubernetes {target}"),
                ),
                _ => continue,
            },
        };
        lines.push(format!(
            "Reproduced on {who}, a real kube-apiserver and etcd, through taintcheck's proxy: \
             `taintcheck reproduce {property} --config {config} {flag}`.\n"
        ));
    }
    if lines.is_empty() {
        return Ok(String::new());
    }
    Ok(format!(
        "\n## On the real controller\n\n{}",
        lines.join("\n")
    ))
}
