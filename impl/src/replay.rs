//! Replays a model path on the runtime's real threads under a deterministic schedule
//! ([`Schedule`]): the API server seeded with the path's objects, one controller incarnation
//! (a new one at each restart), and the runner releasing one turn at a time through the
//! [`Gate`]. After every turn the runtime's clock, API objects, informer caches and controller
//! core are compared with the model's state after the same action: a replay that follows every
//! turn reaches, at the path's last step, the state in which the model judged the property
//! violated. Spec: RT-SCHED-1, RT-SCHED-2.

use crate::api::{ApiError, ApiServer, FailRule};
use crate::clock::{Clock, VirtualClock};
use crate::controller::{Controller, Env as Incarnation, InformerLags};
use crate::jitter::Jitter;
use crate::mutants::Mutation;
use crate::recorder::Recorder;
use crate::schedule::Gate;
use crate::sync::spawn;
use crate::timers::TimerService;
use std::sync::Arc;
use taintcheck_core::api::{Node, Pod};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::Config;
use taintcheck_formats::scenario::{Admission, ObjectKind, PodSpec};
use taintcheck_formats::trace::{ResponseResult, TraceEvent, TraceRecord};
use taintcheck_model::check::action::Watched;
use taintcheck_model::check::replay::{EnvInput, Expected, Schedule, Turn};

/// How long a released turn may wait for its thread (wall time) before the replay calls it
/// stuck: far more than any step takes.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// What a replay produced.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The runtime's trace (`specs/trace-format.md`), header first.
    pub records: Vec<TraceRecord>,
    /// How many turns the runtime followed.
    pub followed: usize,
    /// Where and why it left the path, if it did.
    pub divergence: Option<Divergence>,
}

/// Where a replay left the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The turn's index in the schedule.
    pub turn: usize,
    /// The path's step it replays (`None`: the initial instant's settling, or a status-only
    /// delivery).
    pub step: Option<usize>,
    /// What went wrong.
    pub why: String,
}

/// The runtime under a schedule: what the runner drives and inspects.
struct Run {
    clock: Arc<VirtualClock>,
    gate: Gate,
    timers: TimerService,
    recorder: Recorder,
    api: ApiServer,
    config: Config,
    controller: Option<Controller>,
}

/// Replays `schedule` under `profile`. Spec: RT-SCHED-2.
pub fn replay(schedule: &Schedule, profile: Profile) -> Replay {
    let clock = Arc::new(VirtualClock::serial(Time::ZERO));
    let gate = Gate::new();
    let timers = TimerService::scheduled(clock.clone() as Arc<dyn Clock>, gate.clone());
    let recorder = Recorder::new(
        clock.clone() as Arc<dyn Clock>,
        profile.name,
        Some("replay"),
    );
    // The model's pods carry their tolerations as configured: no admission plugin adds any.
    let admission = Admission {
        default_toleration_seconds: false,
        ..Admission::default()
    };
    let api = ApiServer::new(
        admission,
        schedule.deletion_grace,
        recorder.clone(),
        timers.clone(),
    );
    let mut run = Run {
        clock,
        gate,
        timers,
        recorder,
        api,
        config: schedule.config,
        controller: None,
    };
    let seeded = seed(&run.api, &schedule.nodes, &schedule.pods);
    run.launch();
    let runner = run.timers.clone();
    let timer_thread = spawn("timers".into(), move || runner.run());
    let mut followed = 0;
    let mut divergence = seeded.err().map(|why| Divergence {
        turn: 0,
        step: None,
        why,
    });
    if divergence.is_none() {
        for (i, t) in schedule.turns.iter().enumerate() {
            let done = run.take(&t.turn).and_then(|()| run.compare(&t.expect));
            if let Err(why) = done {
                divergence = Some(Divergence {
                    turn: i,
                    step: t.step,
                    why,
                });
                break;
            }
            followed += 1;
        }
    }
    run.gate.close();
    run.timers.stop();
    timer_thread.join().expect("the timer thread panicked");
    if let Some(controller) = run.controller.take() {
        controller.stop();
    }
    Replay {
        records: run.recorder.records(),
        followed,
        divergence,
    }
}

/// The API server's objects before the controller starts.
fn seed(api: &ApiServer, nodes: &[Node], pods: &[Pod]) -> Result<(), String> {
    for node in nodes {
        api.create_node(node.clone()).map_err(|e| e.to_string())?;
    }
    for pod in pods {
        let spec = PodSpec {
            pod: pod.clone(),
            daemon_set: false,
        };
        api.create_pod(spec).map_err(|e| e.to_string())?;
    }
    Ok(())
}

impl Run {
    /// Starts a controller incarnation (informers list now; nothing is delivered before the
    /// schedule says so).
    fn launch(&mut self) {
        let incarnation = Incarnation {
            world: std::sync::Arc::new(self.api.clone()),
            timers: &self.timers,
            recorder: &self.recorder,
            lags: InformerLags {
                nodes: Duration::ZERO,
                pods: Duration::ZERO,
            },
            jitter: Jitter::none(),
        };
        self.controller = Some(Controller::launch(
            self.config,
            &incarnation,
            None,
            Mutation::default(),
        ));
    }

    /// Takes one turn: the clock and the environment here, every other turn by the runtime
    /// thread it belongs to.
    fn take(&mut self, turn: &Turn) -> Result<(), String> {
        match turn {
            Turn::Tick(at) => {
                self.clock.advance_to(*at);
                Ok(())
            }
            Turn::Env(input) => self.environment(input).map_err(|e| e.to_string()),
            _ => self.gate.run_turn(turn.clone(), PATIENCE),
        }
    }

    /// The environment's write.
    fn environment(&mut self, input: &EnvInput) -> Result<(), ApiError> {
        let api = &self.api;
        match input {
            EnvInput::PutNode(node) => api.put_node(node.clone()),
            EnvInput::DeleteNode(name) => api.delete_node(name),
            EnvInput::PutPod(pod) => api.put_pod(pod.clone()),
            EnvInput::DeletePod(key) => api.delete_pod(key),
            EnvInput::RemovePod(key) => api.remove_pod(key, None),
            EnvInput::Relist(watched) => {
                let kind = match watched {
                    Watched::Nodes => ObjectKind::Nodes,
                    Watched::Pods => ObjectKind::Pods,
                };
                let controller = self.controller.as_ref().expect("an incarnation runs");
                controller.informers().expire_watch(kind);
                Ok(())
            }
            EnvInput::RecreatePod(pod) => {
                // The predecessor may already be gone; the successor is created either way.
                let _ = api.remove_pod(&pod.key, None);
                let spec = PodSpec {
                    pod: pod.clone(),
                    daemon_set: false,
                };
                api.create_pod(spec).map(drop)
            }
            EnvInput::Restart => {
                if let Some(old) = self.controller.take() {
                    old.stop();
                }
                self.recorder.record(TraceEvent::ControllerRestarted);
                self.gate.next_epoch();
                self.launch();
                Ok(())
            }
            EnvInput::FailNext(request) => {
                if let Some((verb, pod)) = request {
                    api.inject(FailRule {
                        verb: *verb,
                        pod: Some(pod.clone()),
                        remaining: 1,
                        result: ResponseResult::Failed,
                    });
                }
                Ok(())
            }
        }
    }

    /// The runtime against the model's state after the same turn.
    fn compare(&self, expect: &Expected) -> Result<(), String> {
        let controller = self
            .controller
            .as_ref()
            .expect("an incarnation runs between turns");
        let (cached_nodes, cached_pods) = controller.informers().read(|cache| {
            (
                cache.nodes().cloned().collect::<Vec<_>>(),
                cache.pods().into_iter().cloned().collect::<Vec<_>>(),
            )
        });
        let mismatch = |what: &str, runtime: &dyn std::fmt::Debug, model: &dyn std::fmt::Debug| {
            Err(format!(
                "{what}: the runtime has {runtime:?}, the model {model:?}"
            ))
        };
        if self.timers.now() != expect.now {
            return mismatch("clock", &self.timers.now(), &expect.now);
        }
        let nodes = sorted(self.api.nodes(), |n| n.name.clone());
        if nodes != sorted(expect.api_nodes.clone(), |n| n.name.clone()) {
            return mismatch("API server nodes", &nodes, &expect.api_nodes);
        }
        let pods = sorted(self.api.pods(), |p| p.key.clone());
        if pods != sorted(expect.api_pods.clone(), |p| p.key.clone()) {
            return mismatch("API server pods", &pods, &expect.api_pods);
        }
        if sorted(cached_nodes.clone(), |n| n.name.clone())
            != sorted(expect.cached_nodes.clone(), |n| n.name.clone())
        {
            return mismatch("node cache", &cached_nodes, &expect.cached_nodes);
        }
        if sorted(cached_pods.clone(), |p| p.key.clone())
            != sorted(expect.cached_pods.clone(), |p| p.key.clone())
        {
            return mismatch("pod cache", &cached_pods, &expect.cached_pods);
        }
        let core = controller.core();
        if core != expect.ctrl
            && without_versions(&format!("{core:?}"))
                != without_versions(&format!("{:?}", expect.ctrl))
        {
            return mismatch("controller core", &core, &expect.ctrl);
        }
        Ok(())
    }
}

/// `debug` with every `ResourceVersion(N)` made `ResourceVersion(_)` and the ready-work report
/// (derived data, off in the model and ignored by equality) left out. The runtime's API server
/// numbers resourceVersions globally, as etcd does; the model numbers each object's own. Both
/// are opaque to the controller, which only compares them for equality (RT-SCHED-2), so a
/// version the core keeps (a work's answered GET) is compared up to that numbering.
fn without_versions(debug: &str) -> String {
    const VERSION: &str = "ResourceVersion(";
    const READY: &str = "ready: ReadyLog(";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    loop {
        let version = rest.find(VERSION);
        let ready = rest.find(READY);
        match (version, ready) {
            (Some(v), r) if r.is_none_or(|r| v < r) => {
                out.push_str(&rest[..v + VERSION.len()]);
                out.push('_');
                rest = rest[v + VERSION.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
            }
            (_, Some(r)) => {
                out.push_str(&rest[..r]);
                let mut depth = 0usize;
                let after = rest[r..]
                    .char_indices()
                    .find_map(|(i, c)| {
                        match c {
                            '(' | '[' | '{' => depth += 1,
                            ')' | ']' | '}' => {
                                depth = depth.saturating_sub(1);
                                if depth == 0 {
                                    return Some(r + i + 1);
                                }
                            }
                            _ => {}
                        }
                        None
                    })
                    .unwrap_or(rest.len());
                rest = &rest[after..];
            }
            _ => break,
        }
    }
    out.push_str(rest);
    out
}

/// `items` sorted by `key`.
fn sorted<T, K: Ord>(mut items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    items.sort_by_key(key);
    items
}
