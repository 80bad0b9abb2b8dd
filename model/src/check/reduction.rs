//! Partial-order reduction with ample sets (spec MODEL-POR): in a state where a controller-
//! internal step is invisible to every property and independent of everything else that can
//! happen before it, explore that step alone.
//!
//! Which actions may be ample is decided per kind ([`role`], [`reach`]: matches without a
//! wildcard, so an action added later must be classified here to compile): the dispatchers'
//! moves, a deletion work's start and continuation, its completion, the API server's answer to
//! a read, and the pod informer's delivery. The conditions a state must meet are
//! [`node_dispatch_ample`], [`pod_dispatch_ample`], [`work_step_ample`], [`completion_ample`],
//! [`read_answer_ample`] and [`pod_delivery_ample`]. Where none is ample, a pod's cluster
//! ([`cluster`]: every step that concerns one pod, a worker's handling of it among them) may be
//! an ample set of several actions. The argument that they give the four ample-set conditions
//! is in specs/spec.md, "Partial-order reduction". A step that frees a work
//! id commutes with one that takes the lowest free id only up to a renaming of work ids
//! ([`ids_unobserved`] says when that is as good as equality).

use super::action::{Action, EnvOp};
use super::config::OpKind;
use super::state::{CachedPod, Delta, SysState};
use super::transition::TaintSys;
use smallvec::SmallVec;
use stateright::Model;
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::profile::CancelFlag;
use taintcheck_core::shared::Shared;
use taintcheck_core::{
    pod_updated, shard_of, NodePhase, PodItem, RequestId, Step, Verb, Work, WorkId, WorkPhase,
    Worker,
};

mod cluster;

pub use super::transition::Reduction;

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
    /// A finished work's map update (it frees the work's id): a candidate where states equal up
    /// to a renaming of work ids are as good as equal ([`ids_unobserved`]).
    Complete(WorkId),
    /// A worker's next step (`pick` among the pods it listed): a candidate when it processes the
    /// first pod left, where work ids are unobserved (it may create a work).
    Worker {
        /// The worker.
        worker: usize,
        /// Which listed pod, counted from the first left.
        pick: u16,
    },
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
            Step::CompleteWork(id) => Role::Complete(*id),
            Step::WorkerContinue { worker, pick, .. } => Role::Worker {
                worker: *worker,
                pick: *pick,
            },
            // A worker taking an item from its channels chooses what it handles next.
            Step::WorkerTakeNode(_) | Step::WorkerTakePod(_) => Role::Full,
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

/// What the conditions of every candidate read: the model, the state, the actions enabled in it,
/// what the environment can do before an ample step, and which kinds of candidate are allowed.
struct Ctx<'a> {
    model: &'a TaintSys,
    s: &'a SysState,
    actions: &'a [Action],
    env: Env<'a>,
    /// Work ids are unobserved ([`ids_unobserved`]): steps that free or take an id may be.
    renaming: bool,
}

/// The indices in `actions` of an ample set, in increasing order.
pub(super) type AmpleSet = SmallVec<[usize; 4]>;

/// The indices in `actions` (all the actions enabled in `s`) of an ample set smaller than
/// `actions`, if `s` has one: a single candidate independent of everything else, or else a
/// pod's cluster ([`cluster::pod_cluster`]). Work steps, answers, deliveries and clusters are
/// candidates only with [`Reduction::Por`] (not with symmetry), without user-defined properties
/// (spec PROP-1), which may observe any event a work emits, and without a client rate limit
/// (CORE-THROTTLE), whose one bucket makes every work's request depend on every other's.
pub(super) fn ample(model: &TaintSys, s: &SysState, actions: &[Action]) -> Option<AmpleSet> {
    let env = environment(model, s, actions);
    let local = model.reduction == Reduction::Por
        && model.custom.is_empty()
        && model.config.rate_limit.is_none();
    let renaming = local && ids_unobserved(s, &env);
    let cx = Ctx {
        model,
        s,
        actions,
        env,
        renaming,
    };
    let single = actions.iter().position(|a| {
        let env = &cx.env;
        let conditions = match role(a) {
            Role::NodeDispatch => node_dispatch_ample(s, env),
            Role::PodDispatch => pod_dispatch_ample(s, env),
            Role::Work(id) => local && work_step_ample(model, s, id, renaming, env),
            Role::Complete(id) => renaming && completion_ample(s, id, env),
            Role::Worker { worker, pick } => {
                renaming && pick == 0 && listed_pod_ample(s, worker, actions, env)
            }
            Role::Answer(id) => local && read_answer_ample(s, id, env),
            Role::PodDelivery => local && pod_delivery_ample(model, s, env),
            Role::Full => false,
        };
        conditions && invisible(model, s, a)
    });
    match single {
        Some(i) => Some(smallvec::smallvec![i]),
        None if local => cluster::pod_cluster(&cx),
        None => None,
    }
}

/// Work ids are unobserved from `s` on: states that differ only in which ids their works have
/// behave alike, so a step that frees an id and one that takes the lowest free id commute up to
/// a renaming of work ids, which is as good as commuting. Ids are only compared for equality
/// and a new work's id is fresh (no work has it) everywhere but in the history's failed
/// requests (SOME-4), which outlive their work; so no failed request may be recorded now or
/// later: none is, no fault is armed, and none can be (a fault is enabled at any instant while
/// budget is left, so it would be enabled now, and the budget only shrinks). User properties
/// (PROP-1) are excluded by the caller.
fn ids_unobserved(s: &SysState, env: &[Reach<'_>]) -> bool {
    s.history.failed.is_empty()
        && !s.env.fail_next
        && !env.iter().any(|r| matches!(r, Reach::Answers))
}

/// The action changes no property's value (checked on the state, not assumed).
fn invisible(model: &TaintSys, s: &SysState, a: &Action) -> bool {
    let Some(t) = model.successor(s, a) else {
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
    /// The candidate's own works (a work step, an answer to its request; a pod's cluster's).
    own: &'a [WorkId],
    /// The candidate reads the pod's cached object or arrival record (the fixed design's
    /// re-check): then no event for the pod may be delivered before it, not even one the pod
    /// queue drops.
    reads_cache: bool,
    /// The worker taking the candidate step, if a worker does: its own listing and channels
    /// wait for it.
    worker: Option<usize>,
    /// The candidate set delivers the pod stream's head, an event for the pod: the pod's events
    /// behind it are delivered only after it.
    delivers: bool,
}

/// Nothing but pod `k`'s own item (a dispatcher's move) or the works `own` can touch `k`, or the
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
    let in_flight = !scope.delivers
        && s.pods.pending.iter().any(|d| match d {
            Delta::Upsert(p) => p.pod.key == *k,
            Delta::Delete(key) => key == k,
        })
        && (scope.reads_cache || !silent_events(s, k));
    let env_reaches = env.iter().any(|r| match *r {
        Reach::Answers => false,
        Reach::Node(n) => scope.hosts.contains(&n),
        Reach::Pod(p) => p == k,
        Reach::Everything => true,
    });
    !in_flight
        && !env_reaches
        && !handled(s, k, scope.hosts, scope.worker)
        && !host_items(s, scope.hosts)
        && works_wait(s, |id, w| w.key.pod == *k && !scope.own.contains(&id))
}

/// A worker other than `skip` has, or will take from its channels, an item of pod `k` or of a
/// node in `hosts`, or has `k` among the listed pods it has still to process. A worker past the
/// listing of a host, without `k` among the pods left, reads nothing of `k` again, unless the
/// host was added to the node queue meanwhile: its `Done` queues the host again, whose next
/// handling lists `k`.
fn handled(s: &SysState, k: &PodKey, hosts: &[&NodeName], skip: Option<usize>) -> bool {
    let hosts = |n: &NodeName| hosts.contains(&n);
    let same_pod = |p: &PodItem| p.key == *k;
    s.ctrl.shards().busy().any(|(i, sh)| {
        Some(i) != skip
            && (sh.pods.iter().any(same_pod)
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
                })
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
        own: &[],
        reads_cache: false,
        worker: None,
        delivers: false,
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
/// it writes (the work, the entry, a request of its own) nobody else reads. The end of a
/// backoff may begin a new attempt (which the cycle proviso's rank does not bound): not a
/// candidate. A start that drops a cancelled work frees its id (which the next work created
/// anywhere takes): a candidate only where work ids are unobserved (`renaming`,
/// [`ids_unobserved`]).
fn work_step_ample(
    model: &TaintSys,
    s: &SysState,
    id: WorkId,
    renaming: bool,
    env: &[Reach<'_>],
) -> bool {
    let Some(w) = s.ctrl.timed_queue().works().get(&id) else {
        return false;
    };
    let hosts = work_hosts(s, w);
    let scope = Scope {
        pod: &w.key.pod,
        hosts: &hosts,
        own: &[id],
        reads_cache: model.profile.keeps_arrivals(),
        worker: None,
        delivers: false,
    };
    work_step_allowed(model, w, renaming) && no_pod_item(s, scope.pod) && isolated(s, &scope, env)
}

/// A step of work `w` (its timer, start or continuation) may be a candidate in its phase: not the
/// end of a backoff (it may begin a new attempt, which the cycle proviso's rank does not bound)
/// nor a throttled work's request (it takes a token every other work's next request waits for),
/// and a start that drops a cancelled work (it frees the work's id) only where work ids are
/// unobserved (`renaming`).
fn work_step_allowed(model: &TaintSys, w: &Work, renaming: bool) -> bool {
    match w.phase {
        WorkPhase::Spawned => {
            !w.cancelled || model.profile.cancel_flag == CancelFlag::Absent || renaming
        }
        WorkPhase::Backoff { .. } | WorkPhase::Throttled { .. } => false,
        WorkPhase::Armed
        | WorkPhase::Marked
        | WorkPhase::Requesting { .. }
        | WorkPhase::Answered { .. }
        | WorkPhase::Finished { .. } => true,
    }
}

/// The answer to work `w`'s request is to a read, and no fault is armed or can be armed before
/// it.
fn unfaulted_read(s: &SysState, w: &Work, env: &[Reach<'_>]) -> bool {
    let fault = s.env.fail_next || env.iter().any(|r| matches!(r, Reach::Answers));
    matches!(&w.phase, WorkPhase::Requesting { request, .. } if request.verb.is_read()) && !fault
}

/// A finished work's map update is ample: it reads the work and its pod `k`'s entry under the
/// work's key, and writes them (the work goes, its id is freed, the entry is removed, kept or
/// made a tombstone, CORE-A10). `k` is [`isolated`] with no item queued, so no handler reads or
/// writes `k`'s entries before it and every other work for `k` waits; the freed id is taken
/// only by a work created later, which the caller makes harmless ([`ids_unobserved`]).
fn completion_ample(s: &SysState, id: WorkId, env: &[Reach<'_>]) -> bool {
    let Some(w) = s.ctrl.timed_queue().works().get(&id) else {
        return false;
    };
    if !matches!(w.phase, WorkPhase::Finished { .. }) {
        return false;
    }
    let hosts = bound_to(s, &w.key.pod);
    let scope = Scope {
        pod: &w.key.pod,
        hosts: &hosts,
        own: &[id],
        reads_cache: false,
        worker: None,
        delivers: false,
    };
    no_pod_item(s, scope.pod) && isolated(s, &scope, env)
}

/// Worker `worker`'s step through the pods it listed (`handleNodeUpdate`'s loop, CORE-A5) that
/// processes the first pod left in name order, `k`, is ample when it has one immediate outcome.
/// The worker's other steps pick other pods: each leaves `k` first, and after this step the
/// same pod is picked one place earlier, so they commute with it up to that shift (the tests
/// map the labels). It reads what the worker holds (the listed object, the taints,
/// the listing's instant), `k`'s entries and works, `k`'s cached object and the arrival records
/// of `k` and its node; it writes `k`'s entries and works (a new work takes the lowest free id),
/// the history's claims about `k`, the worker's place in its list and, after the last pod, the
/// node queue (`Done` of the node: not a candidate if an event re-added the node meanwhile, for
/// then `Done` queues it again).
/// `k` is [`isolated`] from every other worker, with no item queued, no event in flight and
/// every work waiting, and no event or operation for its nodes (the handled node among them) can
/// add the node, so none of that changes before it; a work created meanwhile for another pod
/// takes another id, which the caller makes harmless ([`ids_unobserved`]).
fn listed_pod_ample(s: &SysState, worker: usize, actions: &[Action], env: &[Reach<'_>]) -> bool {
    let steps = actions
        .iter()
        .filter(|a| {
            matches!(a, Action::Controller(Step::WorkerContinue { worker: w, pick: 0, .. })
                if *w == worker)
        })
        .count();
    let Some(Worker::Node {
        node,
        phase: NodePhase::Pods { pods, next, .. },
        ..
    }) = s.ctrl.shards().get(worker).map(|sh| &sh.worker)
    else {
        return false;
    };
    let Some(pod) = pods.get(*next) else {
        return false;
    };
    let mut hosts = bound_to(s, &pod.key);
    hosts.push(node);
    hosts.extend(pod.node_name.as_ref());
    let scope = Scope {
        pod: &pod.key,
        hosts: &hosts,
        own: &[],
        reads_cache: true,
        worker: Some(worker),
        delivers: false,
    };
    // After the last pod, `Done` must not queue the node again: appends to the node queue from
    // two workers, or from a worker and a delivery, do not commute.
    let last = next + 1 == pods.len();
    steps == 1
        && !(last && s.ctrl.node_queue().requeues(node))
        && no_pod_item(s, scope.pod)
        && isolated(s, &scope, env)
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
    let hosts = work_hosts(s, w);
    let scope = Scope {
        pod: &w.key.pod,
        hosts: &hosts,
        own: &[work],
        reads_cache: false,
        worker: None,
        delivers: false,
    };
    unfaulted_read(s, w, env) && no_pod_item(s, scope.pod) && isolated(s, &scope, env)
}

/// The pod informer's delivery of its oldest event, for pod `k`, is ample: it writes `k`'s cached
/// object (and, in the fixed design, its arrival record) and adds at most `k`'s item to the pod
/// queue. Nothing reads them before it: no item of `k` is queued, held, on a channel or handled
/// (so the item it adds is neither queued nor processed: it goes to the queue's tail, which
/// commutes with the dispatcher's take of the head and with every `Done` that appends nothing:
/// [`pod_done_requeues`]), no worker has `k` among the pods it has
/// still to process, and no node item, node event or environment operation concerns a node the
/// listing of which would show `k` (its cached node and the event's), so no worker lists them;
/// and every work for `k` waits for a timer that is not due (the fixed design's works re-check
/// the cache, and a DELETE is judged against it when issued: EVICT-1, EVICT-2) unless the event
/// changes nothing they read ([`judged_alike`]). Later events, from the environment or from answers, go behind it; only a
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
        && !handled(s, k, &hosts, None)
        && !host_items(s, &hosts)
        && (works_wait(s, |_, w| w.key.pod == *k) || judged_alike(model, s, head))
        && !pod_done_requeues(s)
}

/// The pod event `head` leaves what a work of its pod reads of the cache alone: outside the
/// fixed design (whose works re-check the cache), the judgement of a DELETE when it is issued
/// (EVICT-1, EVICT-2, UID-1) reads the cached pod's UID, node, tolerations and bind instant, and
/// an update of the same incarnation that the intake filter drops (CORE-A2) keeps them all.
fn judged_alike(model: &TaintSys, s: &SysState, head: &Delta<PodKey, Shared<CachedPod>>) -> bool {
    let Delta::Upsert(new) = head else {
        return false;
    };
    !model.profile.keeps_arrivals()
        && s.pods.cache.get(&new.pod.key).is_some_and(|old| {
            old.pod.uid == new.pod.uid && pod_updated(Some(&old.pod), Some(&new.pod)).is_none()
        })
}

/// A pod item being processed (held by the dispatcher, on a channel or handled) was added again
/// meanwhile, so its `Done` appends it to the pod queue: that append and a delivery's do not
/// commute. Only a delivery adds a processed item again, so none can before the head's delivery.
fn pod_done_requeues(s: &SysState) -> bool {
    let c = &*s.ctrl;
    let q = c.pod_queue();
    c.held().1.is_some_and(|i| q.requeues(i))
        || c.shards().busy().any(|(_, sh)| {
            sh.pods.iter().any(|i| q.requeues(i))
                || match &sh.worker {
                    Worker::Idle => false,
                    Worker::Draining { pod } => q.requeues(pod),
                    Worker::Node { then, .. } => then.as_ref().is_some_and(|i| q.requeues(i)),
                }
        })
}

/// Keeps only the ample set of `actions` if `s` has one.
pub(super) fn reduce(model: &TaintSys, s: &SysState, actions: &mut Vec<Action>) {
    if let Some(set) = ample(model, s, actions) {
        let mut i = 0;
        actions.retain(|_| {
            i += 1;
            set.contains(&(i - 1))
        });
    }
}

#[cfg(test)]
mod tests;
