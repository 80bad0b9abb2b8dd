//! Every counterexample of the verdict table (specs/verdicts.md) replayed on the reference
//! runtime under its deterministic schedule: the runtime's threads take the path's steps in the
//! path's order and, after every turn, hold the model's state (clock, API objects, informer
//! caches, controller core), so they reach the state in which the model finds the property
//! violated. Spec: CHECK-7, RT-SCHED-1, RT-SCHED-2.

use taintcheck_model::check::config::CheckConfig;
use taintcheck_model::check::properties::PROPERTIES;
use taintcheck_model::check::replay::{Schedule, Turn};
use taintcheck_model::check::shortest;
use taintcheck_model::check::trace::Trace;
use taintcheck_model::check::TaintSys;
use taintcheck_model::core::Step;
use taintcheck_model::profile::Profile;
use taintcheck_model::scenario::ObjectKind;
use taintcheck_runtime::replay::replay;

const VERDICTS: &str = include_str!("../specs/verdicts.md");

/// Configurations whose counterexamples the schedule does not express yet: graceful deletion
/// (API-2: the runtime's API server is seeded without the configuration's grace period) and
/// relists (ENV-13). Spec: CHECK-7.
const NOT_REPLAYED: &[&str] = &["terminating-retaint", "relist-successor"];

/// The configuration a verdict-table heading names (`### \`name\``).
fn heading(line: &str) -> Option<&str> {
    line.strip_prefix("### `")?.strip_suffix('`')
}

/// The configurations of the verdict table that replay: its `### \`name\`` headings.
fn verdict_configurations() -> Vec<String> {
    let names: Vec<String> = VERDICTS
        .lines()
        .filter_map(heading)
        .filter(|name| !NOT_REPLAYED.contains(name))
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 13, "{names:?}");
    names
}

/// How many cells of `profile`'s column the verdict table marks violated (outside
/// [`NOT_REPLAYED`]).
fn violated_cells(profile: &str) -> usize {
    let mut column = None;
    let mut count = 0;
    let mut skipped = false;
    for line in VERDICTS.lines() {
        if let Some(name) = heading(line) {
            skipped = NOT_REPLAYED.contains(&name);
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if skipped {
            continue;
        }
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
