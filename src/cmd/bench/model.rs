//! `taintcheck bench model`: the model checker's speed (spec CHECK-1) and the symmetry
//! reduction (MODEL-SYM), each run measured in one process so the ratios compare like with like.

use super::emit;
use crate::cmd::args::ProfileArg;
use crate::cmd::output::outln;
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::run::{run, RunOptions, Strategy};
use taintcheck_model::check::TaintSys;

#[derive(Args)]
pub struct ModelBench {
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Operation budget of the `three-pods` symmetry runs (its own 2 takes minutes).
    #[arg(long, default_value_t = 1)]
    symmetry_budget: u8,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// What `bench model` measured: one row per run, and the ratios the text prints.
#[derive(Serialize)]
struct ModelResult {
    profile: &'static str,
    symmetry_budget: u8,
    rows: Vec<Row>,
    /// The one-thread BFS time over the two-thread one.
    two_thread_speedup: f64,
    symmetry: Vec<Reduction>,
}

/// One measured run: its parameters and the checker's totals.
#[derive(Serialize)]
struct Row {
    label: String,
    config: String,
    budget: u8,
    strategy: &'static str,
    threads: usize,
    symmetry: bool,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    /// Wall seconds of the search, before the shortest-path pass.
    seconds: f64,
    unique_states_per_second: f64,
}

/// What `--symmetry` does to one configuration.
#[derive(Serialize)]
struct Reduction {
    config: &'static str,
    /// Unique states without symmetry over unique states with it.
    unique_state_ratio: f64,
    /// Seconds with symmetry over seconds without.
    time_ratio: f64,
}

pub fn model(b: &ModelBench) -> ExitCode {
    let profile = b.behaviour.profile;
    let builtin = |name: &str| CheckConfig::builtin(name).expect("a built-in configuration");
    let mut three = builtin("three-pods");
    three.budget = b.symmetry_budget;
    let with = |strategy, threads, symmetry| RunOptions {
        strategy,
        threads,
        symmetry,
        ..RunOptions::default()
    };
    let runs = [
        ("default", builtin("default"), with(Strategy::Bfs, 1, false)),
        ("default", builtin("default"), with(Strategy::Bfs, 2, false)),
        ("default", builtin("default"), with(Strategy::Dfs, 1, false)),
        ("default", builtin("default"), with(Strategy::Dfs, 2, false)),
        ("three-pods", three.clone(), with(Strategy::Dfs, 1, false)),
        ("three-pods", three, with(Strategy::Dfs, 1, true)),
        (
            "pods-and-nodes",
            builtin("pods-and-nodes"),
            with(Strategy::Dfs, 1, false),
        ),
        (
            "pods-and-nodes",
            builtin("pods-and-nodes"),
            with(Strategy::Dfs, 1, true),
        ),
    ];
    let rows: Vec<Row> = runs
        .into_iter()
        .map(|(name, config, options)| {
            let budget = config.budget;
            let r = run(TaintSys::new(profile, config), &options, |_, _, _| {});
            let threads = if options.threads == 1 {
                "1 thread".to_string()
            } else {
                format!("{} threads", options.threads)
            };
            let symmetry = if options.symmetry { ", symmetry" } else { "" };
            Row {
                label: format!(
                    "{name}, {}, {threads}{symmetry} (budget {budget})",
                    r.strategy
                ),
                config: name.into(),
                budget,
                strategy: r.strategy,
                threads: options.threads,
                symmetry: options.symmetry,
                states: r.states,
                unique_states: r.unique_states,
                max_depth: r.max_depth,
                seconds: r.seconds,
                unique_states_per_second: r.unique_states as f64 / r.seconds.max(1e-9),
            }
        })
        .collect();
    let [bfs1, bfs2, _, _, pods, pods_sym, both, both_sym] = &rows[..] else {
        unreachable!("eight rows");
    };
    let reduction = |config, plain: &Row, sym: &Row| Reduction {
        config,
        unique_state_ratio: plain.unique_states as f64 / sym.unique_states.max(1) as f64,
        time_ratio: sym.seconds / plain.seconds.max(1e-9),
    };
    let result = ModelResult {
        profile: profile.name,
        symmetry_budget: b.symmetry_budget,
        two_thread_speedup: bfs1.seconds / bfs2.seconds.max(1e-9),
        symmetry: vec![
            reduction("three-pods", pods, pods_sym),
            reduction("pods-and-nodes", both, both_sym),
        ],
        rows,
    };
    emit(b.json, &result, describe)
}

fn describe(r: &ModelResult) {
    outln!(
        "model checker, profile {} (wall seconds, before the shortest-path pass)",
        r.profile
    );
    outln!("| run | states | unique | depth | sec | unique states/s |");
    outln!("|---|---|---|---|---|---|");
    for row in &r.rows {
        outln!(
            "| {} | {} | {} | {} | {:.2} | {:.0} |",
            row.label,
            row.states,
            row.unique_states,
            row.max_depth,
            row.seconds,
            row.unique_states_per_second,
        );
    }
    outln!(
        "two threads: {:.2}x the one-thread BFS rate",
        r.two_thread_speedup
    );
    for s in &r.symmetry {
        outln!(
            "symmetry on {}: {:.2}x fewer unique states, {:.2}x the time",
            s.config,
            s.unique_state_ratio,
            s.time_ratio
        );
    }
}
