//! `taintcheck bench model`: the model checker's speed (spec CHECK-1), against stateright's
//! two-phase commit example at a matched size, and the partial-order (MODEL-POR) and symmetry
//! (MODEL-SYM) reductions, each run measured in one process so the ratios compare like with like.

use super::emit;
use super::two_phase::{self, TwoPhaseRow};
use crate::cmd::args::ProfileArg;
use crate::cmd::output::outln;
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::reduction::Reduction;
use taintcheck_model::check::run::{run, RunOptions, Strategy};
use taintcheck_model::check::TaintSys;

#[derive(Args)]
pub struct ModelBench {
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Operation budget of the `three-pods` symmetry runs (its own 2 takes minutes).
    #[arg(long, default_value_t = 1)]
    symmetry_budget: u8,
    /// Resource managers of the two-phase commit reference (6: about the unreduced `default`'s
    /// unique states).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=12))]
    rms: u8,
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
    /// Stateright's two-phase commit example, DFS, one thread.
    two_phase: TwoPhaseRow,
    /// Unique states per second of `default` (DFS, one thread, no reduction) over the
    /// two-phase commit's: the per-state cost against stateright's own example.
    rate_vs_two_phase: f64,
    /// `default`'s DFS unique states without reduction over those with `por`.
    por_unique_state_ratio: f64,
    symmetry: Vec<SymmetryRatio>,
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
    reduction: &'static str,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    /// Wall seconds of the search, before the shortest-path pass.
    seconds: f64,
    unique_states_per_second: f64,
}

/// What `--symmetry` does to one configuration.
#[derive(Serialize)]
struct SymmetryRatio {
    config: &'static str,
    /// Unique states without symmetry over unique states with it.
    unique_state_ratio: f64,
    /// Seconds with symmetry over seconds without.
    time_ratio: f64,
}

pub fn model(b: &ModelBench) -> ExitCode {
    let profile = match b.behaviour.profile() {
        Ok(p) => p,
        Err(failure) => return failure.report(),
    };
    let builtin = |name: &str| CheckConfig::builtin(name).expect("a built-in configuration");
    let mut three = builtin("three-pods");
    three.budget = b.symmetry_budget;
    let with = |strategy, threads, symmetry| RunOptions {
        strategy,
        threads,
        symmetry,
        ..RunOptions::default()
    };
    let unreduced = RunOptions {
        reduction: Reduction::None,
        ..with(Strategy::Dfs, 1, false)
    };
    let runs = [
        ("default", builtin("default"), unreduced),
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
                    "{name}, {}, {threads}{symmetry}, reduction {} (budget {budget})",
                    r.strategy, r.reduction
                ),
                config: name.into(),
                budget,
                strategy: r.strategy,
                threads: options.threads,
                symmetry: options.symmetry,
                reduction: r.reduction,
                states: r.states,
                unique_states: r.unique_states,
                max_depth: r.max_depth,
                seconds: r.seconds,
                unique_states_per_second: r.unique_states as f64 / r.seconds.max(1e-9),
            }
        })
        .collect();
    let [plain, bfs1, bfs2, dfs1, _, pods, pods_sym, both, both_sym] = &rows[..] else {
        unreachable!("nine rows");
    };
    let two_phase = two_phase::run(b.rms);
    let reduction = |config, plain: &Row, sym: &Row| SymmetryRatio {
        config,
        unique_state_ratio: plain.unique_states as f64 / sym.unique_states.max(1) as f64,
        time_ratio: sym.seconds / plain.seconds.max(1e-9),
    };
    let result = ModelResult {
        profile: profile.name,
        symmetry_budget: b.symmetry_budget,
        two_thread_speedup: bfs1.seconds / bfs2.seconds.max(1e-9),
        rate_vs_two_phase: plain.unique_states_per_second
            / two_phase.unique_states_per_second.max(1e-9),
        por_unique_state_ratio: plain.unique_states as f64 / dfs1.unique_states.max(1) as f64,
        two_phase,
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
    let t = &r.two_phase;
    outln!(
        "| stateright two-phase commit, {} managers, dfs, 1 thread | | {} | | {:.2} | {:.0} |",
        t.rms,
        t.unique_states,
        t.seconds,
        t.unique_states_per_second,
    );
    outln!(
        "two threads: {:.2}x the one-thread BFS rate",
        r.two_thread_speedup
    );
    outln!(
        "per-state rate: default (dfs, 1 thread, no reduction) {:.2}x two-phase commit's",
        r.rate_vs_two_phase
    );
    outln!(
        "partial-order reduction on default (dfs): {:.2}x fewer unique states",
        r.por_unique_state_ratio
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
