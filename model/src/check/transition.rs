//! The transition relation of the system model: [`TaintSys`] (a profile, a configuration and
//! the properties it declares), its initial state, the actions enabled in a state, and each
//! action's successor. Each kind of action is carried out by the module named after it; the
//! stateright face of the model (reduction, properties, rendering) is [`super::system`]'s, above
//! this one, so that the reduction may ask for successors without a circle.

use super::action::Action;
use super::answer;
use super::config::CheckConfig;
use super::cutoff::{self, Cutoff};
use super::environment::Environment;
use super::informer::{self, CacheView};
use super::judge;
use super::outcome::{Notes, Outcome};
use super::properties::custom::Custom;
use super::properties::{self, PropertyInfo, PROPERTIES};
use super::state::{ApiNode, ApiPod, ApiServer, EnvState, History, Informer, SysState};
use super::symmetry::Symmetry;
use taintcheck_core::api::{Node, Pod};
use taintcheck_core::profile::Profile;
use taintcheck_core::shared::{Inline, Shared};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Config as CoreConfig, Controller, Listing};

/// The system model for one profile and one configuration.
#[derive(Clone, Debug)]
pub struct TaintSys {
    /// The Kubernetes behaviour the controller core follows.
    pub profile: Profile,
    /// What the run explores: objects, the environment's repertoire and budget, the clock.
    pub config: CheckConfig,
    /// The property the Explorer's timeline explains first (`taintcheck explore --property`);
    /// it changes nothing else.
    pub focus: Option<&'static str>,
    /// The user-defined properties, after the built-ins (spec PROP-1).
    pub custom: Custom,
    /// Whether `actions` lists every enabled action or an ample one alone (spec MODEL-POR).
    /// [`TaintSys::new`] gives the full model; runs choose ([`super::run::RunOptions`]).
    pub reduction: Reduction,
    /// What the cutoff cut from the configuration as given (spec MODEL-CUTOFF), for the report;
    /// `None` when `config` is the configuration as given.
    pub cutoff: Option<Cutoff>,
}

impl TaintSys {
    /// The model of `config` under `profile`.
    pub fn new(profile: Profile, config: CheckConfig) -> TaintSys {
        TaintSys {
            profile,
            custom: Custom::declared(&config.properties),
            config,
            focus: None,
            reduction: Reduction::None,
            cutoff: None,
        }
    }

    /// The model of `config` cut to its cutoff (spec MODEL-CUTOFF): each toleration class keeps
    /// as many pods as a verdict can depend on, and the report says what was cut.
    pub fn at_cutoff(profile: Profile, config: CheckConfig) -> TaintSys {
        let (config, cutoff) = cutoff::apply(config, &profile);
        TaintSys {
            cutoff,
            ..TaintSys::new(profile, config)
        }
    }

    /// The same model without reduction: every enabled action in every state.
    pub fn unreduced(&self) -> TaintSys {
        TaintSys {
            reduction: Reduction::None,
            ..self.clone()
        }
    }

    /// The core's configuration under this model (what a replay on the runtime runs with).
    pub fn core_config(&self) -> CoreConfig {
        CoreConfig {
            profile: self.profile,
            workers: self.config.workers,
            node_channel_capacity: self.config.node_channel_capacity,
            pod_channel_capacity: self.config.pod_channel_capacity,
            listing: Listing::Any,
            rate_limit: self.config.rate_limit,
        }
    }

    fn ops(&self) -> bool {
        self.profile.comparison_operators
    }

    fn environment(&self) -> Environment<'_> {
        Environment {
            config: &self.config,
            comparison_operators: self.ops(),
        }
    }

    /// The initial state: the configured objects in the API server, already listed into the
    /// caches and handed to the controller (as after `WaitForCacheSync`).
    pub fn initial_state(&self) -> SysState {
        self.settle(self.listed_state(), &mut Vec::new())
    }

    /// The state before the initial instant settles (objects listed, nothing delivered) and the
    /// internal steps that settle it, in order (MODEL-INIT): what a replay on the runtime runs
    /// before a path.
    pub fn initial_steps(&self) -> (SysState, Vec<Action>) {
        let listed = self.listed_state();
        let mut steps = Vec::new();
        self.settle(listed.clone(), &mut steps);
        (listed, steps)
    }

    /// The configured objects in the API server, listed by both informers, nothing delivered.
    fn listed_state(&self) -> SysState {
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
        let uids = api
            .pods
            .iter()
            .map(|(k, p)| (k.clone(), p.pod.uid.clone()))
            .collect();
        let nodes: Vec<_> = api.nodes.keys().cloned().collect();
        let symmetry = Symmetry::of(&self.config, uids, &nodes);
        let mut s = SysState {
            now: Time::ZERO,
            api: Shared::new(api),
            nodes: Informer::default(),
            pods: Informer::default(),
            ctrl: Inline::new(Controller::new(self.core_config())),
            env: EnvState {
                budget: self.config.budget,
                ..EnvState::default()
            },
            history: History::default(),
            symmetry,
        };
        s.history.custom = self.custom.initial(&s);
        informer::relist(&mut s);
        s
    }

    /// Runs every internal step of the initial instant in the fixed order of `actions` until
    /// quiescence: the run starts from a cluster whose controller has caught up with its
    /// configuration (spec MODEL-INIT). The environment's first chance to act is right after.
    /// The steps taken are appended to `taken`.
    fn settle(&self, mut s: SysState, taken: &mut Vec<Action>) -> SysState {
        let mut actions = Vec::new();
        loop {
            actions.clear();
            self.enabled(&s, &mut actions);
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
            taken.push(a);
        }
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

    /// Every property's name, id and kind in report order: the built-ins ([`PROPERTIES`]),
    /// then the user-defined ones.
    pub fn catalogue(&self) -> Vec<PropertyInfo> {
        PROPERTIES
            .iter()
            .chain(self.custom.infos())
            .copied()
            .collect()
    }

    /// LIVE-1 (`per_incarnation`) or LIVE-2, with this model's profile and processing bound.
    pub(super) fn bounded(&self, s: &SysState, per_incarnation: bool) -> bool {
        let bound = Duration(self.config.processing_bound_ms);
        properties::bounded(s, self.ops(), bound, per_incarnation)
    }

    /// What `action` does in `s`, notes included, to describe the step. `None`: the action is
    /// not enabled.
    pub fn outcome(&self, s: &SysState, action: &Action) -> Option<Outcome> {
        let mut out = Outcome {
            notes: Notes::recording(),
            ..Outcome::default()
        };
        self.apply(s, action, &mut out).map(|_| out)
    }

    /// The successor alone (what the checker asks for).
    pub(super) fn successor(&self, s: &SysState, action: &Action) -> Option<SysState> {
        self.apply(s, action, &mut Outcome::default())
    }

    /// One action: the module that carries it out, then the judging of what the step committed.
    fn apply(&self, s: &SysState, action: &Action, out: &mut Outcome) -> Option<SysState> {
        let mut next = s.clone();
        match action {
            Action::Tick(t) => next.now = *t,
            Action::InformerDeliverNode => informer::deliver_node(&mut next, out),
            Action::InformerDeliverPod => informer::deliver_pod(&mut next, out),
            Action::Controller(step) => {
                let (ctrl, view, now) = controller(&mut next);
                ctrl.step(step.clone(), &view, now, &mut out.effects);
            }
            Action::ApiRespond(id) => {
                let req = next.ctrl.pending_requests().find(|r| r.id == *id)?.clone();
                let result = answer::answer(&mut next, &req, &self.environment(), out);
                next.ctrl.make_mut().api_responded(req.id, result);
            }
            Action::Env(op) => self.environment().apply(&mut next, op, out),
        }
        judge::effects(&mut next, s, action, &out.effects, self.ops());
        self.custom.observe(&mut next, s, action, &out.effects);
        Some(next)
    }

    /// Every action enabled in `s`, in a fixed order: informers, the core's steps, the API
    /// server's answers, the environment, the clock.
    pub fn enabled(&self, s: &SysState, actions: &mut Vec<Action>) {
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
        self.environment().enabled(s, actions);
        if s.quiescent() {
            if let Some(t) = self.next_instant(s) {
                actions.push(Action::Tick(t));
            }
        }
    }
}

/// The controller, its view of the informer caches and the clock: disjoint parts of `s`, so the
/// controller steps while it reads the caches.
fn controller(s: &mut SysState) -> (&mut Controller, CacheView<'_>, Time) {
    let SysState {
        ctrl,
        nodes,
        pods,
        now,
        ..
    } = s;
    (ctrl.make_mut(), CacheView::of(nodes, pods), *now)
}

/// Whether a run explores every interleaving or one representative per class of
/// interleavings that differ only in the order of independent invisible internal steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// Every enabled action in every state (the model as specified).
    #[default]
    None,
    /// Ample sets (spec MODEL-POR).
    Por,
    /// Ample sets among the dispatchers' moves only, for runs with symmetry reduction
    /// (MODEL-SYM): the first ample work step depends on the works' ids, which a representative
    /// renames, so symmetric states could choose differently, and reduction and symmetry
    /// combine soundly only with an ample choice the symmetries preserve; the dispatchers'
    /// moves carry no id.
    PorDispatchers,
}

impl Reduction {
    /// The reduction named `s` (`none`, `por`).
    pub fn parse(s: &str) -> Option<Reduction> {
        match s {
            "none" => Some(Reduction::None),
            "por" => Some(Reduction::Por),
            _ => None,
        }
    }

    /// Its command-line and report name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Por => "por",
            Reduction::PorDispatchers => "por-dispatchers",
        }
    }
}
