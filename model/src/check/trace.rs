//! A discovered path as data: per step its time, the actor, the action, what it did and which
//! state variables (MODEL-S*) it changed. `check` prints it, `--json` serializes it, the report
//! numbers it. Spec: CHECK-3.

use super::action::Action;
use super::display;
use super::state::SysState;
use super::transition::TaintSys;
use serde::Serialize;
use stateright::Path;
use taintcheck_core::{Actor, Step};

/// A path to a violation (counterexample) or to a witness (example).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// The Explorer's action-index path (`0/4/2/...`).
    pub action_path: String,
    /// The steps, in order.
    pub steps: Vec<TraceStep>,
    /// Every state of the path, the initial one first: one more than the steps.
    #[serde(skip)]
    pub states: Vec<SysState>,
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// Its number, from 1.
    pub number: usize,
    /// The model clock when it is taken (ms).
    pub time_ms: i64,
    /// Who takes it: `environment`, `clock`, `node informer`, `pod informer`, `node dispatcher`,
    /// `pod dispatcher`, `worker N`, `work #N`, `api server`.
    pub actor: String,
    /// What it is, in words.
    pub action: String,
    /// What it did: the model's notes (API answers, deliveries), then the core's effects.
    pub outcome: Vec<String>,
    /// The state variables it changed, named as in specs/spec.md (`now`, `api`, `nodes`,
    /// `pods`, `ctrl`, `env`, `history`).
    pub changed: Vec<&'static str>,
    /// The model's action, for callers that map steps to their upstream sources.
    #[serde(skip)]
    pub kind: Action,
}

impl Trace {
    /// `path` as data, each step described by the model's transition.
    pub fn of(model: &TaintSys, path: &Path<SysState, Action>) -> Trace {
        let pairs = path.clone().into_vec();
        let steps = pairs
            .windows(2)
            .enumerate()
            .filter_map(|(i, w)| {
                let (before, action) = (&w[0].0, w[0].1.as_ref()?);
                let after = &w[1].0;
                let (action_text, outcome) = match model.outcome(before, action) {
                    Some(out) => (
                        display::describe(before, action),
                        out.notes
                            .as_slice()
                            .iter()
                            .cloned()
                            .chain(out.effects.iter().map(display::effect))
                            .collect(),
                    ),
                    None => (display::action(action), Vec::new()),
                };
                Some(TraceStep {
                    number: i + 1,
                    time_ms: before.now.0,
                    actor: actor(action),
                    action: action_text,
                    outcome,
                    changed: changed(before, after),
                    kind: action.clone(),
                })
            })
            .collect();
        Trace {
            // The Explorer serves the model as specified, and every path (shortest paths come
            // from it, reduced ones are paths of it too) is one of its paths (MODEL-POR).
            action_path: path.encode(&model.unreduced()),
            steps,
            states: pairs.into_iter().map(|(s, _)| s).collect(),
        }
    }

    /// The numbered lines `check` prints: `  3. t=2000ms  <action> → <outcome>`.
    pub fn lines(&self) -> Vec<String> {
        self.steps.iter().map(TraceStep::line).collect()
    }

    /// The lines joined, for searching a story in tests.
    pub fn text(&self) -> String {
        self.lines().join("\n")
    }

    /// The model clock in the last state (ms).
    pub fn end_ms(&self) -> i64 {
        self.states.last().map_or(0, |s| s.now.0)
    }
}

impl TraceStep {
    /// The step on one line.
    pub fn line(&self) -> String {
        step_line(self.number, self.time_ms, &self.action, &self.outcome)
    }
}

/// A step on one line, from its parts (also as `--json` wrote them: `taintcheck merge`).
pub fn step_line(number: usize, time_ms: i64, action: &str, outcome: &[String]) -> String {
    let mut s = format!("{number:>3}. t={time_ms}ms  {action}");
    if !outcome.is_empty() {
        s.push_str(" → ");
        s.push_str(&outcome.join("; "));
    }
    s
}

/// Who takes `a`.
fn actor(a: &Action) -> String {
    match a {
        Action::Tick(_) => "clock".into(),
        Action::InformerDeliverNode => "node informer".into(),
        Action::InformerDeliverPod => "pod informer".into(),
        Action::ApiRespond(_) => "api server".into(),
        Action::Env(_) => "environment".into(),
        Action::Controller(step) => match Step::actor(step) {
            Actor::NodeDispatcher => "node dispatcher".into(),
            Actor::PodDispatcher => "pod dispatcher".into(),
            Actor::Worker(w) => format!("worker {w}"),
            Actor::Work(id) => format!("work #{}", id.0),
        },
    }
}

/// The MODEL-S* variables that differ between `before` and `after`.
fn changed(before: &SysState, after: &SysState) -> Vec<&'static str> {
    let mut names = Vec::new();
    let mut note = |differs: bool, name| {
        if differs {
            names.push(name);
        }
    };
    note(before.now != after.now, "now");
    note(before.api != after.api, "api");
    note(before.nodes != after.nodes, "nodes");
    note(before.pods != after.pods, "pods");
    note(before.ctrl != after.ctrl, "ctrl");
    note(before.env != after.env, "env");
    note(before.history != after.history, "history");
    names
}
