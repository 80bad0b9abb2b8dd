//! The cross-check of the Quint specification (`specs/quint/`) with the stateright model
//! (`taintcheck_model::check`), both ways, on the variables both share (`Projection`,
//! specs/quint/README.md "Cross-check").
//!
//! Quint → Rust: traces simulated from the Quint specification are replayed in the Rust model.
//! The replay keeps the set of Rust states whose projection equals the current Quint state's,
//! starting from every state an order of the initial instant's steps settles in (Quint takes
//! MODEL-INIT's steps in any order, the Rust model in one).
//! Steps that leave the projection unchanged (dispatches, worker phases, timer firings) may be
//! interleaved differently on the two sides; each Quint step that changes the projection must be
//! matched by one Rust step, possibly after Rust steps that leave the projection unchanged,
//! reaching a state with the same projection. A trace that cannot be matched is a disagreement:
//! the test prints its first differing step, the Quint action and the first differing variable
//! against the nearest Rust successor.
//!
//! Rust → Quint: every shortest counterexample the Rust model finds on the configurations the
//! Quint specification covers, for a property Quint states, is followed by a Quint simulation
//! constrained to its projections (`specs/quint/track.qnt`) to its end, where the Quint invariant
//! of the same name must fail; one sampling misses is searched again guided by the Rust
//! behaviour's action names (`GUIDE`). A counterexample no Quint behaviour follows is a
//! disagreement.
//!
//! Quint runs with its TypeScript backend, installed from `specs/quint/package-lock.json`
//! (`npm ci`) when `node_modules` is missing. Without node/npm the tests say they did not run,
//! and fail if `TAINTCHECK_REQUIRE_QUINT=1`. `TAINTCHECK_QUINT_TRACES` (default 2) and
//! `TAINTCHECK_QUINT_STEPS` (default 50) size the Quint → Rust run; `TAINTCHECK_QUINT_ITF_DIR`
//! replays the `*.itf.json` files of a directory instead of simulating (file names start with
//! the module, e.g. `latest_default_0.itf.json`). `TAINTCHECK_QUINT_FOLLOW_SAMPLES` (default
//! 300) bounds the Quint simulations that try to follow one Rust counterexample. By default the
//! first counterexample on `timer-vs-cancel` and `same-name-successor` of each profile is
//! followed; every counterexample of every configuration with `TAINTCHECK_QUINT_FOLLOW_ALL=1`,
//! of one module's with `TAINTCHECK_QUINT_FOLLOW_MODULE=<module>` (with `_ALL=1`: all of them).

#[path = "quint_support/itf.rs"]
mod itf;
#[path = "quint_support/project.rs"]
mod project;
#[path = "quint_support/quint.rs"]
mod quint;

use std::collections::HashSet;
use std::path::PathBuf;

use itf::{Projection, QuintState};
use project::project;
use quint::{ensure_quint, env_usize, follows, quint_dir, read_dir, run_tests, simulate};
use stateright::Model;
use taintcheck_core::profile::Profile;
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::{shortest, Action, CheckConfig, SysState, TaintSys};

/// The (Quint module, Rust profile, Rust configuration) triples of `specs/quint/profiles.qnt`;
/// a configuration is built in or a file under the repository.
const CASES: [(&str, &str, &str); 33] = [
    ("v1_18_default", "v1.18", "default"),
    ("v1_18_timer_vs_cancel", "v1.18", "timer-vs-cancel"),
    ("v1_18_failing_delete", "v1.18", "failing-delete"),
    ("v1_18_toleration_change", "v1.18", "toleration-change"),
    ("v1_18_same_name_successor", "v1.18", "same-name-successor"),
    (
        "v1_18_successor_while_deleting",
        "v1.18",
        "successor-while-deleting",
    ),
    ("v1_18_stale_cache", "v1.18", "stale-cache"),
    ("v1_18_restart", "v1.18", "restart"),
    ("v1_18_terminating_retaint", "v1.18", "terminating-retaint"),
    ("v1_18_relist_successor", "v1.18", "relist-successor"),
    (
        "v1_18_world_changes",
        "v1.18",
        "tests/quint_support/world-changes.yaml",
    ),
    ("latest_default", "latest", "default"),
    ("latest_timer_vs_cancel", "latest", "timer-vs-cancel"),
    ("latest_failing_delete", "latest", "failing-delete"),
    ("latest_toleration_change", "latest", "toleration-change"),
    (
        "latest_same_name_successor",
        "latest",
        "same-name-successor",
    ),
    (
        "latest_successor_while_deleting",
        "latest",
        "successor-while-deleting",
    ),
    ("latest_stale_cache", "latest", "stale-cache"),
    ("latest_restart", "latest", "restart"),
    (
        "latest_terminating_retaint",
        "latest",
        "terminating-retaint",
    ),
    ("latest_relist_successor", "latest", "relist-successor"),
    (
        "latest_world_changes",
        "latest",
        "tests/quint_support/world-changes.yaml",
    ),
    ("fixed_default", "fixed", "default"),
    ("fixed_timer_vs_cancel", "fixed", "timer-vs-cancel"),
    ("fixed_failing_delete", "fixed", "failing-delete"),
    ("fixed_toleration_change", "fixed", "toleration-change"),
    ("fixed_same_name_successor", "fixed", "same-name-successor"),
    (
        "fixed_successor_while_deleting",
        "fixed",
        "successor-while-deleting",
    ),
    ("fixed_stale_cache", "fixed", "stale-cache"),
    ("fixed_restart", "fixed", "restart"),
    ("fixed_terminating_retaint", "fixed", "terminating-retaint"),
    ("fixed_relist_successor", "fixed", "relist-successor"),
    (
        "fixed_world_changes",
        "fixed",
        "tests/quint_support/world-changes.yaml",
    ),
];

/// Rust states kept per Quint state; beyond it the trace counts as inconclusive, not agreeing.
const FRONTIER_CAP: usize = 50_000;

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

/// The states the initial instant settles in, over every order of its internal steps: from the
/// configured objects listed (nothing delivered), every step but the environment's and the
/// clock's, to the states where none is enabled. The Rust model's initial state is the one its
/// fixed order reaches (MODEL-INIT); the Quint specification takes the initial instant's steps in
/// any order, so a Quint trace starts from one of these (specs/quint/README.md, "Cross-check").
// The states' interior mutability is their cached hash (`Shared`), which `Eq` and `Hash` ignore.
#[allow(clippy::mutable_key_type)]
fn settled_states(model: &TaintSys) -> Vec<SysState> {
    let (listed, _) = model.initial_steps();
    let mut seen: HashSet<SysState> = HashSet::from([listed.clone()]);
    let (mut todo, mut settled) = (vec![listed], Vec::new());
    while let Some(s) = todo.pop() {
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        let internal: Vec<SysState> = actions
            .into_iter()
            .filter(|a| !matches!(a, Action::Env(_) | Action::Tick(_)))
            .filter_map(|a| model.next_state(&s, a))
            .collect();
        if internal.is_empty() {
            settled.push(s);
        }
        for t in internal {
            if seen.insert(t.clone()) {
                todo.push(t);
            }
        }
    }
    settled
}

// The states' interior mutability is their cached hash (`Shared`), which `Eq` and `Hash` ignore.
#[allow(clippy::mutable_key_type)]
fn replay(model: &TaintSys, inits: &[SysState], trace: &[QuintState]) -> Verdict {
    let Some(start) = trace.iter().position(|q| q.settled) else {
        return Verdict::Agrees(0, 0);
    };
    let frontier: Vec<SysState> = inits
        .iter()
        .filter(|s| project(s) == trace[start].projection)
        .cloned()
        .collect();
    if frontier.is_empty() {
        let rust = model.init_states().remove(0);
        let (var, quint, rust) = trace[start]
            .projection
            .first_difference(&project(&rust))
            .unwrap_or_else(|| ("(none)".into(), String::new(), String::new()));
        return Verdict::Disagrees(format!(
            "step {start} (end of MODEL-INIT): no order of the initial instant settles there; \
             `{var}` is {quint} in Quint, {rust} in the Rust initial state"
        ));
    }
    let mut frontier = frontier;
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
            if std::env::var_os("TAINTCHECK_QUINT_DEBUG").is_some() {
                for s in seen.iter().take(8) {
                    let mut actions = Vec::new();
                    model.actions(s, &mut actions);
                    eprintln!(
                        "rust state: requests {:?}; actions {actions:?}",
                        s.ctrl.pending_requests().collect::<Vec<_>>()
                    );
                }
            }
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
fn assert_catches_a_wrong_step(
    model: &TaintSys,
    inits: &[SysState],
    trace: &[QuintState],
    module: &str,
) {
    let Some(i) = (1..trace.len())
        .rev()
        .find(|&i| trace[i].settled && trace[i].projection != trace[i - 1].projection)
    else {
        return;
    };
    let mut wrong = trace[..=i].to_vec();
    wrong[i].projection.now += 1;
    assert!(
        matches!(replay(model, inits, &wrong), Verdict::Disagrees(_)),
        "{module}: a trace with step {i} 1 ms late still replays"
    );
}

/// Whether Quint can run here; says why not, and fails when `TAINTCHECK_REQUIRE_QUINT=1`.
fn quint_available(test: &str) -> bool {
    match ensure_quint(&quint_dir()) {
        Ok(()) => true,
        Err(why) => {
            let required = std::env::var("TAINTCHECK_REQUIRE_QUINT").as_deref() == Ok("1");
            eprintln!("{test} DID NOT RUN: {why}");
            assert!(
                !required,
                "TAINTCHECK_REQUIRE_QUINT=1 but Quint cannot run: {why}"
            );
            false
        }
    }
}

fn model(profile: &str, config: &str) -> TaintSys {
    TaintSys::new(
        Profile::by_name(profile).expect("known profile"),
        if config.ends_with(".yaml") {
            CheckConfig::load(&format!("{}/{config}", env!("CARGO_MANIFEST_DIR")))
        } else {
            CheckConfig::builtin(config)
        }
        .expect("a configuration"),
    )
}

#[test]
fn quint_traces_replay_in_the_rust_model() {
    let dir = quint_dir();
    let given = std::env::var_os("TAINTCHECK_QUINT_ITF_DIR").map(PathBuf::from);
    if given.is_none() && !quint_available("quint_traces_replay_in_the_rust_model") {
        return;
    }
    let traces = env_usize("TAINTCHECK_QUINT_TRACES", 2);
    let steps = env_usize("TAINTCHECK_QUINT_STEPS", 50);
    let scratch = std::env::temp_dir().join(format!("taintcheck-quint-{}", std::process::id()));
    let mut failures = Vec::new();
    for (module, profile, config) in CASES {
        let model = model(profile, config);
        let inits = settled_states(&model);
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
            match replay(&model, &inits, &trace) {
                Verdict::Agrees(s, c) => {
                    if agree == 0 {
                        assert_catches_a_wrong_step(&model, &inits, &trace, module);
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

/// The Quint invariant stating the property of spec id `id`; `None` for JUST-1 (not stated in
/// Quint: its API history since the bind is not modelled) and CANCEL-2 (not stated yet).
fn quint_invariant(id: &str) -> Option<String> {
    (!matches!(id, "JUST-1" | "CANCEL-2")).then(|| id.replace('-', "_"))
}

/// A Rust behaviour's projections, consecutive duplicates removed (what `TRACK` takes).
fn track(states: &[SysState]) -> Vec<Projection> {
    let mut t: Vec<Projection> = Vec::new();
    for p in states.iter().map(project) {
        if t.last() != Some(&p) {
            t.push(p);
        }
    }
    t
}

/// The name of a Rust action as the Quint specification labels its steps (`lastAction`): the
/// action's, the controller step's or the environment operation's variant.
fn label(action: &Action) -> String {
    let text = match action {
        Action::Controller(step) => format!("{step:?}"),
        Action::Env(op) => format!("{op:?}"),
        other => format!("{other:?}"),
    };
    text.chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// A Rust behaviour's steps for `GUIDE` (track.qnt): every state's projection with the name of
/// the action reaching it (`init` for the first).
fn guide(path: &[(SysState, Option<Action>)]) -> Vec<(Projection, String)> {
    let mut labels = vec!["init".to_string()];
    labels.extend(path.iter().filter_map(|(_, a)| a.as_ref().map(label)));
    path.iter().map(|(s, _)| project(s)).zip(labels).collect()
}

#[test]
fn rust_counterexamples_are_quint_behaviours() {
    if !quint_available("rust_counterexamples_are_quint_behaviours") {
        return;
    }
    let dir = quint_dir();
    let samples = env_usize("TAINTCHECK_QUINT_FOLLOW_SAMPLES", 300);
    let all = std::env::var("TAINTCHECK_QUINT_FOLLOW_ALL").as_deref() == Ok("1");
    let scratch =
        std::env::temp_dir().join(format!("taintcheck-quint-follow-{}", std::process::id()));
    let names: Vec<&'static str> = PROPERTIES
        .iter()
        .filter(|p| p.always && quint_invariant(p.id).is_some())
        .map(|p| p.name)
        .collect();
    let (mut followed, mut guided, mut failures) = (0, 0, Vec::new());
    let mut checked_vacuity = false;
    // By default the configurations of the upstream races N1/N2 and N5/N6, the first
    // counterexample of each; every counterexample of every configuration with
    // TAINTCHECK_QUINT_FOLLOW_ALL=1.
    let only = std::env::var("TAINTCHECK_QUINT_FOLLOW_MODULE").ok();
    let cases = CASES.iter().filter(|(module, _, config)| match &only {
        Some(m) => m == module,
        None => all || ["timer-vs-cancel", "same-name-successor"].contains(config),
    });
    for &(module, profile, config) in cases {
        let model = model(profile, config);
        let found = shortest::counterexamples(&model, &names);
        for (name, path) in found.into_iter().take(if all { usize::MAX } else { 1 }) {
            let id = PROPERTIES
                .iter()
                .find(|p| p.name == name)
                .expect("a property")
                .id;
            let invariant = quint_invariant(id).expect("stated in Quint");
            let steps = path.into_vec();
            let states: Vec<SysState> = steps.iter().map(|(s, _)| s.clone()).collect();
            let t = track(&states);
            // Sampling first; a behaviour it misses is searched again with the simulation
            // guided by the Rust behaviour's action names (GUIDE), which steer the steps that
            // keep the projection.
            let found = follows(&dir, &scratch, module, &t, None, Some(&invariant), samples)
                .and_then(|found| {
                    if found {
                        return Ok(true);
                    }
                    let g = guide(&steps);
                    let again = follows(
                        &dir,
                        &scratch,
                        module,
                        &t,
                        Some(&g),
                        Some(&invariant),
                        samples,
                    )?;
                    guided += usize::from(again);
                    Ok(again)
                });
            match found {
                Ok(true) => followed += 1,
                Ok(false) => failures.push(format!(
                    "{module}: no Quint behaviour in {samples} samples, sampled or guided, \
                     follows Rust's {id} counterexample ({} projections) to a state violating \
                     {invariant}",
                    t.len()
                )),
                Err(e) => panic!("{module} {id}: {e}"),
            }
            // Not vacuous: the same counterexample with its last projection 1 ms late is not
            // followed.
            if !checked_vacuity && t.len() > 1 {
                checked_vacuity = true;
                let mut wrong = t.clone();
                wrong.last_mut().expect("a projection").now += 1;
                assert_eq!(
                    follows(&dir, &scratch, module, &wrong, None, None, samples / 10 + 1),
                    Ok(false),
                    "{module}: Rust's {id} counterexample with its last step 1 ms late is followed"
                );
            }
            eprintln!(
                "{module} ({profile}, {config}): {id} counterexample, {} projections",
                t.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "{followed} Rust counterexamples followed in Quint ({guided} of them guided), {} not",
        failures.len()
    );
    // A module named on its own may hold every property (e.g. `fixed_default`): nothing to follow.
    assert!(
        followed > 0 || only.is_some(),
        "no counterexample to follow"
    );
    assert!(
        failures.is_empty(),
        "disagreements:\n{}",
        failures.join("\n")
    );
}

/// The specification's regression tests (`specs/quint/regressions.qnt`): disagreements the
/// cross-check found, pinned on the side that was wrong.
#[test]
fn quint_regressions_pass() {
    if !quint_available("quint_regressions_pass") {
        return;
    }
    match run_tests(&quint_dir(), "regressions.qnt") {
        Ok(report) => assert!(
            report.contains("passing") && !report.contains("failed"),
            "{report}"
        ),
        Err(report) => panic!("quint test regressions.qnt failed:\n{report}"),
    }
}
