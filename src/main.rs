//! `taintcheck`: the command-line front end. It parses arguments, calls the library crates and
//! prints; it decides nothing about taints itself.

mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "taintcheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Model-check a controller profile on a configuration; print the verdict per property.
    Check(cmd::check::CheckArgs),
    /// Serve stateright's Explorer on the model.
    Explore(cmd::explore::ExploreArgs),
    /// Run a scenario on the reference runtime and check its expectations.
    Run(cmd::run::RunArgs),
    /// Measure performance (`bench runtime`: eviction storm and lateness).
    Bench(cmd::bench::BenchArgs),
    /// Validate Pod and Node manifests as the API server would.
    Validate(cmd::validate::ValidateArgs),
    /// Explain what a node's taints mean for a pod.
    Explain(cmd::explain::ExplainArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Explore(args) => cmd::explore::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
    }
}
