//! `taintcheck check`: model-check a profile on a configuration and print the verdicts.

use super::args::ProfileArg;
use super::failure::{Failure, Outcome};
use crate::cmd::output::{out, outln};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use taintcheck_formats::limits;
use taintcheck_formats::taint_syntax::checked_no_execute;
use taintcheck_model::check::apart;
use taintcheck_model::check::config::{CheckConfig, ConfigErrors, OpKind, Overrides};
use taintcheck_model::check::expectation::Expectation;
use taintcheck_model::check::itf_state;
use taintcheck_model::check::partition::{self, Partition};
use taintcheck_model::check::realtime;
use taintcheck_model::check::reduction::Reduction;
use taintcheck_model::check::run::{self, Report, RunOptions, Status, Strategy};
use taintcheck_model::check::TaintSys;

mod junit;

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
    /// Check every pod: without it each toleration class keeps only as many pods as a verdict
    /// can depend on (MODEL-CUTOFF), and the report says what was cut.
    #[arg(long)]
    pub no_cutoff: bool,
    /// Keep only these pods, comma-separated (what `check --each-class` prints for a path
    /// found in one class's run).
    #[arg(long, value_delimiter = ',', value_name = "PODS")]
    pub only: Option<Vec<String>>,
}

impl ModelArgs {
    /// The model, or why the arguments or the configuration file do not give one.
    pub fn model(&self) -> Result<TaintSys, Failure> {
        let mut config = CheckConfig::load(&self.config).map_err(config_failure)?;
        let overrides = self.overrides().map_err(Failure::Usage)?;
        config.apply(&overrides).map_err(config_failure)?;
        if let Some(only) = &self.only {
            if let Some(missing) = only
                .iter()
                .find(|n| !config.pods.iter().any(|p| p.name == **n))
            {
                return Err(Failure::Usage(format!(
                    "--only: Not found: {missing:?}: not a pod of configuration {}",
                    config.name
                )));
            }
            config.pods.retain(|p| only.contains(&p.name));
        }
        let profile = self.behaviour.profile()?;
        Ok(if self.no_cutoff {
            TaintSys::new(profile, config)
        } else {
            TaintSys::at_cutoff(profile, config)
        })
    }

    /// The options as a command line that selects the same model: `--config C --profile P`
    /// and every override given, for the commands `check` and `report` print.
    pub fn command_line(&self) -> String {
        let mut s = format!(
            "--config {} --profile {}",
            self.config,
            self.behaviour.profile().map_or("latest", |p| p.name)
        );
        let mut opt = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                s.push_str(&format!(" --{name} {v}"));
            }
        };
        let list = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.join(","));
        opt("nodes", self.nodes.map(|n| n.to_string()));
        opt("pods", self.pods.map(|n| n.to_string()));
        opt("taint-keys", list(&self.taint_keys));
        opt("seconds", list(&self.seconds));
        opt("operations", list(&self.operations));
        opt("budget", self.budget.map(|n| n.to_string()));
        opt("step-ms", self.step_ms.map(|n| n.to_string()));
        opt("horizon-ms", self.horizon_ms.map(|n| n.to_string()));
        opt("workers", self.workers.map(|n| n.to_string()));
        opt(
            "node-channel-capacity",
            self.node_channel_capacity.map(|n| n.to_string()),
        );
        opt(
            "pod-channel-capacity",
            self.pod_channel_capacity.map(|n| n.to_string()),
        );
        if self.no_cutoff {
            s.push_str(" --no-cutoff");
        }
        if let Some(only) = &self.only {
            s.push_str(&format!(" --only {}", only.join(",")));
        }
        s
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
                checked_no_execute(key).map_err(|problem| {
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
    /// Stop after about this many states, at least 1 (verdicts then say "not refuted within N
    /// states").
    #[arg(long, value_parser = target_states_parser())]
    pub target_states: Option<usize>,
    /// Seed of the simulation strategy.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Symmetry reduction over interchangeable pods (dfs and simulation only).
    #[arg(long)]
    pub symmetry: bool,
    /// Check each toleration class in a run of its own and combine the verdicts (MODEL-CUTOFF):
    /// what a node of many classes needs. Not with a client rate limit or an
    /// `at_most_deletions` claim, which couple the classes, nor with `--partition`.
    #[arg(long)]
    pub each_class: bool,
    /// Explore share I of N (0 <= I < N; bfs and dfs): `taintcheck merge` combines the N
    /// `--json` reports into the whole run's verdicts (docs/scale-out.md).
    #[arg(long, value_name = "I/N", value_parser = Partition::parse)]
    pub partition: Option<Partition>,
    /// Partial-order reduction: por (explore an invisible, independent internal step alone
    /// where there is one; the same verdicts) or none (every interleaving).
    #[arg(long, default_value = "por", value_parser = reduction_parser())]
    pub reduction: Reduction,
    /// Print the report as JSON (steps as fields, examples of `sometimes` properties included).
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when an `always` property is violated or a `sometimes` property has no example
    /// (for CI; without it a completed run exits 0 whatever the verdicts).
    #[arg(long)]
    pub gate: bool,
    /// Exit 1 unless every verdict is the one FILE expects (YAML or JSON: property id ->
    /// holds | violated | example-found | no-example; unlisted: holds or example-found).
    #[arg(long, value_name = "FILE")]
    pub expect: Option<PathBuf>,
    /// Write a JUnit XML report to FILE: one test case per property.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write each counterexample and example to DIR in the Informal Trace Format (ITF).
    #[arg(long, value_name = "DIR")]
    pub itf: Option<PathBuf>,
    /// Write each counterexample to DIR as a real-time scenario and the proxy schedule that
    /// keeps the real controller in its order (`<config>-<id>.yaml`, `.json`; PROXY-11), for
    /// `taintcheck upstream --proxy --schedule` and `reproduce`.
    #[arg(long, value_name = "DIR")]
    pub schedule_out: Option<PathBuf>,
}

/// A configuration file's error located in it is bad input; the others (an unknown built-in
/// name, an unreadable file, an override out of range) are usage errors.
pub(super) fn config_failure(e: ConfigErrors) -> Failure {
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

fn reduction_parser() -> impl TypedValueParser<Value = Reduction> {
    PossibleValuesParser::new(["none", "por"])
        .map(|s| Reduction::parse(&s).expect("every possible value names a reduction"))
}

fn strategy_parser() -> impl TypedValueParser<Value = Strategy> {
    PossibleValuesParser::new(["bfs", "dfs", "simulation"])
        .map(|s| Strategy::parse(&s).expect("every possible value names a strategy"))
}

/// Reads and parses `--expect`'s file: unreadable is a usage error, malformed bad input.
fn load_expectation(path: &Path, model: &TaintSys) -> Result<Expectation, Failure> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Failure::usage(format!("{file}: {e}")))?;
    Expectation::parse_for(&file, &text, &model.catalogue()).map_err(Failure::input)
}

pub fn run(args: CheckArgs) -> Outcome {
    let model = args.model.model()?;
    let expectation = args
        .expect
        .as_deref()
        .map(|path| load_expectation(path, &model))
        .transpose()?;
    let opts = RunOptions {
        strategy: args.strategy,
        threads: args.threads,
        target_states: args.target_states,
        seed: args.seed,
        symmetry: args.symmetry,
        reduction: args.reduction,
    };
    opts.check_for(&model).map_err(Failure::Usage)?;
    let classes = args
        .symmetry
        .then(|| model.initial_state().symmetry.describe());
    let tty = std::io::stderr().is_terminal();
    let progress = |states, unique, depth| {
        if tty {
            eprintln!("Checking. states={states}, unique={unique}, depth={depth}");
        }
    };
    if args.schedule_out.is_some() && (args.each_class || args.partition.is_some()) {
        return Err(Failure::usage(
            "--schedule-out: not with --each-class or --partition: a schedule is of one model's \
             path",
        ));
    }
    let whole = args.schedule_out.as_ref().map(|_| model.clone());
    let mut from = BTreeMap::new();
    let report = match args.partition {
        Some(_) if args.each_class => {
            return Err(Failure::usage(
                "--each-class: not with --partition: a share is of one run",
            ))
        }
        Some(part) => {
            partition::check_options(&opts).map_err(Failure::Usage)?;
            partition::run(model, &opts, part, progress)
        }
        None if args.each_class => {
            if let Some(why) = apart::coupled(&model) {
                return Err(Failure::usage(format!("--each-class: {why}")));
            }
            let runs = apart::split(&model)
                .into_iter()
                .map(|(pods, m)| (pods, run::run(m, &opts, progress)))
                .collect();
            let (report, paths_from) = apart::combine(runs);
            from = paths_from;
            report
        }
        None => run::run(model, &opts, progress),
    };
    let differences = expectation
        .as_ref()
        .map(|e| e.differences(&report))
        .unwrap_or_default();
    if let Some(path) = &args.junit {
        let xml = junit::render(&report, expectation.as_ref());
        let config = Path::new(&args.model.config);
        crate::cmd::output::write_file("--junit", path, &xml, &[config])?;
    }
    if let Some(dir) = &args.itf {
        write_itf(dir, &report, &args.model, &from)?;
    }
    if let (Some(dir), Some(model)) = (&args.schedule_out, &whole) {
        write_schedules(dir, &report, model)?;
    }
    let verdict = if let Some(path) = &args.expect {
        expectation_summary(path, &differences)
    } else {
        gate_summary(&report, args.gate)
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).expect("reports serialize")
        );
        eprint!("{verdict}");
    } else {
        out!("{}", render(&report, &args.model, &from));
        if let Some(classes) = &classes {
            outln!("\nSymmetry (PROP-SYM): {classes}");
        }
        out!("{verdict}");
    }
    let finding = if args.expect.is_some() {
        !differences.is_empty()
    } else {
        args.gate && gate_findings(&report) > 0
    };
    Ok(if finding {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The properties `--gate` fails on.
fn gate_findings(r: &Report) -> usize {
    r.properties
        .iter()
        .filter(|p| p.status.fails_gate())
        .count()
}

/// The closing lines without `--expect`: what was found and what exit code it gives.
fn gate_summary(r: &Report, gate: bool) -> String {
    let violated = r
        .properties
        .iter()
        .filter(|p| p.status == Status::Violated)
        .count();
    let no_example = gate_findings(r) - violated;
    let always = r.properties.iter().filter(|p| p.kind == "always").count();
    let sometimes = r.properties.len() - always;
    let not_applicable = r
        .properties
        .iter()
        .filter(|p| p.status == Status::NotApplicable)
        .count();
    let mut s = format!(
        "\n{violated} of {always} `always` properties violated, {no_example} of {sometimes} \
         `sometimes` properties without an example"
    );
    if not_applicable > 0 {
        s.push_str(&format!(
            " ({not_applicable} more not applicable to this configuration)"
        ));
    }
    if !r.complete {
        s.push_str(&format!(
            " (incomplete run: not refuted within {} states)",
            r.unique_states
        ));
    }
    s.push_str(match (gate, violated + no_example > 0) {
        (true, true) => ". --gate: exit 1.\n",
        (true, false) => ". --gate: passed.\n",
        (false, true) => {
            ". Exit 0: --gate fails CI on these, --expect FILE asserts a verdict set.\n"
        }
        (false, false) => ".\n",
    });
    s
}

/// The closing lines with `--expect`: met, or every difference.
fn expectation_summary(path: &Path, differences: &[String]) -> String {
    if differences.is_empty() {
        return format!("\nExpectation {}: met.\n", path.display());
    }
    let mut s = format!(
        "\nExpectation {}: {} difference(s), exit 1:\n",
        path.display(),
        differences.len()
    );
    for d in differences {
        s.push_str(&format!("  {d}\n"));
    }
    s
}

/// `--itf DIR`: one file per counterexample and example, `<profile>-<config>-<ID>.itf.json`.
fn write_itf(
    dir: &Path,
    r: &Report,
    args: &ModelArgs,
    from: &BTreeMap<String, Vec<String>>,
) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::usage(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    for p in &r.properties {
        let Some(path) = p.path() else { continue };
        let what = if p.counterexample.is_some() {
            "counterexample to"
        } else {
            "example of"
        };
        let description = format!(
            "{what} \"{}\" (profile {}, config {}): {} steps",
            p.name,
            r.profile,
            r.config,
            path.steps.len()
        );
        let source = format!("taintcheck check {}", command_line(args, from, p.id));
        let trace = itf_state::trace(&path.states, &source, &description);
        let file = dir.join(format!("{}-{}-{}.itf.json", r.profile, r.config, p.id));
        let text = serde_json::to_string_pretty(&trace.to_json()).expect("ITF serializes");
        crate::cmd::output::write_file("--itf", &file, &text, &[])?;
    }
    Ok(())
}

/// `--schedule-out DIR`: per counterexample, `<config>-<ID>.yaml` (the scenario) and
/// `<config>-<ID>.json` (the schedule); a path with no real-time twin is said on stderr.
fn write_schedules(dir: &Path, r: &Report, model: &TaintSys) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::usage(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    for p in &r.properties {
        let Some(path) = &p.counterexample else {
            continue;
        };
        match realtime::realtime(model, path, p.id) {
            Ok(rt) => {
                let stem = format!("{}-{}", r.config, p.id.to_lowercase());
                let yaml = dir.join(format!("{stem}.yaml"));
                crate::cmd::output::write_file("--schedule-out", &yaml, &rt.scenario, &[])?;
                let json = dir.join(format!("{stem}.json"));
                crate::cmd::output::write_file(
                    "--schedule-out",
                    &json,
                    &rt.schedule.to_json(),
                    &[],
                )?;
                for note in &rt.notes {
                    eprintln!("{}: {note}", p.id);
                }
            }
            Err(why) => eprintln!("{}: no real-time scenario: {why}", p.id),
        }
    }
    Ok(())
}

/// The options that select the model a property's path was found in: with `--each-class`,
/// its class's pods only.
fn command_line(args: &ModelArgs, from: &BTreeMap<String, Vec<String>>, id: &str) -> String {
    match from.get(id) {
        Some(pods) => ModelArgs {
            only: Some(pods.clone()),
            ..args.clone()
        }
        .command_line(),
        None => args.command_line(),
    }
}

/// The human-readable report: totals, a verdict per property, then each counterexample with
/// the commands that show it in the Explorer.
pub fn render(r: &Report, args: &ModelArgs, from: &BTreeMap<String, Vec<String>>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let rate = if r.seconds > 0.0 {
        (r.unique_states as f64 / r.seconds) as u64
    } else {
        0
    };
    let part = r.partition.as_ref().map_or(String::new(), |p| {
        format!(
            ", partition {}/{} ({} of {} states at depth {})",
            p.index, p.count, p.roots, p.cut_states, p.cut_depth
        )
    });
    let _ = writeln!(
        s,
        "profile {}, config {}, strategy {}{}{part}{}",
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
    if let Some(cutoff) = &r.cutoff {
        let _ = writeln!(s, "{}", cutoff.describe());
    }
    let width = r.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &r.properties {
        let _ = writeln!(s, "  {:<width$}  {}", p.name, r.verdict_line(p));
    }
    for p in &r.properties {
        if let Some(cx) = &p.counterexample {
            let _ = writeln!(s, "\nCounterexample to \"{}\":", p.name);
            for line in cx.lines() {
                let _ = writeln!(s, "  {line}");
            }
            let _ = writeln!(
                s,
                "  Action index path: {} (Explorer: http://127.0.0.1:3000/#/steps/{})",
                cx.action_path, cx.action_path
            );
            let _ = writeln!(
                s,
                "  Explore it: taintcheck explore {} --property {}",
                command_line(args, from, p.id),
                p.id
            );
        }
    }
    s
}
