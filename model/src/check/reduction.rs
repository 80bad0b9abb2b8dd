//! Partial-order reduction with ample sets (spec MODEL-POR): in a state where a controller-
//! internal step is invisible to every property and independent of everything else that can
//! happen before it, explore that step alone.
//!
//! Which actions may be ample is decided per kind ([`role`], [`reach`]: matches without a
//! wildcard, so an action added later must be classified here to compile): the dispatchers'
//! moves, a deletion work's start and continuation, and the API server's answer to a read. The
//! conditions a state must meet are [`node_dispatch_ample`], [`pod_dispatch_ample`],
//! [`work_step_ample`] and [`read_answer_ample`]; the argument that they give the four ample-set
//! conditions is in specs/spec.md, "Partial-order reduction".

use super::action::{Action, EnvOp};
use super::config::OpKind;
use super::state::{Delta, SysState};
use super::system::TaintSys;
use crate::api::{NodeName, PodKey};
use crate::core::{
    shard_of, NodePhase, PodItem, RequestId, Step, Verb, Work, WorkId, WorkPhase, Worker,
};
use crate::profile::CancelFlag;
use smallvec::SmallVec;
use stateright::Model;

/// Whether a run explores every interleaving or one representative per class of
/// interleavings that differ only in the order of independent invisible internal steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// Every enabled action in every state (the model as specified).
    #[default]
    None,
    /// Ample sets (spec MODEL-POR).
    Por,
    /// Ample sets among the dispatchers' moves only, for runs with symmetry reduction
    /// (MODEL-SYM): the first ample work step depends on the works' ids, which a representative
    /// renames, so symmetric states could choose differently, and reduction and symmetry
    /// combine soundly only with an ample choice the symmetries preserve; the dispatchers'
    /// moves carry no id.
    PorDispatchers,
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
            Reduction::PorDispatchers => "por-dispatchers",
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
    /// A work's eviction timer firing, its start or its continuation (no API write, no queue,
    /// no work id freed): a candidate.
    Work(WorkId),
    /// The API server's answer to a request: a candidate when the request is a read.
    Answer(RequestId),
    /// Never ample (visible, or dependent on too much to argue).
    Full,
}

/// The role of each kind of action. Every kind is listed: a new one must be classified.
fn role(a: &Action) -> Role {
    match a {
        Action::Controller(step) => match step {
            Step::DispatchNode => Role::NodeDispatch,
            Step::DispatchPod => Role::PodDispatch,
            Step::FireTimer(timer) => Role::Work(WorkId(timer.0)),
            Step::StartWork(id) | Step::ContinueWork(id) => Role::Work(*id),
            // A worker reads the caches deliveries change and creates works (taking the lowest
            // free id); a completion frees its work's id, which the next work created anywhere
            // takes.
            Step::WorkerTakeNode(_)
            | Step::WorkerTakePod(_)
            | Step::WorkerContinue { .. }
            | Step::CompleteWork(_) => Role::Full,
        },
        Action::ApiRespond(id) => Role::Answer(*id),
        Action::Tick(_)
        | Action::InformerDeliverNode
        | Action::InformerDeliverPod
        | Action::Env(_) => Role::Full,
    }
}

/// What an environment operation can reach: the controller learns of it only through the
/// watch events it queues (or, for a restart or a relist, everything). Every operation is
/// listed: a new one must be classified.
#[derive(Clone, Copy)]
enum Reach<'a> {
    /// The API server's next answer only (the fault).
    Answers,
    /// Events of this node.
    Node(&'a NodeName),
    /// Events of this pod (by key).
    Pod(&'a PodKey),
    /// The whole controller.
    Everything,
}

fn reach(op: &EnvOp) -> Reach<'_> {
    match op {
        EnvOp::FailNextCall => Reach::Answers,
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

/// What the environment can do before an ample step runs: the operations enabled now (cluster
/// changes and restarts need a grid instant, the clock stays put until the step runs, and the
/// budget only shrinks), plus a relist whenever one may become enabled (a watch may break once
/// an event is in flight, and internal steps put events in flight).
fn environment<'a>(model: &TaintSys, s: &SysState, actions: &'a [Action]) -> Env<'a> {
    let mut env: Env<'a> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Env(op) => Some(reach(op)),
            _ => None,
        })
        .collect();
    if model.config.allows(OpKind::DropWatch) && s.env.budget > 0 {
        env.push(Reach::Everything);
    }
    env
}

type Env<'a> = SmallVec<[Reach<'a>; 8]>;

/// The index in `actions` (all the actions enabled in `s`) of an ample action, if `s` has one.
/// Work steps and answers are candidates only with [`Reduction::Por`] (not with symmetry),
/// without user-defined properties (spec PROP-1),
/// which may observe any event a work emits, and without a client rate limit (CORE-THROTTLE),
/// whose one bucket makes every work's request depend on every other's.
pub(super) fn ample(model: &TaintSys, s: &SysState, actions: &[Action]) -> Option<usize> {
    let env = environment(model, s, actions);
    let local = model.reduction == Reduction::Por
        && model.custom.is_empty()
        && model.config.rate_limit.is_none();
    actions.iter().position(|a| {
        let conditions = match role(a) {
            Role::NodeDispatch => node_dispatch_ample(s, &env),
            Role::PodDispatch => pod_dispatch_ample(s, &env),
            Role::Work(id) => local && work_step_ample(model, s, id, &env),
            Role::Answer(id) => local && read_answer_ample(s, id, &env),
            Role::Full => false,
        };
        conditions && invisible(model, s, a)
    })
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
fn node_dispatch_ample(s: &SysState, env: &[Reach<'_>]) -> bool {
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
    let env_reaches = env.iter().any(|r| match *r {
        Reach::Answers => false,
        Reach::Node(n) => n == x,
        Reach::Pod(_) | Reach::Everything => true,
    });
    room && !in_flight
        && !env_reaches
        && c.shards().all_idle()
        && c.held().1.is_none()
        && c.pod_queue().is_empty()
        && s.pods.pending.is_empty()
        && works_wait(s, |_, _| true)
}

/// Every work `which` selects waits for a timer that is not due: it cannot start, send a
/// request or fire before the clock moves.
fn works_wait(s: &SysState, which: impl Fn(WorkId, &Work) -> bool) -> bool {
    s.ctrl
        .timed_queue()
        .works()
        .iter()
        .filter(|(id, w)| which(**id, w))
        .all(|(_, w)| match w.phase {
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

/// Nothing but pod `k`'s own item (a dispatcher's move) or work `own` can touch `k`, or the
/// nodes `hosts` it is bound to, before the clock moves: the one-pod isolation the pod
/// dispatcher's, work and answer conditions share. An add of `k`'s item, a cancel or a new
/// decision for `k`, a change of its API object or its cached objects, all need an event for
/// `k` or one of its hosts: from the environment, or from the API server deleting or patching
/// `k`, which needs a request of a work for `k`, which needs a due timer or `k` handled by a
/// worker. So: no event for `k` in flight and none the environment can cause, no item for `k` on
/// a channel or being handled, every other work for `k` waiting for a timer that is not due, no
/// node item, node event or environment operation for a host, and no worker with `k` among its
/// listed pods. The pod queue and the held pod item are the callers' to check.
fn isolated(
    s: &SysState,
    k: &PodKey,
    hosts: &[&NodeName],
    env: &[Reach<'_>],
    own: Option<WorkId>,
) -> bool {
    let c = &*s.ctrl;
    let hosts = |n: &NodeName| hosts.contains(&n);
    let same_pod = |p: &PodItem| p.key == *k;
    let in_flight = s.pods.pending.iter().any(|d| match d {
        Delta::Upsert(p) => p.pod.key == *k,
        Delta::Delete(key) => key == k,
    });
    let env_reaches = env.iter().any(|r| match *r {
        Reach::Answers => false,
        Reach::Node(n) => hosts(n),
        Reach::Pod(p) => p == k,
        Reach::Everything => true,
    });
    let handled = c.shards().busy().any(|(_, sh)| {
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
    let node_items = c.held().0.is_some_and(hosts)
        || c.node_queue().queued().any(hosts)
        || s.nodes.pending.iter().any(|d| match d {
            Delta::Upsert(n) => hosts(&n.node.name),
            Delta::Delete(n) => hosts(n),
        });
    !in_flight
        && !env_reaches
        && !handled
        && !node_items
        && works_wait(s, |id, w| w.key.pod == *k && Some(id) != own)
}

/// The nodes pod `k` is bound to in its cached object and its API object.
fn bound_to<'a>(s: &'a SysState, k: &PodKey) -> SmallVec<[&'a NodeName; 4]> {
    let cached = s.pods.cache.get(k).and_then(|p| p.pod.node_name.as_ref());
    let api = s.api.pods.get(k).and_then(|p| p.pod.node_name.as_ref());
    cached.into_iter().chain(api).collect()
}

/// The pod dispatcher's move is ample: it moves the item it holds into its channel (which now
/// has room), or the pod queue's head `i` into a channel with room, and then no `Add(i)` can
/// precede it: `i`'s pod `k` is [`isolated`] (its hosts include the item's node) and no other
/// item for `k` is queued.
fn pod_dispatch_ample(s: &SysState, env: &[Reach<'_>]) -> bool {
    let c = &*s.ctrl;
    if c.held().1.is_some() {
        // Enabled only with room; moving the held item commutes with every queue add (the item
        // is being processed: an add only marks it dirty) and with every channel receive. Only
        // a restart resets the dispatcher.
        return !env.iter().any(|r| matches!(r, Reach::Everything));
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
    let mut hosts = bound_to(s, k);
    hosts.extend(i.node_name.as_ref());
    room && !queued.any(|p| p.key == *k) && isolated(s, k, &hosts, env, None)
}

/// No item for pod `k` is queued or held by the pod dispatcher.
fn no_pod_item(s: &SysState, k: &PodKey) -> bool {
    let c = &*s.ctrl;
    !c.pod_queue().queued().any(|p| p.key == *k) && c.held().1.is_none_or(|p| p.key != *k)
}

/// The nodes a work's next step may read: its pod's, and the node its attempt reads (a live
/// read's `GetNode`, the node of the pod it fetched).
fn work_hosts<'a>(s: &'a SysState, w: &'a Work) -> SmallVec<[&'a NodeName; 4]> {
    let mut hosts = bound_to(s, &w.key.pod);
    let (request, fetched) = match &w.phase {
        WorkPhase::Requesting {
            request, fetched, ..
        }
        | WorkPhase::Answered {
            request, fetched, ..
        } => (Some(request), fetched.as_ref()),
        _ => (None, None),
    };
    if let Some(Verb::GetNode(n)) = request.map(|r| &r.verb) {
        hosts.push(n);
    }
    hosts.extend(fetched.and_then(|p| p.pod.node_name.as_ref()));
    hosts
}

/// A work's eviction timer firing, its start or its continuation is ample: its pod is
/// [`isolated`] with no item queued, so what the step reads (the work, the pod's entry, its
/// cached pod and node, the arrival record of both, the cancel claim) stays as it is, and what
/// it writes (the work, the entry, a request of its own) nobody else reads. A start that drops
/// a cancelled work frees its id (which the next work created anywhere takes), and the end of a
/// backoff may begin a new attempt (which the cycle proviso's rank does not bound): neither is a
/// candidate.
fn work_step_ample(model: &TaintSys, s: &SysState, id: WorkId, env: &[Reach<'_>]) -> bool {
    let Some(w) = s.ctrl.timed_queue().works().get(&id) else {
        return false;
    };
    let excluded = match w.phase {
        WorkPhase::Spawned => w.cancelled && model.profile.cancel_flag != CancelFlag::Absent,
        // A throttled work's request takes a token every other work's next request waits for.
        WorkPhase::Backoff { .. } | WorkPhase::Throttled { .. } => true,
        WorkPhase::Armed
        | WorkPhase::Marked
        | WorkPhase::Requesting { .. }
        | WorkPhase::Answered { .. }
        | WorkPhase::Finished { .. } => false,
    };
    let k = &w.key.pod;
    !excluded && no_pod_item(s, k) && isolated(s, k, &work_hosts(s, w), env, Some(id))
}

/// The answer to a read (`GET` of the pod or, in a live read, of its node) is ample: it writes
/// nothing in the API server and only its work reads it; the fault cannot strike it (none armed,
/// none can be armed before it), and its pod is [`isolated`] (the node read is one of its hosts),
/// so the objects it reads stay as they are.
fn read_answer_ample(s: &SysState, id: RequestId, env: &[Reach<'_>]) -> bool {
    let work = WorkId(id.0);
    let Some(w) = s.ctrl.timed_queue().works().get(&work) else {
        return false;
    };
    let WorkPhase::Requesting { request, .. } = &w.phase else {
        return false;
    };
    let fault = s.env.fail_next || env.iter().any(|r| matches!(r, Reach::Answers));
    let k = &w.key.pod;
    request.verb.is_read()
        && !fault
        && no_pod_item(s, k)
        && isolated(s, k, &work_hosts(s, w), env, Some(work))
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
            for profile in profiles() {
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
}
