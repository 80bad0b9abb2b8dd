//! Partial-order reduction with ample sets (spec MODEL-POR): in a state where a dispatcher's
//! next move is invisible to every property and independent of everything else that can
//! happen before it, explore that move alone.
//!
//! Which actions may be ample is decided per kind ([`role`], [`env_role`]: matches without a
//! wildcard, so an action added later must be classified here to compile). The conditions a
//! state must meet are [`node_dispatch_ample`] and [`pod_dispatch_ample`]; the argument that
//! they give the four ample-set conditions is in specs/spec.md, "Partial-order reduction".

use super::action::{Action, EnvOp};
use super::state::{Delta, SysState};
use super::system::TaintSys;
use crate::core::{shard_of, Step, WorkPhase, Worker};
use stateright::Model;

/// Whether a run explores every interleaving or one representative per class of
/// interleavings that differ only in the order of independent invisible dispatcher moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// Every enabled action in every state (the model as specified).
    #[default]
    None,
    /// Ample sets (spec MODEL-POR).
    Por,
}

impl Reduction {
    /// The reduction named `s` (`none`, `por`).
    pub fn parse(s: &str) -> Option<Reduction> {
        match s {
            "none" => Some(Reduction::None),
            "por" => Some(Reduction::Por),
            _ => None,
        }
    }

    /// Its command-line and report name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Por => "por",
        }
    }
}

/// What an action may be for the reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The node dispatcher's move: an ample candidate.
    NodeDispatch,
    /// The pod dispatcher's move: an ample candidate.
    PodDispatch,
    /// Never ample (visible, or dependent on too much to argue).
    Full,
}

/// The role of each kind of action. Every kind is listed: a new one must be classified.
fn role(a: &Action) -> Role {
    match a {
        Action::Controller(step) => match step {
            Step::DispatchNode => Role::NodeDispatch,
            Step::DispatchPod => Role::PodDispatch,
            Step::WorkerTakeNode(_)
            | Step::WorkerTakePod(_)
            | Step::WorkerContinue { .. }
            | Step::FireTimer(_)
            | Step::StartWork(_)
            | Step::CompleteWork(_) => Role::Full,
        },
        Action::Tick(_)
        | Action::InformerDeliverNode
        | Action::InformerDeliverPod
        | Action::ApiRespond(_)
        | Action::Env(_) => Role::Full,
    }
}

/// Whether an environment operation can feed the controller's queues or reset it: every one
/// but the fault, which only arms the API server's next answer (read by `ApiRespond`, never
/// by a dispatcher). Every operation is listed: a new one must be classified.
fn env_role(op: &EnvOp) -> bool {
    match op {
        EnvOp::FailNextCall => false,
        EnvOp::AddTaint { .. }
        | EnvOp::RemoveTaint { .. }
        | EnvOp::AppendToleration { .. }
        | EnvOp::SetSeconds { .. }
        | EnvOp::DeletePod { .. }
        | EnvOp::RecreatePod { .. }
        | EnvOp::BindPod { .. }
        | EnvOp::DeleteNode { .. }
        | EnvOp::Restart => true,
    }
}

/// The index in `actions` (all the actions enabled in `s`) of an ample action, if `s` has one.
pub(super) fn ample(model: &TaintSys, s: &SysState, actions: &[Action]) -> Option<usize> {
    // The environment's cluster changes are enabled by budget, grid instant and API objects;
    // internal steps only spend none, freeze the clock and delete pods, so none that is not
    // enabled now can become enabled before the ample move.
    let quiet_environment = actions.iter().all(|a| match a {
        Action::Env(op) => !env_role(op),
        _ => true,
    });
    if !quiet_environment {
        return None;
    }
    let candidate = actions.iter().position(|a| match role(a) {
        Role::NodeDispatch => node_dispatch_ample(s),
        Role::PodDispatch => pod_dispatch_ample(s),
        Role::Full => false,
    })?;
    invisible(model, s, &actions[candidate]).then_some(candidate)
}

/// The action changes no property's value (checked on the state, not assumed).
fn invisible(model: &TaintSys, s: &SysState, a: &Action) -> bool {
    let Some(t) = model.next_state(s, a.clone()) else {
        return false;
    };
    model
        .properties()
        .iter()
        .all(|p| (p.condition)(model, s) == (p.condition)(model, &t))
}

/// The node dispatcher's move is ample: it moves the node queue's head `x` into a channel with
/// room (so it never holds, and room only grows), no node event for `x` is in flight (so no
/// `Add(x)` can precede it), and no pod item can reach any worker before it (a draining worker
/// chooses between its pod and the node channel: the move would change that choice). The last
/// holds when the controller has nothing else to do but wait for timers that are not due.
pub(super) fn node_dispatch_ample(s: &SysState) -> bool {
    let c = &*s.ctrl;
    let (held, _) = c.held();
    if held.is_some() {
        // A held item means its channel was full: some shard is busy, so the last condition
        // fails anyway.
        return false;
    }
    let Some(x) = c.node_queue().queued().next() else {
        return false;
    };
    let channel = shard_of(x, c.shards().len());
    let room = c
        .shards()
        .get(channel)
        .is_some_and(|sh| sh.nodes.len() < c.config().node_channel_capacity);
    let in_flight = s.nodes.pending.iter().any(|d| match d {
        Delta::Upsert(n) => n.node.name == *x,
        Delta::Delete(n) => n == x,
    });
    room && !in_flight && no_pod_item_can_appear(s) && c.shards().all_idle()
}

/// No pod item exists or can come to exist before the next dispatcher move: none queued, held
/// or in flight from the pod informer, and no pod event can be caused (no request pending, no
/// work past its timer, no timer due; nothing in the shards is checked here).
fn no_pod_item_can_appear(s: &SysState) -> bool {
    let c = &*s.ctrl;
    c.held().1.is_none()
        && c.pod_queue().is_empty()
        && s.pods.pending.is_empty()
        && works_wait(s, |_| true)
}

/// Every work whose pod `which` selects waits for a timer that is not due: it cannot start,
/// send a request or fire before the clock moves.
fn works_wait(s: &SysState, which: impl Fn(&crate::api::PodKey) -> bool) -> bool {
    s.ctrl
        .timed_queue()
        .works()
        .values()
        .filter(|w| which(&w.key.pod))
        .all(|w| match w.phase {
            WorkPhase::Armed | WorkPhase::Backoff { .. } => {
                w.timer_due().is_some_and(|due| due > s.now)
            }
            WorkPhase::Spawned | WorkPhase::Requesting { .. } | WorkPhase::Finished { .. } => {
                false
            }
        })
}

/// The pod dispatcher's move is ample: it moves the pod queue's head `i` into a channel with
/// room, or the item it holds into its channel (which now has room), and when it takes from
/// the queue no `Add(i)` can precede it: no event for `i`'s pod in flight, no other item for
/// that pod anywhere, no node item anywhere or in flight (processing one may evict the pod),
/// and every work for that pod waits for a timer that is not due.
pub(super) fn pod_dispatch_ample(s: &SysState) -> bool {
    let c = &*s.ctrl;
    let (_, held) = c.held();
    if held.is_some() {
        // Enabled only with room; moving the held item commutes with every queue add (the item
        // is being processed: an add only marks it dirty) and with every channel receive.
        return true;
    }
    let mut queued = c.pod_queue().queued();
    let Some(i) = queued.next() else {
        return false;
    };
    let channel = shard_of(i.node_str(), c.shards().len());
    let room = c
        .shards()
        .get(channel)
        .is_some_and(|sh| sh.pods.len() < c.config().pod_channel_capacity);
    let same_pod = |p: &crate::core::PodItem| p.key == i.key;
    let in_flight = s.pods.pending.iter().any(|d| match d {
        Delta::Upsert(p) => p.pod.key == i.key,
        Delta::Delete(k) => *k == i.key,
    });
    let elsewhere = queued.any(same_pod)
        || c.shards().busy().any(|(_, sh)| {
            sh.pods.iter().any(same_pod)
                || match &sh.worker {
                    Worker::Idle => false,
                    Worker::Draining { pod } => same_pod(pod),
                    Worker::Node { .. } => true,
                }
        });
    let node_items = c.held().0.is_some()
        || !c.node_queue().is_empty()
        || !s.nodes.pending.is_empty()
        || c.shards().busy().any(|(_, sh)| !sh.nodes.is_empty());
    room && !in_flight && !elsewhere && !node_items && works_wait(s, |k| *k == i.key)
}

/// Keeps only the ample action of `actions` if `s` has one.
pub(super) fn reduce(model: &TaintSys, s: &SysState, actions: &mut Vec<Action>) {
    if let Some(i) = ample(model, s, actions) {
        let a = actions.swap_remove(i);
        actions.clear();
        actions.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::config::{CheckConfig, BUILTIN};
    use crate::check::run::{run, RunOptions, Strategy};
    use crate::fx::Fx;
    use crate::profile::Profile;
    use stateright::{Checker, Path};
    use std::collections::{HashSet, VecDeque};
    use std::hash::{Hash, Hasher};

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

    /// The first `limit` states of a breadth-first walk of the full model.
    fn reachable(model: &TaintSys, limit: usize) -> Vec<SysState> {
        let mut seen = HashSet::new();
        let mut queue: VecDeque<SysState> = model.init_states().into();
        let mut out = Vec::new();
        while let Some(s) = queue.pop_front() {
            if out.len() == limit {
                break;
            }
            if !seen.insert(hash(&s)) {
                continue;
            }
            let actions = enabled(model, &s);
            queue.extend(actions.into_iter().filter_map(|a| model.next_state(&s, a)));
            out.push(s);
        }
        out
    }

    /// MODEL-POR: on sampled reachable states of every built-in configuration and profile,
    /// each ample move commutes with every other enabled action (each stays enabled after the
    /// other and both orders reach the same state) and changes no property's value.
    #[test]
    fn ample_moves_commute_and_are_invisible() {
        let mut ample_states = 0;
        for (config, _) in BUILTIN {
            for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
                let config = CheckConfig::builtin(config).expect("built-in config");
                let model = TaintSys::new(profile, config);
                for s in reachable(&model, 4_000).iter().step_by(3) {
                    let actions = enabled(&model, s);
                    let Some(i) = ample(&model, s, &actions) else {
                        continue;
                    };
                    ample_states += 1;
                    let a = &actions[i];
                    let t = model.next_state(s, a.clone()).expect("ample is enabled");
                    for p in model.properties() {
                        assert_eq!((p.condition)(&model, s), (p.condition)(&model, &t));
                    }
                    for b in actions.iter().filter(|b| *b != a) {
                        let u = model.next_state(s, b.clone()).expect("enabled");
                        assert!(enabled(&model, &u).contains(a), "{a:?} disabled by {b:?}");
                        assert!(enabled(&model, &t).contains(b), "{b:?} disabled by {a:?}");
                        let ab = model.next_state(&t, b.clone()).expect("enabled");
                        let ba = model.next_state(&u, a.clone()).expect("enabled");
                        assert!(ab == ba, "{}: {a:?} and {b:?} do not commute", profile.name);
                    }
                }
            }
        }
        assert!(ample_states > 100, "only {ample_states} states had an ample move");
    }

    /// MODEL-POR: the same verdicts with and without the reduction, fewer states with it, and
    /// every path found with it is a path of the full model (replayed step by step).
    #[test]
    fn reduction_keeps_every_verdict_and_paths_replay() {
        let mut reduced_somewhere = false;
        for config in ["default", "timer-vs-cancel", "same-name-successor"] {
            for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
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
                assert_eq!(statuses(&por), statuses(&full), "{}", profile.name);
                assert!(por.unique_states <= full.unique_states);
                println!(
                    "{}/{}: {} -> {} unique states",
                    profile.name, por.config, full.unique_states, por.unique_states
                );
                reduced_somewhere |= por.unique_states < full.unique_states;
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
        assert!(reduced_somewhere, "the reduction never removed a state");
    }
}
