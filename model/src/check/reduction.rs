//! Partial-order reduction with ample sets (spec MODEL-POR): in a state where a controller-
//! internal step is invisible to every property and independent of everything else that can
//! happen before it, explore that step alone.
//!
//! Which actions may be ample is decided per kind ([`role`], [`reach`]: matches without a
//! wildcard, so an action added later must be classified here to compile): the dispatchers'
//! moves, a deletion work's start and continuation, the API server's answer to a read, and the
//! pod informer's delivery. The conditions a state must meet are [`node_dispatch_ample`],
//! [`pod_dispatch_ample`], [`work_step_ample`], [`read_answer_ample`] and
//! [`pod_delivery_ample`]; the argument that they give the four ample-set conditions is in
//! specs/spec.md, "Partial-order reduction".

use super::action::{Action, EnvOp};
use super::config::OpKind;
use super::state::{Delta, SysState};
use super::system::TaintSys;
use crate::api::{NodeName, PodKey};
use crate::core::{
    pod_updated, shard_of, NodePhase, PodItem, RequestId, Step, Verb, Work, WorkId, WorkPhase,
    Worker,
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
    /// The pod informer's delivery of its oldest event: a candidate.
    PodDelivery,
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
        Action::InformerDeliverPod => Role::PodDelivery,
        // A node delivery is followed by a worker listing the node's pods, which reads every
        // pod's cached object; the clock and the environment are visible.
        Action::Tick(_) | Action::InformerDeliverNode | Action::Env(_) => Role::Full,
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
/// Work steps, answers and deliveries are candidates only with [`Reduction::Por`] (not with
/// symmetry),
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
            Role::PodDelivery => local && pod_delivery_ample(model, s, &env),
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

/// Pod `k`'s events in flight, if delivering each leaves the pod queue alone: an update of the
/// same incarnation on the same node with the same tolerations, which the intake filter drops
/// (CORE-A2), each compared with the object the cache holds by then. `false` if one is an add,
/// a deletion, or a change the pod queue sees.
fn silent_events(s: &SysState, k: &PodKey) -> bool {
    let mut last = s.pods.cache.get(k).map(|p| &p.pod);
    for d in s.pods.pending.iter() {
        match d {
            Delta::Upsert(p) if p.pod.key == *k => match last {
                Some(old)
                    if old.uid == p.pod.uid && pod_updated(Some(old), Some(&p.pod)).is_none() =>
                {
                    last = Some(&p.pod);
                }
                _ => return false,
            },
            Delta::Delete(key) if key == k => return false,
            Delta::Upsert(_) | Delta::Delete(_) => {}
        }
    }
    true
}

/// A pod whose isolation an ample candidate needs (see [`isolated`]).
struct Scope<'a> {
    /// The pod.
    pod: &'a PodKey,
    /// The nodes it is bound to, and for a work the node its attempt reads.
    hosts: &'a [&'a NodeName],
    /// The candidate's own work (a work step, an answer to its request).
    own: Option<WorkId>,
    /// The candidate reads the pod's cached object or arrival record (the fixed design's
    /// re-check): then no event for the pod may be delivered before it, not even one the pod
    /// queue drops.
    reads_cache: bool,
}

/// Nothing but pod `k`'s own item (a dispatcher's move) or work `own` can touch `k`, or the
/// nodes `hosts` it is bound to, before the clock moves: the one-pod isolation the pod
/// dispatcher's, work and answer conditions share. An add of `k`'s item, a cancel or a new
/// decision for `k`, a change of its API object or its cached objects, all need an event for
/// `k` or one of its hosts: from the environment, or from the API server deleting or patching
/// `k`, which needs a request of a work for `k`, which needs a due timer or `k` handled by a
/// worker. So: no event for `k` in flight that the pod queue would see (none at all if the
/// candidate reads `k`'s cache) and none the environment can cause, no item for `k` on a channel
/// or being handled, every other work for `k` waiting for a timer that is not due, no node item,
/// node event or environment operation for a host, and no worker with `k` among the listed pods
/// it has still to process or about to list a host ([`handled`]). The pod queue and the held pod
/// item are the callers' to check.
fn isolated(s: &SysState, scope: &Scope<'_>, env: &[Reach<'_>]) -> bool {
    let k = scope.pod;
    let in_flight = s.pods.pending.iter().any(|d| match d {
        Delta::Upsert(p) => p.pod.key == *k,
        Delta::Delete(key) => key == k,
    }) && (scope.reads_cache || !silent_events(s, k));
    let env_reaches = env.iter().any(|r| match *r {
        Reach::Answers => false,
        Reach::Node(n) => scope.hosts.contains(&n),
        Reach::Pod(p) => p == k,
        Reach::Everything => true,
    });
    !in_flight
        && !env_reaches
        && !handled(s, k, scope.hosts)
        && !host_items(s, scope.hosts)
        && works_wait(s, |id, w| w.key.pod == *k && Some(id) != scope.own)
}

/// A worker has, or will take from its channels, an item of pod `k` or of a node in `hosts`, or
/// has `k` among the listed pods it has still to process. A worker past the listing of a host,
/// without `k` among the pods left, reads nothing of `k` again, unless the host was added to the
/// node queue meanwhile: its `Done` queues the host again, whose next handling lists `k`.
fn handled(s: &SysState, k: &PodKey, hosts: &[&NodeName]) -> bool {
    let hosts = |n: &NodeName| hosts.contains(&n);
    let same_pod = |p: &PodItem| p.key == *k;
    s.ctrl.shards().busy().any(|(_, sh)| {
        sh.pods.iter().any(same_pod)
            || sh.nodes.iter().any(hosts)
            || match &sh.worker {
                Worker::Idle => false,
                Worker::Draining { pod } => same_pod(pod),
                Worker::Node { node, phase, then } => {
                    then.as_ref().is_some_and(same_pod)
                        || match phase {
                            NodePhase::Updated { .. } => hosts(node),
                            NodePhase::Pods { pods, next, .. } => {
                                pods.get(*next..)
                                    .is_some_and(|rest| rest.iter().any(|p| p.key == *k))
                                    || (hosts(node) && s.ctrl.node_queue().requeues(node))
                            }
                        }
                }
            }
    })
}

/// A node item of a node in `hosts` is queued or held by the node dispatcher, or a node event
/// for one is in flight.
fn host_items(s: &SysState, hosts: &[&NodeName]) -> bool {
    let c = &*s.ctrl;
    let hosts = |n: &NodeName| hosts.contains(&n);
    c.held().0.is_some_and(hosts)
        || c.node_queue().queued().any(hosts)
        || s.nodes.pending.iter().any(|d| match d {
            Delta::Upsert(n) => hosts(&n.node.name),
            Delta::Delete(n) => hosts(n),
        })
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
    let scope = Scope {
        pod: k,
        hosts: &hosts,
        own: None,
        reads_cache: false,
    };
    room && !queued.any(|p| p.key == *k) && isolated(s, &scope, env)
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
    let hosts = work_hosts(s, w);
    let scope = Scope {
        pod: &w.key.pod,
        hosts: &hosts,
        own: Some(id),
        reads_cache: model.profile.keeps_arrivals(),
    };
    !excluded && no_pod_item(s, scope.pod) && isolated(s, &scope, env)
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
    let hosts = work_hosts(s, w);
    let scope = Scope {
        pod: &w.key.pod,
        hosts: &hosts,
        own: Some(work),
        reads_cache: false,
    };
    request.verb.is_read() && !fault && no_pod_item(s, scope.pod) && isolated(s, &scope, env)
}

/// The pod informer's delivery of its oldest event, for pod `k`, is ample: it writes `k`'s cached
/// object (and, in the fixed design, its arrival record) and adds at most `k`'s item to the pod
/// queue. Nothing reads them before it: no item of `k` is queued, held, on a channel or handled
/// (so the item it adds is neither queued nor processed: it goes to the queue's tail, which
/// commutes with the dispatcher's take of the head), no worker has `k` among the pods it has
/// still to process, and no node item, node event or environment operation concerns a node the
/// listing of which would show `k` (its cached node and the event's), so no worker lists them;
/// in the fixed design, whose works re-check the cache, every work for `k` waits for a timer
/// that is not due. Later events, from the environment or from answers, go behind it; only a
/// relist or a restart replaces the stream.
fn pod_delivery_ample(model: &TaintSys, s: &SysState, env: &[Reach<'_>]) -> bool {
    let Some(head) = s.pods.pending.iter().next() else {
        return false;
    };
    let (k, event_node) = match head {
        Delta::Upsert(p) => (&p.pod.key, p.pod.node_name.as_ref()),
        Delta::Delete(key) => (key, None),
    };
    let mut hosts: SmallVec<[&NodeName; 4]> = s
        .pods
        .cache
        .get(k)
        .and_then(|p| p.pod.node_name.as_ref())
        .into_iter()
        .collect();
    hosts.extend(event_node);
    let env_reaches = env.iter().any(|r| match *r {
        Reach::Answers | Reach::Pod(_) => false,
        Reach::Node(n) => hosts.contains(&n),
        Reach::Everything => true,
    });
    !env_reaches
        && no_pod_item(s, k)
        && !handled(s, k, &hosts)
        && !host_items(s, &hosts)
        && (!model.profile.keeps_arrivals() || works_wait(s, |_, w| w.key.pod == *k))
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
                let read =
                    s.ctrl
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
        use std::collections::BTreeMap;
        let cases: [(&str, u8, Option<usize>); 2] =
            [("three-pods", 1, None), ("default", 2, Some(3))];
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
                    Some(i) => vec![actions[i].clone()],
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
}
