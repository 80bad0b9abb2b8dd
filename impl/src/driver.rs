//! Runs a scenario: the in-memory API server seeded with the scenario's objects, a controller
//! incarnation on real threads, the scenario's operations as timer-service callbacks at their
//! instants, until the scenario's end. Spec: RT-DRV-1..RT-DRV-3.
//!
//! On the serial virtual clock a run is deterministic: every callback runs alone and the whole
//! runtime goes idle before the next, so one causal chain moves at a time, and the timeline is
//! the same on every run (what the snapshot tests rely on). Races between threads are explored
//! by the shuttle tests instead; races in *time* (a timer firing while an event is still on its
//! way) come from informer lag and API latency, which scenarios control.

use crate::api::{ApiServer, FailRule};
use crate::clock::{Clock, SystemClock, VirtualClock};
use crate::controller::{Controller, Env as Incarnation, InformerLags};
use crate::jitter::Jitter;
use crate::mutants::Mutation;
use crate::recorder::{Recorder, Sink};
use crate::sync::{lock, spawn, Arc, Mutex};
use crate::timers::TimerService;
use taintcheck_core::api::Pod;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::Config;
use taintcheck_formats::scenario::{ObjectKind, Op, PodSpec, Scenario, TimedOp};
use taintcheck_formats::trace::{TraceEvent, TraceRecord};

/// Which clock a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// Deterministic virtual time (the default).
    Virtual,
    /// Wall-clock time: the run lasts as long as the scenario says.
    Real,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The observable trace (`specs/trace-format.md`), header first.
    pub records: Vec<TraceRecord>,
}

/// The controller slot: replaced on restart.
type Slot = Arc<Mutex<Option<Controller>>>;

/// Runs `scenario` under `profile` until its `until` instant. Spec: RT-DRV-1.
pub fn run_scenario(scenario: &Scenario, profile: Profile, clock: ClockKind) -> RunReport {
    run(
        scenario,
        profile,
        clock,
        Mutation::default(),
        Jitter::none(),
        None,
    )
}

/// Runs `scenario` like [`run_scenario`], handing each trace record to `sink` as it is made
/// instead of keeping the trace: the run then holds what is live (the API's objects, the
/// controller's state), not every version of every node it went through. Spec: RT-REC-1.
pub fn run_scenario_streamed(scenario: &Scenario, profile: Profile, clock: ClockKind, sink: Sink) {
    run(
        scenario,
        profile,
        clock,
        Mutation::default(),
        Jitter::none(),
        Some(sink),
    );
}

/// Runs `scenario` on the virtual clock with injected execution time (RT-JIT-1): each work step
/// up to `jitter` after it became enabled, each event recorded up to `jitter` after its
/// emission. The oracle's independent-implementation test.
pub fn run_scenario_jittered(scenario: &Scenario, profile: Profile, jitter: Jitter) -> RunReport {
    run(
        scenario,
        profile,
        ClockKind::Virtual,
        Mutation::default(),
        jitter,
        None,
    )
}

/// Runs `scenario` on the virtual clock with a deliberately wrong controller (the oracle's
/// accuracy tests; feature `mutants`).
#[cfg(feature = "mutants")]
pub fn run_scenario_mutated(
    scenario: &Scenario,
    profile: Profile,
    mutant: crate::mutants::Mutant,
) -> RunReport {
    run(
        scenario,
        profile,
        ClockKind::Virtual,
        Some(mutant),
        Jitter::none(),
        None,
    )
}

fn run(
    scenario: &Scenario,
    profile: Profile,
    clock: ClockKind,
    mutant: Mutation,
    jitter: Jitter,
    sink: Option<Sink>,
) -> RunReport {
    let clock: Arc<dyn Clock> = match clock {
        ClockKind::Virtual => Arc::new(VirtualClock::serial(Time::ZERO)),
        ClockKind::Real => Arc::new(SystemClock::new()),
    };
    let timers = TimerService::new(clock.clone());
    let recorder = Recorder::new(clock, profile.name, Some(&scenario.name))
        .rate_limited(scenario.runtime.rate_limit);
    let recorder = match sink {
        Some(sink) => recorder.streamed(sink),
        None => recorder,
    };
    let api = ApiServer::new(
        scenario.admission.clone(),
        scenario.runtime.deletion_grace,
        recorder.clone(),
        timers.clone(),
    );
    api.set_latency(scenario.runtime.api_latency);
    for node in &scenario.nodes {
        if let Err(e) = api.create_node(node.clone()) {
            op_failed(&recorder, 0, &e.to_string());
        }
    }
    for pod in &scenario.pods {
        if let Err(e) = api.create_pod(pod.clone()) {
            op_failed(&recorder, 0, &e.to_string());
        }
    }
    let config = Config {
        workers: scenario.runtime.workers,
        rate_limit: scenario.runtime.rate_limit,
        ..Config::new(profile)
    };
    let lags = InformerLags {
        nodes: scenario.runtime.node_informer_lag,
        pods: scenario.runtime.pod_informer_lag,
    };
    // Upstream's informers list before `Run`; the runner arms everything before time moves.
    let incarnation = Incarnation {
        world: std::sync::Arc::new(api.clone()),
        timers: &timers,
        recorder: &recorder,
        lags,
        jitter: jitter.clone(),
    };
    let slot: Slot = Arc::new(Mutex::new(Some(Controller::launch(
        config,
        &incarnation,
        None,
        mutant,
    ))));
    for op in &scenario.ops {
        let env = Env {
            api: api.clone(),
            timers: timers.clone(),
            recorder: recorder.clone(),
            slot: slot.clone(),
            config,
            lags,
            mutant,
            jitter: jitter.clone(),
        };
        let op = op.clone();
        timers.arm(op.at, Box::new(move || env.apply(&op)));
    }
    let stopper = timers.clone();
    timers.arm(scenario.until, Box::new(move || stopper.stop()));

    let runner = timers.clone();
    let thread = spawn("timers".into(), move || runner.run());
    timers.wait_finished();
    timers.stop();
    thread.join().expect("the timer thread panicked");
    if let Some(controller) = lock(&slot).take() {
        controller.stop();
    }
    RunReport {
        records: recorder.records(),
    }
}

/// What a scenario operation acts on.
struct Env {
    api: ApiServer,
    timers: TimerService,
    recorder: Recorder,
    slot: Slot,
    config: Config,
    lags: InformerLags,
    mutant: Mutation,
    jitter: Jitter,
}

impl Env {
    /// Applies one scenario operation (RT-DRV-2). An operation the API server refuses (a pod
    /// that is already gone) is noted in the trace and the run goes on.
    fn apply(&self, timed: &TimedOp) {
        let api = &self.api;
        let result = match &timed.op {
            Op::Taint { node, spec } => api.taint_node(node, spec),
            Op::CreateNode(node) => api.create_node(node.clone()),
            Op::DeleteNode(name) => api.delete_node(name),
            Op::CreatePod(spec) => api.create_pod(spec.clone()).map(drop),
            Op::DeletePod(key) => api.delete_pod(key),
            Op::ForceDeletePod(key) => api.force_delete_pod(key),
            Op::RecreatePod {
                key,
                uid,
                node,
                tolerations,
            } => api.pod(key).map_or_else(
                || Err(crate::api::ApiError::PodNotFound(key.clone())),
                |old| {
                    api.remove_pod(key, None)?;
                    let pod = Pod {
                        key: key.clone(),
                        uid: uid.clone(),
                        node_name: node.clone(),
                        tolerations: tolerations.clone().unwrap_or(old.tolerations),
                    };
                    api.create_pod(PodSpec {
                        pod,
                        daemon_set: false,
                    })
                    .map(drop)
                },
            ),
            Op::BindPod { key, node } => api.bind_pod(key, node.clone()),
            Op::AddToleration { key, toleration } => api.add_toleration(key, toleration.clone()),
            Op::SetTolerationSeconds {
                key,
                index,
                seconds,
            } => api.set_toleration_seconds(key, *index, *seconds),
            Op::RestartController => {
                self.restart();
                Ok(())
            }
            Op::FailRequests {
                verb,
                pod,
                times,
                result,
            } => {
                api.inject(FailRule {
                    verb: *verb,
                    pod: pod.clone(),
                    remaining: *times,
                    result: *result,
                });
                Ok(())
            }
            Op::SetApiLatency(latency) => {
                api.set_latency(*latency);
                Ok(())
            }
            Op::SetInformerLag { nodes, pods } => {
                if let Some(c) = lock(&self.slot).as_ref() {
                    let informers = c.informers();
                    if let Some(lag) = nodes {
                        informers.set_lag(ObjectKind::Nodes, *lag);
                    }
                    if let Some(lag) = pods {
                        informers.set_lag(ObjectKind::Pods, *lag);
                    }
                }
                Ok(())
            }
            Op::DropWatch { kind, duration } => {
                if let Some(c) = lock(&self.slot).as_ref() {
                    c.informers().drop_watch(*kind, *duration);
                }
                Ok(())
            }
        };
        if let Err(e) = result {
            op_failed(&self.recorder, timed.line, &e.to_string());
        }
    }

    /// kube-controller-manager restarts (RT-DRV-3): the incarnation stops with all its memory,
    /// a new one lists and watches from scratch.
    fn restart(&self) {
        let mut slot = lock(&self.slot);
        if slot.as_ref().is_some_and(Controller::survives_restart) {
            self.recorder.record(TraceEvent::ControllerRestarted);
            return;
        }
        if let Some(old) = slot.take() {
            old.stop();
        }
        self.recorder.record(TraceEvent::ControllerRestarted);
        let incarnation = Incarnation {
            world: std::sync::Arc::new(self.api.clone()),
            timers: &self.timers,
            recorder: &self.recorder,
            lags: self.lags,
            jitter: self.jitter.clone(),
        };
        *slot = Some(Controller::launch(
            self.config,
            &incarnation,
            None,
            self.mutant,
        ));
    }
}

fn op_failed(recorder: &Recorder, line: usize, message: &str) {
    recorder.record(TraceEvent::Note {
        namespace: None,
        name: None,
        text: format!("scenario operation (line {line}) refused: {message}"),
    });
}
