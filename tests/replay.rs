//! Every counterexample of the verdict table (specs/verdicts.md) replayed on the reference
//! runtime under its deterministic schedule: the runtime's threads take the path's steps in the
//! path's order and, after every turn, hold the model's state (clock, API objects, informer
//! caches, controller core), so they reach the state in which the model finds the property
//! violated. Spec: CHECK-7, RT-SCHED-1, RT-SCHED-2.

use stateright::{Model, Path};
use taintcheck_core::api::PodKey;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_core::Step;
use taintcheck_formats::scenario::ObjectKind;
use taintcheck_formats::trace::TraceEvent;
use taintcheck_model::check::action::{Action, EnvOp, Watched};
use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::replay::{EnvInput, Schedule, Turn};
use taintcheck_model::check::shortest;
use taintcheck_model::check::trace::Trace;
use taintcheck_model::check::{SysState, TaintSys};
use taintcheck_runtime::replay::replay;

const VERDICTS: &str = include_str!("../specs/verdicts.md");

/// The configuration a verdict-table heading names (`### \`name\``).
fn heading(line: &str) -> Option<&str> {
    line.strip_prefix("### `")?.strip_suffix('`')
}

/// The configurations of the verdict table: its `### \`name\`` headings, every one replayed
/// (graceful deletion and relists included).
fn verdict_configurations() -> Vec<String> {
    let names: Vec<String> = VERDICTS
        .lines()
        .filter_map(heading)
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 15, "{names:?}");
    for name in ["terminating-retaint", "relist-successor"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    names
}

/// How many cells of `profile`'s column the verdict table marks violated.
fn violated_cells(profile: &str) -> usize {
    let mut column = None;
    let mut count = 0;
    for line in VERDICTS.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.get(1) == Some(&"property") {
            column = cells.iter().position(|c| *c == profile);
        } else if let Some(i) = column {
            count += usize::from(cells.get(i) == Some(&"**violated**"));
        }
    }
    count
}

/// Replays every shortest counterexample of `profile` on every configuration of the verdict
/// table; returns the cells replayed and the failures (`config PROPERTY: why`).
fn replay_profile(profile: &str) -> (usize, Vec<String>) {
    let always: Vec<&'static str> = PROPERTIES
        .iter()
        .filter(|p| p.always)
        .map(|p| p.name)
        .collect();
    let mut replayed = 0;
    let mut failures = Vec::new();
    for config in verdict_configurations() {
        let model = TaintSys::new(
            Profile::by_name(profile).expect("known profile"),
            CheckConfig::builtin(&config).expect("built-in config"),
        );
        for (name, path) in shortest::counterexamples(&model, &always) {
            let trace = Trace::of(&model, &path);
            let schedule = Schedule::of(&model, &trace);
            let run = replay(&schedule, model.profile);
            replayed += 1;
            let id = PROPERTIES
                .iter()
                .find(|p| p.name == name)
                .map_or(name, |p| p.id);
            match run.divergence {
                None => assert_eq!(run.followed, schedule.turns.len()),
                Some(d) => failures.push(format!(
                    "{config} {id}: turn {} (step {:?}): {}",
                    d.turn + 1,
                    d.step,
                    d.why
                )),
            }
        }
    }
    (replayed, failures)
}

/// Every violated cell of `profile`'s column replays, and there are as many as the table says.
fn assert_every_counterexample_replays(profile: &str) {
    let (replayed, failures) = replay_profile(profile);
    assert!(
        failures.is_empty(),
        "{replayed} replayed:\n{}",
        failures.join("\n")
    );
    assert_eq!(replayed, violated_cells(profile));
}

#[test]
fn every_v1_18_counterexample_replays_on_the_runtime() {
    assert_every_counterexample_replays("v1.18");
}

#[test]
fn every_latest_counterexample_replays_on_the_runtime() {
    assert_every_counterexample_replays("latest");
}

#[test]
fn every_fixed_counterexample_replays_on_the_runtime() {
    assert_every_counterexample_replays("fixed");
}

/// The schedule of EVICT-1's shortest counterexample on `timer-vs-cancel` under latest.
fn n1_schedule() -> (TaintSys, Schedule) {
    let model = TaintSys::new(
        Profile::latest(),
        CheckConfig::builtin("timer-vs-cancel").expect("built-in config"),
    );
    let name = PROPERTIES.iter().find(|p| p.id == "EVICT-1").unwrap().name;
    let path = shortest::counterexamples(&model, &[name])
        .remove(name)
        .expect("violated");
    let schedule = Schedule::of(&model, &Trace::of(&model, &path));
    (model, schedule)
}

/// A schedule the runtime does not follow is reported at the turn where it leaves the path:
/// without the node informer's first delivery, the runtime's node cache is not the model's.
#[test]
fn a_missing_delivery_is_found_at_the_next_turn() {
    let (model, mut schedule) = n1_schedule();
    let first = schedule
        .turns
        .iter()
        .position(|t| t.turn == Turn::Deliver(ObjectKind::Nodes))
        .expect("the initial list is delivered");
    schedule.turns.remove(first);
    let run = replay(&schedule, model.profile);
    let d = run.divergence.expect("the runtime leaves the path");
    assert_eq!((d.turn, d.step, run.followed), (first, None, first));
    assert!(
        d.why.starts_with("node cache: the runtime has []"),
        "{}",
        d.why
    );
}

/// A step the core does not offer is refused by the thread it is released to, not forced.
#[test]
fn a_step_the_core_does_not_offer_is_refused() {
    let (model, mut schedule) = n1_schedule();
    let mut turn = schedule.turns[0].clone();
    turn.turn = Turn::Step(Step::DispatchNode);
    schedule.turns.insert(0, turn);
    let run = replay(&schedule, model.profile);
    let d = run.divergence.expect("the runtime leaves the path");
    assert_eq!((d.turn, run.followed), (0, 0));
    assert!(
        d.why.starts_with("the core does not offer DispatchNode"),
        "{}",
        d.why
    );
}

/// A path of `model` that takes the environment's operations `first`, then every enabled step
/// but the clock's and the environment's, the first in the model's order, until none is left:
/// the operations' consequences settled at their instant.
fn settled_after(model: &TaintSys, first: &[EnvOp]) -> Path<SysState, Action> {
    let init = model.init_states().remove(0);
    let mut actions: Vec<Action> = first.iter().cloned().map(Action::Env).collect();
    let mut state = actions.iter().fold(init.clone(), |s, a| {
        model.next_state(&s, a.clone()).expect("enabled")
    });
    for _ in 0..200 {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        let Some(next) = enabled
            .into_iter()
            .find(|a| !matches!(a, Action::Env(_) | Action::Tick(_)))
        else {
            break;
        };
        state = model.next_state(&state, next.clone()).expect("enabled");
        actions.push(next);
    }
    Path::from_actions(model, init, &actions).expect("a path of the model")
}

/// A relist (ENV-13, INF-1) is performed at its turn: on `relist-successor`, p1 is recreated
/// on n1 and the pod watch expires before either event is delivered; the runtime's informer
/// loses both and delivers the difference, one update from p1-1 to p1-2, exactly as the model
/// does, under every profile (the comparison after each turn covers caches and core).
#[test]
fn a_relist_is_replayed_at_its_turn() {
    let p1 = PodKey::new("default", "p1");
    for profile in Profile::NAMES {
        let model = TaintSys::new(
            Profile::by_name(profile).expect("known profile"),
            CheckConfig::builtin("relist-successor").expect("built-in config"),
        );
        let recreate = EnvOp::RecreatePod {
            pod: p1.clone(),
            node: Some("n1".into()),
        };
        let path = settled_after(&model, &[recreate, EnvOp::DropWatch(Watched::Pods)]);
        let last = path.last_state().clone();
        assert_eq!(
            last.pods.cache.get(&p1).map(|p| p.pod.uid.0.to_string()),
            Some("p1-2".into())
        );
        let schedule = Schedule::of(&model, &Trace::of(&model, &path));
        let relist = Turn::Env(EnvInput::Relist(Watched::Pods));
        assert!(schedule.turns.iter().any(|t| t.turn == relist));
        let run = replay(&schedule, model.profile);
        assert_eq!(run.divergence, None, "{profile}");
        assert_eq!(run.followed, schedule.turns.len());
    }
}

/// The schedule seeds the runtime's API server with the configuration's grace period (API-2):
/// `terminating-retaint`'s counterexamples (v1.18) make p1 Terminating on the runtime, with the
/// 30 s grace, and replay to the end.
#[test]
fn a_graceful_deletion_is_replayed_with_its_grace() {
    let model = TaintSys::new(
        Profile::v1_18(),
        CheckConfig::builtin("terminating-retaint").expect("built-in config"),
    );
    let always: Vec<&'static str> = PROPERTIES
        .iter()
        .filter(|p| p.always)
        .map(|p| p.name)
        .collect();
    let found = shortest::counterexamples(&model, &always);
    assert!(!found.is_empty());
    for (name, path) in found {
        let schedule = Schedule::of(&model, &Trace::of(&model, &path));
        assert_eq!(schedule.deletion_grace, Some(Duration::from_secs(30)));
        let run = replay(&schedule, model.profile);
        assert_eq!(run.divergence, None, "{name}");
        let terminating = run.records.iter().any(|r| {
            matches!(
                r.event,
                TraceEvent::PodModified {
                    terminating: true,
                    ..
                }
            )
        });
        assert!(terminating, "{name}: the runtime made no pod Terminating");
    }
}
