//! User-defined properties in a scenario's `expect` (SCN-5, PROP-2), judged on one run's trace:
//! the run is one behaviour, so an `always` claim fails at the first record that breaks it and a
//! `sometimes` claim fails when the run shows no example. The trace's API changes (TRACE-3) give
//! the pods, their binds and the taints' first sightings; its controller outputs (TRACE-4) the
//! deletions and events. Claims that need the model's legal eviction time (`evicted_in_time`,
//! `deleted_only_if_exposed`, `deleted` with `when`) are refused when the scenario is read.

use super::check::Failure;
use crate::properties::vocabulary::{counts, Claim, Declared, Pattern, TaintFilter};
use crate::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use std::collections::BTreeMap;
use taintcheck_core::api::{NodeName, PodKey, Taint, TaintEffect, Uid};
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{EventKind, EventRecord};

/// A property of a scenario's `expect`, with its line for failures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectProperty {
    /// The property as declared.
    pub declared: Declared,
    /// Its entry's line in the scenario file.
    pub line: usize,
}

/// Why `claim` cannot be judged on a run, if it cannot.
pub fn unsupported_on_a_run(claim: &Claim) -> Option<&'static str> {
    match claim {
        Claim::EvictedInTime { .. } | Claim::DeletedOnlyIfExposed { .. } => {
            Some("checked on model configurations only (it needs the legal eviction time)")
        }
        Claim::Deleted { when: Some(_), .. } => {
            Some("\"when\" is checked on model configurations only")
        }
        _ => None,
    }
}

/// One pod object as the API showed it.
#[derive(Clone, Debug)]
struct PodView {
    key: PodKey,
    node: Option<NodeName>,
    bound_since: Option<Time>,
}

/// The API as the trace shows it up to a record, with what the claims read of its past.
#[derive(Default)]
struct World {
    /// Every pod object seen, by UID (kept after its deletion: a deletion's answer may follow it).
    objects: BTreeMap<Uid, PodView>,
    /// The object under each key.
    current: BTreeMap<PodKey, Uid>,
    /// Each node's NoExecute taints with the instant each appeared.
    taints: BTreeMap<NodeName, Vec<(Taint, Time)>>,
    /// The first instant each (node, taint) showed.
    first: BTreeMap<(NodeName, Taint), Time>,
    /// DELETE requests by id.
    deletes: BTreeMap<u64, PodKey>,
    restarted: bool,
}

impl World {
    fn pod(&mut self, at: Time, pod: &taintcheck_core::api::Pod) {
        let prior = self.objects.get(&pod.uid).and_then(|p| p.bound_since);
        let bound_since = pod.node_name.as_ref().map(|_| prior.unwrap_or(at));
        self.objects.insert(
            pod.uid.clone(),
            PodView {
                key: pod.key.clone(),
                node: pod.node_name.clone(),
                bound_since,
            },
        );
        self.current.insert(pod.key.clone(), pod.uid.clone());
    }

    fn node(&mut self, at: Time, node: &taintcheck_core::api::Node) {
        let before = self.taints.remove(&node.name).unwrap_or_default();
        // By key and value, the first sighting kept: linear in the node's taints per update.
        let mut seen: BTreeMap<(&str, &str), Time> = BTreeMap::new();
        for (b, since) in &before {
            seen.entry((&*b.key, &*b.value)).or_insert(*since);
        }
        let now: Vec<_> = node
            .taints
            .iter()
            .filter(|t| t.effect == TaintEffect::NoExecute)
            .map(|t| {
                let since = seen.get(&(&*t.key, &*t.value)).copied().unwrap_or(at);
                self.first
                    .entry((node.name.clone(), t.clone()))
                    .or_insert(at);
                (t.clone(), since)
            })
            .collect();
        self.taints.insert(node.name.clone(), now);
    }

    /// The later of `p`'s bind and the first sighting of a counted taint on its node.
    fn anchor(&self, p: &PodView, filter: Option<&TaintFilter>) -> Option<Time> {
        let node = p.node.as_ref()?;
        let first = self
            .first
            .iter()
            .filter(|((n, t), _)| n == node && counts(filter, t))
            .map(|(_, at)| *at)
            .min()?;
        Some(first.max(p.bound_since.unwrap_or(first)))
    }
}

/// One property's progress along the run.
struct Judged {
    p: ExpectProperty,
    /// The first break (`always`) or the example (`sometimes`).
    found: Option<String>,
    /// `at_most_deletions`: the deletions still inside the window.
    recent: Vec<Time>,
    /// `marked_at_most_once`: the objects marked.
    marked: Vec<Uid>,
}

impl Judged {
    fn deletion(&mut self, w: &World, p: &PodView, at: Time) {
        if self.found.is_some() || !self.p.declared.claim.pods().matches(&p.key) {
            return;
        }
        let early = |least: Duration, filter: Option<&TaintFilter>| {
            w.anchor(p, filter).is_none_or(|a| at < a.plus(least))
        };
        let deleted = format!("{} was deleted at {at}", p.key);
        self.found = match &self.p.declared.claim {
            Claim::NeverDeleted { .. } => Some(deleted),
            Claim::NotDeletedBefore { taint, after, .. } if early(*after, taint.as_ref()) => Some(
                format!("{deleted}, earlier than {}ms after its anchor", after.0),
            ),
            Claim::DeletedWithin { taint, from, .. } if early(*from, taint.as_ref()) => Some(
                format!("{deleted}, earlier than {}ms after its anchor", from.0),
            ),
            Claim::AtMostDeletions { count, window, .. } => {
                self.recent.retain(|t| at.0 - t.0 < window.0);
                self.recent.push(at);
                (self.recent.len() > usize::from(*count)).then(|| {
                    format!(
                        "{} deletions within {}ms, the last of {} at {at}",
                        self.recent.len(),
                        window.0,
                        p.key
                    )
                })
            }
            Claim::Deleted { after_restart, .. } if w.restarted || !after_restart => Some(deleted),
            _ => None,
        };
    }

    fn event(&mut self, w: &World, key: &PodKey, kind: EventKind, at: Time) {
        if self.found.is_some() || !self.p.declared.claim.pods().matches(key) {
            return;
        }
        match &self.p.declared.claim {
            Claim::Event { event, .. } if *event == kind => {
                self.found = Some(format!("{kind:?} about {key} at {at}"));
            }
            Claim::MarkedAtMostOnce { .. } if kind == EventKind::MarkingForDeletion => {
                if let Some(uid) = w.current.get(key) {
                    match self.marked.binary_search(uid) {
                        Ok(_) => {
                            self.found = Some(format!(
                                "{key} (uid {uid}) marked for deletion a second time at {at}"
                            ))
                        }
                        Err(i) => self.marked.insert(i, uid.clone()),
                    }
                }
            }
            _ => {}
        }
    }

    /// `deleted_within`'s deadline, with the API unchanged until `at`.
    fn deadline(&mut self, w: &World, at: Time) {
        let Claim::DeletedWithin {
            pods, taint, to, ..
        } = &self.p.declared.claim
        else {
            return;
        };
        if self.found.is_some() {
            return;
        }
        self.found = overdue(w, pods, taint.as_ref(), *to, at);
    }
}

/// A matching pod still on its node at `at`, later than `to` past a counted taint present there
/// since (or its bind, if later).
fn overdue(
    w: &World,
    pods: &Pattern,
    taint: Option<&TaintFilter>,
    to: Duration,
    at: Time,
) -> Option<String> {
    w.current.values().find_map(|uid| {
        let p = w.objects.get(uid)?;
        let (node, bound) = (p.node.as_ref()?, p.bound_since?);
        if !pods.matches(&p.key) {
            return None;
        }
        let since = w
            .taints
            .get(node)?
            .iter()
            .filter(|(t, _)| counts(taint, t))
            .map(|(_, since)| (*since).max(bound))
            .min()?;
        (at > since.plus(to)).then(|| {
            format!(
                "{} was still on node {node} at {at}, more than {}ms after {since}",
                p.key, to.0
            )
        })
    })
}

/// The kind of an event the controller records, read from its message (the core's wording).
fn event_kind(key: &PodKey, message: &str) -> Option<EventKind> {
    [EventKind::MarkingForDeletion, EventKind::CancellingDeletion]
        .into_iter()
        .find(|kind| {
            EventRecord {
                pod: key.clone(),
                kind: *kind,
            }
            .message()
                == message
        })
}

/// `properties` judged on a run's trace one record at a time, as the run makes them (SCN-5,
/// PROP-2): what it keeps is the API's present and the first sightings the claims read, never
/// the records.
pub struct PropertyCheck {
    judged: Vec<Judged>,
    w: World,
    /// The latest instant the trace has reached (or its header's `end`).
    end: Time,
}

impl PropertyCheck {
    /// The properties' judgement before the first record.
    pub fn new(properties: &[ExpectProperty]) -> PropertyCheck {
        PropertyCheck {
            judged: properties
                .iter()
                .map(|p| Judged {
                    p: p.clone(),
                    found: None,
                    recent: Vec::new(),
                    marked: Vec::new(),
                })
                .collect(),
            w: World::default(),
            end: Time::ZERO,
        }
    }

    /// Reads the next record (nothing to do when no property is stated).
    pub fn record(&mut self, r: &TraceRecord) {
        let (judged, w) = (&mut self.judged, &mut self.w);
        if judged.is_empty() {
            return;
        }
        for j in judged.iter_mut() {
            j.deadline(w, r.t);
        }
        self.end = self.end.max(r.t);
        match &r.event {
            TraceEvent::Header { end: Some(e), .. } => self.end = self.end.max(*e),
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                w.node(r.t, node)
            }
            TraceEvent::NodeDeleted { name, .. } => {
                w.taints.remove(name);
            }
            TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. } => {
                w.pod(r.t, pod)
            }
            TraceEvent::PodDeleted {
                namespace, name, ..
            } => {
                w.current.remove(&PodKey::new(namespace, name));
            }
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                namespace,
                name,
                ..
            } => {
                w.deletes.insert(*id, PodKey::new(namespace, name));
            }
            TraceEvent::Response {
                id, result, uid, ..
            } => {
                let Some(key) = w.deletes.remove(id) else {
                    return;
                };
                let uid = uid.clone().or_else(|| w.current.get(&key).cloned());
                let view = uid.and_then(|u| w.objects.get(&u)).cloned();
                if let (ResponseResult::Ok, Some(p)) = (result, view) {
                    for j in judged.iter_mut() {
                        j.deletion(w, &p, r.t);
                    }
                }
            }
            TraceEvent::Event {
                namespace,
                name,
                message,
                ..
            } => {
                let key = PodKey::new(namespace, name);
                if let Some(kind) = event_kind(&key, message) {
                    for j in judged.iter_mut() {
                        j.event(w, &key, kind, r.t);
                    }
                }
            }
            TraceEvent::ControllerRestarted => w.restarted = true,
            _ => {}
        }
    }

    /// The properties the records read so far break, the trace taken as ended.
    pub fn failures(mut self) -> Vec<Failure> {
        for j in &mut self.judged {
            j.deadline(&self.w, self.end);
        }
        self.judged
            .into_iter()
            .filter_map(|j| {
                let (name, claim) = (&j.p.declared.name, &j.p.declared.claim);
                let message = match (claim.is_safety(), j.found) {
                    (true, Some(why)) => format!("property \"{name}\" violated: {why}"),
                    (false, None) => {
                        format!("property \"{name}\" has no example in this run: {claim}")
                    }
                    _ => return None,
                };
                Some(Failure {
                    line: j.p.line,
                    message,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_kinds_are_read_in_the_cores_wording() {
        let key = PodKey::new("default", "web");
        assert_eq!(
            event_kind(&key, "Marking for deletion Pod default/web"),
            Some(EventKind::MarkingForDeletion)
        );
        assert_eq!(
            event_kind(&key, "Cancelling deletion of Pod default/web"),
            Some(EventKind::CancellingDeletion)
        );
        assert_eq!(
            event_kind(&key, "Cancelling deletion of Pod default/db"),
            None
        );
    }
}
