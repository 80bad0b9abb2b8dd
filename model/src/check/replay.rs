//! A model path as an input ordering for the reference runtime: the objects the run starts from,
//! the core's configuration, and the schedule, one turn per model action, in the path's order:
//! which runtime thread takes its next step, which informer delivers its oldest event, which
//! API answer goes back, when the clock moves and what the environment writes. With each turn,
//! what the runtime must hold after it (the model's state after the action, in the runtime's
//! terms). The schedule orders what the runtime does; it decides nothing the core decides.
//! Spec: CHECK-7.

use super::action::{Action, EnvOp, Watched};
use super::state::SysState;
use super::trace::Trace;
use super::transition::TaintSys;
use stateright::Model;
use std::collections::VecDeque;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Config, Controller, RequestId, Step, Verb};
use taintcheck_formats::scenario::ObjectKind;
use taintcheck_formats::trace::RequestVerb;

/// One turn of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The virtual clock moves to this instant (MODEL-A1).
    Tick(Time),
    /// The informer of this kind delivers its oldest event (MODEL-A2).
    Deliver(ObjectKind),
    /// The thread (dispatcher, worker) or timer-service goroutine (a work) whose step this is
    /// takes it (MODEL-A3).
    Step(Step),
    /// The API server answers this pending request (MODEL-A4).
    Answer(RequestId),
    /// The environment writes (MODEL-A5).
    Env(EnvInput),
}

/// What the environment does to the runtime's API server or controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvInput {
    /// Replace the node object with this one (a taint added or removed).
    PutNode(Node),
    /// Delete the node.
    DeleteNode(NodeName),
    /// Replace the pod object with this one (tolerations changed, pod bound).
    PutPod(Pod),
    /// Delete the pod.
    DeletePod(PodKey),
    /// Delete the pod holding the name, if any, and create this one.
    RecreatePod(Pod),
    /// Remove the pod object now: its kubelet confirms the termination, or a force delete
    /// (ENV-11, ENV-12).
    RemovePod(PodKey),
    /// An informer's watch expires now and it relists (ENV-13, INF-1): the events it has not
    /// delivered are lost, and it queues the difference between its cache and the API.
    Relist(Watched),
    /// kube-controller-manager restarts.
    Restart,
    /// The API server fails the next request of this verb for this pod; `None` when the path
    /// answers no request after the fault.
    FailNext(Option<(RequestVerb, PodKey)>),
}

/// What the runtime must hold after a turn: the model's state after the action, in the
/// runtime's terms (objects sorted by name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The clock.
    pub now: Time,
    /// The API server's nodes.
    pub api_nodes: Vec<Node>,
    /// The API server's pods.
    pub api_pods: Vec<Pod>,
    /// The node informer's cache.
    pub cached_nodes: Vec<Node>,
    /// The pod informer's cache.
    pub cached_pods: Vec<Pod>,
    /// The controller core.
    pub ctrl: Controller,
}

/// One turn with its place in the path and what must hold after it.
#[derive(Clone, Debug)]
pub struct ScheduledTurn {
    /// The turn.
    pub turn: Turn,
    /// The path's step number it replays (from 1); `None` for the settling of the initial
    /// instant and for the delivery of a status-only pod event, which the model leaves out
    /// (MODEL-A4: the core's update filter drops it).
    pub step: Option<usize>,
    /// What the runtime must hold after it.
    pub expect: Expected,
}

/// A path ready for the runtime.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The core's configuration (the model's: workers, channel capacities, listing orders).
    pub config: Config,
    /// The nodes the API server starts with.
    pub nodes: Vec<Node>,
    /// The pods the API server starts with (UIDs as in the model).
    pub pods: Vec<Pod>,
    /// The pods' termination grace the API server applies to a DELETE (API-2; the model's
    /// `termination_grace_seconds`); `None`: a deleted pod goes at once.
    pub deletion_grace: Option<Duration>,
    /// The turns, the initial instant's settling first.
    pub turns: Vec<ScheduledTurn>,
}

impl Schedule {
    /// The schedule of `trace`, a path of `model` from its initial state.
    pub fn of(model: &TaintSys, trace: &Trace) -> Schedule {
        let (listed, settling) = model.initial_steps();
        let mut states = vec![listed.clone()];
        let mut steps: Vec<(Option<usize>, Action)> = Vec::new();
        for action in settling {
            let next = model
                .next_state(states.last().expect("not empty"), action.clone())
                .expect("the settling steps are enabled");
            states.push(next);
            steps.push((None, action));
        }
        states.extend(trace.states.iter().skip(1).cloned());
        steps.extend(trace.steps.iter().map(|s| (Some(s.number), s.kind.clone())));
        let mut builder = Builder {
            turns: Vec::new(),
            status_events: VecDeque::new(),
        };
        for (i, (step, action)) in steps.iter().enumerate() {
            let fails = match action {
                Action::Env(EnvOp::FailNextCall) => {
                    failed_request(&steps[i + 1..], &states[i + 1..])
                }
                _ => None,
            };
            builder.push(action, *step, &states[i], &states[i + 1], fails);
        }
        Schedule {
            config: model.core_config(),
            nodes: listed.api.nodes.values().map(|n| n.node.clone()).collect(),
            pods: listed.api.pods.values().map(|p| p.pod.clone()).collect(),
            deletion_grace: model.config.termination_grace(),
            turns: builder.turns,
        }
    }
}

/// Builds the turns, keeping track of the runtime's pod watch events the model leaves out.
struct Builder {
    turns: Vec<ScheduledTurn>,
    /// The runtime's pod informer queue, oldest first: `true` for a status-only event (the
    /// DisruptionTarget PATCH), which the model's queue does not hold.
    status_events: VecDeque<bool>,
}

impl Builder {
    /// The turns of one model action, from `before` to `after`; `fails`: the request an
    /// injected fault fails.
    fn push(
        &mut self,
        action: &Action,
        step: Option<usize>,
        before: &SysState,
        after: &SysState,
        fails: Option<(RequestVerb, PodKey)>,
    ) {
        let mut popped = 0;
        let turn = match action {
            Action::Tick(t) => Turn::Tick(*t),
            Action::InformerDeliverNode => Turn::Deliver(ObjectKind::Nodes),
            Action::InformerDeliverPod => {
                while self.status_events.front() == Some(&true) {
                    self.status_events.pop_front();
                    self.turns.push(ScheduledTurn {
                        turn: Turn::Deliver(ObjectKind::Pods),
                        step: None,
                        expect: expected(before),
                    });
                }
                popped = 1;
                self.status_events.pop_front();
                Turn::Deliver(ObjectKind::Pods)
            }
            Action::Controller(s) => Turn::Step(s.clone()),
            Action::ApiRespond(id) => Turn::Answer(*id),
            Action::Env(op) => Turn::Env(env_input(op, after, fails)),
        };
        // A restart, or a relist of the pods (ENV-13), loses every undelivered pod event, the
        // status-only ones too, and queues the model's events afresh.
        let requeued = matches!(
            action,
            Action::Env(EnvOp::Restart | EnvOp::DropWatch(Watched::Pods))
        );
        if requeued {
            self.status_events.clear();
        }
        let queued = before.pods.pending.len() - popped;
        let pushed = after.pods.pending.len().saturating_sub(queued);
        if requeued {
            self.status_events
                .extend(std::iter::repeat_n(false, after.pods.pending.len()));
        } else {
            self.status_events
                .extend(std::iter::repeat_n(false, pushed));
        }
        if let Action::ApiRespond(id) = action {
            if status_write(before, after, *id) {
                self.status_events.push_back(true);
            }
        }
        self.turns.push(ScheduledTurn {
            turn,
            step,
            expect: expected(after),
        });
    }
}

/// Whether answering request `id` wrote the pod's status only (the DisruptionTarget PATCH: a
/// new resourceVersion, the object still there): the runtime's watch sends an event for it, the
/// model none. A DELETE that makes the pod Terminating also gives it a new resourceVersion,
/// but neither sends a watch event (API-2).
fn status_write(before: &SysState, after: &SysState, id: RequestId) -> bool {
    let Some(req) = before.ctrl.pending_requests().find(|r| r.id == id) else {
        return false;
    };
    if req.verb != Verb::PatchDisruptionTarget {
        return false;
    }
    match (before.api.pods.get(&req.pod), after.api.pods.get(&req.pod)) {
        (Some(b), Some(a)) => b.version != a.version && b.pod == a.pod,
        _ => false,
    }
}

/// The environment's operation as what it writes, read from the state after it.
pub(super) fn env_input(
    op: &EnvOp,
    after: &SysState,
    fails: Option<(RequestVerb, PodKey)>,
) -> EnvInput {
    let node = |name: &NodeName| after.api.nodes.get(name).map(|n| n.node.clone());
    let pod = |key: &PodKey| after.api.pods.get(key).map(|p| p.pod.clone());
    match op {
        EnvOp::AddTaint { node: name, .. } | EnvOp::RemoveTaint { node: name, .. } => {
            EnvInput::PutNode(node(name).expect("a taint changes a live node"))
        }
        EnvOp::AppendToleration { pod: key, .. }
        | EnvOp::SetSeconds { pod: key, .. }
        | EnvOp::BindPod { pod: key, .. } => {
            EnvInput::PutPod(pod(key).expect("a pod write changes a live pod"))
        }
        EnvOp::DeletePod { pod } => EnvInput::DeletePod(pod.clone()),
        EnvOp::RecreatePod { pod: key, .. } => {
            EnvInput::RecreatePod(pod(key).expect("a recreated pod exists"))
        }
        EnvOp::DeleteNode { node } => EnvInput::DeleteNode(node.clone()),
        EnvOp::Restart => EnvInput::Restart,
        EnvOp::FailNextCall => EnvInput::FailNext(fails),
        EnvOp::KubeletConfirms { pod } | EnvOp::ForceDelete { pod } => {
            EnvInput::RemovePod(pod.clone())
        }
        EnvOp::DropWatch(watched) => EnvInput::Relist(*watched),
    }
}

/// The request the path answers next after an injected fault (the one that fails), looked up
/// in the state where it is answered: `steps[j]` is taken in `states[j]`.
fn failed_request(
    steps: &[(Option<usize>, Action)],
    states: &[SysState],
) -> Option<(RequestVerb, PodKey)> {
    steps.iter().zip(states).find_map(|((_, a), s)| match a {
        Action::ApiRespond(id) => s
            .ctrl
            .pending_requests()
            .find(|r| r.id == *id)
            .map(|r| (RequestVerb::from(&r.verb), r.pod.clone())),
        _ => None,
    })
}

/// The runtime's terms of a model state.
fn expected(s: &SysState) -> Expected {
    Expected {
        now: s.now,
        api_nodes: s.api.nodes.values().map(|n| n.node.clone()).collect(),
        api_pods: s.api.pods.values().map(|p| p.pod.clone()).collect(),
        cached_nodes: s.nodes.cache.values().map(|n| n.node.clone()).collect(),
        cached_pods: s.pods.cache.values().map(|p| p.pod.clone()).collect(),
        ctrl: (*s.ctrl).clone(),
    }
}
