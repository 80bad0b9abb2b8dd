//! `taintcheck`: the command-line front end. It parses arguments, calls the library crates and
//! prints; it decides nothing about taints itself.

mod cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use cmd::failure::Failure;
use std::process::ExitCode;
use taintcheck_core::profile::Profile;
use taintcheck_core::releases::RELEASES;

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
    /// Combine the `--json` reports of `check --partition I/N`'s N parts into the whole run's
    /// verdicts, keeping the shortest counterexample any part found.
    Merge(cmd::merge::MergeArgs),
    /// Write the upstream-ready issue for a violated property: versions, configuration,
    /// timeline with the upstream function of each step, expected behaviour, reproduction.
    Report(cmd::report::ReportArgs),
    /// The smallest configuration, derived from the given one, that still violates a property.
    Minimize(cmd::args::PropertyArgs),
    /// Run a property's counterexample on the reference runtime under a deterministic schedule.
    Replay(cmd::args::PropertyArgs),
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
    /// Run scenarios on upstream's own controller of a Kubernetes release, on a real
    /// kube-apiserver, and judge each run with `conform`, the scenario's `expect` and the
    /// envelope (needs `upstream/build.sh`'s binaries).
    #[cfg(feature = "cluster")]
    Upstream(cmd::upstream::UpstreamArgs),
    /// Not in this build (the `cluster` feature): upstream's own controller of a release on a real kube-apiserver.
    #[cfg(not(feature = "cluster"))]
    Upstream(cmd::absent::Absent),
    /// Write random real-time scenarios (small clusters, a few timed operations a real API
    /// server plays) for `upstream`, named by a seed so that a finding is one file to rerun.
    Generate(cmd::generate::GenerateArgs),
    /// Record a live cluster's pods, nodes and Events through kube-rs into a trace (one
    /// command instead of three `kubectl --watch` pipes and `import`).
    #[cfg(feature = "cluster")]
    Record(cmd::record::RecordArgs),
    /// Not in this build (the `cluster` feature): a live cluster recorded into a trace.
    #[cfg(not(feature = "cluster"))]
    Record(cmd::absent::Absent),
    /// Make a violation the model found happen on the real controller of a release, through
    /// the proxy on a real kube-apiserver, and say whether it did (specs/proxy.md, PROXY-9).
    #[cfg(feature = "cluster")]
    Reproduce(cmd::reproduce::ReproduceArgs),
    /// Not in this build (the `cluster` feature): a violation made to happen on the real controller of a release.
    #[cfg(not(feature = "cluster"))]
    Reproduce(cmd::absent::Absent),
    /// Stand between a controller and its API server: forward everything, record what the
    /// controller sent and saw, and write it as a trace (specs/proxy.md).
    #[cfg(feature = "cluster")]
    Proxy(cmd::proxy::ProxyArgs),
    /// Not in this build (the `cluster` feature): the recording, steering proxy between a controller and its API server.
    #[cfg(not(feature = "cluster"))]
    Proxy(cmd::absent::Absent),
    /// Run the reference runtime as a real controller on a cluster (the `fixed` design by
    /// default, any profile by `--profile`): kube-rs watches, requests and Events, leader
    /// election on a Lease, health and metrics on 127.0.0.1, a graceful stop on SIGTERM
    /// (docs/deploy.md).
    #[cfg(feature = "cluster")]
    Controller(cmd::controller::ControllerArgs),
    /// Not in this build (the `cluster` feature): the reference runtime as a real controller on a cluster.
    #[cfg(not(feature = "cluster"))]
    Controller(cmd::absent::Absent),
    /// Validate Pod and Node manifests as the API server would.
    Validate(cmd::validate::ValidateArgs),
    /// Explain what a node's taints mean for a pod.
    Explain(cmd::explain::ExplainArgs),
    /// The profiles and the Kubernetes releases they mirror, with their switches; with
    /// `--kubernetes 1.x[.y]`, that release's profile, switches and upstream files (SHA-256).
    Profiles(cmd::profiles::ProfilesArgs),
}

/// `--version`: the crate's version, one line per named profile (the Kubernetes releases it
/// has the switches of), then the release profiles. Built once per run; clap keeps
/// `&'static str`s.
fn long_version() -> &'static str {
    let mut text = format!("{}\nprofiles:", env!("CARGO_PKG_VERSION"));
    for name in Profile::NAMES {
        let p = Profile::by_name(name).expect("a named profile");
        text.push_str(&format!("\n  {name:6}  {}", cmd::profiles::named_line(&p)));
    }
    let names: Vec<&str> = RELEASES.iter().map(|r| r.name).collect();
    text.push_str(&format!("\nreleases: {}", names.join(" ")));
    text.leak()
}

/// The arguments, or exit: help and version on stdout (0); usage errors as
/// `taintcheck: message` on stderr (2), like every other failure.
fn parse() -> Result<Cli, ExitCode> {
    let matches = Cli::command()
        .long_version(long_version())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    matches.map_err(|e| {
        if !e.use_stderr() {
            e.exit()
        }
        let text = e.render().to_string();
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        Failure::usage(text.trim_end()).report()
    })
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let outcome = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Merge(args) => cmd::merge::run(&args),
        Command::Report(args) => cmd::report::run(&args),
        Command::Minimize(args) => cmd::minimize::run(&args),
        Command::Replay(args) => cmd::replay::run(&args),
        Command::Explore(args) => cmd::explore::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Bench(args) => Ok(cmd::bench::run(args)),
        Command::Conform(args) => Ok(cmd::conform::run(&args)),
        Command::Expect(args) => cmd::expect::run(&args),
        Command::Import(args) => cmd::import::run(&args),
        #[cfg(feature = "cluster")]
        Command::Upstream(args) => cmd::upstream::run(&args),
        #[cfg(not(feature = "cluster"))]
        Command::Upstream(_) => cmd::absent::run("upstream"),
        Command::Generate(args) => cmd::generate::run(&args),
        #[cfg(feature = "cluster")]
        Command::Record(args) => cmd::record::run(&args),
        #[cfg(not(feature = "cluster"))]
        Command::Record(_) => cmd::absent::run("record"),
        #[cfg(feature = "cluster")]
        Command::Proxy(args) => cmd::proxy::run(&args),
        #[cfg(not(feature = "cluster"))]
        Command::Proxy(_) => cmd::absent::run("proxy"),
        #[cfg(feature = "cluster")]
        Command::Reproduce(args) => cmd::reproduce::run(&args),
        #[cfg(not(feature = "cluster"))]
        Command::Reproduce(_) => cmd::absent::run("reproduce"),
        #[cfg(feature = "cluster")]
        Command::Controller(args) => cmd::controller::run(&args),
        #[cfg(not(feature = "cluster"))]
        Command::Controller(_) => cmd::absent::run("controller"),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
        Command::Profiles(args) => cmd::profiles::run(&args),
    };
    outcome.unwrap_or_else(|failure| failure.report())
}
