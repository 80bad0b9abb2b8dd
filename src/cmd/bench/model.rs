//! `taintcheck bench model`: the model checker's speed (spec CHECK-1) and the symmetry
//! reduction (MODEL-SYM), each run measured in one process so the ratios compare like with like.

use crate::cmd::args::ProfileArg;
use clap::Args;
use std::process::ExitCode;
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::run::{run, Report, RunOptions, Strategy};
use taintcheck_model::check::TaintSys;

#[derive(Args)]
pub struct ModelBench {
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Operation budget of the `three-pods` symmetry runs (its own 2 takes minutes).
    #[arg(long, default_value_t = 1)]
    symmetry_budget: u8,
}

/// One measured configuration.
struct Row {
    label: String,
    config: CheckConfig,
    options: RunOptions,
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
    let rows = [
        (
            "default, bfs, 1 thread",
            builtin("default"),
            with(Strategy::Bfs, 1, false),
        ),
        (
            "default, bfs, 2 threads",
            builtin("default"),
            with(Strategy::Bfs, 2, false),
        ),
        (
            "default, dfs, 1 thread",
            builtin("default"),
            with(Strategy::Dfs, 1, false),
        ),
        (
            "default, dfs, 2 threads",
            builtin("default"),
            with(Strategy::Dfs, 2, false),
        ),
        (
            "three-pods, dfs, 1 thread",
            three.clone(),
            with(Strategy::Dfs, 1, false),
        ),
        (
            "three-pods, dfs, 1 thread, symmetry",
            three,
            with(Strategy::Dfs, 1, true),
        ),
        (
            "pods-and-nodes, dfs, 1 thread",
            builtin("pods-and-nodes"),
            with(Strategy::Dfs, 1, false),
        ),
        (
            "pods-and-nodes, dfs, 1 thread, symmetry",
            builtin("pods-and-nodes"),
            with(Strategy::Dfs, 1, true),
        ),
    ]
    .map(|(label, config, options)| Row {
        label: format!("{label} (budget {})", config.budget),
        config,
        options,
    });
    println!(
        "model checker, profile {} (wall seconds, before the shortest-path pass)",
        profile.name
    );
    println!("| run | states | unique | depth | sec | unique states/s |");
    println!("|---|---|---|---|---|---|");
    let mut reports: Vec<Report> = Vec::new();
    for row in rows {
        let report = run(
            TaintSys::new(profile, row.config),
            &row.options,
            |_, _, _| {},
        );
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.0} |",
            row.label,
            report.states,
            report.unique_states,
            report.max_depth,
            report.seconds,
            report.unique_states as f64 / report.seconds.max(1e-9),
        );
        reports.push(report);
    }
    let [bfs1, bfs2, _, _, pods, pods_sym, both, both_sym] = &reports[..] else {
        unreachable!("eight rows");
    };
    println!(
        "two threads: {:.2}x the one-thread BFS rate",
        bfs1.seconds / bfs2.seconds.max(1e-9)
    );
    for (name, plain, sym) in [
        ("three-pods", pods, pods_sym),
        ("pods-and-nodes", both, both_sym),
    ] {
        println!(
            "symmetry on {name}: {:.2}x fewer unique states, {:.2}x the time",
            plain.unique_states as f64 / sym.unique_states.max(1) as f64,
            sym.seconds / plain.seconds.max(1e-9),
        );
    }
    ExitCode::SUCCESS
}
