//! `taintcheck minimize PROPERTY`: the smallest configuration derived from `--config` (and its
//! overrides) on which the property is still violated, with the command that checks it and its
//! shortest counterexample. Exit 1 when the property holds on the configuration given, 2 on bad
//! usage. Spec: CHECK-4.

use super::args::PropertyArgs;
use super::failure::Outcome;
use super::output::outln;
use std::process::ExitCode;
use taintcheck_model::check::minimize::{self, overrides_line, Size};

pub fn run(args: &PropertyArgs) -> Outcome {
    let info = args.info()?;
    let model = args.model.model()?;
    let profile = model.profile;
    let from = model.config.name.clone();
    let Ok(min) = minimize::minimize(profile, model.config, info) else {
        eprintln!(
            "taintcheck: {} holds on {}: nothing to minimize",
            info.id,
            args.model.command_line()
        );
        return Ok(ExitCode::from(1));
    };
    let selection = format!(
        "--config {} --profile {} {}",
        args.model.config,
        profile.name,
        overrides_line(&min.config)
    );
    outln!(
        "Smallest configuration derived from {from} on which {} is violated under {} \
         ({} configurations checked):",
        info.id,
        profile.name,
        min.checked
    );
    outln!("  {}", Size::of(&min.config));
    outln!("Check it: taintcheck check {selection}");
    outln!("Report it: taintcheck report {} {selection}", info.id);
    outln!(
        "\nShortest counterexample ({} steps):",
        min.trace.steps.len()
    );
    for line in min.trace.lines() {
        outln!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}
