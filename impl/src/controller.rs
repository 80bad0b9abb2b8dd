//! One incarnation of the taint eviction controller on real threads, shaped as upstream's `Run`
//! (semantics §3): informers feeding two work queues, one node dispatcher and one pod dispatcher
//! thread, W worker threads each owning a bounded node channel and pod channel, and deletion
//! works driven by the timer service.
//!
//! Every decision is the core's: intake filters (`node_updated`, `pod_updated`), `shard_of`, the
//! work queue, the worker's drain rule, the handlers (`handleNodeUpdate` in its phases,
//! `handlePodUpdate`, `processPodOnNode`), the timed queue and the work steps. This module only
//! holds upstream's locks around them and performs their effects. Spec: RT-CTL-1..RT-CTL-5.
//!
//! Locks, in acquisition order: the informer cache (read), `taintedNodes`, the timed queue.

use crate::api::ApiServer;
use crate::informer::{Cache, Handlers, Informers};
use crate::probe::{Key, Probe, Probed};
use crate::queues::{BlockingQueue, Received, Shard};
use crate::recorder::Recorder;
use crate::sync::{lock, spawn, thread, Arc, AtomicBool, Mutex, Ordering};
use crate::timers::{TimerHandle, TimerService};
use std::collections::{BTreeMap, BTreeSet};
use taintcheck_model::api::{Node, NodeName, Pod, PodKey};
use taintcheck_model::core::handlers::{self, NodeTaints, TaintedNodes};
use taintcheck_model::core::{
    node_updated, pod_updated, shard_of, work, Arrivals, ClusterView, Config, Effect, Immediate,
    PodItem, TimedQueue, TimerId, Verb, WorkId, WorkKey, WorkPhase,
};
use taintcheck_model::profile::Profile;
use taintcheck_model::time::{Duration, Time};
use taintcheck_model::trace::{RequestVerb, TraceEvent};

#[cfg(feature = "mutants")]
use crate::mutants::Mutant;
#[cfg(feature = "mutants")]
pub use crate::mutants::Mutation;
#[cfg(feature = "mutants")]
use taintcheck_model::core::driver::Cluster;
/// Without the `mutants` feature an incarnation runs no mutant.
#[cfg(not(feature = "mutants"))]
pub type Mutation = ();

impl ClusterView for Cache {
    fn node(&self, name: &str) -> Option<&Node> {
        Cache::node(self, name)
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        Cache::pod(self, key)
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        Cache::pods_on_node(self, name)
    }
}

/// The immediate path's outcome under upstream's two `time.Now()` calls: production clocks give
/// a positive delay, hence a real timer and a non-nil entry (semantics §4.3 step 3, N20).
const TWO_NOWS: Immediate = Immediate::Timer;

/// The caches as the handlers read them: the informer cache, or (accuracy tests only) a
/// mutant's misreading of it.
enum View<'a> {
    Cache(&'a Cache),
    #[cfg(feature = "mutants")]
    Misread(Cluster),
}

impl ClusterView for View<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        match self {
            View::Cache(c) => Cache::node(c, name),
            #[cfg(feature = "mutants")]
            View::Misread(m) => m.node(name),
        }
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        match self {
            View::Cache(c) => Cache::pod(c, key),
            #[cfg(feature = "mutants")]
            View::Misread(m) => m.pod(key),
        }
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        match self {
            View::Cache(c) => Cache::pods_on_node(c, name),
            #[cfg(feature = "mutants")]
            View::Misread(m) => m.pods_on_node(name),
        }
    }
}

/// What the incarnation shares between its threads.
struct Shared {
    config: Config,
    timers: TimerService,
    api: ApiServer,
    recorder: Recorder,
    informers: Mutex<Option<Informers>>,
    node_queue: BlockingQueue<NodeName>,
    pod_queue: BlockingQueue<PodItem>,
    shards: Vec<Shard>,
    /// Upstream `taintedNodes` under `taintedNodesLock`.
    tainted: Mutex<TaintedNodes>,
    /// Upstream `TimedWorkerQueue` under its lock.
    timed: Mutex<TimedQueue>,
    /// The fixed design's arrival record (CORE-S9), updated under the cache's write lock and
    /// taken last; empty unless the profile keeps it.
    arrivals: Mutex<Arrivals>,
    /// The timer service's handle for each armed core timer.
    armed: Mutex<BTreeMap<TimerId, TimerHandle>>,
    /// Works whose start is already scheduled (a spawned goroutine not yet running).
    starting: Mutex<BTreeSet<WorkId>>,
    stopped: AtomicBool,
    probe: Option<Probe>,
    // Read only by the mutants' hooks (feature `mutants`).
    #[cfg_attr(not(feature = "mutants"), allow(dead_code))]
    mutant: Mutation,
}

/// A running controller. Dropping it does not stop it: call [`Controller::stop`].
pub struct Controller {
    shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
}

/// Where the controller's informers start from.
#[derive(Clone, Copy, Debug)]
pub struct InformerLags {
    pub nodes: Duration,
    pub pods: Duration,
}

impl Controller {
    /// Starts the informers, the two dispatchers and `config.workers` workers (upstream `Run`).
    pub fn start(
        config: Config,
        api: &ApiServer,
        timers: &TimerService,
        recorder: &Recorder,
        lags: InformerLags,
    ) -> Controller {
        Controller::start_probed(config, api, timers, recorder, lags, None)
    }

    /// [`Controller::start`], recording what the threads do in `probe`.
    pub fn start_probed(
        config: Config,
        api: &ApiServer,
        timers: &TimerService,
        recorder: &Recorder,
        lags: InformerLags,
        probe: Option<Probe>,
    ) -> Controller {
        Controller::launch(
            config,
            api,
            timers,
            recorder,
            lags,
            probe,
            Mutation::default(),
        )
    }

    /// [`Controller::start_probed`], running `mutant` (accuracy tests only).
    pub(crate) fn launch(
        config: Config,
        api: &ApiServer,
        timers: &TimerService,
        recorder: &Recorder,
        lags: InformerLags,
        probe: Option<Probe>,
        mutant: Mutation,
    ) -> Controller {
        let workers = config.workers.max(1);
        // On a serial virtual clock, items are processed one at a time so runs are reproducible
        // (the shuttle tests explore the concurrent interleavings instead).
        let serial = timers.clock().as_virtual().is_some_and(|v| v.is_serial());
        let shared = Arc::new(Shared {
            config,
            timers: timers.clone(),
            api: api.clone(),
            recorder: recorder.clone(),
            informers: Mutex::new(None),
            node_queue: BlockingQueue::new(timers.clone(), serial),
            pod_queue: BlockingQueue::new(timers.clone(), serial),
            shards: (0..workers)
                .map(|_| Shard::new(config.node_channel_capacity, config.pod_channel_capacity))
                .collect(),
            tainted: Mutex::new(TaintedNodes::new()),
            timed: Mutex::new(TimedQueue::new()),
            arrivals: Mutex::new(Arrivals::default()),
            armed: Mutex::new(BTreeMap::new()),
            starting: Mutex::new(BTreeSet::new()),
            stopped: AtomicBool::new(false),
            probe,
            mutant,
        });
        let (on_node, on_pod, on_cache) = (shared.clone(), shared.clone(), shared.clone());
        let handlers = Handlers {
            with_cache: Box::new(move |nodes, pods, now| {
                if !on_cache.profile().keeps_arrivals() {
                    return;
                }
                let mut arrivals = lock(&on_cache.arrivals);
                for (old, new) in nodes {
                    if let Some(node) = new.as_ref().or(old.as_ref()) {
                        arrivals.node_observed(&node.name, new.as_ref(), now);
                    }
                }
                for (old, new) in pods {
                    if let Some(pod) = new.as_ref().or(old.as_ref()) {
                        arrivals.pod_observed(&pod.key, new.as_ref(), now);
                    }
                }
            }),
            node: Box::new(move |changes| {
                let names: Vec<NodeName> = changes
                    .iter()
                    .filter_map(|(old, new)| node_updated(old.as_ref(), new.as_ref()))
                    .collect();
                on_node.probe(|| names.iter().cloned().map(Key::Node).map(Probed::Added));
                on_node.node_queue.add_all(names);
            }),
            pod: Box::new(move |changes| {
                let items: Vec<PodItem> = changes
                    .iter()
                    .filter_map(|(old, new)| pod_updated(old.as_ref(), new.as_ref()))
                    .collect();
                on_pod.probe(|| items.iter().cloned().map(Key::Pod).map(Probed::Added));
                on_pod.pod_queue.add_all(items);
            }),
        };
        let informers = Informers::start(api, timers, lags.nodes, lags.pods, handlers);
        *lock(&shared.informers) = Some(informers);

        let mut threads = Vec::new();
        let s = shared.clone();
        threads.push(spawn("node-dispatcher".into(), move || s.dispatch_nodes()));
        let s = shared.clone();
        threads.push(spawn("pod-dispatcher".into(), move || s.dispatch_pods()));
        for i in 0..workers {
            let s = shared.clone();
            threads.push(spawn(format!("worker-{i}"), move || s.work(i)));
        }
        Controller { shared, threads }
    }

    /// The informers (scenario operations change their lag or break their watch).
    pub fn informers(&self) -> Informers {
        self.shared.informers()
    }

    /// Stops every thread and timer of this incarnation; its in-memory state is lost (a
    /// restart). Items still queued are discounted from the activity count.
    pub fn stop(self) {
        let s = &self.shared;
        s.stopped.store(true, Ordering::SeqCst);
        s.informers().stop();
        let mut dropped = s.node_queue.shut_down() + s.pod_queue.shut_down();
        for shard in &s.shards {
            dropped += shard.close();
        }
        for (_, handle) in std::mem::take(&mut *lock(&s.armed)) {
            s.timers.cancel(handle);
        }
        for t in self.threads {
            t.join().expect("a controller thread panicked");
        }
        s.timers.exit(dropped);
    }
}

impl Shared {
    fn informers(&self) -> Informers {
        lock(&self.informers)
            .clone()
            .expect("informers are set before any thread starts")
    }

    fn profile(&self) -> &Profile {
        &self.config.profile
    }

    /// The `now` a handler decides with (one tick early for the off-by-one mutant).
    fn decision_now(&self) -> Time {
        let now = self.timers.now();
        #[cfg(feature = "mutants")]
        if self.mutant == Some(Mutant::OffByOneTick) {
            return Time(now.millis() - 1);
        }
        now
    }

    /// The caches as this incarnation reads them.
    fn view<'a>(&self, cache: &'a Cache) -> View<'a> {
        #[cfg(feature = "mutants")]
        if let Some(m) = crate::mutants::misread(self.mutant, cache) {
            return View::Misread(m);
        }
        View::Cache(cache)
    }

    /// The node dispatcher: `Get`, hash, blocking send to the shard (RT-CTL-1).
    fn dispatch_nodes(&self) {
        while let Some(name) = self.node_queue.get() {
            let shard = shard_of(&name, self.shards.len());
            if !self.shards[shard].send_node(name) {
                self.timers.exit(1);
                return;
            }
        }
    }

    /// The pod dispatcher, hashing the item's node name (`""` when unbound).
    fn dispatch_pods(&self) {
        while let Some(item) = self.pod_queue.get() {
            let shard = shard_of(item.node_str(), self.shards.len());
            if !self.shards[shard].send_pod(item) {
                self.timers.exit(1);
                return;
            }
        }
    }

    /// Worker `i` (RT-CTL-2): a node item is handled at once; a pod item waits until the node
    /// items buffered on this shard are handled.
    fn work(self: &Arc<Self>, i: usize) {
        let shard = &self.shards[i];
        while let Some(received) = shard.receive() {
            match received {
                Received::Node(name) => self.node_item(i, name),
                Received::Pod(item) => {
                    self.probe(|| {
                        let buffered = shard.buffered_nodes();
                        [Probed::TookPod {
                            worker: i,
                            buffered,
                        }]
                    });
                    while let Some(name) = shard.next_to_drain() {
                        self.node_item(i, name);
                    }
                    let key = Key::Pod(item.clone());
                    self.probe(|| {
                        [Probed::Began {
                            worker: i,
                            key: key.clone(),
                        }]
                    });
                    self.handle_pod(&item);
                    self.probe(|| [Probed::Ended { worker: i, key }]);
                    self.pod_queue.done(&item);
                    self.timers.exit(1);
                }
            }
        }
    }

    fn node_item(self: &Arc<Self>, worker: usize, name: NodeName) {
        let key = Key::Node(name.clone());
        self.probe(|| {
            [Probed::Began {
                worker,
                key: key.clone(),
            }]
        });
        self.handle_node(&name);
        self.probe(|| [Probed::Ended { worker, key }]);
        self.node_queue.done(&name);
        self.timers.exit(1);
    }

    /// Records observations when probing.
    fn probe<I: IntoIterator<Item = Probed>>(&self, what: impl FnOnce() -> I) {
        if let Some(p) = &self.probe {
            for observed in what() {
                p.push(observed);
            }
        }
    }

    /// `handleNodeUpdate` in upstream's phases: update `taintedNodes` under its lock, list the
    /// node's pods, then each pod under the timed queue's lock, all with one `now` (CORE-A5).
    fn handle_node(self: &Arc<Self>, name: &NodeName) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        let now = self.decision_now();
        let mut out = Vec::new();
        let mut touched = Vec::new();
        self.informers().read(|cache| {
            let view = self.view(cache);
            let found = handlers::update_tainted_nodes(&mut lock(&self.tainted), name, &view);
            let NodeTaints::Taints(taints) = found else {
                return;
            };
            #[cfg(feature = "mutants")]
            if self.mutant == Some(Mutant::NeverCancelsOnTaintRemoval) && taints.is_empty() {
                return;
            }
            for pod in view.pods_on_node(name) {
                let mut timed = lock(&self.timed);
                let from = out.len();
                handlers::node_update_pod(
                    &mut timed,
                    self.profile(),
                    &lock(&self.arrivals),
                    &view,
                    pod,
                    &taints,
                    now,
                    TWO_NOWS,
                    &mut out,
                );
                self.apply_timers(&out[from..]);
                touched.extend(spawned_of(&timed, &pod.key));
            }
        });
        self.perform(out, now);
        self.schedule_starts(touched);
    }

    /// `handlePodUpdate` (CORE-A6).
    fn handle_pod(self: &Arc<Self>, item: &PodItem) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        let now = self.decision_now();
        let mut out = Vec::new();
        let touched = self.informers().read(|cache| {
            let view = self.view(cache);
            let tainted = lock(&self.tainted);
            let mut timed = lock(&self.timed);
            // Only a mutant that may throw the outcome away pays for the copy.
            #[cfg(feature = "mutants")]
            let before = crate::mutants::may_ignore_pod_update(self.mutant)
                .then(|| (timed.clone(), out.len()));
            handlers::handle_pod_update(
                &mut timed,
                &tainted,
                self.profile(),
                &lock(&self.arrivals),
                &view,
                item,
                now,
                TWO_NOWS,
                &mut out,
            );
            #[cfg(feature = "mutants")]
            if let Some((queue, len)) = before.filter(|(_, len)| {
                crate::mutants::ignores_pod_update(self.mutant, &view, item, &out[*len..])
            }) {
                *timed = queue;
                out.truncate(len);
            }
            self.apply_timers(&out);
            spawned_of(&timed, &item.key)
        });
        self.perform(out, now);
        self.schedule_starts(touched);
    }

    /// Runs a core work step under the cache and timed-queue locks, then schedules what the
    /// work needs next (its start, or its completion) and performs the effects.
    fn work_step(
        self: &Arc<Self>,
        id: WorkId,
        step: impl FnOnce(&mut TimedQueue, &Profile, &View<'_>, &Arrivals, Time, &mut Vec<Effect>),
    ) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        let now = self.timers.now();
        let mut out = Vec::new();
        let phase = self.informers().read(|cache| {
            let mut timed = lock(&self.timed);
            let arrivals = lock(&self.arrivals);
            step(
                &mut timed,
                self.profile(),
                &self.view(cache),
                &arrivals,
                now,
                &mut out,
            );
            self.apply_timers(&out);
            timed.work(id).map(|w| w.phase.clone())
        });
        self.perform(out, now);
        match phase {
            Some(WorkPhase::Spawned) => self.schedule_starts(vec![id]),
            Some(WorkPhase::Finished { .. }) => {
                let me = self.clone();
                self.timers.arm(now, Box::new(move || me.complete(id)));
            }
            _ => {}
        }
    }

    /// A core timer fired (CORE-A11).
    fn fire(self: &Arc<Self>, timer: TimerId) {
        // The fired handle stays in `armed` until replaced: by now the id may belong to a newer
        // work whose handle must not be forgotten, and cancelling a fired handle is a no-op.
        self.work_step(WorkId(timer.0), |q, p, cache, arrivals, now, out| {
            work::fire_timer(q, timer, p, cache, arrivals, now, out);
        });
    }

    /// A spawned work's goroutine runs (CORE-A12).
    fn start(self: &Arc<Self>, id: WorkId) {
        lock(&self.starting).remove(&id);
        self.work_step(id, |q, p, cache, arrivals, now, out| {
            work::start_work(q, id, p, cache, arrivals, now, out);
        });
    }

    /// The wrapped function's map update after the work returned (CORE-A10).
    fn complete(self: &Arc<Self>, id: WorkId) {
        if self.stopped.load(Ordering::SeqCst) {
            return;
        }
        let (pod, outcome) = {
            let mut timed = lock(&self.timed);
            let pod = timed.work(id).map(|w| w.key.pod.clone());
            (pod, timed.complete(id, self.profile()))
        };
        if let (Some(pod), Some(outcome)) = (pod, outcome) {
            self.note(&pod, &format!("work finished: {outcome:?}"));
        }
    }

    /// Each newly spawned work starts on its own "goroutine": a timer-service callback at `now`.
    fn schedule_starts(self: &Arc<Self>, ids: Vec<WorkId>) {
        let now = self.timers.now();
        for id in ids {
            if lock(&self.starting).insert(id) {
                let me = self.clone();
                self.timers.arm(now, Box::new(move || me.start(id)));
            }
        }
    }

    /// Performs the core's effects, in order (RT-CTL-3).
    fn perform(self: &Arc<Self>, effects: Vec<Effect>, now: Time) {
        for effect in effects {
            match effect {
                Effect::Event(e) => self.recorder.record(TraceEvent::Event {
                    namespace: e.pod.namespace.to_string(),
                    name: e.pod.name.to_string(),
                    reason: e.reason().to_string(),
                    message: e.message(),
                }),
                Effect::Api(request) => self.send(request, now),
                // Already applied under the timed queue's lock (`apply_timers`).
                Effect::ArmTimer { .. } | Effect::CancelTimer { .. } => {}
                Effect::Decision(d) => self.note(&d.pod, &d.note.to_string()),
            }
        }
    }

    /// Arms and disarms the core's timers in the order the core emitted them, while the caller
    /// still holds the timed queue's lock (RT-CTL-3). Performed later, outside the lock, a
    /// stale arm or cancel of a work id the core has since freed and given to a new work would
    /// replace or cancel the new work's timer, which then never fires.
    fn apply_timers(self: &Arc<Self>, effects: &[Effect]) {
        for effect in effects {
            match *effect {
                Effect::ArmTimer { id, fire_at } => {
                    let me = self.clone();
                    let handle = self.timers.arm(fire_at, Box::new(move || me.fire(id)));
                    if let Some(old) = lock(&self.armed).insert(id, handle) {
                        self.timers.cancel(old);
                    }
                }
                Effect::CancelTimer { id } => {
                    if let Some(old) = lock(&self.armed).remove(&id) {
                        self.timers.cancel(old);
                    }
                }
                _ => {}
            }
        }
    }

    fn note(&self, pod: &PodKey, text: &str) {
        self.recorder.record(TraceEvent::Note {
            namespace: Some(pod.namespace.to_string()),
            name: Some(pod.name.to_string()),
            text: text.to_string(),
        });
    }

    /// Sends an API request; the API server serves it after its latency and the answer goes
    /// back to the work (RT-CTL-4).
    fn send(self: &Arc<Self>, request: taintcheck_model::core::ApiRequest, now: Time) {
        #[cfg(feature = "mutants")]
        let request = match self.mutant {
            Some(Mutant::DeletesSameNameSuccessor) => taintcheck_model::core::ApiRequest {
                uid: None,
                version: None,
                ..request
            },
            _ => request,
        };
        let trace_id = self.recorder.next_request_id();
        self.recorder.record(request_line(trace_id, &request));
        #[cfg(feature = "mutants")]
        if self.mutant == Some(Mutant::DeletesTwice) && request.verb == Verb::Delete {
            self.send_again(&request, now);
        }
        let me = self.clone();
        let at = now.plus(self.api.latency());
        self.timers.arm(
            at,
            Box::new(move || {
                let answer = me.api.serve(&request);
                me.recorder.record(answer.response(trace_id));
                let id = WorkId(request.id.0);
                me.work_step(id, |q, p, cache, arrivals, now, out| {
                    work::responded(q, request.id, answer.result, p, cache, arrivals, now, out);
                });
            }),
        );
    }

    /// The mutant that deletes twice: a second, identical DELETE whose answer nobody awaits.
    #[cfg(feature = "mutants")]
    fn send_again(self: &Arc<Self>, request: &taintcheck_model::core::ApiRequest, now: Time) {
        let trace_id = self.recorder.next_request_id();
        self.recorder.record(request_line(trace_id, request));
        let me = self.clone();
        let request = request.clone();
        self.timers.arm(
            now.plus(self.api.latency()),
            Box::new(move || {
                let answer = me.api.serve(&request);
                me.recorder.record(answer.response(trace_id));
            }),
        );
    }
}

/// The trace's `request` line for `request`, numbered `id`.
fn request_line(id: u64, request: &taintcheck_model::core::ApiRequest) -> TraceEvent {
    TraceEvent::Request {
        id,
        verb: RequestVerb::from(&request.verb),
        namespace: request.pod.namespace.to_string(),
        name: request.pod.name.to_string(),
        uid: request.uid.clone(),
        node: match &request.verb {
            Verb::GetNode(node) => Some(node.clone()),
            _ => None,
        },
        resource_version: request.version,
    }
}

/// The works of pod `key` (any incarnation) that are spawned and wait to start.
fn spawned_of(timed: &TimedQueue, key: &PodKey) -> Vec<WorkId> {
    let from = WorkKey {
        pod: key.clone(),
        uid: None,
    };
    timed
        .entries()
        .range_from(&from)
        .take_while(|(k, _)| k.pod == *key)
        .filter_map(|(_, entry)| entry.work())
        .filter(|id| {
            timed
                .work(*id)
                .is_some_and(|w| w.phase == WorkPhase::Spawned)
        })
        .collect()
}
