//! The model's state outside the controller: the API server's truth, the two informers (watch
//! streams that lag, and the caches they fill), the environment's budget, and the history
//! variables the properties read.
//!
//! Everything is ordered (`SmallMap`, `VecDeque`) and small, so states hash deterministically.
//! Spec: MODEL-S1..MODEL-S6 (specs/spec.md, "State variables").

use super::symmetry::Symmetry;
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};
use taintcheck_core::api::{Deletion, Name, Node, NodeName, Pod, PodKey, ResourceVersion, Uid};
use taintcheck_core::matching;
use taintcheck_core::shared::{Inline, Shared};
use taintcheck_core::small_map::SmallMap;
use taintcheck_core::time::Time;
use taintcheck_core::{Controller, Renaming, WorkPhase};

/// One state of the whole system. Spec: MODEL-S1. Its `Debug` (`display::state`) names the
/// parts as the spec does, for the Explorer.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SysState {
    /// The bounded monotone clock (ms).
    pub now: Time,
    /// Shared between states until an action changes it ([`Shared::make_mut`]): most steps do
    /// not. So are the informer caches, each hashed once per version.
    pub api: Shared<ApiServer>,
    /// The node informer.
    pub nodes: Informer<NodeName, CachedNode>,
    /// The pod informer.
    pub pods: Informer<PodKey, CachedPod>,
    /// The controller core, stored in place: nearly every step changes it, so sharing it would
    /// copy it for almost every successor anyway. Its own parts are shared, each hashed once
    /// per version.
    pub ctrl: Inline<Controller>,
    /// The environment's budget and pending fault.
    pub env: EnvState,
    /// What the properties need to know of the past.
    pub history: History,
    /// What the configuration lets the symmetry reduction rename (constant; ignored by `Eq` and
    /// `Hash`).
    pub symmetry: Symmetry,
}

impl SysState {
    /// Nothing in flight but armed timers: informers drained and synced, the controller
    /// waiting only for timers, no request pending, no timer due. [`Action::Tick`](super::action::Action::Tick) is
    /// enabled only here, and CONV-1 is judged only here.
    pub fn quiescent(&self) -> bool {
        self.nodes.is_drained()
            && self.pods.is_drained()
            && waits_only_for_timers(&self.ctrl)
            && self.ctrl.next_deadline().is_none_or(|d| d > self.now)
    }
}

/// The controller has nothing to do but wait for timers: queues idle, nothing held, buffered
/// or handled, and every work armed (eviction timer) or backing off (backoff timer).
/// `Controller::is_quiescent` does not count backoff as waiting.
fn waits_only_for_timers(ctrl: &Controller) -> bool {
    let (held_node, held_pod) = ctrl.held();
    ctrl.node_queue().is_idle()
        && ctrl.pod_queue().is_idle()
        && held_node.is_none()
        && held_pod.is_none()
        && ctrl.shards().all_idle()
        && ctrl.timed_queue().works().values().all(|w| {
            matches!(
                w.phase,
                WorkPhase::Armed | WorkPhase::Backoff { .. } | WorkPhase::Throttled { .. }
            )
        })
}

/// The API server's objects: the truth every cache lags behind. Spec: MODEL-S2.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ApiServer {
    /// Each object is shared, like the caches' entries and the watch events in flight: a
    /// change to one object copies that object and the map's pointers, not every object.
    /// The nodes, by name.
    pub nodes: SmallMap<NodeName, Shared<ApiNode>>,
    /// The pods, by key.
    pub pods: SmallMap<PodKey, Shared<ApiPod>>,
    /// The next UID to hand out (UIDs are `<name>-<n>`; n never repeats within a behaviour).
    pub next_uid: u16,
}

/// A node in the API server, with when each of its taints appeared (history, not API data).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiNode {
    /// The object.
    pub node: Node,
    /// Parallel to `node.taints`: the instant each taint was added.
    pub taint_since: Vec<Time>,
}

/// A pod in the API server, with its exposure history.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiPod {
    /// The object.
    pub pod: Pod,
    /// When it was bound to its node (`None` while pending).
    pub bound_since: Option<Time>,
    /// When its tolerations last changed (creation counts): an obligation cannot fall due
    /// before the change that created it (spec LIVE-1).
    pub changed_at: Time,
    /// Since its bind, the API has shown its node with a NoExecute taint it does not tolerate
    /// forever (spec JUST-1's witness).
    pub exposed_in_api: bool,
    /// Its resourceVersion: a counter bumped by every write to this object (only equality is
    /// ever compared, so a per-object counter is as good as the server's global one).
    pub version: ResourceVersion,
    /// Its status has the taint manager's `DisruptionTarget` condition (set by a PATCH).
    pub disruption_target: bool,
    /// Its graceful deletion, once a DELETE started one: the pod is Terminating and counts as
    /// evicted (API-2, LIVE-1).
    pub deletion: Option<Deletion>,
}

impl ApiPod {
    /// A new object (create or recreate).
    pub fn new(pod: Pod, now: Time) -> ApiPod {
        ApiPod {
            bound_since: pod.node_name.as_ref().map(|_| now),
            changed_at: now,
            pod,
            exposed_in_api: false,
            version: ResourceVersion(1),
            disruption_target: false,
            deletion: None,
        }
    }

    /// Records a write to the object.
    pub fn bump(&mut self) {
        self.version.0 += 1;
    }
}

/// A watch event in flight from the API server to an informer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Delta<K, V> {
    /// An object added or changed.
    Upsert(V),
    /// The object with this key deleted.
    Delete(K),
}

/// A per-kind informer: the watch events not yet delivered (in order) and the cache (lister and
/// index) they build. Spec: MODEL-S3.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Informer<K: Ord, V> {
    /// Shared between states until a delivery changes it ([`Shared::make_mut`]).
    pub cache: Shared<SmallMap<K, Shared<V>>>,
    /// The watch events not yet delivered, oldest first.
    pub pending: Pending<Delta<K, Shared<V>>>,
    /// After a restart: how many initial-list events at the head of `pending` remain; the
    /// controller's workers wait for zero (upstream `WaitForCacheSync`).
    pub unsynced: u16,
}

impl<K: Ord, V> Default for Informer<K, V> {
    fn default() -> Self {
        Informer {
            cache: Shared::default(),
            pending: Pending::default(),
            unsynced: 0,
        }
    }
}

impl<K: Ord, V> Informer<K, V> {
    /// Every watch event delivered.
    pub fn is_drained(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The events an informer has not delivered, oldest first: a queue of a few, stored inline,
/// so that copying a state with events in flight allocates nothing. Hashed as a `VecDeque`
/// is (length, then each event).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending<T>(SmallVec<[T; 2]>);

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending(SmallVec::new())
    }
}

impl<T> Pending<T> {
    /// Queues `event` last.
    pub fn push_back(&mut self, event: T) {
        self.0.push(event);
    }

    /// Takes the oldest event.
    pub fn pop_front(&mut self) -> Option<T> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    /// The oldest event.
    pub fn front(&self) -> Option<&T> {
        self.0.first()
    }

    /// The number of events.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No event in flight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The events, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// The events, oldest first, to change in place.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }
}

impl<T: Hash> Hash for Pending<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        self.0.iter().for_each(|e| e.hash(state));
    }
}

impl<T> From<Vec<T>> for Pending<T> {
    fn from(events: Vec<T>) -> Self {
        Pending(events.into())
    }
}

impl<'a, T> IntoIterator for &'a Pending<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Pending<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

/// A cached node with when the cache first showed each taint (continuously since).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CachedNode {
    /// The object as the cache shows it.
    pub node: Node,
    /// Parallel to `node.taints`.
    pub taint_since: Vec<Time>,
}

/// A cached pod with when the cache first showed this object (UID) bound to its node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CachedPod {
    /// The object as the cache shows it.
    pub pod: Pod,
    /// Since when (`None` while pending).
    pub bound_since: Option<Time>,
}

/// The environment's remaining budget and pending fault. Spec: MODEL-S5.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EnvState {
    /// Operations left.
    pub budget: u8,
    /// The next API request the server answers fails (`Failed`).
    pub fail_next: bool,
    /// The last controller restart, if any (spec LIVE-1 measures from it).
    pub restarted_at: Option<Time>,
}

/// History variables: facts about the past the properties need. Spec: MODEL-S6. The two lists
/// that only grow between restarts are shared between states until one changes them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct History {
    /// Violations recorded when the step that commits them runs (bit per property, see
    /// `properties::Flag`).
    pub violated: u16,
    /// Non-vacuity witnesses, likewise.
    pub witnessed: u16,
    /// Pod keys with a "Cancelling deletion" event not followed by a new decision or a new
    /// work start (spec CANCEL-1), sorted.
    pub cancelled: Shared<Vec<PodKey>>,
    /// Requests (= works) that got a `Failed` answer, sorted (spec SOME-4).
    pub failed: Vec<u32>,
    /// Pod objects an eviction decision (evict now, schedule, reschedule) was made for, sorted
    /// (spec UID-1).
    pub decided: Shared<Vec<Uid>>,
    /// What user-defined properties need of the past; `None` unless a configuration declares
    /// some (spec PROP-3).
    pub custom: Option<Shared<CustomHistory>>,
}

impl History {
    /// A new decision or work start for `key` ends the claim of its last cancel event.
    pub fn uncancel(&mut self, key: &PodKey) {
        if let Ok(i) = self.cancelled.binary_search(key) {
            self.cancelled.make_mut().remove(i);
        }
    }
}

/// The earliest instant a pod may be evicted from `node` ([`matching::earliest_eviction`] with
/// the taints' arrival instants `taint_since`, parallel to `node.taints`). Spec: EVICT-2, LIVE-1.
pub fn earliest_eviction(
    node: &Node,
    taint_since: &[Time],
    pod: &Pod,
    pod_since: Time,
    comparison_operators: bool,
) -> Option<Time> {
    matching::earliest_eviction(
        node.taints.iter().zip(taint_since.iter().copied()),
        &pod.tolerations,
        pod_since,
        comparison_operators,
    )
}

impl ApiServer {
    /// Recomputes `exposed_in_api` after a change of API objects.
    pub fn note_exposure(&mut self, comparison_operators: bool) {
        let nodes = &self.nodes;
        for p in self.pods.values_mut() {
            if p.exposed_in_api {
                continue;
            }
            let node = p.pod.node_name.as_ref().and_then(|n| nodes.get(n));
            if node.is_some_and(|n| matching::exposed(&n.node, &p.pod, comparison_operators)) {
                p.make_mut().exposed_in_api = true;
            }
        }
    }

    /// Hands out a fresh UID for a pod named `name`.
    pub fn fresh_uid(&mut self, name: &str) -> Uid {
        self.next_uid += 1;
        Uid(format!("{name}-{}", self.next_uid).into())
    }
}

/// What the declared claims need of the past. Spec: PROP-3.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CustomHistory {
    /// Bit `i`: property `i`'s event happened (a safety claim broken, an occurrence seen).
    pub hit: u16,
    /// The first instant the API showed each (node, taint key, taint value), sorted.
    pub first_tainted: Vec<((NodeName, Name, Name), Time)>,
    /// Pod objects (UIDs) with a "Marking for deletion" event, sorted.
    pub marked: Vec<Uid>,
    /// (`at_most_deletions` property index, instant) of the deletions still inside its window,
    /// sorted.
    pub deletions: Vec<(u8, Time)>,
}

impl CustomHistory {
    /// `h` under a symmetry's renaming `r` (MODEL-SYM, for the representative): first sightings
    /// follow their node, marked UIDs their pod, each list sorted again; the property bits and
    /// deletion instants name nothing. Copied only if something moves. Spec: PROP-SYM.
    pub(in crate::check) fn rename(h: &mut Shared<CustomHistory>, r: &impl Renaming) {
        let moves = h.first_tainted.iter().any(|((n, _, _), _)| r.node(n) != *n)
            || h.marked.iter().any(|u| r.uid(u) != *u);
        if !moves {
            return;
        }
        let h = h.make_mut();
        for ((node, _, _), _) in &mut h.first_tainted {
            *node = r.node(node);
        }
        h.first_tainted.sort_unstable();
        for uid in &mut h.marked {
            *uid = r.uid(uid);
        }
        h.marked.sort_unstable();
    }
}
