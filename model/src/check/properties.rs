//! The properties: their names and spec ids ([`PROPERTIES`]) and what each reads in a state.
//! Safety properties that are about an instant in the past (when a DELETE was issued or
//! applied) are decided by the step that commits it (`judge`) and kept as a bit in
//! [`History`](super::state::History); the others read the state. Liveness is a bounded
//! deadline over the explicit clock (`always`), never `eventually`. The model lists them in
//! stateright form in [`TaintSys::properties`](super::transition::TaintSys). Spec: specs/spec.md,
//! "Properties".

pub mod custom;

// The names and the vocabulary are what configurations and scenarios declare, so they live with
// the formats; the model gives them meaning.
pub use taintcheck_formats::properties::{vocabulary, PropertyInfo, PROPERTIES};

use super::state::{earliest_eviction, ApiPod, SysState};
use smallvec::SmallVec;
use taintcheck_core::api::{PodKey, Taint};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{shard_of, PodItem, WorkPhase, Worker};
use vocabulary::Timing;

/// A bit of `History::violated` (for `always` properties) or `History::witnessed`
/// (for `sometimes` properties).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// EVICT-1 violated.
    EvictAfterRemoval = 0,
    /// EVICT-2 violated.
    Premature = 1,
    /// UID-1 violated.
    UidSafety = 2,
    /// JUST-1 violated.
    JustifiedSinceBind = 3,
    /// CANCEL-1 violated.
    HonestCancel = 4,
    /// CORE-PRE violated.
    CorePrecondition = 5,
    /// CANCEL-2 violated.
    WriteAfterCancel = 6,
}

/// A bit of `History::witnessed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Witness {
    /// SOME-1: an eviction at the instant its taint applied.
    ImmediateEviction = 0,
    /// SOME-2: an eviction after tolerationSeconds.
    SecondsEviction = 1,
    /// SOME-3: a "Cancelling deletion" event.
    CancelledTimer = 2,
    /// SOME-4: a deletion that succeeded after a failed request.
    RetriedDeletion = 3,
    /// SOME-5: an eviction after a controller restart.
    EvictionAfterRestart = 4,
}

impl Flag {
    /// Its bit in `History::violated`.
    pub fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl Witness {
    /// Its bit in `History::witnessed`.
    pub fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// The `always` property of flag `f` holds: no step has recorded its violation.
pub(super) fn flag_clear(s: &SysState, f: Flag) -> bool {
    s.history.violated & f.bit() == 0
}

/// The `sometimes` property of witness `w` has its example in this state's past.
pub(super) fn witnessed(s: &SysState, w: Witness) -> bool {
    s.history.witnessed & w.bit() != 0
}

/// TIMER-1: every armed, uncancelled eviction timer is the one its key's entry names, so a
/// later `CancelWork` of that key can still stop it. A completing older work that removes or
/// overwrites a newer entry (N4) leaves that entry's timer armed and out of reach.
pub(super) fn no_orphaned_timer(s: &SysState) -> bool {
    let q = s.ctrl.timed_queue();
    q.works().iter().all(|(id, w)| {
        w.phase != WorkPhase::Armed
            || w.cancelled
            || q.entry(&w.key).and_then(|e| e.work()) == Some(*id)
    })
}

/// LIVE-1 / LIVE-2: no pod is still on its node in the API later than its earliest legal
/// eviction plus the processing bound `bound`. `per_incarnation`: deadlines count from the last
/// restart at the earliest (LIVE-1); otherwise from the API's own history (LIVE-2, TimeAdded
/// semantics). `comparison_operators`: the profile's switch.
pub(super) fn bounded(
    s: &SysState,
    comparison_operators: bool,
    bound: Duration,
    per_incarnation: bool,
) -> bool {
    bounded_for(s, comparison_operators, bound, per_incarnation, |_| true)
}

/// [`bounded`] for the pods `selected` picks (a user's `evicted_in_time`, PROP-5).
pub(super) fn bounded_for(
    s: &SysState,
    comparison_operators: bool,
    bound: Duration,
    per_incarnation: bool,
    selected: impl Fn(&PodKey) -> bool,
) -> bool {
    let floor = match (per_incarnation, s.env.restarted_at) {
        (true, Some(t)) => t,
        _ => Time::ZERO,
    };
    s.api.pods.values().all(|p| {
        let (Some(node), Some(bound_since)) = (p.pod.node_name.as_ref(), p.bound_since) else {
            return true;
        };
        if p.deletion.is_some() || !selected(&p.pod.key) {
            return true; // Terminating: evicted, whether or not the object is gone (API-2).
        }
        // The earliest eviction is never before `pod_since`: within the bound of that (or of
        // the last change), the pod is in time whatever its node's taints say.
        let pod_since = bound_since.max(floor);
        if s.now <= pod_since.max(p.changed_at).plus(bound) {
            return true;
        }
        let Some(n) = s.api.nodes.get(node) else {
            return true;
        };
        // Clamped to the floor only where a taint predates it (a copy only then).
        let clamped: Vec<_>;
        let since = if n.taint_since.iter().all(|t| *t >= floor) {
            &n.taint_since[..]
        } else {
            clamped = n.taint_since.iter().map(|t| (*t).max(floor)).collect();
            &clamped[..]
        };
        match earliest_eviction(&n.node, since, &p.pod, pod_since, comparison_operators) {
            Some(at) => s.now <= at.max(p.changed_at).plus(bound),
            None => true,
        }
    })
}

/// SOME-1 / SOME-2: how the eviction of `p` is timed, as the API shows its node in `s` when
/// the DELETE is applied: at once when its earliest legal eviction is at or before its exposure
/// start (the latest arrival of a NoExecute taint on its node, or its bind if later), else
/// after a tolerationSeconds. `None`: pending, its node gone, or no such eviction time.
pub(super) fn eviction_timing(
    s: &SysState,
    p: &ApiPod,
    comparison_operators: bool,
) -> Option<Timing> {
    let n = s.api.nodes.get(p.pod.node_name.as_ref()?)?;
    let bound = p.bound_since?;
    let at = earliest_eviction(&n.node, &n.taint_since, &p.pod, bound, comparison_operators)?;
    let start = n
        .taint_since
        .iter()
        .copied()
        .max()
        .unwrap_or(bound)
        .max(bound);
    Some(match at <= start {
        true => Timing::AtOnce,
        false => Timing::AfterToleration,
    })
}

/// CONV-1: whenever nothing is in flight (informers drained, controller quiescent), the
/// controller's `taintedNodes` equals the API's non-empty NoExecute taint lists.
pub(super) fn converged_when_quiescent(s: &SysState) -> bool {
    if !s.quiescent() {
        return true;
    }
    let expected: Vec<(&str, Vec<&Taint>)> = s
        .api
        .nodes
        .values()
        .map(|n| {
            (
                &*n.node.name,
                n.node.no_execute_taints().collect::<Vec<_>>(),
            )
        })
        .filter(|(_, t)| !t.is_empty())
        .collect();
    let actual: Vec<(&str, Vec<&Taint>)> = s
        .ctrl
        .tainted_nodes()
        .iter()
        .map(|(n, t)| (&**n, t.iter().collect()))
        .collect();
    expected == actual
}

/// QUEUE-1: every work-queue key in flight (held by a dispatcher, buffered in a channel, or being
/// handled by a worker) is in its queue's `processing` set and in exactly one of those places
/// (client-go's "never handed out twice"); and every item sits on, and is handled by, the shard
/// its node name hashes to (semantics §3).
pub(super) fn queue_exclusive(s: &SysState) -> bool {
    let ctrl = &s.ctrl;
    let workers = ctrl.shards().len();
    // On the stack: this runs on every state.
    let mut nodes: SmallVec<[&str; 8]> = SmallVec::new();
    let mut pods: SmallVec<[&PodItem; 8]> = SmallVec::new();
    let (held_node, held_pod) = ctrl.held();
    nodes.extend(held_node.map(|n| &**n));
    pods.extend(held_pod);
    for (i, shard) in ctrl.shards().busy() {
        let (node_from, pod_from) = (nodes.len(), pods.len());
        nodes.extend(shard.nodes.iter().map(|n| &**n));
        pods.extend(shard.pods.iter());
        match &shard.worker {
            Worker::Idle => {}
            Worker::Draining { pod } => pods.push(pod),
            Worker::Node { node, then, .. } => {
                nodes.push(node);
                pods.extend(then);
            }
        }
        if nodes[node_from..].iter().any(|n| shard_of(n, workers) != i)
            || pods[pod_from..]
                .iter()
                .any(|p| shard_of(p.node_str(), workers) != i)
        {
            return false;
        }
    }
    let in_processing = nodes.iter().all(|n| ctrl.node_queue().is_processing(*n))
        && pods.iter().all(|p| ctrl.pod_queue().is_processing(*p));
    nodes.sort_unstable();
    pods.sort_unstable();
    let distinct = nodes.windows(2).all(|w| w[0] != w[1]) && pods.windows(2).all(|w| w[0] != w[1]);
    in_processing && distinct
}
