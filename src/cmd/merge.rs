//! `taintcheck merge`: the verdicts of a run split with `check --partition I/N`, from the N
//! parts' `--json` reports. Spec: CHECK-6.

use super::failure::{Failure, Outcome};
use crate::cmd::output::{out, outln};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use taintcheck_model::check::partition::{self, Merged};
use taintcheck_model::check::run::Status;
use taintcheck_model::check::trace::step_line;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The parts' reports (`check --partition I/N --json > part-I.json`), all N of them.
    #[arg(required = true, value_name = "PART.json")]
    pub parts: Vec<PathBuf>,
    /// Print the merged report as JSON (`check --json`'s shape, `parts` for `partition`).
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when an `always` property is violated or a `sometimes` property has no example.
    #[arg(long)]
    pub gate: bool,
}

pub fn run(args: &MergeArgs) -> Outcome {
    let mut parts = Vec::new();
    for path in &args.parts {
        let file = path.display().to_string();
        let text = super::read_input(path)?;
        let report: Value = serde_json::from_str(&text)
            .map_err(|e| Failure::input(format!("{file}:{}: {e}", e.line())))?;
        parts.push((file, report));
    }
    let merged = partition::merge(&parts).map_err(Failure::input)?;
    let findings = merged
        .properties
        .iter()
        .filter(|p| p.status.fails_gate())
        .count();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&merged).expect("merged reports serialize")
        );
    } else {
        out!("{}", render(&merged));
    }
    Ok(if args.gate && findings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The verdicts, then each counterexample's steps.
fn render(m: &Merged) -> String {
    use std::fmt::Write;
    let name = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "merged {} parts: profile {}, config {}, strategy {}{}{}",
        m.parts,
        name(&m.profile),
        name(&m.config),
        name(&m.strategy),
        if m.symmetry == Value::Bool(true) {
            ", symmetry"
        } else {
            ""
        },
        if m.complete { "" } else { " (incomplete)" }
    );
    let _ = writeln!(
        s,
        "states={}, unique={} (sums over the parts), depth={}, sec={:.2} (slowest part)",
        m.states, m.unique_states, m.max_depth, m.seconds
    );
    if let Some(cutoff) = &m.cutoff {
        let _ = writeln!(s, "{}", cutoff.describe());
    }
    let width = m.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &m.properties {
        let verdict = match p.status {
            Status::NotRefuted => format!("not refuted within {} states", m.unique_states),
            Status::NoExampleYet => format!("no example within {} states", m.unique_states),
            Status::NotApplicable => {
                format!("not applicable: {}", p.reason.as_deref().unwrap_or("?"))
            }
            s => s.as_str().to_string(),
        };
        let _ = writeln!(s, "  {:<width$}  {verdict}", p.name);
    }
    for p in &m.properties {
        let Some(cx) = &p.counterexample else {
            continue;
        };
        let _ = writeln!(s, "\nCounterexample to \"{}\":", p.name);
        for step in cx["steps"].as_array().into_iter().flatten() {
            let outcome: Vec<String> = step["outcome"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| o.as_str().unwrap_or_default().to_string())
                .collect();
            let line = step_line(
                step["number"].as_u64().unwrap_or(0) as usize,
                step["time_ms"].as_i64().unwrap_or(0),
                step["action"].as_str().unwrap_or_default(),
                &outcome,
            );
            let _ = writeln!(s, "  {line}");
        }
        let _ = writeln!(
            s,
            "  Action index path: {}",
            cx["action_path"].as_str().unwrap_or_default()
        );
    }
    s
}
