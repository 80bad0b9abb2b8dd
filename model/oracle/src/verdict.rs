//! What the oracle concludes: a summary when a legal behaviour explains the whole trace, a
//! [`Violation`] naming the first line none explains and why, or bad input. Spec: ORACLE-8.

use super::output::{Output, Seen};
use super::truth::{seconds_text, Why};
use serde::Serialize;
use std::fmt;
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{EventKind, Verb};
use taintcheck_formats::trace::Clock;

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
        /// The instant the frontier or its search had reached.
        at: Time,
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
    /// The step slack `S` the trace is checked against (ORACLE-11).
    pub slack: Duration,
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
    /// `output`-ed, but the next line for it comes at `t`. `slack_from`: the deadline is the
    /// end of a step slack that began then (when the request was sent or the event emitted),
    /// which the message names as the cause.
    pub fn overdue(
        &self,
        output: &Output,
        due: Time,
        slack_from: Option<Time>,
    ) -> (String, Expected) {
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
        let slack = match (slack_from, output) {
            (Some(from), Output::Event(_)) => format!(
                "; emitted at {} at the latest, an event reaches the trace within the step slack {}",
                self.clock.at(from),
                seconds_text(self.slack)
            ),
            (Some(from), Output::Deleted { .. }) => format!(
                "; deleted at {} at the latest, a deletion reaches the trace within the step \
                 slack {}",
                self.clock.at(from),
                seconds_text(self.slack)
            ),
            (Some(from), Output::Request(_)) => format!(
                "; sent at {} at the latest, a request reaches the trace within the step slack {}",
                self.clock.at(from),
                seconds_text(self.slack)
            ),
            (None, _) => String::new(),
        };
        (
            format!(
                "{pod} should have been {what} by {}{after} ({why}latency bound {}{slack}), but \
                 the trace shows nothing of it before {}",
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

#[cfg(test)]
mod tests {
    use super::super::truth::From as Since;
    use super::*;
    use taintcheck_core::api::Uid;
    use taintcheck_core::{ApiRequest, EventRecord, RequestId};
    use taintcheck_formats::trace::Start;

    fn key() -> PodKey {
        PodKey::new("default", "web-0")
    }

    fn event(message: &str) -> Seen {
        Seen::Event {
            pod: key(),
            message: message.into(),
        }
    }

    fn request(verb: Verb) -> Seen {
        Seen::Request {
            id: 1,
            verb,
            pod: key(),
            uid: None,
            version: None,
        }
    }

    fn deleted() -> Seen {
        Seen::Deleted {
            pod: key(),
            uid: Uid("u1".into()),
        }
    }

    fn out_request(verb: Verb) -> Output {
        Output::Request(ApiRequest {
            id: RequestId(1),
            verb,
            pod: key(),
            uid: None,
            version: None,
        })
    }

    fn out_event(kind: EventKind) -> Output {
        Output::Event(EventRecord { pod: key(), kind })
    }

    const MARKING: &str = "Marking for deletion Pod default/web-0";
    const CANCELLING: &str = "Cancelling deletion of Pod default/web-0";

    /// Tolerates `a` for 100 s from the taint's arrival at 10 s: evictable from 110 s.
    fn tolerates() -> Why {
        Why::Tolerates {
            node: "n1".into(),
            taint: "a".into(),
            seconds: Duration(100_000),
            from: Since::Taint(Time(10_000)),
            at: Time(110_000),
        }
    }

    fn wall() -> Clock {
        Clock::new(Some(Start("2025-11-25T08:00:00Z".parse().unwrap())))
    }

    /// A context about web-0 at `t` ms, checked against `latest` with a 10 s latency bound.
    fn cx(why: Why, t: i64, clock: Clock) -> Context<'static> {
        Context {
            pod: Box::leak(Box::new(key())),
            t: Time(t),
            why,
            profile: "latest",
            bound: Duration(10_000),
            slack: Duration(100),
            clock,
        }
    }

    #[test]
    fn lines_and_outputs_are_named_in_words() {
        assert_eq!(seen_text(&event(MARKING)), "marked for deletion");
        assert_eq!(
            seen_text(&event(CANCELLING)),
            format!("given the event \"{CANCELLING}\"")
        );
        assert_eq!(seen_text(&request(Verb::Get)), "fetched (GET)");
        assert_eq!(
            seen_text(&request(Verb::GetNode("n1".into()))),
            "read with its node n1 (GET)"
        );
        assert_eq!(
            seen_text(&request(Verb::PatchDisruptionTarget)),
            "patched (DisruptionTarget)"
        );
        assert_eq!(seen_text(&request(Verb::Delete)), "deleted");
        assert_eq!(seen_text(&deleted()), "deleted");
        assert_eq!(
            output_text(&out_event(EventKind::MarkingForDeletion)),
            "marked for deletion"
        );
        assert_eq!(
            output_text(&out_event(EventKind::CancellingDeletion)),
            "given the event \"Cancelling deletion\""
        );
        assert_eq!(output_text(&out_request(Verb::Get)), "fetched (GET)");
        let gone = Output::Deleted {
            pod: key(),
            uid: Uid("u1".into()),
        };
        assert_eq!(output_text(&gone), "deleted");
    }

    /// ORACLE-8: a marking event, a DELETE and a deletion are evictions; a cancel, a GET and a
    /// PATCH are not.
    #[test]
    fn only_a_marking_event_a_delete_or_a_deletion_evicts() {
        assert!(evicts(&event(MARKING)));
        assert!(!evicts(&event(CANCELLING)));
        assert!(evicts(&request(Verb::Delete)));
        assert!(!evicts(&request(Verb::Get)));
        assert!(!evicts(&request(Verb::PatchDisruptionTarget)));
        assert!(evicts(&deleted()));
    }

    #[test]
    fn a_violation_names_its_line_or_the_end_of_the_trace() {
        let mut v = Violation {
            line: Some(3),
            t: Time(1_500),
            pod: key(),
            nodes: vec!["n1".into(), "n2".into()],
            message: "m".into(),
            expected: Expected::Nothing,
        };
        assert_eq!(v.to_string(), "line 3: m");
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            serde_json::json!({
                "line": 3, "t": 1500, "pod": "default/web-0", "nodes": ["n1", "n2"], "message": "m"
            })
        );
        v.line = None;
        assert_eq!(v.to_string(), "end of trace (1.500s): m");
    }

    /// An eviction before the earliest legal instant names the toleration; at or after it, an
    /// eviction is not what is wrong, and the general message lists what was legal.
    #[test]
    fn an_early_eviction_names_the_earliest_instant() {
        let (message, expected) =
            cx(tolerates(), 50_000, Clock::default()).unexplained(&request(Verb::Delete), &[]);
        assert_eq!(
            message,
            "default/web-0 deleted at 50.000s, but it tolerates a for 100 s from 10.000s, when \
             the taint was first observable"
        );
        assert_eq!(expected, Expected::NotDeletedBy(Time(50_000)));
        for t in [110_000, 120_000] {
            let (message, expected) =
                cx(tolerates(), t, Clock::default()).unexplained(&event(MARKING), &[]);
            assert_eq!(expected, Expected::Nothing, "{message}");
            assert!(
                message.contains("no legal behaviour of latest"),
                "{message}"
            );
        }
    }

    /// Evicted from a node without NoExecute taints: since when, and from when a legal run had
    /// to observe it (the latency bound).
    #[test]
    fn an_eviction_without_taints_says_since_when() {
        let none = |cleared| Why::NoTaints {
            node: "n1".into(),
            cleared,
        };
        let shown = |cleared, t| {
            cx(none(cleared), t, Clock::default()).unexplained(&request(Verb::Delete), &[])
        };
        let (message, expected) = shown(Some(Time(5_000)), 20_000);
        assert_eq!(
            message,
            "default/web-0 deleted at 20.000s, but node n1 has no NoExecute taint since 5.000s, \
             observable by 15.000s within the latency bound"
        );
        assert_eq!(expected, Expected::NotDeletedBy(Time(20_000)));
        for t in [15_000, 10_000] {
            assert_eq!(
                shown(Some(Time(5_000)), t).0,
                format!(
                    "default/web-0 deleted at {}, but node n1 has no NoExecute taint since 5.000s",
                    Time(t)
                )
            );
        }
        assert_eq!(
            shown(None, 20_000).0,
            "default/web-0 deleted at 20.000s, but node n1 has no NoExecute taint"
        );
        let (message, expected) =
            cx(Why::Unbound, 1_000, Clock::default()).unexplained(&deleted(), &[]);
        assert_eq!(
            message,
            "default/web-0 deleted at 1.000s, but it is not bound to a node"
        );
        assert_eq!(expected, Expected::NotDeletedBy(Time(1_000)));
    }

    /// A line that is not an eviction: what the legal behaviours could have shown instead.
    #[test]
    fn an_unexplained_output_lists_the_legal_alternatives() {
        let c = cx(Why::Forever { node: "n1".into() }, 1_000, Clock::default());
        let (message, expected) = c.unexplained(&request(Verb::Get), &[]);
        assert_eq!(
            message,
            "default/web-0 fetched (GET) at 1.000s: no legal behaviour of latest (latency bound \
             10 s) does that then (it tolerates every NoExecute taint of node n1 forever); what \
             it could do for default/web-0 at that point: none"
        );
        assert_eq!(expected, Expected::Nothing);
        let alternatives = [
            out_request(Verb::Get),
            out_event(EventKind::MarkingForDeletion),
        ];
        let (message, _) = c.unexplained(&request(Verb::PatchDisruptionTarget), &alternatives);
        assert!(
            message.ends_with("at that point: fetched (GET), marked for deletion"),
            "{message}"
        );
    }

    /// On a wall clock a message says how long after the taint appeared (`138 s − 10 s`); on a
    /// scenario clock, or when the binding started the clock, it does not.
    #[test]
    fn wall_clock_messages_count_from_the_taint() {
        let (message, _) = cx(tolerates(), 138_000, wall()).unexplained(&request(Verb::Get), &[]);
        assert!(
            message.starts_with(
                "default/web-0 fetched (GET) at 2025-11-25T08:02:18Z, 128 s after a appeared: "
            ),
            "{message}"
        );
        let (message, _) =
            cx(tolerates(), 138_000, Clock::default()).unexplained(&request(Verb::Get), &[]);
        assert!(!message.contains("appeared"), "{message}");
        let bound = Why::Tolerates {
            node: "n1".into(),
            taint: "a".into(),
            seconds: Duration(100_000),
            from: Since::Bound(Time(10_000)),
            at: Time(110_000),
        };
        let (message, _) = cx(bound, 138_000, wall()).unexplained(&request(Verb::Get), &[]);
        assert!(!message.contains("appeared"), "{message}");
    }

    /// A missed deadline: a deletion was due between the earliest legal instant (or the
    /// deadline itself, if earlier) and the deadline; other outputs state nothing.
    #[test]
    fn an_overdue_deletion_gives_its_window() {
        let c = cx(tolerates(), 150_000, Clock::default());
        let (message, expected) = c.overdue(&out_request(Verb::Delete), Time(120_000), None);
        assert_eq!(
            message,
            "default/web-0 should have been deleted by 120.000s (it tolerates a for 100 s from \
             10.000s, when the taint was first observable; latency bound 10 s), but the trace \
             shows nothing of it before 150.000s"
        );
        assert_eq!(
            expected,
            Expected::DeletedWithin(Time(110_000), Time(120_000))
        );
        for deletion in [
            out_event(EventKind::MarkingForDeletion),
            Output::Deleted {
                pod: key(),
                uid: Uid("u1".into()),
            },
        ] {
            assert_eq!(
                c.overdue(&deletion, Time(120_000), None).1,
                Expected::DeletedWithin(Time(110_000), Time(120_000))
            );
        }
        assert_eq!(
            c.overdue(&out_request(Verb::Delete), Time(100_000), None).1,
            Expected::DeletedWithin(Time(100_000), Time(100_000))
        );
        for other in [
            out_request(Verb::Get),
            out_event(EventKind::CancellingDeletion),
        ] {
            assert_eq!(c.overdue(&other, Time(120_000), None).1, Expected::Nothing);
        }
        let (message, _) = cx(tolerates(), 150_000, wall()).overdue(
            &out_request(Verb::Delete),
            Time(120_000),
            None,
        );
        assert!(message.contains(", 110 s after a appeared ("), "{message}");
    }

    /// A deadline set by the step slack (ORACLE-11) names it and when the request was sent or
    /// the event emitted, not only the latency bound.
    #[test]
    fn a_deadline_of_the_step_slack_names_it() {
        let c = cx(tolerates(), 150_000, Clock::default());
        let (message, _) = c.overdue(&out_request(Verb::Get), Time(120_100), Some(Time(120_000)));
        assert!(
            message.ends_with(
                "latency bound 10 s; sent at 120.000s at the latest, a request reaches the \
                 trace within the step slack 0.1 s), but the trace shows nothing of it before \
                 150.000s"
            ),
            "{message}"
        );
        let marking = out_event(EventKind::MarkingForDeletion);
        let (message, _) = c.overdue(&marking, Time(120_100), Some(Time(120_000)));
        assert!(
            message.contains(
                "latency bound 10 s; emitted at 120.000s at the latest, an event reaches the trace \
                 within the step slack 0.1 s)"
            ),
            "{message}"
        );
    }
}
