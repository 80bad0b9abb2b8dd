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
use super::display;
use super::properties::custom::MAX_CUSTOM;
use super::properties::{self, Flag, Witness, PROPERTIES};
use super::reduction::{self, Reduction};
use super::state::SysState;
use super::transition::TaintSys;
use stateright::{Model, Path, Property};

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
        list.extend(self.custom.infos().zip(CONDITIONS).map(
            |(info, condition)| match info.always {
                true => Property::always(info.name, condition),
                false => Property::sometimes(info.name, condition),
            },
        ));
        list
    }

    fn within_boundary(&self, s: &SysState) -> bool {
        s.now.0 <= self.config.horizon_ms
    }
}

/// The condition of user property `I`.
fn condition<const I: usize>(m: &TaintSys, s: &SysState) -> bool {
    m.custom.holds(I, s)
}

/// One condition per possible user property (stateright takes plain `fn`s).
const CONDITIONS: [fn(&TaintSys, &SysState) -> bool; MAX_CUSTOM] = [
    condition::<0>,
    condition::<1>,
    condition::<2>,
    condition::<3>,
    condition::<4>,
    condition::<5>,
    condition::<6>,
    condition::<7>,
    condition::<8>,
    condition::<9>,
    condition::<10>,
    condition::<11>,
    condition::<12>,
    condition::<13>,
    condition::<14>,
    condition::<15>,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::config::CheckConfig;
    use stateright::Expectation;
    use taintcheck_core::profile::Profile;

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
