//! The composed controller: every component in one ordered, hashable, cheaply cloned value, with
//! one [`Step`] per upstream lock or goroutine boundary. Spec: CORE-S1..CORE-S8, CORE-A*.

use super::arrivals::Arrivals;
use super::effect::{ApiRequest, ApiResult, Effect, RequestId, TimerId, WorkId};
use super::handlers::{self, NodeTaints, TaintedNodes};
use super::intake::{self, PodItem};
use super::shards::{self, Pick, Shard, Shards};
use super::timed_queue::{Immediate, TimedQueue, WorkPhase};
use super::work;
use super::workqueue::WorkQueue;
use super::ClusterView;
use crate::api::{Node, NodeName, Pod, PodKey, Taint, Uid};
use crate::matching::{verdict, Verdict};
use crate::profile::{ImmediatePath, Profile};
use crate::shared::Shared;
use crate::time::Time;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Controller configuration: the profile and upstream's sizes (semantics §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub profile: Profile,
    /// `UpdateWorkerSize`, 8 upstream.
    pub workers: usize,
    /// `NodeUpdateChannelSize`, 10 upstream.
    pub node_channel_capacity: usize,
    /// `podUpdateChannelSize`, 1 upstream.
    pub pod_channel_capacity: usize,
    /// The orders in which `handleNodeUpdate` may process a node's listed pods.
    pub listing: Listing,
}

/// The order of a node's pods as `handleNodeUpdate` gets them. Upstream lists them from the pod
/// indexer (`ByIndex` on the node name, 1.18 and newest alike), which iterates a Go map: a
/// different order on every call, so every order is a behaviour. Spec: CORE-A6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Listing {
    /// Name order only: one of upstream's orders, and the only one a deterministic caller
    /// (runtime, oracle, driver) needs.
    #[default]
    ByName,
    /// Any order: one worker step per remaining listed pod (the model, so that no interleaving
    /// hangs on the order, and so that identically configured pods are interchangeable).
    Any,
}

impl Config {
    /// Upstream's sizes with `profile`.
    pub fn new(profile: Profile) -> Config {
        Config {
            profile,
            workers: 8,
            node_channel_capacity: 10,
            pod_channel_capacity: 1,
            listing: Listing::ByName,
        }
    }
}

/// A bijection on pods (their keys and the UIDs of their incarnations) and on nodes, applied to
/// a state by [`Controller::rename`]. Spec: MODEL-SYM.
pub trait Renaming {
    fn key(&self, key: &PodKey) -> PodKey;
    fn uid(&self, uid: &Uid) -> Uid;
    fn node(&self, node: &NodeName) -> NodeName;

    /// The pod object under the renaming (its tolerations are not identities).
    fn pod(&self, pod: &Pod) -> Pod {
        Pod {
            key: self.key(&pod.key),
            uid: self.uid(&pod.uid),
            node_name: pod.node_name.as_ref().map(|n| self.node(n)),
            tolerations: pod.tolerations.clone(),
        }
    }

    fn item(&self, item: &PodItem) -> PodItem {
        PodItem {
            key: self.key(&item.key),
            node_name: item.node_name.as_ref().map(|n| self.node(n)),
        }
    }
}

/// One action of the controller. Spec: CORE-A3..CORE-A14.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// The node dispatcher takes the queue head (`Get`) and sends it to its shard's channel, or
    /// holds it while that channel is full (blocking every shard: head-of-line). Spec: CORE-A3.
    DispatchNode,
    /// The pod dispatcher, the same for pod items (hashed by the item's node name). Spec: CORE-A3.
    DispatchPod,
    /// An idle worker receives a node item and runs `handleNodeUpdate` phase 1 (read the node,
    /// update `taintedNodes`). Spec: CORE-A4, CORE-A5.
    WorkerTakeNode(usize),
    /// An idle worker receives a pod item; it will first drain its shard's node channel.
    /// Spec: CORE-A4.
    WorkerTakePod(usize),
    /// A busy worker's next phase: list the node's pods, process (or cancel) one listed pod,
    /// take the next buffered node item while draining, or handle the held pod item. `immediate`
    /// is the outcome of a two-`Now()` immediate path if this step reaches one
    /// ([`ImmediatePath::TwoNows`] only; otherwise always [`Immediate::Nil`]). `pick` chooses
    /// the listed pod, counted from the next one in name order: always 0 except under
    /// [`Listing::Any`]. Spec: CORE-A4..A7.
    WorkerContinue {
        worker: usize,
        immediate: Immediate,
        pick: u16,
    },
    /// A due timer fires (eviction timer or backoff). Spec: CORE-A11.
    FireTimer(TimerId),
    /// A spawned work goroutine starts. Spec: CORE-A12.
    StartWork(WorkId),
    /// A finished work's wrapped function updates the map. Spec: CORE-A10.
    CompleteWork(WorkId),
}

impl Step {
    /// The upstream goroutine that takes this step: a caller running the controller on threads
    /// gives each actor's steps to one thread (or timer) of its own.
    pub fn actor(&self) -> Actor {
        match *self {
            Step::DispatchNode => Actor::NodeDispatcher,
            Step::DispatchPod => Actor::PodDispatcher,
            Step::WorkerTakeNode(w) | Step::WorkerTakePod(w) => Actor::Worker(w),
            Step::WorkerContinue { worker, .. } => Actor::Worker(worker),
            Step::FireTimer(timer) => Actor::Work(WorkId(timer.0)),
            Step::StartWork(id) | Step::CompleteWork(id) => Actor::Work(id),
        }
    }

    /// Keeps, of the two outcomes `enabled_steps` may offer for one worker step under
    /// [`ImmediatePath::TwoNows`], the `preferred` one: the choice a caller makes once for all,
    /// as a clock would (the runtime's production clock always observes a positive delay).
    pub fn resolve_immediate(steps: &mut Vec<Step>, preferred: Immediate) {
        let offered = steps.clone();
        steps.retain(|s| match *s {
            Step::WorkerContinue {
                worker,
                immediate,
                pick,
            } => {
                immediate == preferred
                    || !offered.contains(&Step::WorkerContinue {
                        worker,
                        immediate: preferred,
                        pick,
                    })
            }
            _ => true,
        });
    }
}

/// Who takes a [`Step`]: one upstream goroutine (or, for a work, its timer and goroutine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Actor {
    /// The goroutine moving node items from the node queue to the shards.
    NodeDispatcher,
    /// The goroutine moving pod items from the pod queue to the shards.
    PodDispatcher,
    /// Worker `i`, which owns shard `i`.
    Worker(usize),
    /// A deletion work: its timer, its goroutine and its completion.
    Work(WorkId),
}

/// A listed pod as `handleNodeUpdate` holds it: the cache object at listing time.
type Listed = Arc<[Pod]>;

/// A worker's progress through `handleNodeUpdate`. Spec: CORE-S6.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodePhase {
    /// `taintedNodes` updated with these taints (possibly none); the pods are listed next.
    Updated { taints: Arc<[Taint]> },
    /// Pods listed at `now` (the one `now` of the node), in name order; `pods[next]` is
    /// processed next (or, with no taints, cancelled by the short-circuit). Under
    /// [`Listing::Any`] a processed pod leaves the list instead and `next` stays 0, so a state
    /// holds the set of pods still to do, whatever the order they were taken in.
    Pods {
        taints: Arc<[Taint]>,
        pods: Listed,
        next: usize,
        now: Time,
    },
}

/// What a worker is doing. Spec: CORE-S6.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Worker {
    #[default]
    Idle,
    /// Holding a pod item, draining the shard's node channel first.
    Draining { pod: PodItem },
    /// Handling a node item; `then` is the pod item whose drain it belongs to.
    Node {
        node: NodeName,
        phase: NodePhase,
        then: Option<PodItem>,
    },
}

/// The whole controller. Spec: CORE-S1..CORE-S8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Controller {
    config: Config,
    /// CORE-S1. This, the timed queue and the arrival record are [`Shared`]: most steps change
    /// none of them, so a copy of the controller (a model successor, an oracle branch) shares
    /// them and its hash reuses theirs.
    tainted_nodes: Shared<TaintedNodes>,
    /// CORE-S2, CORE-S3.
    timed: Shared<TimedQueue>,
    /// CORE-S4.
    node_queue: WorkQueue<NodeName>,
    pod_queue: WorkQueue<PodItem>,
    /// CORE-S7: the item each dispatcher holds while its shard's channel is full.
    node_held: Option<NodeName>,
    pod_held: Option<PodItem>,
    /// CORE-S5, CORE-S6.
    shards: Shards,
    /// CORE-S8: how often `processPodOnNode` was reached with zero taints (CORE-PRE; stays 0).
    zero_taint_calls: u32,
    /// CORE-S9: the arrival record, kept only where the profile reads it
    /// ([`Profile::keeps_arrivals`]); empty otherwise.
    arrivals: Shared<Arrivals>,
}

/// Hashes the state, not the configuration: every state of one run (a model check, an oracle
/// frontier) shares it, and hashing the profile's name and switches on every fingerprint
/// showed up in profiles of both.
impl Hash for Controller {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // Destructured so that a new field cannot be left out by accident.
        let Controller {
            config: _,
            tainted_nodes,
            timed,
            node_queue,
            pod_queue,
            node_held,
            pod_held,
            shards,
            zero_taint_calls,
            arrivals,
        } = self;
        tainted_nodes.hash(h);
        timed.hash(h);
        node_queue.hash(h);
        pod_queue.hash(h);
        node_held.hash(h);
        pod_held.hash(h);
        shards.hash(h);
        zero_taint_calls.hash(h);
        arrivals.hash(h);
    }
}

impl Controller {
    pub fn new(config: Config) -> Controller {
        Controller {
            config,
            tainted_nodes: Shared::default(),
            timed: Shared::default(),
            node_queue: WorkQueue::new(),
            pod_queue: WorkQueue::new(),
            node_held: None,
            pod_held: None,
            shards: Shards::new(config.workers),
            zero_taint_calls: 0,
            arrivals: Shared::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn profile(&self) -> &Profile {
        &self.config.profile
    }

    pub fn tainted_nodes(&self) -> &TaintedNodes {
        &self.tainted_nodes
    }

    pub fn timed_queue(&self) -> &TimedQueue {
        &self.timed
    }

    pub fn node_queue(&self) -> &WorkQueue<NodeName> {
        &self.node_queue
    }

    pub fn pod_queue(&self) -> &WorkQueue<PodItem> {
        &self.pod_queue
    }

    pub fn shards(&self) -> &Shards {
        &self.shards
    }

    /// The items the dispatchers hold, blocked on a full channel.
    pub fn held(&self) -> (Option<&NodeName>, Option<&PodItem>) {
        (self.node_held.as_ref(), self.pod_held.as_ref())
    }

    /// CORE-PRE: true iff `processPodOnNode` was ever reached with zero taints.
    pub fn precondition_violated(&self) -> bool {
        self.zero_taint_calls > 0
    }

    /// The arrival record (CORE-S9).
    pub fn arrivals(&self) -> &Arrivals {
        &self.arrivals
    }

    /// A node informer event at `now` (add: `old` None; delete: `new` None). Returns the item
    /// the intake filter let through to the node queue. Spec: CORE-A1, CORE-S9.
    pub fn node_observed(
        &mut self,
        old: Option<&Node>,
        new: Option<&Node>,
        now: Time,
    ) -> Option<NodeName> {
        if self.config.profile.keeps_arrivals() {
            if let Some(name) = new.or(old).map(|n| &n.name) {
                self.arrivals.make_mut().node_observed(name, new, now);
            }
        }
        let name = intake::node_updated(old, new)?;
        self.node_queue.add(name.clone());
        Some(name)
    }

    /// A pod informer event at `now` (add: `old` None; delete: `new` None, tombstones
    /// unwrapped). Returns the item the intake filter let through to the pod queue.
    /// Spec: CORE-A2, CORE-S9.
    pub fn pod_observed(
        &mut self,
        old: Option<&Pod>,
        new: Option<&Pod>,
        now: Time,
    ) -> Option<PodItem> {
        if self.config.profile.keeps_arrivals() {
            if let Some(key) = new.or(old).map(|p| &p.key) {
                self.arrivals.make_mut().pod_observed(key, new, now);
            }
        }
        let item = intake::pod_updated(old, new)?;
        self.pod_queue.add(item.clone());
        Some(item)
    }

    fn shard_of(&self, node: &str) -> usize {
        shards::shard_of(node, self.shards.len())
    }

    /// Every step enabled at `now`, in a fixed order: dispatchers, then workers by index, then
    /// due timers, work starts and completions by id. Under [`ImmediatePath::TwoNows`] a worker
    /// step that may reach the immediate path is offered once per [`Immediate`] outcome.
    pub fn enabled_steps<A: From<Step>>(&self, now: Time, out: &mut Vec<A>) {
        if self.dispatch_enabled(self.node_held.as_deref(), self.node_queue.len(), true) {
            out.push(Step::DispatchNode.into());
        }
        let pod_node = self.pod_held.as_ref().map(PodItem::node_str);
        if self.dispatch_enabled(pod_node, self.pod_queue.len(), false) {
            out.push(Step::DispatchPod.into());
        }
        for (worker, shard) in self.shards.busy() {
            match &shard.worker {
                Worker::Idle => {
                    for pick in
                        shards::worker_choices(!shard.nodes.is_empty(), !shard.pods.is_empty())
                    {
                        out.push(
                            match pick {
                                Pick::Node => Step::WorkerTakeNode(worker),
                                Pick::Pod => Step::WorkerTakePod(worker),
                            }
                            .into(),
                        );
                    }
                }
                busy => {
                    for pick in 0..self.picks(busy) {
                        out.push(
                            Step::WorkerContinue {
                                worker,
                                immediate: Immediate::Nil,
                                pick,
                            }
                            .into(),
                        );
                        if self.may_reach_immediate_timer(shard, busy, pick) {
                            out.push(
                                Step::WorkerContinue {
                                    worker,
                                    immediate: Immediate::Timer,
                                    pick,
                                }
                                .into(),
                            );
                        }
                    }
                }
            }
        }
        for (id, w) in self.timed.works() {
            if w.timer_due().is_some_and(|due| due <= now) {
                out.push(Step::FireTimer(id.timer()).into());
            }
        }
        for (id, w) in self.timed.works() {
            if w.phase == WorkPhase::Spawned {
                out.push(Step::StartWork(*id).into());
            }
        }
        for (id, w) in self.timed.works() {
            if matches!(w.phase, WorkPhase::Finished { .. }) {
                out.push(Step::CompleteWork(*id).into());
            }
        }
    }

    /// Whether a dispatcher can move: it holds an item whose channel has room, or holds nothing
    /// and its queue has an item (it may then block holding it).
    fn dispatch_enabled(&self, held: Option<&str>, queued: usize, node: bool) -> bool {
        match held {
            Some(name) => self.channel_has_room(self.shard_of(name), node),
            None => queued > 0,
        }
    }

    fn channel_has_room(&self, shard: usize, node: bool) -> bool {
        let Some(s) = self.shards.get(shard) else {
            return false;
        };
        if node {
            s.nodes.len() < self.config.node_channel_capacity
        } else {
            s.pods.len() < self.config.pod_channel_capacity
        }
    }

    /// How many choices a busy worker's next step has: one per remaining listed pod under
    /// [`Listing::Any`], else one.
    fn picks(&self, worker: &Worker) -> u16 {
        match (self.config.listing, worker) {
            (
                Listing::Any,
                Worker::Node {
                    phase: NodePhase::Pods { pods, next, .. },
                    ..
                },
            ) => u16::try_from(pods.len() - next).unwrap_or(u16::MAX),
            _ => 1,
        }
    }

    /// Whether the worker's next step (taking listed pod `pick`) may take the two-`Now()`
    /// immediate path: a listed pod that is not tolerated, or a held pod item (whose pod is only
    /// read from the cache then).
    fn may_reach_immediate_timer(&self, shard: &Shard, worker: &Worker, pick: u16) -> bool {
        if self.config.profile.immediate_path != ImmediatePath::TwoNows {
            return false;
        }
        match worker {
            Worker::Idle => false,
            Worker::Draining { .. } => shard.nodes.is_empty(),
            Worker::Node { phase, .. } => match phase {
                NodePhase::Updated { .. } => false,
                NodePhase::Pods {
                    taints, pods, next, ..
                } => {
                    !taints.is_empty()
                        && pods.get(*next + usize::from(pick)).is_some_and(|pod| {
                            verdict(
                                taints,
                                &pod.tolerations,
                                self.config.profile.comparison_operators,
                            ) == Verdict::Untolerated
                        })
                }
            },
        }
    }

    /// Run `step` at `now` against the caches `view`. A step that is not enabled does nothing.
    pub fn step(&mut self, step: Step, view: &impl ClusterView, now: Time, out: &mut Vec<Effect>) {
        let profile = self.config.profile;
        let idle = |s: &Shard, ready: fn(&Shard) -> bool| s.worker == Worker::Idle && ready(s);
        match step {
            Step::DispatchNode => self.dispatch_node(),
            Step::DispatchPod => self.dispatch_pod(),
            Step::WorkerTakeNode(w) => {
                if self
                    .shards
                    .get(w)
                    .is_some_and(|s| idle(s, |s| !s.nodes.is_empty()))
                {
                    if let Some(node) = self.shards.get_mut(w).nodes.pop_front() {
                        self.begin_node(w, node, None, view);
                    }
                }
            }
            Step::WorkerTakePod(w) => {
                if self
                    .shards
                    .get(w)
                    .is_some_and(|s| idle(s, |s| !s.pods.is_empty()))
                {
                    let shard = self.shards.get_mut(w);
                    if let Some(pod) = shard.pods.pop_front() {
                        shard.worker = Worker::Draining { pod };
                    }
                }
            }
            Step::WorkerContinue {
                worker,
                immediate,
                pick,
            } => {
                if self
                    .shards
                    .get(worker)
                    .is_some_and(|s| pick < self.picks(&s.worker))
                {
                    self.continue_worker(worker, immediate, usize::from(pick), view, now, out);
                }
            }
            Step::FireTimer(timer) => {
                work::fire_timer(
                    self.timed.make_mut(),
                    timer,
                    &profile,
                    view,
                    &self.arrivals,
                    now,
                    out,
                );
            }
            Step::StartWork(id) => {
                work::start_work(
                    self.timed.make_mut(),
                    id,
                    &profile,
                    view,
                    &self.arrivals,
                    now,
                    out,
                );
            }
            Step::CompleteWork(id) => {
                self.timed.make_mut().complete(id, &profile);
            }
        }
        self.shards.prune();
    }

    fn dispatch_node(&mut self) {
        let item = match self.node_held.take() {
            Some(item) => item,
            None => match self.node_queue.get() {
                Some(item) => item,
                None => return,
            },
        };
        let shard = self.shard_of(&item);
        if self.channel_has_room(shard, true) {
            self.shards.get_mut(shard).nodes.push_back(item);
        } else {
            self.node_held = Some(item);
        }
    }

    fn dispatch_pod(&mut self) {
        let item = match self.pod_held.take() {
            Some(item) => item,
            None => match self.pod_queue.get() {
                Some(item) => item,
                None => return,
            },
        };
        let shard = self.shard_of(item.node_str());
        if self.channel_has_room(shard, false) {
            self.shards.get_mut(shard).pods.push_back(item);
        } else {
            self.pod_held = Some(item);
        }
    }

    /// `handleNodeUpdate` phase 1 for `node` on worker `w`.
    fn begin_node(
        &mut self,
        w: usize,
        node: NodeName,
        then: Option<PodItem>,
        view: &impl ClusterView,
    ) {
        match handlers::update_tainted_nodes(self.tainted_nodes.make_mut(), &node, view) {
            NodeTaints::Gone => {
                self.node_queue.done(&node);
                self.shards.get_mut(w).worker = after(then);
            }
            NodeTaints::Taints(taints) => {
                self.shards.get_mut(w).worker = Worker::Node {
                    node,
                    phase: NodePhase::Updated { taints },
                    then,
                };
            }
        }
    }

    fn continue_worker(
        &mut self,
        w: usize,
        immediate: Immediate,
        pick: usize,
        view: &impl ClusterView,
        now: Time,
        out: &mut Vec<Effect>,
    ) {
        let profile = self.config.profile;
        match std::mem::take(&mut self.shards.get_mut(w).worker) {
            Worker::Idle => {}
            Worker::Draining { pod } => match self.shards.get_mut(w).nodes.pop_front() {
                Some(node) => self.begin_node(w, node, Some(pod), view),
                None => {
                    let decided = handlers::handle_pod_update(
                        self.timed.make_mut(),
                        &self.tainted_nodes,
                        &profile,
                        &self.arrivals,
                        view,
                        &pod,
                        now,
                        immediate,
                        out,
                    );
                    self.count(decided);
                    self.pod_queue.done(&pod);
                }
            },
            Worker::Node { node, phase, then } => match phase {
                NodePhase::Updated { taints } => {
                    let pods: Listed = view.pods_on_node(&node).into_iter().cloned().collect();
                    if pods.is_empty() {
                        self.node_queue.done(&node);
                        self.shards.get_mut(w).worker = after(then);
                    } else {
                        self.shards.get_mut(w).worker = Worker::Node {
                            node,
                            phase: NodePhase::Pods {
                                taints,
                                pods,
                                next: 0,
                                now,
                            },
                            then,
                        };
                    }
                }
                NodePhase::Pods {
                    taints,
                    pods,
                    next,
                    now: listed_at,
                } => {
                    let decided = handlers::node_update_pod(
                        self.timed.make_mut(),
                        &profile,
                        &self.arrivals,
                        view,
                        &pods[next + pick],
                        &taints,
                        listed_at,
                        immediate,
                        out,
                    );
                    self.count(decided);
                    let (pods, next) = match self.config.listing {
                        Listing::ByName => (pods, next + 1),
                        Listing::Any => (
                            pods.iter()
                                .enumerate()
                                .filter(|&(i, _)| i != pick)
                                .map(|(_, p)| p.clone())
                                .collect(),
                            0,
                        ),
                    };
                    if next < pods.len() {
                        self.shards.get_mut(w).worker = Worker::Node {
                            node,
                            phase: NodePhase::Pods {
                                taints,
                                pods,
                                next,
                                now: listed_at,
                            },
                            then,
                        };
                    } else {
                        self.node_queue.done(&node);
                        self.shards.get_mut(w).worker = after(then);
                    }
                }
            },
        }
    }

    fn count(&mut self, decided: Option<super::effect::Note>) {
        if decided == Some(super::effect::Note::ZeroTaints) {
            self.zero_taint_calls += 1;
        }
    }

    /// The API server answered `request` (see [`Controller::pending_requests`]). Spec: CORE-A13.
    pub fn api_responded(
        &mut self,
        request: RequestId,
        result: ApiResult,
        view: &impl ClusterView,
        now: Time,
        out: &mut Vec<Effect>,
    ) {
        let profile = self.config.profile;
        let arrivals = &self.arrivals;
        work::responded(
            self.timed.make_mut(),
            request,
            result,
            &profile,
            view,
            arrivals,
            now,
            out,
        );
    }

    /// The requests sent and not yet answered, by id.
    pub fn pending_requests(&self) -> impl Iterator<Item = &ApiRequest> {
        self.timed.works().values().filter_map(|w| match &w.phase {
            WorkPhase::Requesting { request, .. } => Some(request),
            _ => None,
        })
    }

    /// The earliest armed timer (eviction or backoff): when to call again if nothing else happens.
    pub fn next_deadline(&self) -> Option<Time> {
        self.timed.next_deadline()
    }

    /// Nothing queued, held by a dispatcher, buffered on a channel or being handled by a
    /// worker: no dispatcher or worker step is enabled until the next informer event.
    pub fn handlers_idle(&self) -> bool {
        self.node_queue.is_idle()
            && self.pod_queue.is_idle()
            && self.node_held.is_none()
            && self.pod_held.is_none()
            && self.shards.all_idle()
    }

    /// [`Controller::handlers_idle`], and no work in flight except armed eviction timers.
    pub fn is_quiescent(&self) -> bool {
        self.handlers_idle()
            && self
                .timed
                .works()
                .values()
                .all(|w| w.phase == WorkPhase::Armed)
    }

    /// Renames every pod and node the controller remembers (keys, UIDs, node names, listed
    /// pods, queue and channel items, works, requests, the arrival record) by `r`, keeping each
    /// queue's order and re-sorting its sets: the one place that knows where pods and nodes live
    /// in the core, for the model's symmetry reduction (spec MODEL-SYM). Node renamings keep
    /// items in their channels, so they are only sound where every node has the same shard.
    pub fn rename(&mut self, r: &impl Renaming) {
        self.timed.make_mut().rename(r);
        self.arrivals.make_mut().rename(r);
        self.tainted_nodes = Shared::new(
            self.tainted_nodes
                .iter()
                .map(|(n, t)| (r.node(n), t.clone()))
                .collect(),
        );
        self.node_queue = self.node_queue.map(|n| r.node(n));
        self.node_held = self.node_held.as_ref().map(|n| r.node(n));
        self.pod_queue = self.pod_queue.map(|i| r.item(i));
        self.pod_held = self.pod_held.as_ref().map(|i| r.item(i));
        for shard in self.shards.busy_mut() {
            shard.nodes.iter_mut().for_each(|n| *n = r.node(n));
            shard.pods.iter_mut().for_each(|i| *i = r.item(i));
            match &mut shard.worker {
                Worker::Idle => {}
                Worker::Draining { pod } => *pod = r.item(pod),
                Worker::Node { node, phase, then } => {
                    *node = r.node(node);
                    *then = then.as_ref().map(|i| r.item(i));
                    if let NodePhase::Pods { pods, .. } = phase {
                        let mut renamed: Vec<Pod> = pods.iter().map(|p| r.pod(p)).collect();
                        // Under `Any` the list is the set still to do, kept in name order.
                        if self.config.listing == Listing::Any {
                            renamed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
                        }
                        *pods = renamed.into();
                    }
                }
            }
        }
    }

    /// Renumbers the works (and with them their timers and requests) canonically, keeping the
    /// set of ids in use; returns the renumbering, for ids the caller keeps. Ids are only
    /// compared for equality, so the result is equivalent; for the model's symmetry reduction
    /// (spec MODEL-SYM).
    pub fn canonicalise_ids(&mut self) -> BTreeMap<WorkId, WorkId> {
        let map = self.timed.canonical_ids();
        if map.iter().any(|(a, b)| a != b) {
            self.timed.make_mut().renumber(&map);
        }
        map
    }

    /// Controller restart (or leader failover): every bit of in-memory state is lost; responses to
    /// earlier requests are never delivered. The caller re-delivers the informers' initial lists
    /// as add events (N15). Spec: CORE-A15.
    pub fn restarted(&mut self) {
        *self = Controller::new(self.config);
    }
}

/// A worker's state once a node item is done: back to its pod item's drain, or idle.
fn after(then: Option<PodItem>) -> Worker {
    match then {
        Some(pod) => Worker::Draining { pod },
        None => Worker::Idle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PodKey, TaintEffect, Toleration, Uid};
    use crate::driver::Cluster;
    use crate::{Effect, Note};

    fn tainted(name: &str) -> Node {
        Node {
            name: name.into(),
            taints: vec![Taint::new("t", "", TaintEffect::NoExecute)],
        }
    }

    fn pod(name: &str, node: &str, seconds: Option<i64>) -> Pod {
        Pod {
            key: PodKey::new("ns", name),
            uid: Uid(format!("{name}-1").into()),
            node_name: Some(node.into()),
            tolerations: seconds
                .map(|s| {
                    vec![Toleration::exists(
                        "t",
                        Some(TaintEffect::NoExecute),
                        Some(s),
                    )]
                })
                .unwrap_or_default(),
        }
    }

    fn steps(c: &Controller, now: Time) -> Vec<Step> {
        let mut out = Vec::new();
        c.enabled_steps(now, &mut out);
        out
    }

    fn notes(effects: &[Effect]) -> Vec<Note> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Decision(d) => Some(d.note),
                _ => None,
            })
            .collect()
    }

    fn cont(worker: usize) -> Step {
        Step::WorkerContinue {
            worker,
            immediate: Immediate::Nil,
            pick: 0,
        }
    }

    /// CORE-A3: a full channel makes the dispatcher hold the item, blocking every shard.
    #[test]
    fn dispatcher_blocks_on_a_full_channel() {
        let mut c = Controller::new(Config::new(Profile::latest()));
        let view = Cluster::default();
        let mut out = vec![];
        for name in ["a", "b"] {
            c.pod_observed(None, Some(&pod(name, "node1", None)), Time(0));
        }
        c.pod_observed(None, Some(&pod("c", "node3", None)), Time(0));
        c.step(Step::DispatchPod, &view, Time(0), &mut out);
        c.step(Step::DispatchPod, &view, Time(0), &mut out);
        assert_eq!(c.held().1.map(|i| &*i.key.name), Some("b"));
        assert!(
            !steps(&c, Time(0)).contains(&Step::DispatchPod),
            "head-of-line blocked"
        );
        assert_eq!(
            c.shards()
                .get(shards::shard_of("node3", 8))
                .unwrap()
                .pods
                .len(),
            0
        );
        c.step(Step::WorkerTakePod(4), &view, Time(0), &mut out);
        assert!(steps(&c, Time(0)).contains(&Step::DispatchPod));
        c.step(Step::DispatchPod, &view, Time(0), &mut out);
        assert_eq!(c.held().1, None);
        assert_eq!(c.shards().get(4).unwrap().pods.len(), 1);
    }

    /// CORE-A4: a worker holding a pod item first handles the node items buffered on its shard.
    #[test]
    fn pod_item_waits_for_buffered_node_items() {
        let mut c = Controller::new(Config::new(Profile::latest()));
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        let p = pod("p", "node1", None);
        view.pods.insert(p.key.clone(), p.clone());
        let mut out = vec![];
        c.pod_observed(None, Some(&p), Time(0));
        c.step(Step::DispatchPod, &view, Time(0), &mut out);
        c.step(Step::WorkerTakePod(4), &view, Time(0), &mut out);
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        c.step(Step::DispatchNode, &view, Time(0), &mut out);
        assert!(c.tainted_nodes().is_empty());
        c.step(cont(4), &view, Time(0), &mut out);
        assert!(
            c.tainted_nodes().contains_key("node1"),
            "node item handled first"
        );
        assert!(matches!(
            c.shards().get(4).unwrap().worker,
            Worker::Node { then: Some(_), .. }
        ));
        // list, then the pod from the node update, then the held pod item.
        for _ in 0..3 {
            c.step(cont(4), &view, Time(0), &mut out);
        }
        assert_eq!(c.shards().get(4).unwrap().worker, Worker::Idle);
        assert_eq!(notes(&out), [Note::EvictNow, Note::EvictNow]);
        assert!(c.node_queue().is_idle() && c.pod_queue().is_idle());
    }

    /// CORE-A5: taintedNodes is updated before the pods are listed, and every pod of the node is
    /// decided with the `now` of the listing.
    #[test]
    fn node_update_phases_use_the_listing_now() {
        let mut c = Controller::new(Config::new(Profile::latest()));
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        for name in ["a", "b"] {
            let p = pod(name, "node1", Some(10));
            view.pods.insert(p.key.clone(), p);
        }
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        c.step(Step::DispatchNode, &view, Time(0), &mut out);
        c.step(Step::WorkerTakeNode(4), &view, Time(1), &mut out);
        assert!(c.tainted_nodes().contains_key("node1"));
        assert!(matches!(
            c.shards().get(4).unwrap().worker,
            Worker::Node {
                phase: NodePhase::Updated { .. },
                ..
            }
        ));
        c.step(cont(4), &view, Time(2), &mut out);
        c.step(cont(4), &view, Time(50), &mut out);
        c.step(cont(4), &view, Time(90), &mut out);
        let fire = Time(2).plus(crate::time::Duration::from_secs(10));
        assert_eq!(
            notes(&out),
            [
                Note::Scheduled { fire_at: fire },
                Note::Scheduled { fire_at: fire }
            ]
        );
        assert!(c.is_quiescent());
        assert_eq!(c.next_deadline(), Some(fire));
    }

    /// CORE-A5: with no NoExecute taints left, every listed pod's work is cancelled without
    /// `processPodOnNode` (CORE-PRE).
    #[test]
    fn untainted_node_cancels_its_pods_work() {
        let mut c = Controller::new(Config::new(Profile::latest()));
        let mut view = Cluster::default();
        let p = pod("a", "node1", Some(10));
        view.pods.insert(p.key.clone(), p);
        view.nodes.insert("node1".into(), tainted("node1"));
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [
            Step::DispatchNode,
            Step::WorkerTakeNode(4),
            cont(4),
            cont(4),
        ] {
            c.step(s, &view, Time(0), &mut out);
        }
        let clean = Node {
            name: "node1".into(),
            taints: vec![],
        };
        view.nodes.insert("node1".into(), clean.clone());
        c.node_observed(Some(&tainted("node1")), Some(&clean), Time(0));
        out.clear();
        for s in [
            Step::DispatchNode,
            Step::WorkerTakeNode(4),
            cont(4),
            cont(4),
        ] {
            c.step(s, &view, Time(5), &mut out);
        }
        assert!(c.tainted_nodes().is_empty());
        assert!(c.timed_queue().entries().is_empty());
        assert!(matches!(out[0], Effect::CancelTimer { .. }));
        assert!(matches!(out[1], Effect::Event(_)));
        assert!(!c.precondition_violated());
    }

    /// CORE-A6: under `Listing::Any` a worker may take any listed pod next; what is left stays
    /// in name order, so the state is the set still to do. `ByName` offers only the next one.
    #[test]
    fn any_listing_order_offers_every_listed_pod() {
        for (listing, offered) in [(Listing::ByName, 1), (Listing::Any, 3)] {
            let mut c = Controller::new(Config {
                listing,
                ..Config::new(Profile::latest())
            });
            let mut view = Cluster::default();
            view.nodes.insert("node1".into(), tainted("node1"));
            for name in ["a", "b", "c"] {
                let p = pod(name, "node1", Some(10));
                view.pods.insert(p.key.clone(), p);
            }
            let mut out = vec![];
            c.node_observed(None, Some(&tainted("node1")), Time(0));
            for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
                c.step(s, &view, Time(0), &mut out);
            }
            let picks = |c: &Controller| {
                steps(c, Time(0))
                    .iter()
                    .filter(|s| matches!(s, Step::WorkerContinue { worker: 4, .. }))
                    .count()
            };
            assert_eq!(picks(&c), offered, "{listing:?}");
            let last = Step::WorkerContinue {
                worker: 4,
                immediate: Immediate::Nil,
                pick: 2,
            };
            c.step(last, &view, Time(0), &mut out);
            let scheduled: Vec<&str> = c
                .timed_queue()
                .entries()
                .keys()
                .map(|k| &*k.pod.name)
                .collect();
            let left = |c: &Controller| match &c.shards().get(4).unwrap().worker {
                Worker::Node {
                    phase: NodePhase::Pods { pods, next, .. },
                    ..
                } => pods[*next..]
                    .iter()
                    .map(|p| p.key.name.to_string())
                    .collect(),
                _ => Vec::new(),
            };
            if listing == Listing::Any {
                assert_eq!(scheduled, ["c"]);
                assert_eq!(left(&c), ["a", "b"]);
            } else {
                assert!(scheduled.is_empty(), "pick 2 is not offered by name");
                assert_eq!(left(&c), ["a", "b", "c"]);
            }
        }
    }

    /// PROFILE-2: the two-`Now()` outcomes are offered only where the immediate path is reachable.
    #[test]
    fn immediate_outcomes_offered_only_for_two_nows() {
        for (profile, offered) in [(Profile::v1_18(), true), (Profile::latest(), false)] {
            let mut c = Controller::new(Config::new(profile));
            let mut view = Cluster::default();
            view.nodes.insert("node1".into(), tainted("node1"));
            for (name, seconds) in [("a", Some(10)), ("b", None)] {
                let p = pod(name, "node1", seconds);
                view.pods.insert(p.key.clone(), p);
            }
            let mut out = vec![];
            c.node_observed(None, Some(&tainted("node1")), Time(0));
            for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
                c.step(s, &view, Time(0), &mut out);
            }
            let timer = Step::WorkerContinue {
                worker: 4,
                immediate: Immediate::Timer,
                pick: 0,
            };
            assert!(!steps(&c, Time(0)).contains(&timer), "pod a is tolerated");
            c.step(cont(4), &view, Time(0), &mut out);
            assert_eq!(
                steps(&c, Time(0)).contains(&timer),
                offered,
                "{}",
                profile.name
            );
            c.step(timer, &view, Time(0), &mut out);
            let entry = c.timed_queue().entries().values().last().cloned();
            let timer_entry = matches!(entry, Some(crate::Entry::Timer { .. }));
            assert_eq!(timer_entry, offered, "{}", profile.name);
        }
    }

    /// N8: a recomputation at the very instant the timer was created keeps it, as production
    /// clocks (always later) do.
    #[test]
    fn equal_instant_keeps_the_timer_n8() {
        let mut q = TimedQueue::new();
        let p = pod("a", "node1", Some(10));
        let taints = [Taint::new("t", "", TaintEffect::NoExecute)];
        let mut out = vec![];
        let profile = Profile::latest();
        let first = handlers::process_pod_on_node(
            &mut q,
            &profile,
            &Arrivals::default(),
            &p,
            &taints,
            Time(7),
            Immediate::Nil,
            &mut out,
        );
        let p = pod("a", "node1", Some(1));
        let again = handlers::process_pod_on_node(
            &mut q,
            &profile,
            &Arrivals::default(),
            &p,
            &taints,
            Time(7),
            Immediate::Nil,
            &mut out,
        );
        assert_eq!(
            first,
            Note::Scheduled {
                fire_at: Time(10_007)
            }
        );
        assert_eq!(
            again,
            Note::KeptExisting {
                fire_at: Time(10_007)
            }
        );
        assert!(
            !out.iter().any(|e| matches!(e, Effect::Event(_))),
            "no cancel event"
        );
    }

    /// CORE-A15: a restart forgets everything, armed timers included (N15).
    #[test]
    fn restart_loses_all_state() {
        let mut c = Controller::new(Config::new(Profile::v1_18()));
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        let p = pod("a", "node1", Some(10));
        view.pods.insert(p.key.clone(), p);
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [
            Step::DispatchNode,
            Step::WorkerTakeNode(4),
            cont(4),
            cont(4),
        ] {
            c.step(s, &view, Time(0), &mut out);
        }
        assert!(c.next_deadline().is_some());
        c.restarted();
        assert_eq!(c, Controller::new(Config::new(Profile::v1_18())));
    }

    /// Runs the first enabled step until none is left at `now` (timers due included).
    fn settle(c: &mut Controller, view: &Cluster, now: Time, out: &mut Vec<Effect>) {
        while let Some(step) = steps(c, now).into_iter().next() {
            c.step(step, view, now, out);
        }
    }

    fn deletes(effects: &[Effect]) -> usize {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Api(r) if r.verb == crate::Verb::Delete))
            .count()
    }

    /// PROFILE-10 (fixed): taint `t` is removed and re-added at the instant the work's PATCH is
    /// in flight. The re-check before the DELETE sees a taint that arrived now, so the earliest
    /// legal eviction is 10 s away: the work is re-armed for it, no DELETE is sent. (With the
    /// deadline `created_at + m` the re-check passed and the DELETE was premature.)
    #[test]
    fn readded_taint_during_patch_rearms_the_work() {
        let mut c = Controller::new(Config::new(Profile::fixed()));
        let mut view = Cluster::default();
        let mut out = vec![];
        let p = pod("a", "node1", Some(10));
        view.pods.insert(p.key.clone(), p.clone());
        view.nodes.insert("node1".into(), tainted("node1"));
        c.pod_observed(None, Some(&p), Time(0));
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        settle(&mut c, &view, Time(0), &mut out);
        assert_eq!(c.next_deadline(), Some(Time(10_000)));
        settle(&mut c, &view, Time(10_000), &mut out);
        // The live read (GET pod, GET node) passes: the API shows the taint.
        let patch = loop {
            let req = c.pending_requests().next().cloned().expect("a request");
            if req.verb == crate::Verb::PatchDisruptionTarget {
                break req;
            }
            let answer = crate::api_server::answer_from_view(&req, &view);
            c.api_responded(req.id, answer, &view, Time(10_000), &mut out);
        };
        let clean = Node {
            name: "node1".into(),
            taints: vec![],
        };
        c.node_observed(Some(&tainted("node1")), Some(&clean), Time(10_000));
        c.node_observed(Some(&clean), Some(&tainted("node1")), Time(10_000));
        out.clear();
        let patched = ApiResult::Patched(crate::api::ResourceVersion(2));
        c.api_responded(patch.id, patched, &view, Time(10_000), &mut out);
        assert_eq!(deletes(&out), 0, "{out:?}");
        assert_eq!(
            notes(&out),
            [Note::Rescheduled {
                fire_at: Time(20_000)
            }]
        );
        assert_eq!(c.next_deadline(), Some(Time(20_000)));
    }

    /// PROFILE-10 (fixed): a second taint tolerated for less time, arriving later, does not pull
    /// the deadline before its own arrival plus its toleration: the first taint's deadline stays.
    #[test]
    fn later_shorter_taint_keeps_each_taints_own_deadline() {
        let taint = |k: &str| Taint::new(k, "", TaintEffect::NoExecute);
        let node = |keys: &[&str]| Node {
            name: "node1".into(),
            taints: keys.iter().map(|k| taint(k)).collect(),
        };
        let mut p = pod("a", "node1", None);
        p.tolerations = [("x", 100), ("y", 10)]
            .iter()
            .map(|(k, s)| Toleration::exists(k, Some(TaintEffect::NoExecute), Some(*s)))
            .collect();
        let mut c = Controller::new(Config::new(Profile::fixed()));
        let mut view = Cluster::default();
        let mut out = vec![];
        view.pods.insert(p.key.clone(), p.clone());
        view.nodes.insert("node1".into(), node(&["x"]));
        c.pod_observed(None, Some(&p), Time(0));
        c.node_observed(None, Some(&node(&["x"])), Time(0));
        settle(&mut c, &view, Time(0), &mut out);
        assert_eq!(c.next_deadline(), Some(Time(100_000)));
        view.nodes.insert("node1".into(), node(&["x", "y"]));
        c.node_observed(Some(&node(&["x"])), Some(&node(&["x", "y"])), Time(95_000));
        settle(&mut c, &view, Time(95_000), &mut out);
        assert_eq!(deletes(&out), 0, "{out:?}");
        assert_eq!(c.next_deadline(), Some(Time(100_000)));
        // With x removed, y's own deadline (95 s + 10 s) is the one left.
        view.nodes.insert("node1".into(), node(&["y"]));
        c.node_observed(Some(&node(&["x", "y"])), Some(&node(&["y"])), Time(96_000));
        settle(&mut c, &view, Time(96_000), &mut out);
        assert_eq!(c.next_deadline(), Some(Time(105_000)));
    }

    mod explore {
        use super::*;
        use crate::strategies;
        use crate::{ApiResult, Entry};
        use proptest::prelude::*;

        /// One thing the environment or the scheduler does.
        #[derive(Clone, Debug)]
        enum Op {
            PutNode(Node),
            DeleteNode(u8),
            PutPod(Pod),
            DeletePod(u8),
            Step(u8),
            Respond(u8, u8),
            Tick(u16),
            Restart,
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                2 => strategies::node().prop_map(Op::PutNode),
                1 => any::<u8>().prop_map(Op::DeleteNode),
                2 => strategies::pod().prop_map(Op::PutPod),
                1 => any::<u8>().prop_map(Op::DeletePod),
                8 => any::<u8>().prop_map(Op::Step),
                2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Respond(a, b)),
                2 => (0u16..20_000).prop_map(Op::Tick),
                1 => Just(Op::Restart),
            ]
        }

        fn nth<T: Clone>(items: impl Iterator<Item = T>, i: u8) -> Option<T> {
            let items: Vec<T> = items.collect();
            (!items.is_empty()).then(|| items[usize::from(i) % items.len()].clone())
        }

        /// The invariants every reachable state keeps (CORE-PRE, CORE-A3, CORE-S2).
        fn check(c: &Controller) -> Result<(), TestCaseError> {
            prop_assert!(!c.precondition_violated(), "CORE-PRE violated");
            let n = c.shards().len();
            for (k, shard) in c.shards().busy() {
                prop_assert!(!shard.is_idle(), "idle shard {} stored", k);
                for node in &shard.nodes {
                    prop_assert_eq!(shards::shard_of(node, n), k);
                }
                for item in &shard.pods {
                    prop_assert_eq!(shards::shard_of(item.node_str(), n), k);
                }
                match &shard.worker {
                    Worker::Idle => {}
                    Worker::Draining { pod } => {
                        prop_assert_eq!(shards::shard_of(pod.node_str(), n), k)
                    }
                    Worker::Node { node, then, .. } => {
                        prop_assert_eq!(shards::shard_of(node, n), k);
                        if let Some(pod) = then {
                            prop_assert_eq!(shards::shard_of(pod.node_str(), n), k);
                        }
                    }
                }
            }
            let q = c.timed_queue();
            for entry in q.entries().values() {
                if let Some(work) = entry.work() {
                    prop_assert!(q.work(work).is_some(), "entry names a missing work");
                }
                if let Entry::Timer { work, fire_at, .. } = entry {
                    prop_assert!(q.work(*work).is_some_and(|w| w.fire_at == *fire_at
                        || c.profile().deadline_policy
                            == crate::profile::DeadlinePolicy::EarliestLegal));
                }
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// Random environments and schedules never break the invariants, in any profile.
            #[test]
            fn invariants_hold_under_any_schedule(
                profile in prop::sample::select(Profile::NAMES.to_vec()),
                ops in prop::collection::vec(op(), 0..120),
            ) {
                let config = Config {
                    workers: 3,
                    node_channel_capacity: 2,
                    pod_channel_capacity: 1,
                    ..Config::new(Profile::by_name(profile).unwrap())
                };
                let mut c = Controller::new(config);
                let mut view = Cluster::default();
                let mut now = Time(0);
                let mut out = Vec::new();
                for op in ops {
                    match op {
                        Op::PutNode(node) => {
                            let old = view.nodes.insert(node.name.clone(), node.clone());
                            c.node_observed(old.as_ref(), Some(&node), now);
                        }
                        Op::DeleteNode(i) => {
                            if let Some(name) = nth(view.nodes.keys().cloned(), i) {
                                let old = view.nodes.remove(&name);
                                c.node_observed(old.as_ref(), None, now);
                            }
                        }
                        Op::PutPod(pod) => {
                            let old = view.pods.insert(pod.key.clone(), pod.clone());
                            c.pod_observed(old.as_ref(), Some(&pod), now);
                        }
                        Op::DeletePod(i) => {
                            if let Some(key) = nth(view.pods.keys().cloned(), i) {
                                let old = view.pods.remove(&key);
                                c.pod_observed(old.as_ref(), None, now);
                            }
                        }
                        Op::Step(i) => {
                            let mut enabled = Vec::new();
                            c.enabled_steps(now, &mut enabled);
                            if let Some(step) = nth(enabled.into_iter(), i) {
                                c.step(step, &view, now, &mut out);
                            }
                        }
                        Op::Respond(i, r) => {
                            if let Some(req) = nth(c.pending_requests().cloned(), i) {
                                let result = match r % 4 {
                                    0 => ApiResult::Failed,
                                    1 => ApiResult::NotFound,
                                    2 => ApiResult::PreconditionFailed,
                                    _ => crate::api_server::answer_from_view(&req, &view),
                                };
                                c.api_responded(req.id, result, &view, now, &mut out);
                            }
                        }
                        Op::Tick(ms) => now = now.plus(crate::time::Duration(i64::from(ms))),
                        Op::Restart => c.restarted(),
                    }
                    check(&c)?;
                }
            }
        }
    }
}
