//! One incarnation of the taint eviction controller on real threads, shaped as upstream's `Run`
//! (semantics §3): the core's composed [`Core`] behind one lock, with one thread per upstream
//! goroutine that takes its steps (the node dispatcher, the pod dispatcher, W workers) and the
//! timer service standing in for the timers and goroutines of the deletion works.
//!
//! The runtime decides nothing: informer events go to `node_observed` / `pod_observed`, each
//! thread waits until the core offers a step of its own ([`Step::actor`]) and runs it, and the
//! effects are performed as they come out. Spec: RT-CTL-1..RT-CTL-7, RT-MUT-1.
//!
//! Locks, in acquisition order: the informer cache, then the controller.

use crate::api::ApiServer;
pub use crate::informer::InformerLags;
use crate::informer::{Cache, Change, Informers};
use crate::jitter::Jitter;
use crate::mutants::{Boundary, Mutation};
use crate::probe::{observe, Key, Probe, Probed};
use crate::recorder::Recorder;
use crate::schedule::Gate;
use crate::sync::{lock, spawn, thread, wait, Arc, AtomicBool, Condvar, Mutex, Ordering};
use crate::timers::{TimerHandle, TimerService};
use crate::world::{PodEvent, World};
use std::collections::{BTreeMap, HashSet};
use taintcheck_core::api::{Node, Pod, PodKey};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::time::Time;
use taintcheck_core::{
    Actor, ApiRequest, ClusterView, Config, Controller as Core, Effect, Immediate, Step, TimerId,
    Verb,
};
use taintcheck_formats::trace::{RequestVerb, TraceEvent};
use taintcheck_model::check::replay::Turn;

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

/// The immediate path's outcome under upstream's two `time.Now()` calls, where the core offers
/// both: production clocks give a positive delay, hence a real timer and a non-nil entry
/// (semantics §4.3 step 3, N20; RT-CTL-6).
const TWO_NOWS: Immediate = Immediate::Timer;

/// The controller and the runtime's bookkeeping around it, under one lock.
struct State {
    core: Core,
    /// The timer service's handle for each armed core timer.
    armed: BTreeMap<TimerId, TimerHandle>,
    /// Work steps (starts, completions) already handed to the timer service; only asked
    /// whether it holds a step, so hashed.
    scheduled: HashSet<Step, FxBuild>,
    /// Whether the dispatchers and workers have something to do; counted as one item of the
    /// timer service's activity while true (RT-TIMER-2).
    active: bool,
    stopped: bool,
    /// The step each thread (by [`slot`]) runs next, as the core offered it after its last
    /// change: worked out once per change, not by every thread on every wake-up.
    next: Vec<Option<Step>>,
    /// Which threads (by [`slot`]) wait on their condition variable: only those are notified,
    /// a notification being a system call even when nobody waits.
    parked: Vec<bool>,
}

/// What the incarnation shares between its threads.
struct Shared {
    timers: TimerService,
    world: std::sync::Arc<dyn World>,
    recorder: Recorder,
    /// Set once, before any thread starts; read on every step without a lock.
    informers: std::sync::OnceLock<Informers>,
    state: Mutex<State>,
    /// One per thread (by [`slot`]), signalled when the core offers that thread a step or the
    /// incarnation stops: waking every thread on every change cost ten context switches per
    /// step in the storm.
    wake: Vec<Condvar>,
    /// One per thread: set while the core offers that thread a step, so that a thread that has
    /// just finished one can see the next one coming without going to sleep (see [`spin_until`]).
    offered: Vec<AtomicBool>,
    /// Whether a thread spins for its next step before it parks: on a virtual clock only, where
    /// steps come back to back; on a real clock they are far apart and the spin would only take
    /// the CPU from the API server the controller shares the machine with.
    spin: bool,
    /// On a serial virtual clock one step runs at a time, in a fixed order, so that runs are
    /// reproducible (the shuttle tests explore the concurrent interleavings instead).
    serial: bool,
    probe: Option<Probe>,
    mutant: Mutation,
    /// Injected execution time (RT-JIT-1): off outside the oracle's accuracy tests.
    jitter: Jitter,
    /// Set when the incarnation stops, for threads waiting at a schedule's gate.
    halted: AtomicBool,
}

/// A running controller. Dropping it does not stop it: call [`Controller::stop`].
pub struct Controller {
    shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
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
        let env = Env {
            world: std::sync::Arc::new(api.clone()),
            timers,
            recorder,
            lags,
            jitter: Jitter::none(),
        };
        Controller::launch(config, &env, probe, Mutation::default())
    }

    /// [`Controller::start`] against any world (a real API server: `taintcheck controller`).
    pub fn start_in(
        config: Config,
        world: std::sync::Arc<dyn World>,
        timers: &TimerService,
        recorder: &Recorder,
        lags: InformerLags,
    ) -> Controller {
        let env = Env {
            world,
            timers,
            recorder,
            lags,
            jitter: Jitter::none(),
        };
        Controller::launch(config, &env, None, Mutation::default())
    }

    /// [`Controller::start_probed`] with its boundary bent by `mutant` (accuracy tests only).
    pub(crate) fn launch(
        config: Config,
        env: &Env<'_>,
        probe: Option<Probe>,
        mutant: Mutation,
    ) -> Controller {
        let workers = config.workers.max(1);
        let config = Config { workers, ..config };
        let timers = env.timers;
        let shared = Arc::new(Shared {
            timers: timers.clone(),
            world: env.world.clone(),
            recorder: env.recorder.clone(),
            informers: std::sync::OnceLock::new(),
            state: Mutex::new(State {
                core: {
                    let mut core = Core::new(config);
                    core.report_work_steps();
                    core
                },
                armed: BTreeMap::new(),
                scheduled: HashSet::default(),
                active: false,
                stopped: false,
                next: vec![None; slot(Actor::Worker(workers))],
                parked: vec![false; slot(Actor::Worker(workers))],
            }),
            wake: (0..slot(Actor::Worker(workers)))
                .map(|_| Condvar::new())
                .collect(),
            offered: (0..slot(Actor::Worker(workers)))
                .map(|_| AtomicBool::new(false))
                .collect(),
            serial: timers.clock().as_virtual().is_some_and(|v| v.is_serial()),
            spin: timers.clock().as_virtual().is_some(),
            probe,
            mutant,
            jitter: env.jitter.clone(),
            halted: AtomicBool::new(false),
        });
        let observer = shared.clone();
        let informers = Informers::start(
            env.world.clone(),
            timers,
            env.lags,
            Box::new(move |nodes, pods, now| observer.observed(nodes, pods, now)),
        );
        if shared.informers.set(informers).is_err() {
            unreachable!("the informers are set once, here");
        }

        let mut actors = vec![Actor::NodeDispatcher, Actor::PodDispatcher];
        actors.extend((0..workers).map(Actor::Worker));
        let threads = actors
            .into_iter()
            .map(|actor| {
                let s = shared.clone();
                let name = match actor {
                    Actor::NodeDispatcher => "node-dispatcher".into(),
                    Actor::PodDispatcher => "pod-dispatcher".into(),
                    Actor::Worker(i) => format!("worker-{i}"),
                    Actor::Work(_) => unreachable!("works run on the timer service"),
                };
                spawn(name, move || s.run_thread(actor))
            })
            .collect();
        Controller { shared, threads }
    }

    /// The informers (scenario operations change their lag or break their watch).
    pub fn informers(&self) -> Informers {
        self.shared.informers().clone()
    }

    /// Whether a scenario's controller restart keeps this incarnation (a mutant's memory).
    pub(crate) fn survives_restart(&self) -> bool {
        self.shared.mutant.survives_restart()
    }

    /// A copy of the core, for comparing a replay with the model (RT-SCHED-2).
    pub fn core(&self) -> Core {
        lock(&self.shared.state).core.clone()
    }

    /// Stops every thread and timer of this incarnation; its in-memory state is lost (a
    /// restart).
    pub fn stop(self) {
        let s = &self.shared;
        s.informers().stop();
        s.halted.store(true, Ordering::SeqCst);
        if let Some(gate) = s.timers.gate() {
            gate.poke();
        }
        {
            let mut state = lock(&s.state);
            state.stopped = true;
            for (_, handle) in std::mem::take(&mut state.armed) {
                s.timers.cancel(handle);
            }
            if std::mem::take(&mut state.active) {
                s.timers.exit(1);
            }
        }
        for wake in &s.wake {
            wake.notify_all();
        }
        for t in self.threads {
            t.join().expect("a controller thread panicked");
        }
    }
}

/// What an incarnation runs against.
pub(crate) struct Env<'a> {
    pub world: std::sync::Arc<dyn World>,
    pub timers: &'a TimerService,
    pub recorder: &'a Recorder,
    pub lags: InformerLags,
    pub jitter: Jitter,
}

impl Shared {
    fn informers(&self) -> &Informers {
        self.informers
            .get()
            .expect("informers are set before any thread starts")
    }

    /// A delivered batch of informer events, called while the cache is still write-locked so
    /// that no step reads a cache the controller has not been told about (the arrival record,
    /// CORE-S9, must never lag it).
    fn observed(&self, nodes: &[Change<Node>], pods: &[Change<Pod>], now: Time) {
        let mut s = lock(&self.state);
        if s.stopped {
            return;
        }
        let mut added = Vec::new();
        for (old, new) in nodes {
            added.extend(
                s.core
                    .node_observed(old.as_ref(), new.as_ref(), now)
                    .map(Key::Node),
            );
        }
        for (old, new) in pods {
            if !self.mutant.drops_pod_event(old.as_ref(), new.as_ref()) {
                added.extend(
                    s.core
                        .pod_observed(old.as_ref(), new.as_ref(), now)
                        .map(Key::Pod),
                );
            }
        }
        self.probe(|| added.into_iter().map(Probed::Added));
        self.settle(&mut s);
    }

    /// The thread of `actor` (a dispatcher or a worker, RT-CTL-1, RT-CTL-5): waits until the
    /// core offers it a step, then takes the cache's and the controller's locks and runs it.
    fn run_thread(self: &Arc<Self>, actor: Actor) {
        if let Some(gate) = self.timers.gate() {
            return self.run_scheduled(actor, &gate.clone());
        }
        let me = slot(actor);
        loop {
            if self.spin {
                spin_until(|| {
                    self.offered[me].load(Ordering::Acquire) || self.halted.load(Ordering::Acquire)
                });
            }
            {
                let mut s = lock(&self.state);
                while !s.stopped && s.next[me].is_none() {
                    s.parked[me] = true;
                    s = wait(&self.wake[me], s);
                    s.parked[me] = false;
                }
                if s.stopped {
                    return;
                }
            }
            self.informers().read(|cache| {
                let mut s = lock(&self.state);
                if s.stopped {
                    return;
                }
                if let Some(step) = s.next[me].take() {
                    let now = self.mutant.decision_now(self.timers.now());
                    self.step(&mut s, cache, step, now);
                }
            });
        }
    }

    /// The thread of `actor` under a schedule (RT-SCHED-1): takes each step the schedule
    /// releases to it, if the core offers it; otherwise the run has left the path.
    fn run_scheduled(self: &Arc<Self>, actor: Actor, gate: &Gate) {
        let mine = |turn: &Turn| match turn {
            Turn::Step(step) if step.actor() == actor => Some(step.clone()),
            _ => None,
        };
        let halted = || self.halted.load(Ordering::SeqCst);
        while let Some(step) = gate.wait_turn(&halted, mine) {
            self.informers().read(|cache| {
                let mut s = lock(&self.state);
                let mut offered = Vec::new();
                s.core.enabled_handler_steps(&mut offered);
                if offered.contains(&step) {
                    let now = self.timers.now();
                    self.step(&mut s, cache, step, now);
                    gate.finish();
                } else {
                    gate.fail(format!(
                        "the core does not offer {step:?}; it offers {offered:?}"
                    ));
                }
            });
        }
    }

    /// Works out the step each thread runs next, if any, and wakes the threads that have one:
    /// an actor's first enabled step, with the production clock's immediate outcome. On a
    /// serial clock, only the next step of all: workers before dispatchers, so that an item is
    /// handled before the next is dispatched.
    fn offer(&self, s: &mut State) {
        let mut steps: Vec<Step> = Vec::new();
        s.core.enabled_handler_steps(&mut steps);
        Step::resolve_immediate(&mut steps, TWO_NOWS);
        s.next.fill(None);
        if self.serial {
            let next = steps
                .iter()
                .position(|step| matches!(step.actor(), Actor::Worker(_)))
                .or((!steps.is_empty()).then_some(0));
            if let Some(i) = next {
                let step = steps.swap_remove(i);
                let at = slot(step.actor());
                s.next[at] = Some(step);
            }
        } else {
            for step in steps {
                let at = slot(step.actor());
                if s.next[at].is_none() {
                    s.next[at] = Some(step);
                }
            }
        }
        for (at, next) in s.next.iter().enumerate() {
            self.offered[at].store(next.is_some(), Ordering::Release);
            if next.is_some() && s.parked[at] {
                self.wake[at].notify_one();
            }
        }
    }

    /// Runs `step` and performs what it asks for.
    fn step(self: &Arc<Self>, s: &mut State, cache: &Cache, step: Step, now: Time) {
        let before = match (&self.probe, step.actor()) {
            (Some(_), Actor::Worker(w)) => Some(s.core.worker_status(w)),
            _ => None,
        };
        let mut out = Vec::new();
        s.core
            .step(step.clone(), &self.mutant.view(cache), now, &mut out);
        if let (Some(before), Actor::Worker(w)) = (before, step.actor()) {
            let after = s.core.worker_status(w);
            self.probe(|| observe(w, &step, &before, &after));
        }
        self.perform(s, out, now);
    }

    /// A work step run by the timer service (RT-CTL-2; CORE-A10..CORE-A12).
    fn work_step(self: &Arc<Self>, step: Step) {
        self.informers().read(|cache| {
            let mut s = lock(&self.state);
            if s.stopped {
                return;
            }
            s.scheduled.remove(&step);
            let finished = match step {
                Step::CompleteWork(id) => s
                    .core
                    .finished_work(id)
                    .map(|(pod, outcome)| (pod.clone(), outcome)),
                _ => None,
            };
            self.step(&mut s, cache, step, self.timers.now());
            if let Some((pod, outcome)) = finished {
                self.note(&pod, &format!("work finished: {outcome:?}"));
            }
        });
    }

    /// The API server's answer to `request` goes back to its work, which takes it in at its
    /// next step (CORE-A13).
    fn responded(self: &Arc<Self>, request: &ApiRequest, result: taintcheck_core::ApiResult) {
        let mut s = lock(&self.state);
        if s.stopped {
            return;
        }
        s.core.api_responded(request.id, result);
        self.perform(&mut s, Vec::new(), self.timers.now());
    }

    /// Performs the core's effects (RT-CTL-3): timers first, in the order the core emitted them
    /// and under the controller's lock (performed later, a stale arm or cancel of a work id the
    /// core has since given to a new work would replace or cancel the new work's timer), then
    /// events, requests and notes in order; then hands new work steps to the timer service.
    fn perform(self: &Arc<Self>, s: &mut State, effects: Vec<Effect>, now: Time) {
        for effect in &effects {
            match *effect {
                Effect::ArmTimer { id, fire_at } => {
                    let me = self.clone();
                    let fire = Step::FireTimer(id);
                    let handle = self.timers.arm_labelled(
                        fire_at,
                        Turn::Step(fire.clone()),
                        Box::new(move || me.work_step(fire)),
                    );
                    if let Some(old) = s.armed.insert(id, handle) {
                        self.timers.cancel(old);
                    }
                }
                Effect::CancelTimer { id } => {
                    if let Some(old) = s.armed.remove(&id) {
                        self.timers.cancel(old);
                    }
                }
                _ => {}
            }
        }
        for effect in effects {
            match effect {
                Effect::Event(e) => {
                    let event = PodEvent {
                        namespace: e.pod.namespace.to_string(),
                        name: e.pod.name.to_string(),
                        reason: e.reason().to_string(),
                        message: e.message(),
                    };
                    self.record_event(TraceEvent::Event {
                        namespace: event.namespace.clone(),
                        name: event.name.clone(),
                        reason: event.reason.clone(),
                        message: event.message.clone(),
                    });
                    self.world.event(event);
                }
                Effect::Api(request) => self.send(request, now),
                Effect::ArmTimer { .. } | Effect::CancelTimer { .. } => {}
                Effect::Decision(d) => self.note(&d.pod, &d.note.to_string()),
            }
        }
        self.schedule_work_steps(s, now);
        self.settle(s);
    }

    /// Each work step the core newly offers (a spawned work's start, a running work's next
    /// step, a finished work's completion) runs on its own "goroutine": a timer-service
    /// callback at `now`, or up to the injected jitter later (RT-JIT-1).
    fn schedule_work_steps(self: &Arc<Self>, s: &mut State, now: Time) {
        let mut steps: Vec<Step> = Vec::new();
        s.core.poll_work_steps(&mut steps);
        for step in steps {
            if s.scheduled.insert(step.clone()) {
                let me = self.clone();
                let at = now.plus(self.jitter.delay());
                let turn = Turn::Step(step.clone());
                self.timers
                    .arm_labelled(at, turn, Box::new(move || me.work_step(step)));
            }
        }
    }

    /// Records an event at once, or, under injected jitter, from a callback up to the jitter
    /// later, as upstream's recorder does from its broadcaster goroutine (RT-JIT-1). An event
    /// still on its way when the incarnation stops is lost with it.
    fn record_event(self: &Arc<Self>, event: TraceEvent) {
        if !self.jitter.is_on() {
            self.recorder.record(event);
            return;
        }
        let me = self.clone();
        let at = self.timers.now().plus(self.jitter.delay());
        self.timers.arm(
            at,
            Box::new(move || {
                if !lock(&me.state).stopped {
                    me.recorder.record(event);
                }
            }),
        );
    }

    /// Counts the dispatchers' and workers' pending steps in the timer service's activity
    /// (RT-TIMER-2), so that a virtual clock never jumps while an item is on its way, and wakes
    /// the threads.
    fn settle(&self, s: &mut State) {
        let active = !s.core.handlers_idle();
        if active != s.active {
            s.active = active;
            if active {
                self.timers.enter(1);
            } else {
                self.timers.exit(1);
            }
        }
        self.offer(s);
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
    fn send(self: &Arc<Self>, request: ApiRequest, now: Time) {
        let request = self.mutant.request(request);
        let trace_id = self.recorder.next_request_id();
        self.recorder.record(request_line(trace_id, &request));
        if self.mutant.repeats(&request) {
            let again = self.recorder.next_request_id();
            self.recorder.record(request_line(again, &request));
            self.serve(request.clone(), again, now, false);
        }
        self.serve(request, trace_id, now, true);
    }

    /// The world serves `request`; the answer is recorded and, if `awaited`, delivered to its
    /// work.
    fn serve(self: &Arc<Self>, request: ApiRequest, trace_id: u64, now: Time, awaited: bool) {
        let me = self.clone();
        let sent = request.clone();
        self.world.send(
            request,
            now,
            &self.timers,
            Box::new(move |answer| {
                me.recorder.record(answer.response(trace_id));
                if awaited {
                    me.responded(&sent, answer.result);
                }
            }),
        );
    }

    /// Records observations when probing.
    fn probe<I: IntoIterator<Item = Probed>>(&self, what: impl FnOnce() -> I) {
        if let Some(p) = &self.probe {
            for observed in what() {
                p.push(observed);
            }
        }
    }
}

/// Spins a few microseconds until `ready` holds, before a thread parks on its condition
/// variable. A dispatcher feeding a worker through a one-slot channel hands over one item at a
/// time; parking and waking an OS thread for each cost two context switches per item, most of
/// the storm's time (`docs/benchmarks.md`). Under shuttle, where threads are simulated, it
/// returns at once.
fn spin_until(ready: impl Fn() -> bool) {
    #[cfg(not(feature = "shuttle"))]
    for i in 0..SPINS {
        if ready() {
            return;
        }
        if i % 64 == 63 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    #[cfg(feature = "shuttle")]
    let _ = ready;
}

/// How long [`spin_until`] spins: about 20 µs of `pause` instructions.
#[cfg(not(feature = "shuttle"))]
const SPINS: u32 = 1_000;

/// The index of `actor`'s thread: the node dispatcher, the pod dispatcher, then the workers.
fn slot(actor: Actor) -> usize {
    match actor {
        Actor::NodeDispatcher => 0,
        Actor::PodDispatcher => 1,
        Actor::Worker(i) => 2 + i,
        Actor::Work(_) => unreachable!("works run on the timer service"),
    }
}

/// The trace's `request` line for `request`, numbered `id`.
fn request_line(id: u64, request: &ApiRequest) -> TraceEvent {
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
