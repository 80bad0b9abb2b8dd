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
    /// Measure performance (`bench runtime`: eviction storm and lateness; `bench oracle`: the
    /// scale trace checked by the oracle).
    Bench(cmd::bench::BenchArgs),
    /// Check a trace against a profile: does some legal behaviour explain it?
    Conform(cmd::conform::ConformArgs),
    /// The envelope of legal outcomes of a scenario, per pod.
    Expect(cmd::expect::ExpectArgs),
    /// Turn kubectl watch recordings of a real cluster into a trace.
    Import(cmd::import::ImportArgs),
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
        Command::Conform(args) => cmd::conform::run(&args),
        Command::Expect(args) => cmd::expect::run(&args),
        Command::Import(args) => cmd::import::run(&args),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
    }
}
