//! `taintcheck check`: model-check a profile on a configuration and print the verdicts.

use super::args::ProfileArg;
use super::failure::{Failure, Outcome};
use crate::cmd::output::{out, outln};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use std::io::IsTerminal;
use std::process::ExitCode;
use taintcheck_model::check::config::{
    checked_taint, CheckConfig, ConfigErrors, OpKind, Overrides,
};
use taintcheck_model::check::run::{self, Report, RunOptions, Strategy};
use taintcheck_model::check::TaintSys;
use taintcheck_model::limits;

/// The model's options shared by `check` and `explore`.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    #[command(flatten)]
    pub behaviour: ProfileArg,
    /// A configuration name from specs/configs (default, timer-vs-cancel, ...) or a YAML path.
    #[arg(long, default_value = "default")]
    pub config: String,
    /// Keep the first N nodes, or add untainted ones.
    #[arg(long)]
    pub nodes: Option<usize>,
    /// Keep the first N pods, or add copies of the last one.
    #[arg(long)]
    pub pods: Option<usize>,
    /// NoExecute taints the environment may add, comma-separated (`key` or `key=value`).
    #[arg(long, value_delimiter = ',')]
    pub taint_keys: Option<Vec<String>>,
    /// tolerationSeconds values the environment may set, comma-separated (`forever` for none).
    #[arg(long, value_delimiter = ',')]
    pub seconds: Option<Vec<String>>,
    /// Environment operations, comma-separated (add_taint, remove_taint, ...).
    #[arg(long, value_delimiter = ',')]
    pub operations: Option<Vec<String>>,
    /// How many environment operations a behaviour may perform (at most 16).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=i64::from(limits::BUDGET)))]
    pub budget: Option<u8>,
    /// The environment's grid (ms), 1 to 3,600,000.
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..=3_600_000))]
    pub step_ms: Option<i64>,
    /// The clock's horizon (ms), at most one day.
    #[arg(long, value_parser = clap::value_parser!(i64).range(0..=limits::HORIZON_MS))]
    pub horizon_ms: Option<i64>,
    /// Controller workers (shards), 1 to 64.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=limits::WORKERS as i64))]
    pub workers: Option<u16>,
    /// The node informer's channel capacity, 1 to 100.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub node_channel_capacity: Option<u8>,
    /// The pod informer's channel capacity, 1 to 100.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub pod_channel_capacity: Option<u8>,
}

impl ModelArgs {
    /// The model, or why the arguments or the configuration file do not give one.
    pub fn model(&self) -> Result<TaintSys, Failure> {
        let mut config = CheckConfig::load(&self.config).map_err(config_failure)?;
        let overrides = self.overrides().map_err(Failure::Usage)?;
        config.apply(&overrides).map_err(config_failure)?;
        Ok(TaintSys::new(self.behaviour.profile, config))
    }

    fn overrides(&self) -> Result<Overrides, String> {
        let seconds = match &self.seconds {
            None => None,
            Some(v) => Some(
                v.iter()
                    .map(|s| match s.as_str() {
                        "forever" | "null" => Ok(None),
                        n => n.parse::<i64>().map(Some).map_err(|_| {
                            format!("--seconds: Invalid value: \"{n}\": expected an integer or \"forever\"")
                        }),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let operations = match &self.operations {
            None => None,
            Some(v) => Some(
                v.iter()
                    .map(|s| {
                        OpKind::parse(s).ok_or_else(|| {
                            let names: Vec<_> = OpKind::ALL
                                .iter()
                                .map(|k| format!("\"{}\"", k.name()))
                                .collect();
                            format!(
                                "--operations: Unsupported value: \"{s}\": supported values: {}",
                                names.join(", ")
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        if let Some(keys) = &self.taint_keys {
            for key in keys {
                checked_taint(key).map_err(|problem| {
                    format!("--taint-keys: Invalid value: {key:?}: expected {problem}")
                })?;
            }
        }
        Ok(Overrides {
            nodes: self.nodes,
            pods: self.pods,
            taint_keys: self.taint_keys.clone(),
            seconds_choices: seconds,
            operations,
            budget: self.budget,
            step_ms: self.step_ms,
            horizon_ms: self.horizon_ms,
            workers: self.workers.map(usize::from),
            node_channel_capacity: self.node_channel_capacity.map(usize::from),
            pod_channel_capacity: self.pod_channel_capacity.map(usize::from),
            processing_bound_ms: None,
        })
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// bfs (shortest counterexamples), dfs, or simulation.
    #[arg(long, default_value = "bfs", value_parser = strategy_parser())]
    pub strategy: Strategy,
    /// Checker threads, 1 to 256.
    #[arg(long, default_value_t = 1, value_parser = threads_parser())]
    pub threads: usize,
    /// Stop after about this many states (at least 1).
    #[arg(long, value_parser = target_states_parser())]
    pub target_states: Option<usize>,
    /// Seed of the simulation strategy.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Symmetry reduction over interchangeable pods (dfs and simulation only).
    #[arg(long)]
    pub symmetry: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A configuration file's error located in it is bad input; the others (an unknown built-in
/// name, an unreadable file, an override out of range) are usage errors.
fn config_failure(e: ConfigErrors) -> Failure {
    if e.0.iter().any(|e| e.line.is_some()) {
        Failure::input(e)
    } else {
        Failure::usage(e)
    }
}

fn threads_parser() -> impl TypedValueParser<Value = usize> {
    clap::value_parser!(u16)
        .range(1..=limits::THREADS as i64)
        .map(usize::from)
}

fn target_states_parser() -> impl TypedValueParser<Value = usize> {
    clap::value_parser!(u64)
        .range(1..)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn strategy_parser() -> impl TypedValueParser<Value = Strategy> {
    PossibleValuesParser::new(["bfs", "dfs", "simulation"])
        .map(|s| Strategy::parse(&s).expect("every possible value names a strategy"))
}

pub fn run(args: CheckArgs) -> Outcome {
    let model = args.model.model()?;
    let opts = RunOptions {
        strategy: args.strategy,
        threads: args.threads,
        target_states: args.target_states,
        seed: args.seed,
        symmetry: args.symmetry,
    };
    opts.check().map_err(Failure::Usage)?;
    let tty = std::io::stderr().is_terminal();
    let report = run::run(model, &opts, |states, unique, depth| {
        if tty {
            eprintln!("Checking. states={states}, unique={unique}, depth={depth}");
        }
    });
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).expect("reports serialize")
        );
    } else {
        out!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The human-readable report.
pub fn render(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let rate = if r.seconds > 0.0 {
        (r.unique_states as f64 / r.seconds) as u64
    } else {
        0
    };
    let _ = writeln!(
        s,
        "profile {}, config {}, strategy {}{}{}",
        r.profile,
        r.config,
        r.strategy,
        if r.symmetry { ", symmetry" } else { "" },
        if r.complete { "" } else { " (incomplete)" }
    );
    let _ = writeln!(
        s,
        "Done. states={}, unique={}, depth={}, sec={:.2}, unique states/s={}",
        r.states, r.unique_states, r.max_depth, r.seconds, rate
    );
    let width = r.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &r.properties {
        let _ = writeln!(s, "  {:<width$}  {}", p.name, p.status.as_str());
    }
    for p in &r.properties {
        if let Some(cx) = &p.counterexample {
            let _ = writeln!(s, "\nCounterexample to \"{}\":", p.name);
            for line in &cx.steps {
                let _ = writeln!(s, "  {line}");
            }
            let _ = writeln!(
                s,
                "  Action index path: {} (Explorer: http://127.0.0.1:3000/#/steps/{})",
                cx.action_path, cx.action_path
            );
        }
    }
    s
}
