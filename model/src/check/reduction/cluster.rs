//! A pod's cluster (spec MODEL-POR): the enabled steps that concern one pod `k` (its works'
//! steps, completions and answers to their reads, a worker's taking or handling of `k`'s item or
//! of `k` in a node's listing, the delivery of `k`'s event), explored together as one ample set
//! when nothing outside them can touch `k` before they run. A worker handling `k` and `k`'s running works read and write the same
//! entries and works, so no one of them is independent of the others; as a set they are
//! independent of everything else.

use super::{
    bound_to, invisible, isolated, no_pod_item, pod_done_requeues, role, unfaulted_read,
    work_hosts, work_step_allowed, AmpleSet, Ctx, Reach, Role, Scope,
};
use crate::check::action::Action;
use crate::check::state::{Delta, SysState};
use smallvec::SmallVec;
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::{shard_of, NodePhase, Step, WorkId, Worker};

/// The first pod, in the order of the enabled actions, whose cluster is ample.
pub(super) fn pod_cluster(cx: &Ctx<'_>) -> Option<AmpleSet> {
    let mut tried: SmallVec<[&PodKey; 4]> = SmallVec::new();
    for a in cx.actions {
        let Some(k) = pod_of(cx.s, a) else {
            continue;
        };
        if tried.contains(&k) {
            continue;
        }
        tried.push(k);
        if let Some(set) = cluster_of(cx, k) {
            return Some(set);
        }
    }
    None
}

/// The pod an action is a step for, if it is a work's step or answer or a worker's step
/// through one pod.
fn pod_of<'a>(s: &'a SysState, a: &Action) -> Option<&'a PodKey> {
    let work = |id: WorkId| s.ctrl.timed_queue().works().get(&id).map(|w| &w.key.pod);
    if let Action::Controller(Step::WorkerTakePod(v)) = a {
        return taken_pod(s, *v);
    }
    match role(a) {
        Role::Work(id) | Role::Complete(id) => work(id),
        Role::Answer(id) => work(WorkId(id.0)),
        Role::Worker { worker, pick: 0 } => worker_pod(s, worker),
        Role::PodDelivery => s.pods.pending.iter().next().map(|d| match d {
            Delta::Upsert(p) => &p.pod.key,
            Delta::Delete(key) => key,
        }),
        Role::Worker { .. } | Role::NodeDispatch | Role::PodDispatch | Role::Full => None,
    }
}

/// The pod of the item at the head of worker `v`'s pod channel, which its take would handle.
fn taken_pod(s: &SysState, v: usize) -> Option<&PodKey> {
    s.ctrl.shards().get(v)?.pods.iter().next().map(|p| &p.key)
}

/// The pod worker `v`'s next step handles at its first pick: its drained pod item's, or the
/// first listed pod left.
fn worker_pod(s: &SysState, v: usize) -> Option<&PodKey> {
    match &s.ctrl.shards().get(v)?.worker {
        Worker::Draining { pod } => Some(&pod.key),
        Worker::Node {
            phase: NodePhase::Pods { pods, next, .. },
            ..
        } => pods.get(*next).map(|p| &p.key),
        Worker::Node { .. } | Worker::Idle => None,
    }
}

/// Pod `k`'s cluster, if it is ample: every enabled action that concerns `k` is a member and
/// allowed; `k` is [`isolated`] from everything else (with the members' works as its own, the
/// member worker's listing and channels waiting for it, the nodes any member reads as hosts),
/// no other item of `k` is queued or held, the set is smaller than `actions`, and every member
/// is invisible. The members' conditions are the single candidates' minus what they ask of
/// each other.
fn cluster_of(cx: &Ctx<'_>, k: &PodKey) -> Option<AmpleSet> {
    let s = cx.s;
    let works = s.ctrl.timed_queue().works();
    let mut members = AmpleSet::new();
    let mut own: SmallVec<[WorkId; 4]> = SmallVec::new();
    let mut hosts: SmallVec<[&NodeName; 4]> = bound_to(s, k);
    let mut worker = None;
    let mut reads_cache = cx.model.profile.keeps_arrivals();
    let mut delivers = false;
    for (i, a) in cx.actions.iter().enumerate() {
        if let Action::Controller(Step::WorkerTakePod(v)) = a {
            if taken_pod(s, *v) == Some(k) {
                if worker.is_some_and(|w| w != *v) || !take_member(cx, *v, &mut hosts) {
                    return None;
                }
                worker = Some(*v);
                members.push(i);
            }
            continue;
        }
        let id = match role(a) {
            Role::Work(id) | Role::Complete(id) => id,
            Role::Answer(id) => WorkId(id.0),
            Role::Worker { worker: v, pick } => {
                if worker_pod(s, v) != Some(k) || pick != 0 {
                    continue;
                }
                if worker.is_some_and(|w| w != v) || !worker_member(cx, v, &mut hosts) {
                    return None;
                }
                worker = Some(v);
                reads_cache = true;
                members.push(i);
                continue;
            }
            Role::PodDelivery => {
                if pod_of(s, a) == Some(k) {
                    if pod_done_requeues(s) {
                        return None;
                    }
                    hosts.extend(event_nodes(s));
                    delivers = true;
                    members.push(i);
                }
                continue;
            }
            Role::NodeDispatch | Role::PodDispatch | Role::Full => continue,
        };
        let w = works.get(&id)?;
        if w.key.pod != *k {
            continue;
        }
        if !work_member(cx, a, id) {
            return None;
        }
        hosts.extend(work_hosts(s, w));
        if !own.contains(&id) {
            own.push(id);
        }
        members.push(i);
    }
    let scope = Scope {
        pod: k,
        hosts: &hosts,
        own: &own,
        reads_cache,
        worker,
        delivers,
    };
    let ample = !members.is_empty()
        && members.len() < cx.actions.len()
        && no_pod_item(s, k)
        && isolated(s, &scope, &cx.env)
        && members
            .iter()
            .all(|i| invisible(cx.model, s, &cx.actions[*i]));
    ample.then_some(members)
}

/// A step of work `id` (its timer, start, continuation, completion, or the answer to its
/// request) may be a member: as for the single candidates, but what they ask of the other works
/// of its pod, which are members too or wait. A start that drops a cancelled work and a
/// completion free the work's id (work ids must be unobserved); the answer must be to a read and
/// the fault unable to strike it; the end of a backoff and a throttled work's request are never
/// members.
fn work_member(cx: &Ctx<'_>, a: &Action, id: WorkId) -> bool {
    let Some(w) = cx.s.ctrl.timed_queue().works().get(&id) else {
        return false;
    };
    match role(a) {
        Role::Complete(_) => cx.renaming,
        Role::Answer(_) => unfaulted_read(cx.s, w, &cx.env),
        Role::Work(_) => work_step_allowed(cx.model, w, cx.renaming),
        Role::Worker { .. }
        | Role::NodeDispatch
        | Role::PodDispatch
        | Role::PodDelivery
        | Role::Full => false,
    }
}

/// Worker `v`'s step at pod `k` may be a member (it may create a work: work ids must be
/// unobserved), adding the nodes it reads to `hosts`:
/// - draining `k`'s item: it handles the item now (its node channel is empty) and nothing can
///   put a node item there before it ([`node_channel_stays_empty`]), and its `Done` appends
///   nothing (the item was not added again while processed; nothing can add it before the step,
///   with no event for `k` in flight);
/// - in a node's listing, at `k`, the first pod left: as for the single candidate, its `Done`
///   of the node after the last pod must not queue the node again.
fn worker_member<'a>(cx: &Ctx<'a>, v: usize, hosts: &mut SmallVec<[&'a NodeName; 4]>) -> bool {
    let s = cx.s;
    let Some(shard) = s.ctrl.shards().get(v) else {
        return false;
    };
    cx.renaming
        && match &shard.worker {
            Worker::Draining { pod } => {
                hosts.extend(pod.node_name.as_ref());
                shard.nodes.is_empty()
                    && node_channel_stays_empty(cx, v)
                    && !s.ctrl.pod_queue().requeues(pod)
            }
            Worker::Node {
                node,
                phase: NodePhase::Pods { pods, next, .. },
                ..
            } => {
                hosts.push(node);
                hosts.extend(pods.get(*next).and_then(|p| p.node_name.as_ref()));
                !(next + 1 == pods.len() && s.ctrl.node_queue().requeues(node))
            }
            Worker::Node { .. } | Worker::Idle => false,
        }
}

/// Worker `v`'s take of `k`'s item from its pod channel may be a member: its node channel is
/// empty and stays so ([`node_channel_stays_empty`]), so taking the pod item is its one choice,
/// and the pod channel has room, so a dispatcher's send to it sends whether or not the take
/// comes first. It adds the item's node to `hosts`.
fn take_member<'a>(cx: &Ctx<'a>, v: usize, hosts: &mut SmallVec<[&'a NodeName; 4]>) -> bool {
    let Some(shard) = cx.s.ctrl.shards().get(v) else {
        return false;
    };
    hosts.extend(shard.pods.iter().next().and_then(|p| p.node_name.as_ref()));
    shard.nodes.is_empty()
        && node_channel_stays_empty(cx, v)
        && shard.pods.len() < cx.s.ctrl.config().pod_channel_capacity
}

/// The nodes the pod stream's head names: its pod's cached node and the event's node.
fn event_nodes(s: &SysState) -> SmallVec<[&NodeName; 2]> {
    let Some(head) = s.pods.pending.iter().next() else {
        return SmallVec::new();
    };
    let (k, event_node) = match head {
        Delta::Upsert(p) => (&p.pod.key, p.pod.node_name.as_ref()),
        Delta::Delete(key) => (key, None),
    };
    let cached = s.pods.cache.get(k).and_then(|p| p.pod.node_name.as_ref());
    cached.into_iter().chain(event_node).collect()
}

/// No node item can reach worker `v`'s node channel before `v`'s next step: none queued or
/// held by the node dispatcher for `v`'s shard, no node event in flight for a node of that
/// shard (a delivery queues it), and no environment operation that can cause one. A node item
/// a worker is processing is its own shard's, and its `Done` queues it again only for that
/// shard.
fn node_channel_stays_empty(cx: &Ctx<'_>, v: usize) -> bool {
    let c = &*cx.s.ctrl;
    let workers = c.shards().len();
    let ours = |n: &NodeName| shard_of(n, workers) == v;
    !c.held().0.is_some_and(ours)
        && !c.node_queue().queued().any(ours)
        && !cx.s.nodes.pending.iter().any(|d| match d {
            Delta::Upsert(n) => ours(&n.node.name),
            Delta::Delete(n) => ours(n),
        })
        && !cx.env.iter().any(|r| match *r {
            Reach::Answers | Reach::Pod(_) => false,
            Reach::Node(n) => ours(n),
            Reach::Everything => true,
        })
}
