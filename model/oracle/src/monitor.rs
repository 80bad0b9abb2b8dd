//! The model's `always` properties read off a recorded trace (`taintcheck reproduce`, specs/
//! oracle.md ORACLE-MON): whether a run of a real controller did what a counterexample says
//! it can. A property is decided as the model decides it (model/src/check/judge.rs and
//! properties.rs), on what the trace shows of the API: for a trace the proxy recorded, what the
//! controller received, when it received it (IMPORT-11), which is the model's informer cache;
//! JUST-1 on the API's own history, the same lines in resourceVersion order ([`history`]).
//! A sighting is reported only where the trace proves it; what it cannot see (a decision the
//! controller kept to itself) is never guessed.

use std::collections::{BTreeMap, BTreeSet};
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Taint, Uid};
use taintcheck_core::matching::earliest_eviction;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};

/// The properties a trace can show violated.
pub const MONITORED: [&str; 8] = [
    "EVICT-1", "EVICT-2", "UID-1", "JUST-1", "CANCEL-1", "CANCEL-2", "LIVE-1", "LIVE-2",
];

/// A property violated at a line of the trace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Sighting {
    /// Its spec id (`EVICT-1`).
    pub property: &'static str,
    /// The trace line (1-based) that shows it, or the line before which a deadline passed.
    pub line: usize,
    /// The instant of that line (a deadline: the first instant seen past it).
    pub t: Time,
    /// The pod it is about.
    pub pod: PodKey,
    /// What happened, in words.
    pub what: String,
}

/// A pod incarnation as the trace shows it.
struct Seen {
    pod: Pod,
    /// Since when it has been on its node.
    bound_since: Time,
    /// Its last change.
    changed_at: Time,
    terminating: bool,
}

#[derive(Default)]
struct View {
    /// Each node's NoExecute and other taints, each with when it arrived.
    nodes: BTreeMap<NodeName, Vec<(Taint, Time)>>,
    pods: BTreeMap<PodKey, Seen>,
    /// Incarnations the controller could have decided to evict: once on a node with a
    /// NoExecute taint they do not tolerate forever (UID-1's `decided`, seen from outside).
    decidable: BTreeSet<Uid>,
    /// Pods with a "Cancelling deletion" and, since, no "Marking for deletion", restart or
    /// received change that could have made the controller decide again (CANCEL-1, CANCEL-2).
    cancelled: BTreeSet<PodKey>,
    /// Writes after a cancel, shown unless their own work's "Marking for deletion" comes
    /// within the slack (CANCEL-1, CANCEL-2), with the incarnation received when each was
    /// sent: a Marking that comes once another incarnation has been received is that one's.
    after_cancel: Vec<(Sighting, Option<Uid>)>,
    /// DELETEs awaiting their answer.
    deletes: BTreeMap<u64, PodKey>,
    restarted_at: Option<Time>,
    /// Sightings of LIVE-1/LIVE-2 already made, per incarnation.
    late: BTreeSet<(&'static str, Uid)>,
}

/// Every sighting of a [`MONITORED`] property in `trace`, in trace order. `bound`: the slack
/// liveness deadlines add (LIVE-1, LIVE-2): for a real controller, the latency bound D plus the
/// model's processing bound; `comparison_operators`: the profile's switch.
pub fn sightings(
    trace: &[TraceRecord],
    comparison_operators: bool,
    bound: Duration,
) -> Vec<Sighting> {
    let mut view = View::default();
    let mut out = Vec::new();
    let mut end = trace.last().map_or(Time::ZERO, |r| r.t);
    for (i, r) in trace.iter().enumerate() {
        let line = i + 1;
        view.overdue(r.t, line, comparison_operators, bound, &mut out);
        view.unexplained_writes(|at| at.plus(bound) < r.t, &mut out);
        let sight = |property, pod: &PodKey, what: String| Sighting {
            property,
            line,
            t: r.t,
            pod: pod.clone(),
            what,
        };
        match &r.event {
            TraceEvent::Header { end: Some(e), .. } => end = end.max(*e),
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                view.node(node, r.t, comparison_operators);
            }
            TraceEvent::NodeDeleted { name, .. } => {
                view.nodes.remove(name);
            }
            TraceEvent::PodAdded { pod, .. } => view.pod(pod, false, r.t, comparison_operators),
            TraceEvent::PodModified {
                pod, terminating, ..
            } => view.pod(pod, *terminating, r.t, comparison_operators),
            TraceEvent::PodDeleted {
                namespace, name, ..
            } => {
                view.pods.remove(&PodKey::new(namespace, name));
            }
            TraceEvent::Request {
                verb: RequestVerb::Patch,
                namespace,
                name,
                ..
            } => {
                let key = PodKey::new(namespace, name);
                if view.cancelled.contains(&key) {
                    let what =
                        format!("PATCH {key} after the controller said \"Cancelling deletion\"");
                    let uid = view.pods.get(&key).map(|s| s.pod.uid.clone());
                    view.after_cancel.push((sight("CANCEL-2", &key, what), uid));
                }
            }
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                namespace,
                name,
                uid,
                ..
            } => {
                let key = PodKey::new(namespace, name);
                if view.cancelled.contains(&key) {
                    let what =
                        format!("DELETE {key} after the controller said \"Cancelling deletion\"");
                    let uid = view.pods.get(&key).map(|s| s.pod.uid.clone());
                    for property in ["CANCEL-1", "CANCEL-2"] {
                        view.after_cancel
                            .push((sight(property, &key, what.clone()), uid.clone()));
                    }
                }
                if let Some(why) = view.unjustified(&key, uid.as_ref(), comparison_operators) {
                    out.push(sight("EVICT-1", &key, format!("DELETE {key}: {why}")));
                }
                if let Some(why) = view.premature(&key, uid.as_ref(), r.t, comparison_operators) {
                    out.push(sight("EVICT-2", &key, format!("DELETE {key}: {why}")));
                }
                view.deletes.insert(*id, key);
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid: Some(uid),
                ..
            } => {
                if let Some(key) = view.deletes.remove(id) {
                    if !view.decidable.contains(uid) {
                        out.push(sight(
                            "UID-1",
                            &key,
                            format!(
                                "the DELETE of {key} deleted incarnation {uid}, which the \
                                 controller never saw on a node with a NoExecute taint it does \
                                 not tolerate"
                            ),
                        ));
                    }
                }
            }
            TraceEvent::Response { id, .. } => {
                view.deletes.remove(id);
            }
            TraceEvent::Event {
                namespace,
                name,
                message,
                ..
            } => {
                let key = PodKey::new(namespace, name);
                if message.starts_with("Cancelling deletion") {
                    if !view.exposed(&key, comparison_operators) {
                        view.cancelled.insert(key);
                    }
                } else if message.starts_with("Marking for deletion") {
                    view.cancelled.remove(&key);
                    let now = view.pods.get(&key).map(|s| &s.pod.uid);
                    view.after_cancel
                        .retain(|(w, uid)| w.pod != key || uid.as_ref() != now);
                }
            }
            TraceEvent::ControllerRestarted => {
                view.restarted_at = Some(r.t);
                view.cancelled.clear();
            }
            _ => {}
        }
    }
    view.overdue(end, trace.len(), comparison_operators, bound, &mut out);
    view.unexplained_writes(|at| at.plus(bound) <= end, &mut out);
    out.extend(history::unjustified_deletions(trace, comparison_operators));
    out.sort_by_key(|s| s.line);
    out
}

impl View {
    fn node(&mut self, node: &Node, t: Time, comparison_operators: bool) {
        let before = self.nodes.remove(&node.name).unwrap_or_default();
        let taints = node
            .taints
            .iter()
            .map(|taint| {
                let since = before
                    .iter()
                    .find(|(old, _)| old.key == taint.key && old.effect == taint.effect)
                    .map_or(t, |(_, since)| *since);
                (taint.clone(), since)
            })
            .collect();
        self.nodes.insert(node.name.clone(), taints);
        let on_it: Vec<PodKey> = self
            .pods
            .iter()
            .filter(|(_, s)| s.pod.node_name.as_ref() == Some(&node.name))
            .map(|(k, _)| k.clone())
            .collect();
        for key in on_it {
            self.note_decidable(&key, comparison_operators);
            self.reopen(&key, comparison_operators);
        }
    }

    fn pod(&mut self, pod: &Pod, terminating: bool, t: Time, comparison_operators: bool) {
        let bound_since = match self.pods.get(&pod.key) {
            Some(s) if s.pod.uid == pod.uid && s.pod.node_name == pod.node_name => s.bound_since,
            _ => t,
        };
        self.pods.insert(
            pod.key.clone(),
            Seen {
                pod: pod.clone(),
                bound_since,
                changed_at: t,
                terminating,
            },
        );
        self.note_decidable(&pod.key, comparison_operators);
        self.reopen(&pod.key, comparison_operators);
    }

    /// Whether the pod, as received, is on a node with a NoExecute taint it does not tolerate
    /// forever: the controller, handling it, would decide to evict it.
    fn exposed(&self, key: &PodKey, comparison_operators: bool) -> bool {
        self.pods.get(key).is_some_and(|seen| {
            self.earliest(seen, Time::ZERO, comparison_operators)
                .is_some()
        })
    }

    /// A received change that exposes a cancelled pod again ends the cancel's claim: the
    /// controller may decide anew (evict now, schedule), which the model counts as ending it
    /// and the trace cannot show.
    fn reopen(&mut self, key: &PodKey, comparison_operators: bool) {
        if self.cancelled.contains(key) && self.exposed(key, comparison_operators) {
            self.cancelled.remove(key);
        }
    }

    /// Moves to `out` the writes after a cancel whose instant `shown` says the slack has
    /// passed without their work's "Marking for deletion": the recorder posts Events on its
    /// own goroutine, so a new work's Event may reach the API server after its first write.
    fn unexplained_writes(&mut self, shown: impl Fn(Time) -> bool, out: &mut Vec<Sighting>) {
        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.after_cancel)
            .into_iter()
            .partition(|(w, _)| shown(w.t));
        out.extend(due.into_iter().map(|(w, _)| w));
        self.after_cancel = wait;
    }

    /// When the pod's node has a NoExecute taint it does not tolerate forever: the earliest
    /// eviction counted from `floor` (taints and binding that predate it count from it).
    fn earliest(&self, seen: &Seen, floor: Time, comparison_operators: bool) -> Option<Time> {
        let taints = self.nodes.get(seen.pod.node_name.as_ref()?)?;
        earliest_eviction(
            taints.iter().map(|(t, since)| (t, (*since).max(floor))),
            &seen.pod.tolerations,
            seen.bound_since.max(floor),
            comparison_operators,
        )
    }

    fn note_decidable(&mut self, key: &PodKey, comparison_operators: bool) {
        if let Some(seen) = self.pods.get(key) {
            if self
                .earliest(seen, Time::ZERO, comparison_operators)
                .is_some()
            {
                self.decidable.insert(seen.pod.uid.clone());
            }
        }
    }

    /// EVICT-1 at a DELETE of `key`: why no eviction was due, by what the trace shows, or
    /// `None` (it was due, or the trace cannot tell: the pod or its node unknown, Terminating,
    /// or the precondition naming another incarnation).
    fn unjustified(
        &self,
        key: &PodKey,
        precondition: Option<&Uid>,
        comparison_operators: bool,
    ) -> Option<String> {
        let seen = self.pods.get(key).filter(|s| !s.terminating)?;
        if precondition.is_some_and(|u| *u != seen.pod.uid) {
            return None;
        }
        let Some(node) = seen.pod.node_name.as_ref() else {
            return Some("the pod is on no node".into());
        };
        let taints = self.nodes.get(node)?;
        self.earliest(seen, Time::ZERO, comparison_operators)
            .is_none()
            .then(|| {
                let shown: Vec<String> = taints.iter().map(|(t, _)| t.to_string()).collect();
                format!(
                    "its node {node} has no NoExecute taint it does not tolerate forever \
                     (taints [{}])",
                    shown.join(", ")
                )
            })
    }

    /// EVICT-2 at a DELETE of `key` sent by `now`: why it came before the pod's earliest
    /// eviction, counted from when the controller received its taints and its binding (or from
    /// its last restart, whose relist it received later still), or `None`. The controller
    /// received each no earlier than the trace shows, and sent the DELETE no later, so a
    /// DELETE before this instant was before the one its caches gave.
    fn premature(
        &self,
        key: &PodKey,
        precondition: Option<&Uid>,
        now: Time,
        comparison_operators: bool,
    ) -> Option<String> {
        let seen = self.pods.get(key).filter(|s| !s.terminating)?;
        if precondition.is_some_and(|u| *u != seen.pod.uid) {
            return None;
        }
        let floor = self.restarted_at.unwrap_or(Time::ZERO);
        let due = self.earliest(seen, floor, comparison_operators)?;
        (now < due).then(|| {
            format!(
                "sent at {} ms, before the pod's earliest eviction at {} ms",
                now.millis(),
                due.millis()
            )
        })
    }

    /// LIVE-1 and LIVE-2 before instant `now`: a pod still on its node past its earliest
    /// legal eviction plus `bound`, counted from the last restart (LIVE-1) or from the API's
    /// own history (LIVE-2).
    fn overdue(
        &mut self,
        now: Time,
        line: usize,
        comparison_operators: bool,
        bound: Duration,
        out: &mut Vec<Sighting>,
    ) {
        for (property, floor) in [
            ("LIVE-1", self.restarted_at.unwrap_or(Time::ZERO)),
            ("LIVE-2", Time::ZERO),
        ] {
            for (key, seen) in &self.pods {
                if seen.terminating
                    || self.late.contains(&(property, seen.pod.uid.clone()))
                    || now <= seen.bound_since.max(floor).max(seen.changed_at).plus(bound)
                {
                    continue;
                }
                let Some(due) = self.earliest(seen, floor, comparison_operators) else {
                    continue;
                };
                if now > due.plus(bound) {
                    self.late.insert((property, seen.pod.uid.clone()));
                    out.push(Sighting {
                        property,
                        line,
                        t: now,
                        pod: key.clone(),
                        what: format!(
                            "{key} (uid {}) still on its node at {} ms, due by {} ms \
                             (its earliest eviction at {} ms{} plus {} ms of slack)",
                            seen.pod.uid,
                            now.millis(),
                            due.plus(bound).millis(),
                            due.millis(),
                            if property == "LIVE-1" && floor > Time::ZERO {
                                " counted from the restart"
                            } else {
                                ""
                            },
                            bound.millis()
                        ),
                    });
                }
            }
        }
    }
}

mod history;
#[cfg(test)]
mod tests;
