//! The system model: [`TaintSys`] and its [`stateright::Model`] impl, read in stateright's order
//! (`init_states` → `actions` → `next_state` → `properties`). The state it moves is
//! [`SysState`]; each kind of action is carried out by the module named after it.
//!
//! It is a hand-written [`stateright::Model`] (not an `ActorModel`) because tolerationSeconds
//! needs absolute deadlines on a shared clock. Abstraction (argued in specs/spec.md, "Time"):
//! internal steps take zero time and interleave arbitrarily; [`Action::Tick`] moves the clock to
//! the next interesting instant only when nothing but armed timers is pending; the environment
//! acts at instants of a grid. Spec: MODEL-*.

use super::action::Action;
use super::answer;
use super::config::CheckConfig;
use super::display;
use super::environment::Environment;
use super::informer::{self, CacheView};
use super::judge;
use super::outcome::{Notes, Outcome};
use super::properties::custom::Custom;
use super::properties::{self, Flag, PropertyInfo, Witness, PROPERTIES};
use super::reduction::{self, Reduction};
use super::state::{ApiNode, ApiPod, ApiServer, EnvState, History, Informer, SysState};
use super::symmetry::Symmetry;
use stateright::{Model, Path, Property};
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
    fn bounded(&self, s: &SysState, per_incarnation: bool) -> bool {
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
    fn successor(&self, s: &SysState, action: &Action) -> Option<SysState> {
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

impl Model for TaintSys {
    type State = SysState;
    type Action = Action;

    fn init_states(&self) -> Vec<SysState> {
        vec![self.initial_state()]
    }

    fn actions(&self, s: &SysState, actions: &mut Vec<Action>) {
        self.enabled(s, actions);
        match self.reduction {
            Reduction::None => {}
            Reduction::Por | Reduction::PorDispatchers => reduction::reduce(self, s, actions),
        }
    }

    fn next_state(&self, s: &SysState, action: Action) -> Option<SysState> {
        self.successor(s, &action)
    }

    fn format_action(&self, action: &Action) -> String {
        display::action(action)
    }

    fn format_step(&self, s: &SysState, action: Action) -> Option<String> {
        self.outcome(s, &action)
            .map(|out| display::step(s, &action, &out))
    }

    fn as_svg(&self, path: Path<SysState, Action>) -> Option<String> {
        let explain = display::Explain {
            title: format!("profile {}, config {}", self.profile.name, self.config.name),
            focus: self.focus,
            outcome: |s: &SysState, a: &Action| self.outcome(s, a),
            violated: |s: &SysState| {
                self.properties()
                    .into_iter()
                    .filter(|p| p.expectation == stateright::Expectation::Always)
                    .filter(|p| !(p.condition)(self, s))
                    .map(|p| p.name)
                    .collect()
            },
            statements: self.custom.statements(),
        };
        Some(display::svg(path, explain))
    }

    /// The properties, in [`PROPERTIES`] order (the names come from there), then the
    /// user-defined ones. Those about an instant in the past read the history bits `judge`
    /// records; the others read the state.
    fn properties(&self) -> Vec<Property<Self>> {
        use properties::{flag_clear, witnessed};
        let p = PROPERTIES;
        let mut list: Vec<Property<Self>> = vec![
            Property::always(p[0].name, |_, s| flag_clear(s, Flag::EvictAfterRemoval)),
            Property::always(p[1].name, |_, s| flag_clear(s, Flag::Premature)),
            Property::always(p[2].name, |m, s| m.bounded(s, true)),
            Property::always(p[3].name, |m, s| m.bounded(s, false)),
            Property::always(p[4].name, |_, s| flag_clear(s, Flag::UidSafety)),
            Property::always(p[5].name, |_, s| flag_clear(s, Flag::JustifiedSinceBind)),
            Property::always(p[6].name, |_, s| flag_clear(s, Flag::HonestCancel)),
            Property::always(p[7].name, |_, s| flag_clear(s, Flag::WriteAfterCancel)),
            Property::always(p[8].name, |_, s| properties::queue_exclusive(s)),
            Property::always(p[9].name, |_, s| {
                flag_clear(s, Flag::CorePrecondition) && !s.ctrl.precondition_violated()
            }),
            Property::always(p[10].name, |_, s| properties::converged_when_quiescent(s)),
            Property::always(p[11].name, |_, s| properties::no_orphaned_timer(s)),
            Property::sometimes(p[12].name, |_, s| witnessed(s, Witness::ImmediateEviction)),
            Property::sometimes(p[13].name, |_, s| witnessed(s, Witness::SecondsEviction)),
            Property::sometimes(p[14].name, |_, s| witnessed(s, Witness::CancelledTimer)),
            Property::sometimes(p[15].name, |_, s| witnessed(s, Witness::RetriedDeletion)),
            Property::sometimes(p[16].name, |_, s| {
                witnessed(s, Witness::EvictionAfterRestart)
            }),
        ];
        list.extend(self.custom.properties());
        list
    }

    fn within_boundary(&self, s: &SysState) -> bool {
        s.now.0 <= self.config.horizon_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stateright::Expectation;

    /// The stateright list and [`PROPERTIES`] agree entry by entry: the report and the verdict
    /// tables read kinds from the one and discoveries from the other.
    #[test]
    fn properties_follow_the_table() {
        let config = CheckConfig::builtin("default").expect("built-in config");
        let model = TaintSys::new(Profile::latest(), config);
        let listed: Vec<(&str, bool)> = model
            .properties()
            .iter()
            .map(|p| (p.name, p.expectation == Expectation::Always))
            .collect();
        let table: Vec<(&str, bool)> = PROPERTIES.iter().map(|p| (p.name, p.always)).collect();
        assert_eq!(listed, table);
    }
}
