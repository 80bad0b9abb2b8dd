//! What the oracle concludes: a summary when a legal behaviour explains the whole trace, a
//! [`Violation`] naming the first line none explains and why, or bad input. Spec: ORACLE-8.

use super::output::{Output, Seen};
use super::truth::{seconds_text, Why};
use crate::api::{NodeName, PodKey};
use crate::core::{EventKind, Verb};
use crate::time::{Duration, Time};
use crate::trace::Clock;
use serde::Serialize;
use std::fmt;

/// The first trace line no legal behaviour explains.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The line (1-based, blank lines counted); `None` when the trace ended (`finish`).
    pub line: Option<usize>,
    /// The line's time, or the end of the trace.
    #[serde(serialize_with = "millis")]
    pub t: Time,
    /// The pod whose line no legal behaviour explains.
    #[serde(serialize_with = "display")]
    pub pod: PodKey,
    /// The nodes the pod has been bound to (the component the witness reproduces).
    #[serde(serialize_with = "names")]
    pub nodes: Vec<NodeName>,
    /// Why, in plain words.
    pub message: String,
    /// What a legal behaviour shows instead (the witness scenario's expectation).
    #[serde(skip)]
    pub expected: Expected,
}

/// What a legal behaviour of the profile does instead, as a scenario can state it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expected {
    /// The pod is not deleted up to this instant.
    NotDeletedBy(Time),
    /// The controller deletes the pod within this window.
    DeletedWithin(Time, Time),
    /// Nothing a scenario's expectations can state.
    #[default]
    Nothing,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => write!(f, "end of trace ({}): {}", self.t, self.message),
        }
    }
}

/// Input the oracle cannot read: a line out of order, an unknown object, a second header.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct BadInput {
    /// The trace line (1-based) that cannot be read.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Why [`super::Oracle::feed`] stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No legal behaviour explains the trace (exit code 1).
    #[error("{0}")]
    Violation(Box<Violation>),
    /// The trace is malformed (exit code 2).
    #[error("{0}")]
    BadInput(BadInput),
    /// A component's frontier grew beyond the configured limit: no verdict (exit code 2).
    #[error("inconclusive at line {line}: more than {limit} states explain {pod} so far")]
    Inconclusive {
        /// The trace line at which the limit was passed.
        line: usize,
        /// The pod whose frontier grew too large.
        pod: String,
        /// The configured limit on states (`max_states`).
        limit: usize,
    },
}

/// The oracle's result type; the error type defaults to [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an accepted trace contained and what checking it took.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Lines read (including the header).
    pub records: usize,
    /// Pods seen.
    pub pods: usize,
    /// The largest frontier of any pod (states consistent with the trace at once).
    pub max_frontier: usize,
    /// Pods tracked at the end (memory is proportional to these).
    pub live_components: usize,
}

/// A trace line's output, as messages name it (`marked for deletion`, `deleted`).
pub fn seen_text(seen: &Seen) -> String {
    match seen {
        Seen::Event { message, .. } if message.starts_with("Marking") => {
            "marked for deletion".into()
        }
        Seen::Event { message, .. } => format!("given the event \"{message}\""),
        Seen::Request { verb, .. } => verb_text(verb),
        Seen::Deleted { .. } => "deleted".into(),
    }
}

/// What a model output is, as messages name it.
pub fn output_text(output: &Output) -> String {
    match output {
        Output::Event(e) => match e.kind {
            EventKind::MarkingForDeletion => "marked for deletion".into(),
            EventKind::CancellingDeletion => "given the event \"Cancelling deletion\"".into(),
        },
        Output::Request(r) => verb_text(&r.verb),
        Output::Deleted { .. } => "deleted".into(),
    }
}

fn verb_text(verb: &Verb) -> String {
    match verb {
        Verb::Get => "fetched (GET)".into(),
        Verb::GetNode(node) => format!("read with its node {node} (GET)"),
        Verb::PatchDisruptionTarget => "patched (DisruptionTarget)".into(),
        Verb::Delete => "deleted".into(),
    }
}

/// Whether a trace line means the controller is evicting the pod.
pub fn evicts(seen: &Seen) -> bool {
    match seen {
        Seen::Event { message, .. } => message.starts_with("Marking"),
        Seen::Request { verb, .. } => *verb == Verb::Delete,
        Seen::Deleted { .. } => true,
    }
}

/// What a message about one pod at one instant draws on: the pod's situation in the API state
/// the trace shows, and the profile and latency bound the trace is checked against.
pub struct Context<'a> {
    /// The pod the message is about.
    pub pod: &'a PodKey,
    /// The instant of the line the message is about.
    pub t: Time,
    /// The pod's situation in the API state the trace shows.
    pub why: Why,
    /// The name of the profile the trace is checked against.
    pub profile: &'static str,
    /// The latency bound `D` the trace is checked against.
    pub bound: Duration,
    /// How the trace's instants are shown (wall-clock when its header has a `start`).
    pub clock: Clock,
}

impl Context<'_> {
    /// The message for an output line `seen` no legal behaviour produces (`alternatives`: what
    /// the legal behaviours could have shown instead), and what a legal run shows.
    pub fn unexplained(&self, seen: &Seen, alternatives: &[Output]) -> (String, Expected) {
        let Context { pod, why, .. } = self;
        let t = self.clock.at(self.t);
        let why_text = why.shown(self.clock);
        let what = seen_text(seen);
        if evicts(seen) {
            match why {
                Why::Untolerated { at, .. } | Why::Tolerates { at, .. } if self.t < *at => {
                    return (
                        format!(
                            "{pod} {what} at {t}{}, but {why_text}",
                            self.after_taint(self.t)
                        ),
                        Expected::NotDeletedBy(self.t),
                    );
                }
                Why::Untolerated { .. } | Why::Tolerates { .. } => {}
                Why::NoTaints { node, cleared } => {
                    let since = match cleared {
                        Some(c) if c.plus(self.bound) < self.t => format!(
                            " since {}, observable by {} within the latency bound",
                            self.clock.at(*c),
                            self.clock.at(c.plus(self.bound))
                        ),
                        Some(c) => format!(" since {}", self.clock.at(*c)),
                        None => String::new(),
                    };
                    return (
                        format!(
                            "{pod} {what} at {t}, but node {node} has no NoExecute taint{since}"
                        ),
                        Expected::NotDeletedBy(self.t),
                    );
                }
                // The pod is gone, but a behaviour still had something to show for it: the
                // cause is what it showed instead, below.
                Why::Gone if !alternatives.is_empty() => {}
                _ => {
                    return (
                        format!("{pod} {what} at {t}, but {why_text}"),
                        Expected::NotDeletedBy(self.t),
                    )
                }
            }
        }
        let legal = if alternatives.is_empty() {
            "none".to_string()
        } else {
            alternatives
                .iter()
                .map(output_text)
                .collect::<Vec<_>>()
                .join(", ")
        };
        (
            format!(
                "{pod} {what} at {t}{}: no legal behaviour of {} (latency bound {}) does that \
                 then ({why_text}); what it could do for {pod} at that point: {legal}",
                self.after_taint(self.t),
                self.profile,
                seconds_text(self.bound)
            ),
            Expected::Nothing,
        )
    }

    /// On a wall clock, how long after the relevant taint appeared `t` is:
    /// `, 128 s after node.kubernetes.io/unreachable appeared`; nothing on a scenario clock,
    /// where the instants are already offsets.
    fn after_taint(&self, t: Time) -> String {
        match self.why.since_taint(t) {
            Some((taint, d)) if self.clock.is_wall() => {
                format!(", {} after {taint} appeared", seconds_text(d))
            }
            _ => String::new(),
        }
    }

    /// The message for a deadline every legal behaviour missed: at `due` the pod had to be
    /// `output`-ed, but the next line for it comes at `t`.
    pub fn overdue(&self, output: &Output, due: Time) -> (String, Expected) {
        let Context { pod, why, .. } = self;
        let what = output_text(output);
        let deletion = matches!(
            output,
            Output::Event(e) if e.kind == EventKind::MarkingForDeletion
        ) || matches!(output, Output::Request(r) if r.verb == Verb::Delete)
            || matches!(output, Output::Deleted { .. });
        let expected = if deletion {
            let from = why.earliest().filter(|e| *e <= due).unwrap_or(due);
            Expected::DeletedWithin(from, due)
        } else {
            Expected::Nothing
        };
        let after = self.after_taint(due);
        // A pod gone from the API server is no reason for an output it owed before: name the
        // bound only.
        let why = match why {
            Why::Gone => String::new(),
            why => format!("{}; ", why.shown(self.clock)),
        };
        (
            format!(
                "{pod} should have been {what} by {}{after} ({why}latency bound {}), but the \
                 trace shows nothing of it before {}",
                self.clock.at(due),
                seconds_text(self.bound),
                self.clock.at(self.t)
            ),
            expected,
        )
    }
}

fn millis<S: serde::Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i64(t.millis())
}

fn display<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn names<S: serde::Serializer>(v: &[NodeName], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|n| &**n))
}
