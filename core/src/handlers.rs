//! The handlers (semantics §4): `handleNodeUpdate` in its three phases, `handlePodUpdate`, and
//! `processPodOnNode`, the one place the controller decides what happens to a pod.
//! Spec: CORE-A5..CORE-A7, CORE-PRE.

use super::context::Context;
use super::effect::{Decision, Effect, EventKind, EventRecord, Note, WorkId};
use super::intake::PodItem;
use super::timed_queue::{Entry, Immediate, KeyView, TimedQueue, WorkPhase};
use super::ClusterView;
use crate::api::{NodeName, Pod, PodKey, Taint, Uid};
use crate::matching::{verdict, TolerationTime, Verdict};
use crate::profile::{DeadlinePolicy, ImmediatePath, Profile, WorkKeyPolicy};
use crate::shared::Shared;
use crate::small_map::SmallMap;
use crate::time::Time;
use std::sync::Arc;

/// Upstream `taintedNodes`: the NoExecute taints of every tainted node, never an empty list.
/// Spec: CORE-S1.
pub type TaintedNodes = SmallMap<NodeName, Arc<[Taint]>>;

/// The timed queue as the handlers hold it: shared with other states (or oracle branches) until
/// a handler changes it. Many decisions change nothing (a kept timer, a tolerated pod without a
/// work, a pod bound elsewhere), so each write below copies the queue only when it would change
/// it.
pub type Queue = Shared<TimedQueue>;

/// [`TimedQueue::cancel_work`]; without an entry under `key` it changes nothing and reports false.
fn cancel_work(
    queue: &mut Queue,
    key: &KeyView<'_>,
    profile: &Profile,
    out: &mut Vec<Effect>,
) -> bool {
    queue.entry(key).is_some() && queue.make_mut().cancel_work(key, profile, out)
}

/// [`TimedQueue::cancel_pod`]; without an entry to cancel it changes nothing and reports false.
fn cancel_pod(
    queue: &mut Queue,
    pod: &PodKey,
    keep: Option<&Uid>,
    profile: &Profile,
    out: &mut Vec<Effect>,
) -> bool {
    queue.holds_pod(pod, keep) && queue.make_mut().cancel_pod(pod, keep, profile, out)
}

/// [`TimedQueue::add_work`]; `AddWork` skips a key that has an entry, changing nothing.
fn add_work(
    queue: &mut Queue,
    key: &KeyView<'_>,
    created_at: Time,
    fire_at: Time,
    immediate: Immediate,
    out: &mut Vec<Effect>,
) -> Option<WorkId> {
    if queue.entry(key).is_some() {
        return None;
    }
    queue
        .make_mut()
        .add_work(key, created_at, fire_at, immediate, out)
}

/// What `handleNodeUpdate`'s first phase found.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeTaints {
    /// NotFound in the lister: the node left `taintedNodes`; no timer is cancelled (S4, N11).
    Gone,
    /// The node's NoExecute taints, in order (possibly none).
    Taints(Arc<[Taint]>),
}

/// `handleNodeUpdate` phase 1: read the node from the cache and update `taintedNodes` under its
/// lock (an empty list removes the entry). Spec: CORE-A5.
/// The map is copied (if shared) only when the entry changes: most updates leave it as it was.
#[doc(alias = "handleNodeUpdate")]
pub fn update_tainted_nodes(
    tainted: &mut Shared<TaintedNodes>,
    name: &NodeName,
    view: &impl ClusterView,
) -> NodeTaints {
    let Some(node) = view.node(name) else {
        untaint(tainted, name);
        return NodeTaints::Gone;
    };
    let taints: Arc<[Taint]> = node.no_execute_taints().cloned().collect();
    if taints.is_empty() {
        untaint(tainted, name);
    } else if tainted.get(name) != Some(&taints) {
        tainted.make_mut().insert(name.clone(), taints.clone());
    }
    NodeTaints::Taints(taints)
}

/// Removes `name`'s entry, copying the map only if it has one.
fn untaint(tainted: &mut Shared<TaintedNodes>, name: &NodeName) {
    if tainted.contains_key(name) {
        tainted.make_mut().remove(name);
    }
}

/// `handleNodeUpdate` phase 3, for one listed pod: the zero-taint short-circuit cancels (the
/// guard that keeps CORE-PRE), otherwise `processPodOnNode` with the node's one `now` (the
/// context's). Spec: CORE-A5.
pub fn node_update_pod(
    queue: &mut Queue,
    cx: Context<'_, impl ClusterView>,
    pod: &Pod,
    taints: &[Taint],
    immediate: Immediate,
    out: &mut Vec<Effect>,
) -> Option<Note> {
    let (profile, view) = (cx.profile, cx.view);
    if taints.is_empty() {
        // Only the listed incarnation's work: under UID keys a successor of the same name,
        // handled meanwhile from a fresher cache, keeps its own (configuration
        // `successor-stale-listing`).
        let key = KeyView::new(profile.work_key, &pod.key, &pod.uid);
        let listed_is_current = view.pod(&pod.key).is_some_and(|p| p.uid == pod.uid);
        if profile.work_key == WorkKeyPolicy::Uid && !listed_is_current {
            // The listed incarnation is gone from the cache: dropping its work is housekeeping,
            // and a "Cancelling deletion" event would name the pod now holding the name.
            cancel_work(queue, &key, profile, out);
        } else {
            cancel_with_event(queue, profile, key, out);
        }
        None
    } else {
        Some(process_pod_on_node(queue, cx, pod, taints, immediate, out))
    }
}

/// Upstream `handlePodUpdate`: a pod gone from the cache cancels its work; a pod bound elsewhere
/// than the item says is ignored (I1); an unbound pod or an untainted node ends here; otherwise
/// `processPodOnNode` with the node's current `taintedNodes` entry, whose decision is returned.
/// Spec: CORE-A6.
#[doc(alias = "handlePodUpdate")]
pub fn handle_pod_update(
    queue: &mut Queue,
    tainted: &TaintedNodes,
    cx: Context<'_, impl ClusterView>,
    item: &PodItem,
    immediate: Immediate,
    out: &mut Vec<Effect>,
) -> Option<Note> {
    let (profile, view) = (cx.profile, cx.view);
    let Some(pod) = view.pod(&item.key) else {
        cancel_pod_with_event(queue, profile, &item.key, None, out);
        return None;
    };
    if profile.work_key == WorkKeyPolicy::Uid {
        // Fixed design: works of earlier incarnations of this name are void (N5, N6). Dropping
        // them is housekeeping, not a cancellation of this pod's deletion, so no "Cancelling
        // deletion" event: the pod now holding the name may still be evicted (CANCEL-1).
        cancel_pod(queue, &pod.key, Some(&pod.uid), profile, out);
    }
    if pod.node_name != item.node_name {
        out.push(note(&pod.key, Note::NotOurNode));
        return None;
    }
    let taints = tainted.get(item.node_name.as_ref()?)?;
    Some(process_pod_on_node(queue, cx, pod, taints, immediate, out))
}

/// Upstream `cancelWorkWithEvent` for the pod `key`: every incarnation's entry except `keep`'s
/// (under name keys the one entry). "Cancelling deletion" iff a cancel reported true.
fn cancel_pod_with_event(
    queue: &mut Queue,
    profile: &Profile,
    key: &PodKey,
    keep: Option<&Pod>,
    out: &mut Vec<Effect>,
) {
    if cancel_pod(queue, key, keep.map(|p| &p.uid), profile, out) {
        out.push(cancel_event(key));
    }
}

fn cancel_with_event(
    queue: &mut Queue,
    profile: &Profile,
    key: KeyView<'_>,
    out: &mut Vec<Effect>,
) {
    if cancel_work(queue, &key, profile, out) {
        out.push(cancel_event(key.pod));
    }
}

fn cancel_event(pod: &PodKey) -> Effect {
    Effect::Event(EventRecord {
        pod: pod.clone(),
        kind: EventKind::CancellingDeletion,
    })
}

fn note(pod: &PodKey, note: Note) -> Effect {
    Effect::Decision(Decision {
        pod: pod.clone(),
        note,
    })
}

/// Upstream `processPodOnNode` (semantics §4.3), every branch:
///
/// 1. zero taints: cancel and carry on (upstream has no return); the decision is then reported as
///    [`Note::ZeroTaints`], spec CORE-PRE, because carrying on evicts (N7);
/// 2. not all taints tolerated: cancel, then `AddWork(now, now)` (two `Now()`s under
///    [`ImmediatePath::TwoNows`], whose outcome `immediate` chooses);
/// 3. every used toleration forever: cancel (PR #93722) or, in 1.18.6, nothing (T1);
/// 4. finite `m`: an existing timer is kept unless its `CreatedAt` is not before `now`, in which
///    case it is cancelled and re-added from its `CreatedAt`; else `AddWork(now, now + m)`.
///
/// Time is discrete here, so `CreatedAt == now` can happen where production clocks always give
/// `CreatedAt < now` (N8); we follow production and keep the timer on equality.
/// Under [`DeadlinePolicy::EarliestLegal`] steps 2 to 4 are one: the deadline is the earliest
/// legal eviction from the controller's arrival record ([`crate::Arrivals`]), `None` cancelling as
/// step 3 does. Spec: CORE-A7, PROFILE-10.
#[doc(alias = "processPodOnNode")]
pub fn process_pod_on_node(
    queue: &mut Queue,
    cx: Context<'_, impl ClusterView>,
    pod: &Pod,
    taints: &[Taint],
    immediate: Immediate,
    out: &mut Vec<Effect>,
) -> Note {
    let Context {
        profile,
        arrivals,
        now,
        ..
    } = cx;
    let key = KeyView::new(profile.work_key, &pod.key, &pod.uid);
    let zero = taints.is_empty();
    if zero {
        cancel_with_event(queue, profile, key, out);
    }
    let ops = profile.comparison_operators;
    let decided = if profile.deadline_policy == DeadlinePolicy::EarliestLegal {
        match arrivals.earliest_eviction(pod, taints, ops, now) {
            None => {
                cancel_with_event(queue, profile, key, out);
                Note::ToleratedForever
            }
            Some(due) => schedule_at(queue, key, due, now, out),
        }
    } else {
        match verdict(taints, &pod.tolerations, ops) {
            Verdict::Untolerated => {
                cancel_with_event(queue, profile, key, out);
                let immediate = match profile.immediate_path {
                    ImmediatePath::TwoNows => immediate,
                    ImmediatePath::SameNow => Immediate::Nil,
                };
                add_work(queue, &key, now, now, immediate, out);
                Note::EvictNow
            }
            Verdict::Tolerated(TolerationTime::Forever) => {
                if profile.cancel_on_forever {
                    cancel_with_event(queue, profile, key, out);
                    Note::ToleratedForever
                } else {
                    Note::ForeverNotCancelled
                }
            }
            Verdict::Tolerated(TolerationTime::After(m)) => {
                let trigger = now.plus(m);
                let mut start = now;
                if let Some((created_at, fire_at, _)) = queue.get_worker(&key) {
                    if created_at <= now {
                        out.push(note(&pod.key, Note::KeptExisting { fire_at }));
                        return Note::KeptExisting { fire_at };
                    }
                    start = created_at;
                    cancel_with_event(queue, profile, key, out);
                }
                match add_work(queue, &key, start, trigger, Immediate::Nil, out) {
                    Some(_) => Note::Scheduled { fire_at: trigger },
                    None => Note::AlreadyExisting,
                }
            }
        }
    };
    let decided = if zero { Note::ZeroTaints } else { decided };
    out.push(note(&pod.key, decided));
    decided
}

/// The fixed design's scheduling ([`DeadlinePolicy::EarliestLegal`]): the live work for `key` is
/// moved to `due`, earlier or later; a running one is left to its re-check; a missing or
/// finished one is replaced by a new work due then (at once when `due` has passed).
fn schedule_at(
    queue: &mut Queue,
    key: KeyView<'_>,
    due: Time,
    now: Time,
    out: &mut Vec<Effect>,
) -> Note {
    let live = queue
        .entry(&key)
        .and_then(Entry::work)
        .and_then(|id| queue.work(id).map(|w| (id, w)))
        .filter(|(_, w)| !w.cancelled && !matches!(w.phase, WorkPhase::Finished { .. }))
        .map(|(id, w)| (id, w.fire_at, w.phase == WorkPhase::Armed));
    match live {
        Some((id, fire_at, true)) => {
            if due == fire_at {
                Note::KeptExisting { fire_at }
            } else {
                queue.make_mut().reschedule(&key, id, due, now, out);
                Note::Rescheduled { fire_at: due }
            }
        }
        // Running: it re-checks the caches before each request.
        Some((_, fire_at, false)) => Note::KeptExisting { fire_at },
        None => {
            let fire_at = due.max(now);
            let queue = queue.make_mut();
            queue.forget(&key);
            queue.add_work(&key, now, fire_at, Immediate::Nil, out);
            if fire_at == now {
                Note::EvictNow
            } else {
                Note::Scheduled { fire_at }
            }
        }
    }
}

#[cfg(test)]
mod tests;
