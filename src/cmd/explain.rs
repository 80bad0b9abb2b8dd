//! `taintcheck explain --node NODE.yaml --pod POD.yaml`: what the node's taints mean for the
//! pod, today and for a new pod (see `taintcheck_core::explain`).

use super::failure::{diagnostic_line, Failure, Outcome};
use crate::cmd::output::{out, outln};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use taintcheck_core::explain::{Eviction, Explanation};
use taintcheck_formats::manifest::{self, Located};

#[derive(Args)]
pub struct ExplainArgs {
    /// A manifest holding exactly one Node.
    #[arg(long, value_name = "NODE.yaml")]
    node: PathBuf,
    /// A manifest holding exactly one Pod.
    #[arg(long, value_name = "POD.yaml")]
    pod: PathBuf,
    /// Print the explanation as one JSON object.
    #[arg(long)]
    json: bool,
    /// Evaluate `Lt`/`Gt` tolerations (feature gate `TaintTolerationComparisonOperators`).
    #[arg(long)]
    comparison_operators: bool,
    /// Explain objects the API server would reject (upstream's matcher accepts more than
    /// validation does).
    #[arg(long)]
    no_validate: bool,
}

pub fn run(args: &ExplainArgs) -> Outcome {
    let node = load(&args.node, "Node", args)?.compact_node();
    let pod = load(&args.pod, "Pod", args)?.compact_pod();
    let (Some(node), Some(pod)) = (node, pod) else {
        unreachable!("load returns an object of the requested kind")
    };
    let explanation = Explanation::new(&node, &pod, args.comparison_operators);
    if args.json {
        match serde_json::to_string(&explanation) {
            Ok(text) => outln!("{text}"),
            Err(e) => unreachable!("an Explanation always serializes: {e}"),
        }
    } else {
        out!(
            "{}",
            render(
                &node.name,
                &pod.key.to_string(),
                &explanation,
                args.comparison_operators
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The one object of `kind` in `file`, validated unless `--no-validate`.
fn load(file: &Path, kind: &str, args: &ExplainArgs) -> Result<Located, Failure> {
    let read = manifest::read_file(file);
    let mut problems: Vec<String> = read.errors.iter().map(diagnostic_line).collect();
    if problems.is_empty() && !args.no_validate {
        problems.extend(
            read.objects
                .iter()
                .flat_map(|o| o.validate(args.comparison_operators))
                .map(|d| d.to_string()),
        );
    }
    let mut found: Vec<Located> = read
        .objects
        .into_iter()
        .filter(|o| o.kind() == kind)
        .collect();
    if problems.is_empty() && found.len() != 1 {
        problems.push(format!(
            "{}: expected exactly one {kind}, found {}",
            file.display(),
            found.len()
        ));
    }
    if !problems.is_empty() {
        return Err(Failure::Input(problems.join("\n")));
    }
    Ok(found.remove(0))
}

/// The human-readable form: a table of taints, then the verdicts.
fn render(node: &str, pod: &str, e: &Explanation, comparison_operators: bool) -> String {
    let mut out = format!(
        "node {node}, pod {pod} (comparison operators {})\n\n",
        if comparison_operators { "on" } else { "off" }
    );
    if e.taints.is_empty() {
        out.push_str("the node has no taints\n");
    } else {
        let width = e
            .taints
            .iter()
            .map(|t| t.taint.len())
            .max()
            .unwrap_or(0)
            .max(5);
        out.push_str(&format!(
            "{:width$}  {:16}  {:16}  FOR\n",
            "TAINT", "EFFECT", "TOLERATED BY"
        ));
        for t in &e.taints {
            let (by, duration) = match t.toleration_index {
                None => ("-".to_owned(), "-".to_owned()),
                Some(i) => (
                    format!("tolerations[{i}]"),
                    t.seconds.map_or("forever".to_owned(), |s| format!("{s}s")),
                ),
            };
            out.push_str(&format!(
                "{:width$}  {:16}  {:16}  {duration}\n",
                t.taint, t.effect, by
            ));
        }
    }
    out.push('\n');
    let min = e
        .min_toleration_seconds
        .map_or("forever".to_owned(), |s| format!("{s}s"));
    let has_no_execute = e.taints.iter().any(|t| t.effect == "NoExecute");
    out.push_str(&match (has_no_execute, e.all_tolerated) {
        (false, _) => "NoExecute taints: none\n".to_owned(),
        (true, true) => format!("NoExecute taints: all tolerated, minimum toleration time {min}\n"),
        (true, false) => "NoExecute taints: not all tolerated\n".to_owned(),
    });
    out.push_str(&match (e.eviction, e.eviction_after_seconds) {
        (Eviction::Immediate, _) => "running pod: evicted immediately\n".to_owned(),
        (Eviction::After, Some(s)) => format!("running pod: evicted after {s} seconds\n"),
        _ => "running pod: never evicted\n".to_owned(),
    });
    out.push_str(&match &e.unschedulable_reason {
        None => "new pod: schedulable\n".to_owned(),
        Some(reason) => format!("new pod: not schedulable: {reason}\n"),
    });
    out.push_str(&format!(
        "untolerated PreferNoSchedule taints: {}\n",
        e.prefer_no_schedule_untolerated
    ));
    out
}
