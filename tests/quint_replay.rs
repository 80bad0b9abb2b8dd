//! Quint → Rust cross-check: traces simulated from the independent Quint specification
//! (`specs/quint/taintmanager.qnt`) are replayed in the stateright model
//! (`taintcheck_model::check`).
//!
//! Each Quint state is projected on the variables both models share (`Projection`,
//! specs/quint/README.md "Cross-check"). The replay keeps the set of Rust states whose
//! projection equals the current Quint state's. Steps that leave the projection unchanged
//! (dispatches, worker phases, timer firings) may be interleaved differently on the two sides;
//! each Quint step that changes the projection must be matched by one Rust step, possibly after
//! Rust steps that leave the projection unchanged, reaching a state with the same projection. A
//! trace that cannot be matched is a disagreement: the test prints its first differing step, the
//! Quint action and the first differing variable against the nearest Rust successor.
//!
//! Quint runs with its TypeScript backend, installed from `specs/quint/package-lock.json`
//! (`npm ci`) when `node_modules` is missing. Without node/npm the test says it did not run, and
//! fails if `TAINTCHECK_REQUIRE_QUINT=1`. `TAINTCHECK_QUINT_TRACES` (default 2) and
//! `TAINTCHECK_QUINT_STEPS` (default 50) size the run; `TAINTCHECK_QUINT_ITF_DIR` replays the
//! `*.itf.json` files of a directory instead of simulating (file names start with the module,
//! e.g. `latest_default_0.itf.json`).

#[path = "quint_support/itf.rs"]
mod itf;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use itf::{PodView, Projection, QuintState};
use stateright::Model;
use taintcheck_model::check::properties::{Flag, Witness};
use taintcheck_model::check::{CheckConfig, SysState, TaintSys};
use taintcheck_model::profile::Profile;

/// The (Quint module, Rust profile, Rust configuration) pairs of `specs/quint/profiles.qnt`.
const CASES: [(&str, &str, &str); 12] = [
    ("v1_18_default", "v1.18", "default"),
    ("v1_18_timer_vs_cancel", "v1.18", "timer-vs-cancel"),
    ("v1_18_failing_delete", "v1.18", "failing-delete"),
    ("v1_18_toleration_change", "v1.18", "toleration-change"),
    ("latest_default", "latest", "default"),
    ("latest_timer_vs_cancel", "latest", "timer-vs-cancel"),
    ("latest_failing_delete", "latest", "failing-delete"),
    ("latest_toleration_change", "latest", "toleration-change"),
    ("fixed_default", "fixed", "default"),
    ("fixed_timer_vs_cancel", "fixed", "timer-vs-cancel"),
    ("fixed_failing_delete", "fixed", "failing-delete"),
    ("fixed_toleration_change", "fixed", "toleration-change"),
];

/// Rust states kept per Quint state; beyond it the trace counts as inconclusive, not agreeing.
const FRONTIER_CAP: usize = 50_000;

fn project(s: &SysState) -> Projection {
    let taint_keys = |node: &taintcheck_model::api::Node| -> Vec<String> {
        node.no_execute_taints()
            .map(|t| t.key.to_string())
            .collect()
    };
    let pod = |p: &taintcheck_model::api::Pod, dt: bool| PodView {
        uid: p
            .uid
            .0
            .rsplit('-')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(-1),
        node: p.node_name.as_deref().unwrap_or("").to_string(),
        tolerations: p
            .tolerations
            .iter()
            .map(|t| (t.key.to_string(), t.seconds.unwrap_or(-1)))
            .collect(),
        disruption_target: dt,
    };
    Projection {
        now: s.now.0,
        budget: i64::from(s.env.budget),
        fail_next: s.env.fail_next,
        api_nodes: s
            .api
            .nodes
            .iter()
            .map(|(k, n)| (k.to_string(), taint_keys(&n.node)))
            .collect(),
        api_pods: s
            .api
            .pods
            .iter()
            .map(|(k, p)| (k.name.to_string(), pod(&p.pod, p.disruption_target)))
            .collect(),
        node_cache: s
            .nodes
            .cache
            .iter()
            .map(|(k, n)| (k.to_string(), taint_keys(&n.node)))
            .collect(),
        pod_cache: s
            .pods
            .cache
            .iter()
            .map(|(k, p)| (k.name.to_string(), pod(&p.pod, false)))
            .collect(),
        nodes_pending: s.nodes.pending.len(),
        pods_pending: s.pods.pending.len(),
        tainted_nodes: s
            .ctrl
            .tainted_nodes()
            .iter()
            .map(|(k, ts)| {
                (
                    k.to_string(),
                    ts.iter().map(|t| t.key.to_string()).collect(),
                )
            })
            .collect(),
        violated: [
            (Flag::EvictAfterRemoval, "EVICT-1"),
            (Flag::Premature, "EVICT-2"),
            (Flag::UidSafety, "UID-1"),
            (Flag::HonestCancel, "CANCEL-1"),
        ]
        .into_iter()
        .filter(|(f, _)| s.history.violated & f.bit() != 0)
        .map(|(_, id)| id.to_string())
        .collect(),
        witnessed: [
            (Witness::ImmediateEviction, "SOME-1"),
            (Witness::SecondsEviction, "SOME-2"),
            (Witness::CancelledTimer, "SOME-3"),
            (Witness::RetriedDeletion, "SOME-4"),
        ]
        .into_iter()
        .filter(|(w, _)| s.history.witnessed & w.bit() != 0)
        .map(|(_, id)| id.to_string())
        .collect(),
    }
}

/// How one trace replayed.
enum Verdict {
    /// Every Quint step matched: (steps, steps that changed the projection).
    Agrees(usize, usize),
    /// The first Quint step no Rust behaviour matches, explained.
    Disagrees(String),
    /// The frontier grew past `FRONTIER_CAP`.
    Inconclusive(usize),
}

fn successors(model: &TaintSys, s: &SysState) -> Vec<SysState> {
    let mut actions = Vec::new();
    model.actions(s, &mut actions);
    actions
        .into_iter()
        .filter_map(|a| model.next_state(s, a))
        .collect()
}

// The states' interior mutability is their cached hash (`Shared`), which `Eq` and `Hash` ignore.
#[allow(clippy::mutable_key_type)]
fn replay(model: &TaintSys, trace: &[QuintState]) -> Verdict {
    let Some(start) = trace.iter().position(|q| q.settled) else {
        return Verdict::Agrees(0, 0);
    };
    let init = model.init_states().remove(0);
    if let Some((var, quint, rust)) = trace[start].projection.first_difference(&project(&init)) {
        return Verdict::Disagrees(format!(
            "step {start} (end of MODEL-INIT): `{var}` is {quint} in Quint, {rust} in Rust"
        ));
    }
    let mut frontier = vec![init];
    let mut changed = 0;
    for i in start + 1..trace.len() {
        let (before, target) = (&trace[i - 1].projection, &trace[i].projection);
        if target == before {
            continue;
        }
        changed += 1;
        // Close the frontier under projection-preserving Rust steps, collecting the successors
        // that reach the target projection.
        let mut seen: HashSet<SysState> = frontier.iter().cloned().collect();
        let mut todo = frontier;
        let mut next: Vec<SysState> = Vec::new();
        let mut next_seen: HashSet<SysState> = HashSet::new();
        let mut nearest: Option<(usize, Projection)> = None;
        while let Some(s) = todo.pop() {
            for t in successors(model, &s) {
                let p = project(&t);
                if &p == before {
                    if seen.insert(t.clone()) {
                        if seen.len() > FRONTIER_CAP {
                            return Verdict::Inconclusive(i);
                        }
                        todo.push(t);
                    }
                } else if &p == target {
                    if next_seen.insert(t.clone()) {
                        next.push(t);
                    }
                } else {
                    let d = p.distance(target);
                    if nearest.as_ref().is_none_or(|(n, _)| d < *n) {
                        nearest = Some((d, p));
                    }
                }
            }
        }
        if next.is_empty() {
            let detail = match nearest {
                Some((_, p)) => match target.first_difference(&p) {
                    Some((var, quint, rust)) => {
                        format!("`{var}` is {quint} in Quint, {rust} in the nearest Rust successor")
                    }
                    None => "no difference (unreachable)".to_string(),
                },
                None => "the Rust state has no successor".to_string(),
            };
            return Verdict::Disagrees(format!(
                "step {i} (Quint action {}): no Rust step reaches it; {detail}",
                trace[i].action
            ));
        }
        frontier = next;
    }
    Verdict::Agrees(trace.len() - start, changed)
}

/// The replay is not vacuous: the same trace with one projection-changing step moved 1 ms later
/// must disagree.
fn assert_catches_a_wrong_step(model: &TaintSys, trace: &[QuintState], module: &str) {
    let Some(i) = (1..trace.len())
        .rev()
        .find(|&i| trace[i].settled && trace[i].projection != trace[i - 1].projection)
    else {
        return;
    };
    let mut wrong = trace[..=i].to_vec();
    wrong[i].projection.now += 1;
    assert!(
        matches!(replay(model, &wrong), Verdict::Disagrees(_)),
        "{module}: a trace with step {i} 1 ms late still replays"
    );
}

fn quint_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/quint")
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Installs Quint from the lock file when missing; `Err` says why Quint cannot run.
fn ensure_quint(dir: &Path) -> Result<(), String> {
    let ok = |cmd: &mut Command| cmd.output().map(|o| o.status.success()).unwrap_or(false);
    if !ok(Command::new("node").arg("--version")) {
        return Err("node is not installed".into());
    }
    if !dir.join("node_modules/@informalsystems/quint").exists() {
        let out = Command::new("npm")
            .arg("ci")
            .current_dir(dir)
            .output()
            .map_err(|e| format!("npm: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`npm ci` in specs/quint failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(())
}

/// Simulates `module` and returns its traces (file contents).
fn simulate(dir: &Path, module: &str, out: &Path, traces: usize, steps: usize) -> Vec<String> {
    let pattern = out.join(format!("{module}_{{seq}}.itf.json"));
    let status = Command::new(dir.join("node_modules/.bin/quint"))
        .args(["run", "--backend", "typescript", "--main", module])
        .args(["--max-samples", &traces.to_string()])
        .args(["--n-traces", &traces.to_string()])
        .args(["--max-steps", &steps.to_string()])
        .arg("--out-itf")
        .arg(&pattern)
        .arg("profiles.qnt")
        .current_dir(dir)
        .output()
        .expect("runs quint");
    assert!(
        status.status.success(),
        "quint run {module} failed: {}{}",
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
    read_dir(out, module)
}

fn read_dir(dir: &Path, module: &str) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("reads the ITF directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{module}_")) && n.ends_with(".itf.json"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("reads a trace"))
        .collect()
}

#[test]
fn quint_traces_replay_in_the_rust_model() {
    let dir = quint_dir();
    let given = std::env::var_os("TAINTCHECK_QUINT_ITF_DIR").map(PathBuf::from);
    if given.is_none() {
        if let Err(why) = ensure_quint(&dir) {
            let required = std::env::var("TAINTCHECK_REQUIRE_QUINT").as_deref() == Ok("1");
            eprintln!("quint_replay DID NOT RUN: {why}");
            assert!(
                !required,
                "TAINTCHECK_REQUIRE_QUINT=1 but Quint cannot run: {why}"
            );
            return;
        }
    }
    let traces = env_usize("TAINTCHECK_QUINT_TRACES", 2);
    let steps = env_usize("TAINTCHECK_QUINT_STEPS", 50);
    let scratch = std::env::temp_dir().join(format!("taintcheck-quint-{}", std::process::id()));
    let mut failures = Vec::new();
    for (module, profile, config) in CASES {
        let model = TaintSys::new(
            Profile::by_name(profile).expect("known profile"),
            CheckConfig::builtin(config).expect("built-in config"),
        );
        let texts = match &given {
            Some(d) => read_dir(d, module),
            None => {
                std::fs::create_dir_all(&scratch).expect("creates a scratch directory");
                simulate(&dir, module, &scratch, traces, steps)
            }
        };
        let (mut agree, mut total_steps, mut total_changed, mut inconclusive) = (0, 0, 0, 0);
        // Properties violated and witnessed in some trace of this module (last states).
        let mut violated = std::collections::BTreeSet::new();
        let mut witnessed = std::collections::BTreeSet::new();
        for (n, text) in texts.iter().enumerate() {
            let trace = itf::read_trace(text).unwrap_or_else(|e| panic!("{module} #{n}: {e}"));
            if let Some(last) = trace.last() {
                violated.extend(last.projection.violated.iter().cloned());
                witnessed.extend(last.projection.witnessed.iter().cloned());
            }
            match replay(&model, &trace) {
                Verdict::Agrees(s, c) => {
                    if agree == 0 {
                        assert_catches_a_wrong_step(&model, &trace, module);
                    }
                    agree += 1;
                    total_steps += s;
                    total_changed += c;
                }
                Verdict::Disagrees(why) => failures.push(format!("{module} trace #{n}: {why}")),
                Verdict::Inconclusive(i) => {
                    inconclusive += 1;
                    eprintln!("{module} trace #{n}: inconclusive at step {i} (frontier cap)");
                }
            }
        }
        eprintln!(
            "{module}: {agree}/{} traces agree ({total_steps} steps, {total_changed} changing the \
             projection), {inconclusive} inconclusive; violated {violated:?}, witnessed \
             {witnessed:?}",
            texts.len()
        );
        assert!(given.is_some() || !texts.is_empty(), "{module}: no trace");
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        failures.is_empty(),
        "disagreements:\n{}",
        failures.join("\n")
    );
}
