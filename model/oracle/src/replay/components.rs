//! The components' frontiers through time: moving one to an instant through silent behaviour,
//! waking those whose deadline passed, bounding their size and forgetting finished ones.
//! Spec: ORACLE-5..7.

use super::Oracle;
use crate::state::State;
use crate::verdict::{Error, Expected, Result};
use std::collections::BTreeSet;
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::time::Time;

/// One pod name's frontier.
#[derive(Clone, Debug)]
pub(crate) struct Component {
    pub nodes: BTreeSet<NodeName>,
    /// The instant every state is at.
    pub now: Time,
    pub states: Vec<State>,
    pub(super) wake: Option<Time>,
}

/// What an oracle holds at one moment: its memory follows these counts, which follow the live
/// pods (ORACLE-6, ORACLE-F1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Pods whose frontier is kept (components).
    pub components: usize,
    /// States, over every component.
    pub states: usize,
    /// API changes its informers have not delivered yet, over every state.
    pub pending: usize,
    /// Pods in the API state the trace shows.
    pub pods: usize,
    /// Node changes kept for the components that come to a node later.
    pub node_changes: usize,
}

impl Oracle {
    /// What this oracle holds now (an oracle of [`crate::parallel`] its share only).
    pub fn footprint(&self) -> Footprint {
        let states = self.components.values().flat_map(|c| &c.states);
        let pending = states.clone().map(|s| s.nodes.len() + s.pods.len()).sum();
        Footprint {
            components: self.components.len(),
            states: states.count(),
            pending,
            pods: self.truth.pods.len(),
            node_changes: self.node_log.values().map(|log| log.len()).sum(),
        }
    }

    /// Components whose earliest deadline lies before `t` are advanced to `t`, so that a
    /// missed deadline is reported at the first line after it.
    pub(super) fn wake_due(&mut self, t: Time) -> Result<()> {
        while let Some((at, key)) = self.wakes.first().cloned() {
            if at >= t {
                break;
            }
            self.wakes.remove(&(at, key.clone()));
            if let Some(c) = self.components.get_mut(&key) {
                c.wake = None;
            }
            self.waking = Some((at, key.clone()));
            self.advance(&key, t)?;
            self.settled(&key)?;
        }
        self.waking = None;
        Ok(())
    }

    /// Moves a component's frontier to `t` through silent behaviour (ORACLE-5).
    pub(super) fn advance(&mut self, key: &PodKey, t: Time) -> Result<()> {
        let Some(c) = self.components.get_mut(key) else {
            return Ok(());
        };
        if t <= c.now {
            return Ok(());
        }
        let mut death = None;
        let states = std::mem::take(&mut c.states);
        c.states =
            self.machine
                .advance(states, c.now, t, &self.truth, &mut self.search, &mut death);
        c.now = t;
        if let Some(at) = self.search.gave_up() {
            return Err(self.inconclusive(key, at));
        }
        if c.states.is_empty() {
            let context = self.context(key, t);
            let (message, expected) = match &death {
                Some(d) => context.overdue(&d.output, d.at, d.slack_from),
                None => (
                    format!("{key}: no legal behaviour reaches {t} ({})", context.why),
                    Expected::Nothing,
                ),
            };
            let at = death.map_or(t, |d| d.at);
            let mut e = self.violation(key, t, message, expected);
            if let Error::Violation(v) = &mut e {
                if v.line.is_none() {
                    v.t = at;
                }
            }
            return Err(e);
        }
        self.resize(key)
    }

    /// After a component changed: size check, wake-up instant, forgetting a finished pod.
    pub(super) fn settled(&mut self, key: &PodKey) -> Result<()> {
        self.resize(key)?;
        self.forget_if_done(key);
        Ok(())
    }

    /// No verdict on `key`'s pod at this line (its frontier at `at`): more than `max_states` states explain it, in
    /// its frontier or in a search for the next one.
    pub(super) fn inconclusive(&self, key: &PodKey, at: Time) -> Error {
        Error::Inconclusive {
            line: self.line,
            pod: key.to_string(),
            limit: self.max_states,
            at,
        }
    }

    /// Size check and wake-up instant of a component.
    fn resize(&mut self, key: &PodKey) -> Result<()> {
        let Some(c) = self.components.get_mut(key) else {
            return Ok(());
        };
        let n = c.states.len();
        self.summary.max_frontier = self.summary.max_frontier.max(n);
        if n > self.max_states {
            let at = c.now;
            return Err(self.inconclusive(key, at));
        }
        let wake = c
            .states
            .iter()
            .filter_map(|s| self.machine.deadline(s))
            .min();
        if wake == c.wake {
            return Ok(());
        }
        if let Some(old) = c.wake.take() {
            self.wakes.remove(&(old, key.clone()));
        }
        if let Some(w) = wake {
            self.wakes.insert((w, key.clone()));
        }
        c.wake = wake;
        Ok(())
    }

    /// Forgets a component whose pod is gone and in which no behaviour has anything left for
    /// it: memory stays proportional to the live pods.
    fn forget_if_done(&mut self, key: &PodKey) {
        let Some(c) = self.components.get(key) else {
            return;
        };
        let gone = !self.keep
            && !self.truth.pods.contains_key(key)
            && !self.unanswered.contains_key(key)
            && c.states.iter().all(State::forgotten);
        if gone {
            if let Some(c) = self.components.remove(key) {
                if let Some(w) = c.wake {
                    self.wakes.remove(&(w, key.clone()));
                }
                for node in &c.nodes {
                    if let Some(pods) = self.node_pods.get_mut(node) {
                        pods.remove(key);
                        if pods.is_empty() {
                            self.node_pods.remove(node);
                        }
                    }
                }
            }
        }
    }
}
