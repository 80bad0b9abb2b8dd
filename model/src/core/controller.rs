//! The composed controller: every component in one ordered, hashable, cheaply cloned value, with
//! one [`Step`] per upstream lock or goroutine boundary. Spec: CORE-S1..CORE-S8, CORE-A*.

use super::effect::{ApiRequest, ApiResult, Effect, RequestId, TimerId, WorkId};
use super::handlers::{self, NodeTaints, TaintedNodes};
use super::intake::{self, PodItem};
use super::shards::{self, Pick};
use super::timed_queue::{Immediate, TimedQueue, WorkPhase};
use super::work;
use super::workqueue::WorkQueue;
use super::ClusterView;
use crate::api::{Node, NodeName, Pod, Taint};
use crate::matching::{verdict, Verdict};
use crate::profile::{ImmediatePath, Profile};
use crate::time::Time;
use std::collections::VecDeque;
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
}

impl Config {
    /// Upstream's sizes with `profile`.
    pub fn new(profile: Profile) -> Config {
        Config {
            profile,
            workers: 8,
            node_channel_capacity: 10,
            pod_channel_capacity: 1,
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
    /// ([`ImmediatePath::TwoNows`] only; otherwise always [`Immediate::Nil`]). Spec: CORE-A4..A7.
    WorkerContinue { worker: usize, immediate: Immediate },
    /// A due timer fires (eviction timer or backoff). Spec: CORE-A11.
    FireTimer(TimerId),
    /// A spawned work goroutine starts. Spec: CORE-A12.
    StartWork(WorkId),
    /// A finished work's wrapped function updates the map. Spec: CORE-A10.
    CompleteWork(WorkId),
}

/// A listed pod as `handleNodeUpdate` holds it: the cache object at listing time.
type Listed = Arc<[Pod]>;

/// A worker's progress through `handleNodeUpdate`. Spec: CORE-S6.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodePhase {
    /// `taintedNodes` updated with these taints (possibly none); the pods are listed next.
    Updated { taints: Arc<[Taint]> },
    /// Pods listed at `now` (the one `now` of the node); `pods[next]` is processed next (or,
    /// with no taints, cancelled by the short-circuit).
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

/// One shard: its two bounded channels and its worker. Spec: CORE-S5, CORE-S6.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Shard {
    pub nodes: VecDeque<NodeName>,
    pub pods: VecDeque<PodItem>,
    pub worker: Worker,
}

/// The whole controller. Spec: CORE-S1..CORE-S8.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Controller {
    config: Config,
    /// CORE-S1.
    tainted_nodes: TaintedNodes,
    /// CORE-S2, CORE-S3.
    timed: TimedQueue,
    /// CORE-S4.
    node_queue: WorkQueue<NodeName>,
    pod_queue: WorkQueue<PodItem>,
    /// CORE-S7: the item each dispatcher holds while its shard's channel is full.
    node_held: Option<NodeName>,
    pod_held: Option<PodItem>,
    /// CORE-S5, CORE-S6.
    shards: Vec<Shard>,
    /// CORE-S8: how often `processPodOnNode` was reached with zero taints (CORE-PRE; stays 0).
    zero_taint_calls: u32,
}

impl Controller {
    pub fn new(config: Config) -> Controller {
        Controller {
            config,
            tainted_nodes: TaintedNodes::new(),
            timed: TimedQueue::new(),
            node_queue: WorkQueue::new(),
            pod_queue: WorkQueue::new(),
            node_held: None,
            pod_held: None,
            shards: vec![Shard::default(); config.workers.max(1)],
            zero_taint_calls: 0,
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

    pub fn shards(&self) -> &[Shard] {
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

    /// A node informer event (add: `old` None; delete: `new` None). Spec: CORE-A1.
    pub fn node_observed(&mut self, old: Option<&Node>, new: Option<&Node>) {
        if let Some(name) = intake::node_updated(old, new) {
            self.node_queue.add(name);
        }
    }

    /// A pod informer event (add: `old` None; delete: `new` None, tombstones unwrapped).
    /// Spec: CORE-A2.
    pub fn pod_observed(&mut self, old: Option<&Pod>, new: Option<&Pod>) {
        if let Some(item) = intake::pod_updated(old, new) {
            self.pod_queue.add(item);
        }
    }

    fn shard_of(&self, node: &str) -> usize {
        shards::shard_of(node, self.shards.len())
    }

    /// Every step enabled at `now`, in a fixed order: dispatchers, then workers by index, then
    /// due timers, work starts and completions by id. Under [`ImmediatePath::TwoNows`] a worker
    /// step that may reach the immediate path is offered once per [`Immediate`] outcome.
    pub fn enabled_steps(&self, now: Time, out: &mut Vec<Step>) {
        if self.dispatch_enabled(self.node_held.as_deref(), self.node_queue.len(), true) {
            out.push(Step::DispatchNode);
        }
        let pod_node = self.pod_held.as_ref().map(PodItem::node_str);
        if self.dispatch_enabled(pod_node, self.pod_queue.len(), false) {
            out.push(Step::DispatchPod);
        }
        for (worker, shard) in self.shards.iter().enumerate() {
            match &shard.worker {
                Worker::Idle => {
                    for pick in
                        shards::worker_choices(!shard.nodes.is_empty(), !shard.pods.is_empty())
                    {
                        out.push(match pick {
                            Pick::Node => Step::WorkerTakeNode(worker),
                            Pick::Pod => Step::WorkerTakePod(worker),
                        });
                    }
                }
                busy => {
                    out.push(Step::WorkerContinue {
                        worker,
                        immediate: Immediate::Nil,
                    });
                    if self.may_reach_immediate_timer(shard, busy) {
                        out.push(Step::WorkerContinue {
                            worker,
                            immediate: Immediate::Timer,
                        });
                    }
                }
            }
        }
        for (id, w) in self.timed.works() {
            if w.timer_due().is_some_and(|due| due <= now) {
                out.push(Step::FireTimer(id.timer()));
            }
        }
        for (id, w) in self.timed.works() {
            if w.phase == WorkPhase::Spawned {
                out.push(Step::StartWork(*id));
            }
        }
        for (id, w) in self.timed.works() {
            if matches!(w.phase, WorkPhase::Finished { .. }) {
                out.push(Step::CompleteWork(*id));
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
        let s = &self.shards[shard];
        if node {
            s.nodes.len() < self.config.node_channel_capacity
        } else {
            s.pods.len() < self.config.pod_channel_capacity
        }
    }

    /// Whether the worker's next step may take the two-`Now()` immediate path: a listed pod that
    /// is not tolerated, or a held pod item (whose pod is only read from the cache then).
    fn may_reach_immediate_timer(&self, shard: &Shard, worker: &Worker) -> bool {
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
                        && pods.get(*next).is_some_and(|pod| {
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
        match step {
            Step::DispatchNode => self.dispatch_node(),
            Step::DispatchPod => self.dispatch_pod(),
            Step::WorkerTakeNode(w) => {
                if w < self.shards.len() && self.shards[w].worker == Worker::Idle {
                    if let Some(node) = self.shards[w].nodes.pop_front() {
                        self.begin_node(w, node, None, view);
                    }
                }
            }
            Step::WorkerTakePod(w) => {
                if w < self.shards.len() && self.shards[w].worker == Worker::Idle {
                    if let Some(pod) = self.shards[w].pods.pop_front() {
                        self.shards[w].worker = Worker::Draining { pod };
                    }
                }
            }
            Step::WorkerContinue { worker, immediate } => {
                if worker < self.shards.len() {
                    self.continue_worker(worker, immediate, view, now, out);
                }
            }
            Step::FireTimer(timer) => {
                work::fire_timer(&mut self.timed, timer, &profile, view, now, out);
            }
            Step::StartWork(id) => {
                work::start_work(&mut self.timed, id, &profile, view, now, out);
            }
            Step::CompleteWork(id) => {
                self.timed.complete(id, &profile);
            }
        }
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
            self.shards[shard].nodes.push_back(item);
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
            self.shards[shard].pods.push_back(item);
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
        match handlers::update_tainted_nodes(&mut self.tainted_nodes, &node, view) {
            NodeTaints::Gone => {
                self.node_queue.done(&node);
                self.shards[w].worker = after(then);
            }
            NodeTaints::Taints(taints) => {
                self.shards[w].worker = Worker::Node {
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
        view: &impl ClusterView,
        now: Time,
        out: &mut Vec<Effect>,
    ) {
        let profile = self.config.profile;
        match std::mem::take(&mut self.shards[w].worker) {
            Worker::Idle => {}
            Worker::Draining { pod } => match self.shards[w].nodes.pop_front() {
                Some(node) => self.begin_node(w, node, Some(pod), view),
                None => {
                    let decided = handlers::handle_pod_update(
                        &mut self.timed,
                        &self.tainted_nodes,
                        &profile,
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
                        self.shards[w].worker = after(then);
                    } else {
                        self.shards[w].worker = Worker::Node {
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
                        &mut self.timed,
                        &profile,
                        &pods[next],
                        &taints,
                        listed_at,
                        immediate,
                        out,
                    );
                    self.count(decided);
                    if next + 1 < pods.len() {
                        self.shards[w].worker = Worker::Node {
                            node,
                            phase: NodePhase::Pods {
                                taints,
                                pods,
                                next: next + 1,
                                now: listed_at,
                            },
                            then,
                        };
                    } else {
                        self.node_queue.done(&node);
                        self.shards[w].worker = after(then);
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
        work::responded(&mut self.timed, request, result, &profile, view, now, out);
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

    /// Nothing queued, dispatched, held or being handled, and no work in flight except armed
    /// eviction timers.
    pub fn is_quiescent(&self) -> bool {
        self.node_queue.is_idle()
            && self.pod_queue.is_idle()
            && self.node_held.is_none()
            && self.pod_held.is_none()
            && self
                .shards
                .iter()
                .all(|s| s.nodes.is_empty() && s.pods.is_empty() && s.worker == Worker::Idle)
            && self
                .timed
                .works()
                .values()
                .all(|w| w.phase == WorkPhase::Armed)
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
