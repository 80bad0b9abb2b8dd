//! The stateright model of the whole system: the API server's truth, two lagging informers, the
//! controller core ([`crate::core::Controller`], every step an action), the API server's answers,
//! a budgeted environment and a bounded monotone clock.
//!
//! It is a hand-written [`stateright::Model`] (not an `ActorModel`) because tolerationSeconds
//! needs absolute deadlines on a shared clock. Abstraction (argued in specs/spec.md, "Time"):
//! internal steps take zero time and interleave arbitrarily; [`Action::Tick`] moves the clock to
//! the next interesting instant only when nothing but armed timers is pending; the environment
//! acts at instants of a grid. Spec: MODEL-*.

pub mod action;
pub mod config;
pub mod display;
pub mod properties;
pub mod run;
pub mod shortest;
pub mod state;
pub mod symmetry;

pub use action::{Action, EnvOp};
pub use config::{CheckConfig, OpKind, Overrides};
pub use state::SysState;

use crate::api::{Node, NodeName, Pod, PodKey, ResourceVersion};
use crate::api_server::{self, StoredPod, Write};
use crate::core::{
    ApiRequest, ApiResult, ClusterView, Config as CoreConfig, Controller, Effect, EventKind,
    Listing, Note, Step, Verb, WorkPhase,
};
use crate::profile::Profile;
use crate::shared::Shared;
use crate::small_map::SmallMap;
use crate::time::Time;
use properties::{Flag, Witness};
use state::{
    earliest_eviction, ApiNode, ApiPod, ApiServer, CachedNode, CachedPod, Delta, EnvState, History,
    Informer,
};

/// The system model for one profile and one configuration.
#[derive(Clone, Debug)]
pub struct TaintSys {
    pub profile: Profile,
    pub config: CheckConfig,
}

/// The controller's read-only view of the informer caches (upstream's listers and the
/// `spec.nodeName` index).
pub struct CacheView<'a> {
    nodes: &'a SmallMap<NodeName, Shared<CachedNode>>,
    pods: &'a SmallMap<PodKey, Shared<CachedPod>>,
}

impl ClusterView for CacheView<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name).map(|n| &n.node)
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key).map(|p| &p.pod)
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        self.pods
            .values()
            .map(|p| &p.pod)
            .filter(|p| p.node_name.as_deref() == Some(name))
            .collect()
    }
}

/// What one transition did, for display and for the properties evaluated at that step.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub effects: Vec<Effect>,
    pub notes: Notes,
}

/// Model-side notes (API answers, deliveries), in order, for a step's description. Kept only
/// when a step is described ([`TaintSys::transition`]): while checking no one reads them, and
/// formatting them cost ≈ 4 % of a check's instructions.
#[derive(Clone, Debug, Default)]
pub struct Notes(Option<Vec<String>>);

impl Notes {
    fn recording() -> Notes {
        Notes(Some(Vec::new()))
    }

    /// Adds the note `text` makes, calling it only when notes are kept.
    fn add(&mut self, text: impl FnOnce() -> String) {
        if let Some(notes) = &mut self.0 {
            notes.push(text());
        }
    }

    pub fn as_slice(&self) -> &[String] {
        self.0.as_deref().unwrap_or_default()
    }
}

impl TaintSys {
    pub fn new(profile: Profile, config: CheckConfig) -> TaintSys {
        TaintSys { profile, config }
    }

    fn core_config(&self) -> CoreConfig {
        CoreConfig {
            profile: self.profile,
            workers: self.config.workers,
            node_channel_capacity: self.config.node_channel_capacity,
            pod_channel_capacity: self.config.pod_channel_capacity,
            listing: Listing::Any,
        }
    }

    fn ops(&self) -> bool {
        self.profile.comparison_operators
    }

    /// The initial state: the configured objects in the API server, already listed into the
    /// caches and handed to the controller (as after `WaitForCacheSync`).
    pub fn initial_state(&self) -> SysState {
        let mut api = ApiServer::default();
        for n in &self.config.nodes {
            let node = Node {
                name: n.name.as_str().into(),
                taints: n.taints.clone(),
            };
            api.nodes.insert(
                node.name.clone(),
                Shared::new(ApiNode {
                    taint_since: vec![Time::ZERO; node.taints.len()],
                    node,
                }),
            );
        }
        for p in &self.config.pods {
            let uid = api.fresh_uid(&p.name);
            let pod = Pod {
                key: p.key(),
                uid,
                node_name: p.node.as_deref().map(Into::into),
                tolerations: p.tolerations.clone(),
            };
            api.pods
                .insert(pod.key.clone(), Shared::new(ApiPod::new(pod, Time::ZERO)));
        }
        api.note_exposure(self.ops());
        let symmetry = symmetry::Symmetry::of(&self.config, &api);
        let mut s = SysState {
            now: Time::ZERO,
            api: Shared::new(api),
            nodes: Informer::default(),
            pods: Informer::default(),
            ctrl: Shared::new(Controller::new(self.core_config())),
            env: EnvState {
                budget: self.config.budget,
                ..EnvState::default()
            },
            history: History::default(),
            symmetry,
        };
        relist(&mut s);
        self.settle(s)
    }

    /// Runs every internal step of the initial instant in the fixed order of `actions` until
    /// quiescence: the run starts from a cluster whose controller has caught up with its
    /// configuration (spec MODEL-INIT). The environment's first chance to act is right after.
    fn settle(&self, mut s: SysState) -> SysState {
        let mut actions = Vec::new();
        loop {
            actions.clear();
            stateright::Model::actions(self, &s, &mut actions);
            let Some(a) = actions
                .iter()
                .find(|a| !matches!(a, Action::Env(_) | Action::Tick(_)))
            else {
                return s;
            };
            let a = a.clone();
            match self.successor(&s, &a) {
                Some(next) => s = next,
                None => return s,
            }
        }
    }

    /// Nothing in flight but armed timers: informers drained and synced, the controller
    /// quiescent, no request pending, no timer due. `Tick` is enabled only here.
    pub fn quiescent(&self, s: &SysState) -> bool {
        s.nodes.is_drained()
            && s.pods.is_drained()
            && waits_only_for_timers(&s.ctrl)
            && s.ctrl.next_deadline().is_none_or(|d| d > s.now)
    }

    /// The instant `Tick` moves to: the next armed deadline, the next grid instant while the
    /// environment has budget, or the horizon, whichever is first.
    fn next_instant(&self, s: &SysState) -> Option<Time> {
        let horizon = Time(self.config.horizon_ms);
        if s.now >= horizon {
            return None;
        }
        let mut next = horizon;
        if s.env.budget > 0 {
            let step = self.config.step_ms;
            next = next.min(Time((s.now.0 / step + 1) * step));
        }
        if let Some(d) = s.ctrl.next_deadline() {
            next = next.min(d);
        }
        Some(next)
    }

    fn on_grid(&self, s: &SysState) -> bool {
        s.now.0 % self.config.step_ms == 0 && s.now.0 <= self.config.horizon_ms
    }

    fn env_ops(&self, s: &SysState, out: &mut Vec<Action>) {
        let cfg = &self.config;
        let mut op = |o: EnvOp| out.push(Action::Env(o));
        if s.env.budget == 0 {
            return;
        }
        // A fault is not a cluster change: it may strike any request, on the grid or not.
        let fault = cfg.allows(OpKind::FailNextCall) && !s.env.fail_next;
        if !self.on_grid(s) {
            if fault {
                op(EnvOp::FailNextCall);
            }
            return;
        }
        for (name, n) in &s.api.nodes {
            if cfg.allows(OpKind::AddTaint) {
                for (i, t) in cfg.taints.iter().enumerate() {
                    if !n.node.taints.iter().any(|x| x.same_identity(t)) {
                        op(EnvOp::AddTaint {
                            node: name.clone(),
                            taint: i,
                        });
                    }
                }
            }
            if cfg.allows(OpKind::RemoveTaint) {
                for t in n.node.no_execute_taints() {
                    op(EnvOp::RemoveTaint {
                        node: name.clone(),
                        key: t.key.clone(),
                    });
                }
            }
        }
        for spec in &cfg.pods {
            let key = spec.key();
            let live = s.api.pods.get(&key);
            if let Some(p) = live {
                if cfg.allows(OpKind::AppendToleration) {
                    for i in 0..cfg.append_tolerations.len() {
                        op(EnvOp::AppendToleration {
                            pod: key.clone(),
                            choice: i,
                        });
                    }
                }
                if cfg.allows(OpKind::SetSeconds) {
                    for (j, tol) in p.pod.tolerations.iter().enumerate() {
                        if tol.effect != Some(crate::api::TaintEffect::NoExecute) {
                            continue;
                        }
                        for &seconds in &cfg.seconds_choices {
                            if seconds != tol.seconds {
                                op(EnvOp::SetSeconds {
                                    pod: key.clone(),
                                    toleration: j,
                                    seconds,
                                });
                            }
                        }
                    }
                }
                if cfg.allows(OpKind::DeletePod) {
                    op(EnvOp::DeletePod { pod: key.clone() });
                }
                if cfg.allows(OpKind::BindPod) && p.pod.node_name.is_none() {
                    for name in s.api.nodes.keys() {
                        op(EnvOp::BindPod {
                            pod: key.clone(),
                            node: name.clone(),
                        });
                    }
                }
            }
            if cfg.allows(OpKind::RecreatePod) {
                for name in s.api.nodes.keys() {
                    op(EnvOp::RecreatePod {
                        pod: key.clone(),
                        node: Some(name.clone()),
                    });
                }
            }
        }
        if cfg.allows(OpKind::DeleteNode) {
            for name in s.api.nodes.keys() {
                op(EnvOp::DeleteNode { node: name.clone() });
            }
        }
        if cfg.allows(OpKind::Restart) {
            op(EnvOp::Restart);
        }
        if fault {
            op(EnvOp::FailNextCall);
        }
    }

    /// Computes the successor and what happened on the way, notes included, to describe the
    /// step. `None`: the action is not enabled.
    pub fn transition(&self, s: &SysState, action: &Action) -> Option<(SysState, Outcome)> {
        let mut out = Outcome {
            notes: Notes::recording(),
            ..Outcome::default()
        };
        self.apply(s, action, &mut out).map(|next| (next, out))
    }

    /// The successor alone (what the checker asks for).
    fn successor(&self, s: &SysState, action: &Action) -> Option<SysState> {
        self.apply(s, action, &mut Outcome::default())
    }

    fn apply(&self, s: &SysState, action: &Action, out: &mut Outcome) -> Option<SysState> {
        let mut next = s.clone();
        match action {
            Action::Tick(t) => next.now = *t,
            Action::InformerDeliverNode => self.deliver_node(&mut next, out),
            Action::InformerDeliverPod => self.deliver_pod(&mut next, out),
            Action::Controller(step) => {
                let SysState {
                    ctrl,
                    nodes,
                    pods,
                    now,
                    ..
                } = &mut next;
                let view = CacheView {
                    nodes: &nodes.cache,
                    pods: &pods.cache,
                };
                ctrl.make_mut()
                    .step(step.clone(), &view, *now, &mut out.effects);
            }
            Action::ApiRespond(id) => {
                let req = next.ctrl.pending_requests().find(|r| r.id == *id)?.clone();
                let result = self.answer(&mut next, &req, out);
                let SysState {
                    ctrl,
                    nodes,
                    pods,
                    now,
                    ..
                } = &mut next;
                let view = CacheView {
                    nodes: &nodes.cache,
                    pods: &pods.cache,
                };
                ctrl.make_mut()
                    .api_responded(req.id, result, &view, *now, &mut out.effects);
            }
            Action::Env(op) => self.apply_env(&mut next, op, out),
        }
        self.judge_effects(&mut next, s, action, &out.effects);
        Some(next)
    }

    /// The node informer delivers its oldest event: cache first, then the handler (client-go
    /// updates the indexer before it calls handlers).
    fn deliver_node(&self, s: &mut SysState, out: &mut Outcome) {
        let Some(delta) = s.nodes.pending.pop_front() else {
            return;
        };
        s.nodes.unsynced = s.nodes.unsynced.saturating_sub(1);
        let (name, new) = match delta {
            Delta::Upsert(n) => (n.node.name.clone(), Some(n)),
            Delta::Delete(name) => (name, None),
        };
        let cache = s.nodes.cache.make_mut();
        let old = cache.remove(&name);
        let new = new.map(|mut n| {
            // A taint present before keeps its first-observed instant (spec MODEL-S3).
            for i in 0..n.node.taints.len() {
                let kept = old.as_ref().and_then(|o| {
                    o.node
                        .taints
                        .iter()
                        .position(|x| *x == n.node.taints[i])
                        .map(|j| o.taint_since[j])
                });
                let since = kept.unwrap_or(s.now);
                if n.taint_since[i] != since {
                    n.make_mut().taint_since[i] = since;
                }
            }
            n
        });
        if let Some(n) = &new {
            cache.insert(name.clone(), n.clone());
        }
        out.notes.add(|| match &new {
            Some(n) => format!(
                "node informer delivers {name} taints {}",
                display::taints(&n.node.taints)
            ),
            None => format!("node informer delivers deletion of {name}"),
        });
        s.ctrl.make_mut().node_observed(
            old.as_ref().map(|n| &n.node),
            new.as_ref().map(|n| &n.node),
            s.now,
        );
    }

    /// The pod informer delivers its oldest event.
    fn deliver_pod(&self, s: &mut SysState, out: &mut Outcome) {
        let Some(delta) = s.pods.pending.pop_front() else {
            return;
        };
        s.pods.unsynced = s.pods.unsynced.saturating_sub(1);
        let (key, new) = match delta {
            Delta::Upsert(p) => (p.pod.key.clone(), Some(p)),
            Delta::Delete(key) => (key, None),
        };
        let cache = s.pods.cache.make_mut();
        let old = cache.remove(&key);
        let new = new.map(|mut p| {
            let same = old
                .as_ref()
                .filter(|o| o.pod.uid == p.pod.uid && o.pod.node_name == p.pod.node_name);
            let since = match same {
                Some(o) => o.bound_since,
                None => p.pod.node_name.as_ref().map(|_| s.now),
            };
            if p.bound_since != since {
                p.make_mut().bound_since = since;
            }
            p
        });
        if let Some(p) = &new {
            cache.insert(key.clone(), p.clone());
        }
        out.notes.add(|| match &new {
            Some(p) => format!("pod informer delivers {}", display::pod(&p.pod)),
            None => format!("pod informer delivers deletion of {key}"),
        });
        s.ctrl.make_mut().pod_observed(
            old.as_ref().map(|p| &p.pod),
            new.as_ref().map(|p| &p.pod),
            s.now,
        );
    }

    /// The API server answers `req` against its truth (and applies a DELETE). Spec: MODEL-A4.
    fn answer(&self, s: &mut SysState, req: &ApiRequest, out: &mut Outcome) -> ApiResult {
        if s.env.fail_next {
            s.env.fail_next = false;
            s.history.failed.push(req.id.0);
            s.history.failed.sort_unstable();
            out.notes
                .add(|| format!("api server fails {:?} {}", req.verb, req.pod));
            return ApiResult::Failed;
        }
        let stored = s.api.pods.get(&req.pod).map(|p| StoredPod {
            pod: &p.pod,
            version: p.version,
            disruption_target: p.disruption_target,
        });
        let next_version = stored.map_or(ResourceVersion(1), |p| ResourceVersion(p.version.0 + 1));
        let nodes = &s.api.nodes;
        let (result, write) = api_server::answer(
            req,
            stored,
            |name| nodes.get(name).map(|n| n.node.clone()),
            next_version,
        );
        match write {
            Write::Nothing => match &result {
                ApiResult::NotFound => out
                    .notes
                    .add(|| format!("api server: {} not found", req.pod)),
                ApiResult::PreconditionFailed => out
                    .notes
                    .add(|| format!("api server: {} precondition failed", req.pod)),
                _ => {}
            },
            // A status-only change: the pod informer's event for it is dropped by the update
            // filter (CORE-A1), so the model delivers none (MODEL-A4).
            Write::MarkDisruptionTarget => {
                let p = s
                    .api
                    .make_mut()
                    .pods
                    .get_mut(&req.pod)
                    .expect("answered from it")
                    .make_mut();
                p.disruption_target = true;
                p.bump();
                out.notes
                    .add(|| format!("api server adds DisruptionTarget to {}", req.pod));
            }
            Write::Delete => {
                let p = s
                    .api
                    .make_mut()
                    .pods
                    .remove(&req.pod)
                    .expect("answered from it");
                out.notes
                    .add(|| format!("api server deletes {} (uid {})", req.pod, p.pod.uid));
                if s.history.cancelled.binary_search(&req.pod).is_ok() {
                    s.history.violated |= Flag::HonestCancel.bit();
                }
                if s.history.decided.binary_search(&p.pod.uid).is_err() {
                    s.history.violated |= Flag::UidSafety.bit();
                }
                if !p.exposed_in_api {
                    s.history.violated |= Flag::JustifiedSinceBind.bit();
                }
                self.witness_eviction(s, &p, req);
                s.pods.pending.push_back(Delta::Delete(req.pod.clone()));
            }
        }
        result
    }

    /// SOME-1/2/4/5: classifies a successful eviction for the non-vacuity properties.
    fn witness_eviction(&self, s: &mut SysState, p: &ApiPod, req: &ApiRequest) {
        if let Some(i) = s.history.failed.iter().position(|r| *r == req.id.0) {
            s.history.failed.remove(i);
            s.history.witnessed |= Witness::RetriedDeletion.bit();
        }
        if s.env.restarted_at.is_some() {
            s.history.witnessed |= Witness::EvictionAfterRestart.bit();
        }
        let node = p.pod.node_name.as_ref().and_then(|n| s.api.nodes.get(n));
        let (Some(n), Some(bound)) = (node, p.bound_since) else {
            return;
        };
        let Some(at) = earliest_eviction(&n.node, &n.taint_since, &p.pod, bound, self.ops()) else {
            return;
        };
        let start = n
            .taint_since
            .iter()
            .copied()
            .max()
            .unwrap_or(bound)
            .max(bound);
        s.history.witnessed |= if at <= start {
            Witness::ImmediateEviction.bit()
        } else {
            Witness::SecondsEviction.bit()
        };
    }

    /// Evaluates the properties tied to the effects of one step (EVICT-1, EVICT-2, CANCEL-1,
    /// CORE-PRE) against the caches as they are at that step.
    fn judge_effects(
        &self,
        s: &mut SysState,
        before: &SysState,
        action: &Action,
        effects: &[Effect],
    ) {
        for e in effects {
            match e {
                Effect::Event(ev) => match ev.kind {
                    EventKind::CancellingDeletion => {
                        s.history.witnessed |= Witness::CancelledTimer.bit();
                        if let Err(i) = s.history.cancelled.binary_search(&ev.pod) {
                            s.history.cancelled.make_mut().insert(i, ev.pod.clone());
                        }
                    }
                    EventKind::MarkingForDeletion => s.history.uncancel(&ev.pod),
                },
                Effect::Decision(d) => match d.note {
                    Note::ZeroTaints => s.history.violated |= Flag::CorePrecondition.bit(),
                    Note::EvictNow | Note::Scheduled { .. } | Note::Rescheduled { .. } => {
                        s.history.uncancel(&d.pod);
                        if let Some(uid) = decided_uid(before, action, &d.pod) {
                            if let Err(i) = s.history.decided.binary_search(&uid) {
                                s.history.decided.make_mut().insert(i, uid);
                            }
                        }
                    }
                    _ => {}
                },
                Effect::Api(req) if req.verb == Verb::Delete => self.judge_delete(s, req),
                _ => {}
            }
        }
    }

    /// EVICT-1, EVICT-2 and CANCEL-1 at the moment a DELETE is issued (CANCEL-1 is checked
    /// again when the API server applies it).
    fn judge_delete(&self, s: &mut SysState, req: &ApiRequest) {
        if s.history.cancelled.binary_search(&req.pod).is_ok() {
            s.history.violated |= Flag::HonestCancel.bit();
        }
        let Some(cp) = s.pods.cache.get(&req.pod) else {
            return; // the controller's cache no longer has it: a harmless NotFound, or UID-1.
        };
        if req.uid.as_ref().is_some_and(|u| *u != cp.pod.uid) {
            return; // the precondition names an object the cache no longer holds.
        }
        let Some(node_name) = cp.pod.node_name.as_ref() else {
            s.history.violated |= Flag::EvictAfterRemoval.bit();
            return;
        };
        let Some(node) = s.nodes.cache.get(node_name) else {
            return; // node gone from the cache: allowed (S4; PodGC's business).
        };
        let since = cp.bound_since.unwrap_or(s.now);
        match earliest_eviction(&node.node, &node.taint_since, &cp.pod, since, self.ops()) {
            None => s.history.violated |= Flag::EvictAfterRemoval.bit(),
            Some(at) if s.now < at => s.history.violated |= Flag::Premature.bit(),
            Some(_) => {}
        }
    }

    /// Applies an environment operation to the API server and queues the watch events.
    fn apply_env(&self, s: &mut SysState, op: &EnvOp, out: &mut Outcome) {
        s.env.budget -= 1;
        let now = s.now;
        if matches!(op, EnvOp::Restart | EnvOp::FailNextCall) {
            self.apply_env_to_controller(s, op, out);
            return;
        }
        let api = s.api.make_mut();
        match op {
            EnvOp::AddTaint { node, taint } => {
                let n = api
                    .nodes
                    .get_mut(node)
                    .expect("enabled on live nodes")
                    .make_mut();
                n.node.taints.push(self.config.taints[*taint].clone());
                n.taint_since.push(now);
                s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
            }
            EnvOp::RemoveTaint { node, key } => {
                let n = api
                    .nodes
                    .get_mut(node)
                    .expect("enabled on live nodes")
                    .make_mut();
                let i = n
                    .node
                    .taints
                    .iter()
                    .position(|t| t.key == *key && crate::matching::is_no_execute(t))
                    .expect("enabled on present taints");
                n.node.taints.remove(i);
                n.taint_since.remove(i);
                s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
            }
            EnvOp::AppendToleration { pod, choice } => {
                let tol = self.config.append_tolerations[*choice].clone();
                Self::update_pod(api, &mut s.pods.pending, pod, now, |p| {
                    p.tolerations.push(tol)
                });
            }
            EnvOp::SetSeconds {
                pod,
                toleration,
                seconds,
            } => {
                Self::update_pod(api, &mut s.pods.pending, pod, now, |p| {
                    p.tolerations[*toleration].seconds = *seconds
                });
            }
            EnvOp::DeletePod { pod } => {
                api.pods.remove(pod);
                s.pods.pending.push_back(Delta::Delete(pod.clone()));
            }
            EnvOp::RecreatePod { pod, node } => {
                if api.pods.remove(pod).is_some() {
                    s.pods.pending.push_back(Delta::Delete(pod.clone()));
                }
                let spec = self
                    .config
                    .pod_spec(pod)
                    .expect("pods come from the config");
                let uid = api.fresh_uid(&spec.name);
                let p = ApiPod::new(
                    Pod {
                        key: pod.clone(),
                        uid,
                        node_name: node.clone(),
                        tolerations: spec.tolerations.clone(),
                    },
                    now,
                );
                s.pods.pending.push_back(Delta::Upsert(cached_pod(&p)));
                api.pods.insert(pod.clone(), Shared::new(p));
            }
            EnvOp::BindPod { pod, node } => {
                let p = api
                    .pods
                    .get_mut(pod)
                    .expect("enabled on live pods")
                    .make_mut();
                p.pod.node_name = Some(node.clone());
                p.bound_since = Some(now);
                p.bump();
                s.pods.pending.push_back(Delta::Upsert(cached_pod(p)));
            }
            EnvOp::DeleteNode { node } => {
                api.nodes.remove(node);
                s.nodes.pending.push_back(Delta::Delete(node.clone()));
            }
            EnvOp::Restart | EnvOp::FailNextCall => unreachable!("handled above"),
        }
        api.note_exposure(self.ops());
    }

    /// The operations that leave the API server's objects alone (no copy of them is made).
    fn apply_env_to_controller(&self, s: &mut SysState, op: &EnvOp, out: &mut Outcome) {
        match op {
            EnvOp::Restart => {
                s.ctrl.make_mut().restarted();
                s.env.restarted_at = Some(s.now);
                s.history.cancelled = Shared::default();
                s.history.failed.clear();
                relist(s);
                out.notes
                    .add(|| "controller restarts; informers re-list".to_string());
            }
            EnvOp::FailNextCall => s.env.fail_next = true,
            _ => unreachable!("only called for Restart and FailNextCall"),
        }
    }

    fn update_pod(
        api: &mut ApiServer,
        pending: &mut std::collections::VecDeque<Delta<PodKey, Shared<CachedPod>>>,
        key: &PodKey,
        now: Time,
        f: impl FnOnce(&mut Pod),
    ) {
        let p = api
            .pods
            .get_mut(key)
            .expect("enabled on live pods")
            .make_mut();
        f(&mut p.pod);
        p.changed_at = now;
        p.bump();
        pending.push_back(Delta::Upsert(cached_pod(p)));
    }
}

/// The pod object a decision about `key` was made on: the object the worker listed (node
/// handling), else the cached one (pod handling).
fn decided_uid(before: &SysState, action: &Action, key: &PodKey) -> Option<crate::api::Uid> {
    if let Action::Controller(Step::WorkerContinue { worker, pick, .. }) = action {
        if let Some(crate::core::Worker::Node {
            phase: crate::core::NodePhase::Pods { pods, next, .. },
            ..
        }) = before.ctrl.shards().get(*worker).map(|s| &s.worker)
        {
            if let Some(p) = pods
                .get(next + usize::from(*pick))
                .filter(|p| p.key == *key)
            {
                return Some(p.uid.clone());
            }
        }
    }
    before.pods.cache.get(key).map(|p| p.pod.uid.clone())
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
        && ctrl
            .timed_queue()
            .works()
            .values()
            .all(|w| matches!(w.phase, WorkPhase::Armed | WorkPhase::Backoff { .. }))
}

fn cached_node(n: &ApiNode) -> Shared<CachedNode> {
    Shared::new(CachedNode {
        node: n.node.clone(),
        taint_since: n.taint_since.clone(),
    })
}

fn cached_pod(p: &ApiPod) -> Shared<CachedPod> {
    Shared::new(CachedPod {
        pod: p.pod.clone(),
        bound_since: p.bound_since,
    })
}

/// A (re)started controller's informers: empty caches and an initial list of every API object
/// (upstream: the reflector's LIST, delivered as Add events, then `HasSynced`).
fn relist(s: &mut SysState) {
    s.nodes = Informer::default();
    s.pods = Informer::default();
    for n in s.api.nodes.values() {
        s.nodes.pending.push_back(Delta::Upsert(cached_node(n)));
    }
    for p in s.api.pods.values() {
        s.pods.pending.push_back(Delta::Upsert(cached_pod(p)));
    }
    s.nodes.unsynced = s.nodes.pending.len() as u16;
    s.pods.unsynced = s.pods.pending.len() as u16;
}

impl stateright::Model for TaintSys {
    type State = SysState;
    type Action = Action;

    fn init_states(&self) -> Vec<SysState> {
        vec![self.initial_state()]
    }

    fn actions(&self, s: &SysState, actions: &mut Vec<Action>) {
        if !s.nodes.pending.is_empty() {
            actions.push(Action::InformerDeliverNode);
        }
        if !s.pods.pending.is_empty() {
            actions.push(Action::InformerDeliverPod);
        }
        if s.nodes.unsynced == 0 && s.pods.unsynced == 0 {
            s.ctrl.enabled_steps(s.now, actions);
            for r in s.ctrl.pending_requests() {
                actions.push(Action::ApiRespond(r.id));
            }
        }
        self.env_ops(s, actions);
        if self.quiescent(s) {
            if let Some(t) = self.next_instant(s) {
                actions.push(Action::Tick(t));
            }
        }
    }

    fn next_state(&self, s: &SysState, action: Action) -> Option<SysState> {
        self.successor(s, &action)
    }

    fn format_action(&self, action: &Action) -> String {
        display::action(action)
    }

    fn format_step(&self, s: &SysState, action: Action) -> Option<String> {
        self.transition(s, &action)
            .map(|(next, out)| display::step(s, &action, &next, &out))
    }

    fn as_svg(&self, path: stateright::Path<SysState, Action>) -> Option<String> {
        Some(display::svg(self, path))
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        properties::properties()
    }

    fn within_boundary(&self, s: &SysState) -> bool {
        s.now.0 <= self.config.horizon_ms
    }
}
