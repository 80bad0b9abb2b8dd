//! Partial-order reduction with ample sets (spec MODEL-POR): in a state where a dispatcher's
//! next move is invisible to every property and independent of everything else that can
//! happen before it, explore that move alone.
//!
//! Which actions may be ample is decided per kind ([`role`], [`reach`]: matches without a
//! wildcard, so an action added later must be classified here to compile). The conditions a
//! state must meet are [`node_dispatch_ample`] and [`pod_dispatch_ample`]; the argument that
//! they give the four ample-set conditions is in specs/spec.md, "Partial-order reduction".

use super::action::{Action, EnvOp};
use super::state::{Delta, SysState};
use super::system::TaintSys;
use crate::api::{NodeName, PodKey};
use crate::core::{shard_of, NodePhase, PodItem, Step, WorkPhase, Worker};
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
            | Step::ContinueWork(_)
            | Step::CompleteWork(_) => Role::Full,
        },
        Action::Tick(_)
        | Action::InformerDeliverNode
        | Action::InformerDeliverPod
        | Action::ApiRespond(_)
        | Action::Env(_) => Role::Full,
    }
}

/// What an environment operation can reach: the controller learns of it only through the
/// watch events it queues (or, for a restart, everything). Every operation is listed: a new
/// one must be classified.
enum Reach<'a> {
    /// Nothing a dispatcher reads (the fault arms the API server's next answer only).
    Nothing,
    /// Events of this node.
    Node(&'a NodeName),
    /// Events of this pod (by key).
    Pod(&'a PodKey),
    /// The whole controller.
    Everything,
}

fn reach(op: &EnvOp) -> Reach<'_> {
    match op {
        EnvOp::FailNextCall => Reach::Nothing,
        EnvOp::AddTaint { node, .. }
        | EnvOp::RemoveTaint { node, .. }
        | EnvOp::DeleteNode { node } => Reach::Node(node),
        EnvOp::AppendToleration { pod, .. }
        | EnvOp::SetSeconds { pod, .. }
        | EnvOp::DeletePod { pod }
        | EnvOp::RecreatePod { pod, .. }
        | EnvOp::BindPod { pod, .. }
        | EnvOp::KubeletConfirms { pod }
        | EnvOp::ForceDelete { pod } => Reach::Pod(pod),
        // A relist may deliver any object's difference.
        EnvOp::Restart | EnvOp::DropWatch(_) => Reach::Everything,
    }
}

/// The index in `actions` (all the actions enabled in `s`) of an ample action, if `s` has one.
///
/// The environment's operations enabled now are the only ones that can run before the ample
/// move: they are enabled by budget, grid instant and API objects, and until the move the
/// clock stays put (the state is not quiescent), the budget only shrinks and internal steps
/// only delete pods or patch their status.
pub(super) fn ample(model: &TaintSys, s: &SysState, actions: &[Action]) -> Option<usize> {
    let env = || {
        actions.iter().filter_map(|a| match a {
            Action::Env(op) => Some(reach(op)),
            _ => None,
        })
    };
    let candidate = actions.iter().position(|a| match role(a) {
        Role::NodeDispatch => node_dispatch_ample(s, env()),
        Role::PodDispatch => pod_dispatch_ample(s, env()),
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
/// room (so it never holds, and room only grows), no event for `x` is in flight or can be
/// caused (so no `Add(x)` can precede it), and no pod item can reach any worker before it (a
/// draining worker chooses between its pod and the node channel: the move would change that
/// choice). The last holds when no worker is busy, no pod item or pod event exists, the
/// environment can cause none, and every work waits for a timer that is not due.
fn node_dispatch_ample<'a>(s: &SysState, mut env: impl Iterator<Item = Reach<'a>>) -> bool {
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
    let env_reaches = env.any(|r| match r {
        Reach::Nothing => false,
        Reach::Node(n) => n == x,
        Reach::Pod(_) | Reach::Everything => true,
    });
    room && !in_flight
        && !env_reaches
        && c.shards().all_idle()
        && c.held().1.is_none()
        && c.pod_queue().is_empty()
        && s.pods.pending.is_empty()
        && works_wait(s, |_| true)
}

/// Every work whose pod `which` selects waits for a timer that is not due: it cannot start,
/// send a request or fire before the clock moves.
fn works_wait(s: &SysState, which: impl Fn(&PodKey) -> bool) -> bool {
    s.ctrl
        .timed_queue()
        .works()
        .values()
        .filter(|w| which(&w.key.pod))
        .all(|w| match w.phase {
            WorkPhase::Armed | WorkPhase::Backoff { .. } | WorkPhase::Throttled { .. } => {
                w.timer_due().is_some_and(|due| due > s.now)
            }
            WorkPhase::Spawned
            | WorkPhase::Marked
            | WorkPhase::Requesting { .. }
            | WorkPhase::Answered { .. }
            | WorkPhase::Finished { .. } => false,
        })
}

/// The pod dispatcher's move is ample: it moves the item it holds into its channel (which now
/// has room), or the pod queue's head `i` into a channel with room, and then no `Add(i)` can
/// precede it. An add of `i` needs an event for its pod `k`: from the environment, or from the
/// API server deleting or patching `k`, which needs a request of a work for `k`, which needs
/// `k` handled by a worker. So: no event for `k` in flight and none the environment can cause,
/// no other item for `k` anywhere, every work for `k` waiting for a timer that is not due, and
/// no node item, node event or environment operation for a node `k` is (or is cached, or is
/// queued as) bound to, and no worker holding `k` in its listed pods.
fn pod_dispatch_ample<'a>(s: &SysState, mut env: impl Iterator<Item = Reach<'a>>) -> bool {
    let c = &*s.ctrl;
    let (held_node, held) = c.held();
    if held.is_some() {
        // Enabled only with room; moving the held item commutes with every queue add (the item
        // is being processed: an add only marks it dirty) and with every channel receive. Only
        // a restart resets the dispatcher.
        return !env.any(|r| matches!(r, Reach::Everything));
    }
    let mut queued = c.pod_queue().queued();
    let Some(i) = queued.next() else {
        return false;
    };
    let k = &i.key;
    let channel = shard_of(i.node_str(), c.shards().len());
    let room = c
        .shards()
        .get(channel)
        .is_some_and(|sh| sh.pods.len() < c.config().pod_channel_capacity);
    // The nodes whose handling lists `k`: its item's, its cached object's, its API object's.
    let cached = s.pods.cache.get(k).and_then(|p| p.pod.node_name.as_ref());
    let api = s.api.pods.get(k).and_then(|p| p.pod.node_name.as_ref());
    let hosts =
        |n: &NodeName| i.node_name.as_ref() == Some(n) || cached == Some(n) || api == Some(n);
    let same_pod = |p: &PodItem| p.key == *k;
    let in_flight = s.pods.pending.iter().any(|d| match d {
        Delta::Upsert(p) => p.pod.key == *k,
        Delta::Delete(key) => key == k,
    });
    let env_reaches = env.any(|r| match r {
        Reach::Nothing => false,
        Reach::Node(n) => hosts(n),
        Reach::Pod(p) => p == k,
        Reach::Everything => true,
    });
    let elsewhere = queued.any(same_pod)
        || c.shards().busy().any(|(_, sh)| {
            sh.pods.iter().any(same_pod)
                || sh.nodes.iter().any(hosts)
                || match &sh.worker {
                    Worker::Idle => false,
                    Worker::Draining { pod } => same_pod(pod),
                    Worker::Node { node, phase, then } => {
                        hosts(node)
                            || then.as_ref().is_some_and(same_pod)
                            || match phase {
                                NodePhase::Updated { .. } => false,
                                NodePhase::Pods { pods, .. } => pods.iter().any(|p| p.key == *k),
                            }
                    }
                }
        });
    let node_items = held_node.is_some_and(hosts)
        || c.node_queue().queued().any(hosts)
        || s.nodes.pending.iter().any(|d| match d {
            Delta::Upsert(n) => hosts(&n.node.name),
            Delta::Delete(n) => hosts(n),
        });
    room && !in_flight && !env_reaches && !elsewhere && !node_items && works_wait(s, |p| p == k)
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

    /// C1 on the paths of the full model from `s` that do not take `a`, up to `depth` steps:
    /// `a` stays enabled, and each action taken commutes with it (both orders reach the same
    /// state, each enabled after the other).
    fn independent_along_paths(model: &TaintSys, s: &SysState, a: &Action, depth: usize) {
        let t = model.next_state(s, a.clone()).expect("ample is enabled");
        let actions = enabled(model, s);
        assert!(actions.contains(a), "{a:?} disabled");
        if depth == 0 {
            return;
        }
        for b in actions.iter().filter(|b| *b != a) {
            let u = model.next_state(s, b.clone()).expect("enabled");
            assert!(enabled(model, &t).contains(b), "{b:?} disabled by {a:?}");
            let ab = model.next_state(&t, b.clone()).expect("enabled");
            let ba = model.next_state(&u, a.clone());
            assert!(
                ba.as_ref() == Some(&ab),
                "{a:?} and {b:?} do not commute in {s:?}"
            );
            independent_along_paths(model, &u, a, depth - 1);
        }
    }

    /// MODEL-POR: on sampled reachable states of every built-in configuration and profile,
    /// each ample move changes no property's value and commutes with every action of every
    /// path of up to three steps that does not take it (C1, bounded).
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
                    independent_along_paths(&model, s, a, 3);
                }
            }
        }
        println!("{ample_states} sampled states with an ample move");
        assert!(
            ample_states > 100,
            "only {ample_states} states had an ample move"
        );
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
