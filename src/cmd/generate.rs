//! `taintcheck generate --seed S --count N --out DIR`: random real-time scenarios
//! (HARNESS-11) written as scenario files, to run with `taintcheck upstream` on upstream's
//! controller or (`--ours`) on taintcheck's. A seed and an index name one scenario, so a
//! finding is the one file it names.

use super::failure::{Failure, Outcome};
use crate::cmd::output::outln;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_formats::random::scenario;

#[derive(Args)]
pub struct GenerateArgs {
    /// The seed: the same seed writes the same scenarios.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many scenarios (named `random-<seed>-000.yaml` on).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    count: u32,
    /// The directory to write them to (created if missing; files of the same names replaced).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn run(args: &GenerateArgs) -> Outcome {
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.out.display())))?;
    for index in 0..args.count {
        let g = scenario(args.seed, index);
        let path = args.out.join(format!("{}.yaml", g.name));
        std::fs::write(&path, &g.yaml)
            .map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    }
    outln!(
        "wrote {} scenarios to {} (random-{}-000.yaml on)",
        args.count,
        args.out.display(),
        args.seed
    );
    Ok(ExitCode::SUCCESS)
}
