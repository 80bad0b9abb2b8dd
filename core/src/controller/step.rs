//! The controller's steps: what is enabled at an instant and what each step does. Each step is
//! one upstream lock or goroutine boundary. Spec: CORE-A3..CORE-A14.

use super::{Controller, Listing};
use crate::api::NodeName;
use crate::context::Context;
use crate::effect::{Effect, Note, WorkId};
use crate::handlers::{self, NodeTaints};
use crate::intake::PodItem;
use crate::matching::{verdict, Verdict};
use crate::profile::ImmediatePath;
use crate::shards::{self, Pick, Shard};
use crate::time::Time;
use crate::timed_queue::{Immediate, Ready, WorkPhase};
use crate::work;
use crate::worker::{Listed, NodePhase, Worker};
use crate::{ClusterView, TimerId};

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
        /// The worker taking the step.
        worker: usize,
        /// The immediate path's outcome, if the step reaches one.
        immediate: Immediate,
        /// Which listed pod to process, counted from the next one in name order.
        pick: u16,
    },
    /// A due timer fires (eviction timer or backoff). Spec: CORE-A11.
    FireTimer(TimerId),
    /// A spawned work goroutine starts. Spec: CORE-A12.
    StartWork(WorkId),
    /// A running work goroutine's next step: its first request after "Marking for deletion",
    /// or its reaction to an answer (next request, backoff, return). Spec: CORE-A12, CORE-A13.
    ContinueWork(WorkId),
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
            Step::StartWork(id) | Step::ContinueWork(id) | Step::CompleteWork(id) => {
                Actor::Work(id)
            }
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

impl Controller {
    fn shard_of(&self, node: &str) -> usize {
        shards::shard_of(node, self.shards.len())
    }

    /// Every step enabled at `now`, in a fixed order: dispatchers, then workers by index, then
    /// due timers, work starts, continuations and completions by id. Under [`ImmediatePath::TwoNows`] a worker
    /// step that may reach the immediate path is offered once per [`Immediate`] outcome.
    pub fn enabled_steps<A: From<Step>>(&self, now: Time, out: &mut Vec<A>) {
        self.enabled_handler_steps(out);
        self.enabled_work_steps(now, out);
    }

    /// The dispatchers' and workers' enabled steps, in [`Controller::enabled_steps`]' order:
    /// what a runtime whose timers and work goroutines run elsewhere asks for, without a scan of
    /// every work.
    pub fn enabled_handler_steps<A: From<Step>>(&self, out: &mut Vec<A>) {
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
    }

    /// The timers due at `now` and the works' start, continuation and completion steps, in
    /// [`Controller::enabled_steps`]' order.
    pub fn enabled_work_steps<A: From<Step>>(&self, now: Time, out: &mut Vec<A>) {
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
            if matches!(w.phase, WorkPhase::Marked | WorkPhase::Answered { .. }) {
                out.push(Step::ContinueWork(*id).into());
            }
        }
        for (id, w) in self.timed.works() {
            if matches!(w.phase, WorkPhase::Finished { .. }) {
                out.push(Step::CompleteWork(*id).into());
            }
        }
    }

    /// From now on, note which works become ready to start, continue or complete, for
    /// [`Controller::poll_work_steps`]: a caller that runs each work on a goroutine of its own
    /// then asks what a call made ready instead of listing every work after every call. Kept
    /// across [`Controller::restarted`]; not part of the state (equality and hash ignore it).
    pub fn report_work_steps(&mut self) {
        self.timed.make_mut().report_ready();
    }

    /// The [`Step::StartWork`], [`Step::ContinueWork`] and [`Step::CompleteWork`] steps that
    /// became enabled since the last call and still are, each once, in
    /// [`Controller::enabled_steps`]' order (none unless [`Controller::report_work_steps`] is on). A step stays enabled until it is taken, so a
    /// caller that takes each step it is given misses none.
    pub fn poll_work_steps<A: From<Step>>(&mut self, out: &mut Vec<A>) {
        if !self.timed.has_ready() {
            return;
        }
        for (ready, id) in self.timed.make_mut().take_ready() {
            out.push(
                match ready {
                    Ready::Start => Step::StartWork(id),
                    Ready::Continue => Step::ContinueWork(id),
                    Ready::Complete => Step::CompleteWork(id),
                }
                .into(),
            );
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
                    if let Some(node) = self.shards.make_mut().get_mut(w).nodes.pop_front() {
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
                    let shard = self.shards.make_mut().get_mut(w);
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
                let cx = Context {
                    profile: &profile,
                    view,
                    arrivals: &self.arrivals,
                    now,
                };
                work::fire_timer(self.timed.make_mut(), timer, cx, out);
            }
            Step::StartWork(id) => {
                let cx = Context {
                    profile: &profile,
                    view,
                    arrivals: &self.arrivals,
                    now,
                };
                work::start_work(self.timed.make_mut(), id, cx, out);
            }
            Step::ContinueWork(id) => {
                let cx = Context {
                    profile: &profile,
                    view,
                    arrivals: &self.arrivals,
                    now,
                };
                work::continue_work(self.timed.make_mut(), id, cx, out);
            }
            Step::CompleteWork(id) => {
                self.timed.make_mut().complete(id, &profile);
            }
        }
        if self.shards.has_idle() {
            self.shards.make_mut().prune();
        }
    }

    fn dispatch_node(&mut self) {
        let item = match self.node_held.take() {
            Some(item) => item,
            None => match self.node_queue.make_mut().get() {
                Some(item) => item,
                None => return,
            },
        };
        let shard = self.shard_of(&item);
        if self.channel_has_room(shard, true) {
            self.shards.make_mut().get_mut(shard).nodes.push_back(item);
        } else {
            self.node_held = Some(item);
        }
    }

    fn dispatch_pod(&mut self) {
        let item = match self.pod_held.take() {
            Some(item) => item,
            None => match self.pod_queue.make_mut().get() {
                Some(item) => item,
                None => return,
            },
        };
        let shard = self.shard_of(item.node_str());
        if self.channel_has_room(shard, false) {
            self.shards.make_mut().get_mut(shard).pods.push_back(item);
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
                self.node_queue.make_mut().done(&node);
                self.shards.make_mut().get_mut(w).worker = after(then);
            }
            NodeTaints::Taints(taints) => {
                self.shards.make_mut().get_mut(w).worker = Worker::Node {
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
        match std::mem::take(&mut self.shards.make_mut().get_mut(w).worker) {
            Worker::Idle => {}
            Worker::Draining { pod } => match self.shards.make_mut().get_mut(w).nodes.pop_front() {
                Some(node) => self.begin_node(w, node, Some(pod), view),
                None => {
                    let cx = Context {
                        profile: &profile,
                        view,
                        arrivals: &self.arrivals,
                        now,
                    };
                    let decided = handlers::handle_pod_update(
                        &mut self.timed,
                        &self.tainted_nodes,
                        cx,
                        &pod,
                        immediate,
                        out,
                    );
                    self.count(decided);
                    self.pod_queue.make_mut().done(&pod);
                }
            },
            Worker::Node { node, phase, then } => match phase {
                NodePhase::Updated { taints } => {
                    let pods: Listed = view.pods_on_node(&node).into_iter().cloned().collect();
                    if pods.is_empty() {
                        self.node_queue.make_mut().done(&node);
                        self.shards.make_mut().get_mut(w).worker = after(then);
                    } else {
                        self.shards.make_mut().get_mut(w).worker = Worker::Node {
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
                    let cx = Context {
                        profile: &profile,
                        view,
                        arrivals: &self.arrivals,
                        now: listed_at,
                    };
                    let decided = handlers::node_update_pod(
                        &mut self.timed,
                        cx,
                        &pods[next + pick],
                        &taints,
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
                        self.shards.make_mut().get_mut(w).worker = Worker::Node {
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
                        self.node_queue.make_mut().done(&node);
                        self.shards.make_mut().get_mut(w).worker = after(then);
                    }
                }
            },
        }
    }

    fn count(&mut self, decided: Option<Note>) {
        if decided == Some(Note::ZeroTaints) {
            self.zero_taint_calls += 1;
        }
    }
}

/// A worker's state once a node item is done: back to its pod item's drain, or idle.
fn after(then: Option<PodItem>) -> Worker {
    match then {
        Some(pod) => Worker::Draining { pod },
        None => Worker::Idle,
    }
}
