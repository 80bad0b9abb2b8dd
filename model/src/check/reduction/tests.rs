//! MODEL-POR's tests: sampled states where every ample set commutes and is invisible, verdicts
//! and paths with and without the reduction, and the measurement of what is left unreduced.

use super::*;
use crate::check::config::{CheckConfig, BUILTIN};
use crate::check::run::{run, RunOptions, Strategy};
use stateright::{Checker, Path};
use std::collections::BTreeMap;
use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use taintcheck_core::fx::Fx;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::Entry;

fn hash(s: &SysState) -> u64 {
    let mut h = Fx::default();
    s.hash(&mut h);
    h.finish()
}

fn enabled(model: &TaintSys, s: &SysState) -> Vec<Action> {
    let mut actions = Vec::new();
    model.enabled(s, &mut actions);
    actions
}

/// The first `limit` states of a breadth-first walk of the full model, then the first
/// `limit` of a depth-first one (deep states, with the budget spent).
fn reachable(model: &TaintSys, limit: usize) -> Vec<SysState> {
    let mut out = Vec::new();
    for depth_first in [false, true] {
        let mut seen = HashSet::new();
        let mut queue: VecDeque<SysState> = model.init_states().into();
        let mut taken = 0;
        while let Some(s) = if depth_first {
            queue.pop_back()
        } else {
            queue.pop_front()
        } {
            if taken == limit {
                break;
            }
            if !seen.insert(hash(&s)) {
                continue;
            }
            let actions = enabled(model, &s);
            queue.extend(actions.into_iter().filter_map(|a| model.next_state(&s, a)));
            out.push(s);
            taken += 1;
        }
    }
    out
}

/// An order of `s`'s works that depends on what they are, not on their ids, as groups of
/// works alike in everything but id (key, creation, deadline, cancelled flag, phase rank),
/// each group by id.
fn work_groups(s: &SysState) -> Vec<(WorkSignature, Vec<WorkId>)> {
    let mut works: Vec<(WorkSignature, WorkId)> = s
        .ctrl
        .timed_queue()
        .works()
        .iter()
        .map(|(id, w)| {
            let signature = (
                w.key.pod.clone(),
                w.key.uid.clone(),
                w.created_at,
                w.fire_at,
                w.cancelled,
                phase_rank(s, w),
            );
            (signature, *id)
        })
        .collect();
    works.sort();
    let mut groups: Vec<(WorkSignature, Vec<WorkId>)> = Vec::new();
    for (signature, id) in works {
        match groups.last_mut() {
            Some((last, ids)) if *last == signature => ids.push(id),
            _ => groups.push((signature, vec![id])),
        }
    }
    groups
}

type WorkSignature = (
    PodKey,
    Option<taintcheck_core::api::Uid>,
    Time,
    Time,
    bool,
    u64,
);

/// `s` with its works relabelled `0..n` in the order `order`, the history's failed requests
/// with them.
fn relabelled(s: &SysState, order: &[WorkId]) -> SysState {
    let map: BTreeMap<WorkId, WorkId> = order
        .iter()
        .zip(0u32..)
        .map(|(id, to)| (*id, WorkId(to)))
        .collect();
    let mut t = s.clone();
    t.ctrl.make_mut().relabel_works(&map);
    for id in t.history.failed.iter_mut() {
        if let Some(to) = map.get(&WorkId(*id)) {
            *id = to.0;
        }
    }
    t.history.failed.sort_unstable();
    t
}

/// Every order of `ids`.
fn permutations(ids: &[WorkId]) -> Vec<Vec<WorkId>> {
    if ids.len() <= 1 {
        return vec![ids.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..ids.len() {
        let mut rest = ids.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// MODEL-POR: `x` and `y` are equal up to a renaming of work ids, an explicit bijection
/// found by search. Both are relabelled `0..n`, `y` in its works' id-free order and `x` in
/// every order that agrees with it (works alike but for their ids tried in every order): a
/// renaming maps each work onto one alike, so it is found if it exists, and a match is one.
fn equal_up_to_ids(x: &SysState, y: &SysState) -> bool {
    if x == y {
        return true;
    }
    let (gx, gy) = (work_groups(x), work_groups(y));
    let signatures = |g: &[(WorkSignature, Vec<WorkId>)]| {
        g.iter()
            .map(|(sig, ids)| (sig.clone(), ids.len()))
            .collect::<Vec<_>>()
    };
    if signatures(&gx) != signatures(&gy) {
        return false;
    }
    let target = relabelled(
        y,
        &gy.iter()
            .flat_map(|(_, ids)| ids.clone())
            .collect::<Vec<_>>(),
    );
    let mut orders: Vec<Vec<WorkId>> = vec![Vec::new()];
    for (_, ids) in &gx {
        orders = orders
            .iter()
            .flat_map(|prefix| {
                permutations(ids).into_iter().map(move |p| {
                    let mut order = prefix.clone();
                    order.extend(p);
                    order
                })
            })
            .collect();
    }
    orders.iter().any(|order| relabelled(x, order) == target)
}

/// A work's term in the cycle proviso's rank (spec MODEL-POR, C3).
fn phase_rank(s: &SysState, w: &Work) -> u64 {
    match &w.phase {
        WorkPhase::Armed if w.fire_at <= s.now => 8,
        WorkPhase::Spawned => 7,
        WorkPhase::Marked => 6,
        WorkPhase::Requesting { request, .. } if request.verb == Verb::Get => 5,
        WorkPhase::Answered { request, .. } if request.verb == Verb::Get => 4,
        WorkPhase::Requesting { request, .. } if matches!(request.verb, Verb::GetNode(_)) => 3,
        WorkPhase::Answered { .. } => 2,
        WorkPhase::Finished { .. } => 1,
        WorkPhase::Armed
        | WorkPhase::Requesting { .. }
        | WorkPhase::Throttled { .. }
        | WorkPhase::Backoff { .. } => 0,
    }
}

/// The cycle proviso's rank (spec MODEL-POR, C3), which every ample move strictly lowers
/// (compared lexicographically): the listed pods workers have still to process plus the pod
/// items and events, each weighted by how far it has to go (in flight 5, queued 4, held by the
/// dispatcher 3, on a channel 2, held by a worker 1); then the events, items and works' phases.
fn rank(s: &SysState) -> (usize, u64) {
    let c = &*s.ctrl;
    let (held_node, held_pod) = c.held();
    let count = |n: usize| n as u64;
    let workers: usize = c
        .shards()
        .busy()
        .map(|(_, sh)| {
            2 * sh.pods.len()
                + match &sh.worker {
                    Worker::Node {
                        phase: NodePhase::Pods { pods, next, .. },
                        then,
                        ..
                    } => pods.len() - next + usize::from(then.is_some()),
                    Worker::Node { then, .. } => usize::from(then.is_some()),
                    Worker::Draining { .. } => 1,
                    Worker::Idle => 0,
                }
        })
        .sum();
    let pod_items = 5 * s.pods.pending.len()
        + 4 * c.pod_queue().queued().count()
        + 3 * usize::from(held_pod.is_some())
        + workers;
    let events = 3 * count(s.pods.pending.len())
        + 2 * count(c.node_queue().queued().count() + c.pod_queue().queued().count())
        + count(usize::from(held_node.is_some()) + usize::from(held_pod.is_some()))
        + c.timed_queue()
            .works()
            .values()
            .map(|w| phase_rank(s, w))
            .sum::<u64>();
    (pod_items, events)
}

/// Action `b` as it is named once `a` has run: the same, except that after a listing step
/// (which processes the first pod left) the same worker's other picks name the same pods one
/// place earlier.
fn shifted(a: &Action, b: &Action) -> Action {
    match (a, b) {
        (
            Action::Controller(Step::WorkerContinue {
                worker: v, pick: 0, ..
            }),
            Action::Controller(Step::WorkerContinue {
                worker,
                immediate,
                pick,
            }),
        ) if v == worker && *pick > 0 => Action::Controller(Step::WorkerContinue {
            worker: *worker,
            immediate: *immediate,
            pick: pick - 1,
        }),
        _ => b.clone(),
    }
}

/// C1 on the paths of the full model from `s` that take no action of the ample set `set`
/// (`a` among them), up to `depth` steps: `a` stays enabled, and each action taken commutes
/// with it (both orders reach states
/// equal up to a renaming of work ids, each enabled after the other). Counts in `renamed`
/// the pairs whose orders reach states that differ, equal only up to the renaming.
fn independent_along_paths(
    model: &TaintSys,
    s: &SysState,
    a: &Action,
    set: &[Action],
    depth: usize,
    renamed: &mut usize,
) -> Result<(), String> {
    let Some(t) = model.next_state(s, a.clone()) else {
        return Err(format!("{a:?} disabled in {s:?}"));
    };
    let actions = enabled(model, s);
    if !actions.contains(a) {
        return Err(format!("{a:?} disabled in {s:?}"));
    }
    if depth == 0 {
        return Ok(());
    }
    for b in actions.iter().filter(|b| !set.contains(b)) {
        let u = model.next_state(s, b.clone()).expect("enabled");
        let b_after = shifted(a, b);
        if !enabled(model, &t).contains(&b_after) {
            return Err(format!("{b:?} disabled by {a:?} in {s:?}"));
        }
        let ab = model.next_state(&t, b_after).expect("enabled");
        let ba = model.next_state(&u, a.clone());
        if ba.as_ref().is_some_and(|ba| *ba != ab) {
            *renamed += 1;
        }
        if !ba.as_ref().is_some_and(|ba| equal_up_to_ids(ba, &ab)) {
            return Err(format!(
                "{a:?} and {b:?} do not commute in {s:?}\n{}",
                difference(&ab, ba.as_ref())
            ));
        }
        independent_along_paths(model, &u, a, set, depth - 1, renamed)?;
    }
    Ok(())
}

/// Where two states differ: the lines of their descriptions, and the parts that differ.
fn difference(x: &SysState, y: Option<&SysState>) -> String {
    let Some(y) = y else {
        return "not enabled".to_string();
    };
    let (dx, dy) = (format!("{x:?}"), format!("{y:?}"));
    let lines: Vec<String> = dx
        .lines()
        .zip(dy.lines())
        .filter(|(l, r)| l != r)
        .map(|(l, r)| format!("- {l}\n+ {r}"))
        .collect();
    let parts = [
        ("api", x.api == y.api),
        ("nodes", x.nodes == y.nodes),
        ("pods", x.pods == y.pods),
        ("ctrl", x.ctrl == y.ctrl),
        ("env", x.env == y.env),
        ("history", x.history == y.history),
    ];
    let differ: Vec<&str> = parts.iter().filter(|p| !p.1).map(|p| p.0).collect();
    format!("parts differing: {differ:?}\n{}", lines.join("\n"))
}

/// MODEL-POR: on sampled reachable states of every built-in configuration and profile, each
/// action of the ample set (one action, or a pod's cluster) changes no property's value, lowers
/// the cycle proviso's rank (C3) and commutes, up to a renaming of work ids, with every action of
/// every path of up to three steps that takes no action of the set (C1, bounded: the
/// persistent-set check). Every entry names a work that exists (so no stale id can meet a new
/// work's).
#[test]
fn ample_moves_commute_and_are_invisible() {
    let mut ample_states = 0;
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut renamed = 0;
    for (config_name, _) in BUILTIN {
        for profile in profiles() {
            let config = CheckConfig::builtin(config_name).expect("built-in config");
            let model = TaintSys {
                reduction: Reduction::Por,
                ..TaintSys::new(profile, config)
            };
            for s in reachable(&model, 4_000).iter().step_by(3) {
                let q = s.ctrl.timed_queue();
                assert!(q
                    .entries()
                    .values()
                    .filter_map(Entry::work)
                    .all(|id| q.works().contains_key(&id)));
                let actions = enabled(&model, s);
                let Some(members) = ample(&model, s, &actions) else {
                    continue;
                };
                ample_states += 1;
                let set: Vec<Action> = members.iter().map(|i| actions[*i].clone()).collect();
                assert!(set.len() == 1 || set.len() < actions.len());
                if set.len() > 1 {
                    *by_kind.entry("cluster").or_default() += 1;
                }
                for a in &set {
                    *by_kind.entry(kind(s, a)).or_default() += 1;
                    let t = model.next_state(s, a.clone()).expect("ample is enabled");
                    for p in model.properties() {
                        assert_eq!((p.condition)(&model, s), (p.condition)(&model, &t));
                    }
                    assert!(rank(&t) < rank(s), "{a:?} does not lower the rank in {s:?}");
                    if let Err(e) = independent_along_paths(&model, s, a, &set, 3, &mut renamed) {
                        let failure = failures
                            .entry(format!("{}/{}: {}", profile.name, config_name, kind(s, a)))
                            .or_insert((0, e));
                        failure.0 += 1;
                    }
                }
            }
        }
    }
    println!("{ample_states} sampled states with an ample move: {by_kind:?}");
    for (case, (n, example)) in &failures {
        println!("FAILS {n}x {case}: {example}\n");
    }
    assert!(failures.is_empty(), "{} failing cases", failures.len());
    println!("{renamed} pairs commuted only up to a renaming of work ids");
    assert!(
        renamed > 0,
        "no pair needed a renaming: the comparison went untested"
    );
    for kind in [
        "cluster",
        "WorkerContinue(draining)",
        "CompleteWork",
        "WorkerContinue(pod)",
        "StartWork",
        "ContinueWork",
    ] {
        assert!(
            by_kind.get(kind).is_some_and(|n| *n > 10),
            "{kind} rarely ample: {by_kind:?}"
        );
    }
    assert!(
        ample_states > 100,
        "only {ample_states} states had an ample move"
    );
}

/// The configurations of the verdict table (specs/verdicts.md): every built-in one but the
/// two the symmetry tests use (`three-pods`, `pods-and-nodes`).
fn table_configs() -> impl Iterator<Item = &'static str> {
    BUILTIN
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !matches!(*name, "three-pods" | "pods-and-nodes"))
}

fn profiles() -> [Profile; 3] {
    [Profile::v1_18(), Profile::latest(), Profile::fixed()]
}

/// MODEL-POR: on every configuration of the verdict table, per profile, the same verdicts
/// with and without the reduction (DFS), never more states with it, and every path found
/// with it is a path of the full model (replayed step by step).
#[test]
fn reduction_keeps_every_verdict_and_paths_replay() {
    let (mut full_total, mut por_total) = (0, 0);
    for config in table_configs() {
        for profile in profiles() {
            let config = CheckConfig::builtin(config).expect("built-in config");
            let model = TaintSys::new(profile, config);
            let with = |reduction| RunOptions {
                strategy: Strategy::Dfs,
                reduction,
                ..RunOptions::default()
            };
            let full = run(model.clone(), &with(Reduction::None), |_, _, _| {});
            let por = run(model.clone(), &with(Reduction::Por), |_, _, _| {});
            let statuses = |r: &crate::check::run::Report| {
                r.properties.iter().map(|p| p.status).collect::<Vec<_>>()
            };
            assert!(full.complete && por.complete);
            assert_eq!(
                statuses(&por),
                statuses(&full),
                "{}/{}",
                profile.name,
                por.config
            );
            assert!(por.unique_states <= full.unique_states);
            println!(
                "{}/{}: {} -> {} unique states",
                profile.name, por.config, full.unique_states, por.unique_states
            );
            full_total += full.unique_states;
            por_total += por.unique_states;
            let reduced = TaintSys {
                reduction: Reduction::Por,
                ..model.clone()
            };
            let checker = reduced.checker().spawn_dfs().join();
            for (name, path) in checker.discoveries() {
                let actions: Vec<Action> = path.into_actions();
                let init = model.initial_state();
                assert!(
                    Path::from_actions(&model, init, &actions).is_some(),
                    "{}: {name} does not replay in the full model",
                    profile.name
                );
            }
        }
    }
    println!("in all: {full_total} -> {por_total} unique states");
    assert!(
        por_total < full_total,
        "the reduction never removed a state: {full_total} -> {por_total}"
    );
}

/// The kind of an action, for [`states_without_ample_move`].
fn kind(s: &SysState, a: &Action) -> &'static str {
    match a {
        Action::Controller(step) => match step {
            Step::DispatchNode => "DispatchNode",
            Step::DispatchPod => "DispatchPod",
            Step::WorkerTakeNode(_) => "WorkerTakeNode",
            Step::WorkerTakePod(_) => "WorkerTakePod",
            Step::WorkerContinue { worker, .. } => {
                match s.ctrl.shards().get(*worker).map(|sh| &sh.worker) {
                    Some(Worker::Draining { .. }) => "WorkerContinue(draining)",
                    Some(Worker::Node {
                        phase: NodePhase::Updated { .. },
                        ..
                    }) => "WorkerContinue(list)",
                    Some(Worker::Node { .. }) => "WorkerContinue(pod)",
                    _ => "WorkerContinue(?)",
                }
            }
            Step::FireTimer(_) => "FireTimer",
            Step::StartWork(_) => "StartWork",
            Step::ContinueWork(_) => "ContinueWork",
            Step::CompleteWork(_) => "CompleteWork",
        },
        Action::ApiRespond(id) => {
            let read = s
                .ctrl
                .timed_queue()
                .works()
                .get(&WorkId(id.0))
                .is_some_and(|w| match &w.phase {
                    WorkPhase::Requesting { request, .. } => request.verb.is_read(),
                    _ => false,
                });
            if read {
                "ApiRespond(read)"
            } else {
                "ApiRespond(write)"
            }
        }
        Action::Tick(_) => "Tick",
        Action::InformerDeliverNode => "DeliverNode",
        Action::InformerDeliverPod => "DeliverPod",
        Action::Env(_) => "Env",
    }
}

/// MODEL-POR measurement (not a check): walks the reduced model of `three-pods` budget 1
/// and `default --pods 3 --budget 2` (profile latest) depth first and counts the states
/// that have no ample move, by the kinds of action enabled in them. Run with
/// `cargo test --release -p taintcheck-model --lib states_without_ample_move -- --ignored
/// --nocapture`.
#[test]
#[ignore = "a measurement, minutes long"]
fn states_without_ample_move() {
    use crate::check::config::Overrides;
    let cases: [(&str, u8, Option<usize>); 2] = [("three-pods", 1, None), ("default", 2, Some(3))];
    for (name, budget, pods) in cases {
        let mut config = CheckConfig::builtin(name).expect("built-in config");
        config
            .apply(&Overrides {
                pods,
                budget: Some(budget),
                ..Overrides::default()
            })
            .expect("valid overrides");
        let model = TaintSys {
            reduction: Reduction::Por,
            ..TaintSys::new(Profile::latest(), config)
        };
        let mut seen = HashSet::new();
        let mut stack = model.init_states();
        let (mut states, mut full) = (0u64, 0u64);
        let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
        let mut only_full: BTreeMap<String, u64> = BTreeMap::new();
        while let Some(s) = stack.pop() {
            if !seen.insert(hash(&s)) {
                continue;
            }
            states += 1;
            let actions = enabled(&model, &s);
            let ample = ample(&model, &s, &actions);
            if ample.is_none() && actions.len() > 1 {
                full += 1;
                let kinds: std::collections::BTreeSet<&str> =
                    actions.iter().map(|a| kind(&s, a)).collect();
                for k in &kinds {
                    *by_kind.entry(k).or_default() += 1;
                }
                let set: Vec<&str> = kinds.into_iter().collect();
                *only_full.entry(set.join(" ")).or_default() += 1;
            }
            let chosen: Vec<Action> = match ample {
                Some(set) => set.iter().map(|i| actions[*i].clone()).collect(),
                None => actions,
            };
            stack.extend(chosen.into_iter().filter_map(|a| model.next_state(&s, a)));
        }
        println!("{name} budget {budget} pods {pods:?}: {states} states, {full} with >1 action and no ample move");
        for (k, n) in &by_kind {
            println!("  {k}: enabled in {n}");
        }
        let mut sets: Vec<_> = only_full.into_iter().collect();
        sets.sort_by_key(|set| std::cmp::Reverse(set.1));
        for (set, n) in sets.iter().take(15) {
            println!("  {n}: {set}");
        }
    }
}

/// MODEL-POR, CHECK-2: BFS reports the same counterexamples and examples, step for step,
/// with and without the reduction: the shortest-path pass explores the full model.
#[test]
fn shortest_paths_come_from_the_full_model() {
    for config in ["default", "failing-delete", "same-name-successor"] {
        for profile in profiles() {
            let config = CheckConfig::builtin(config).expect("built-in config");
            let model = TaintSys::new(profile, config);
            let with = |reduction| RunOptions {
                strategy: Strategy::Bfs,
                reduction,
                ..RunOptions::default()
            };
            let full = run(model.clone(), &with(Reduction::None), |_, _, _| {});
            let por = run(model.clone(), &with(Reduction::Por), |_, _, _| {});
            assert_eq!(por.properties, full.properties, "{}", profile.name);
        }
    }
}
