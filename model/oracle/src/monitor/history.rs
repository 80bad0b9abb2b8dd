//! JUST-1 read off a trace: the API's own history, not what the controller received. One etcd
//! numbers every write to every object in one sequence, so the trace's node and pod lines put
//! in resourceVersion order are the API's states in the order it went through them, whatever
//! order the controller received them in (specs/oracle.md, ORACLE-MON).

use super::Sighting;
use std::collections::{BTreeMap, BTreeSet};
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Uid};
use taintcheck_core::matching::exposed;
use taintcheck_formats::trace::{ResponseResult, TraceEvent, TraceRecord};

/// The API's states up to some resourceVersion.
#[derive(Default)]
struct Api {
    nodes: BTreeMap<NodeName, Node>,
    pods: BTreeMap<PodKey, Pod>,
    /// Incarnations that, at some state since their bind, were on a node with a NoExecute taint
    /// they do not tolerate forever (the model's `exposed_in_api`).
    justified: BTreeSet<Uid>,
    /// Incarnations seen bound, and of those the ones whose node had no version in the trace
    /// yet when they were first seen bound: the states before are not in the trace, so the
    /// monitor cannot say they never exposed it.
    bound: BTreeSet<Uid>,
    unknown_past: BTreeSet<Uid>,
    /// Each deleted incarnation (its first Terminating version or its removal): whether its
    /// deletion is accounted for (justified by then, or its past unknown).
    deleted: BTreeMap<Uid, bool>,
}

impl Api {
    fn note(&mut self, pod: &Pod, comparison_operators: bool) {
        if let Some(name) = &pod.node_name {
            if self.bound.insert(pod.uid.clone()) && !self.nodes.contains_key(name) {
                self.unknown_past.insert(pod.uid.clone());
            }
        }
        let node = pod.node_name.as_ref().and_then(|n| self.nodes.get(n));
        if node.is_some_and(|n| exposed(n, pod, comparison_operators)) {
            self.justified.insert(pod.uid.clone());
        }
    }

    fn deletion(&mut self, uid: &Uid) {
        let accounted = self.justified.contains(uid) || self.unknown_past.contains(uid);
        self.deleted.entry(uid.clone()).or_insert(accounted);
    }

    fn apply(&mut self, event: &TraceEvent, comparison_operators: bool) {
        match event {
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                self.nodes.insert(node.name.clone(), node.clone());
                let on_it: Vec<Pod> = self
                    .pods
                    .values()
                    .filter(|p| p.node_name.as_ref() == Some(&node.name))
                    .cloned()
                    .collect();
                for pod in &on_it {
                    self.note(pod, comparison_operators);
                }
            }
            TraceEvent::NodeDeleted { name, .. } => {
                self.nodes.remove(name);
            }
            TraceEvent::PodAdded { pod, .. }
            | TraceEvent::PodModified {
                pod,
                terminating: false,
                ..
            } => {
                self.pods.insert(pod.key.clone(), pod.clone());
                self.note(pod, comparison_operators);
            }
            TraceEvent::PodModified {
                pod,
                terminating: true,
                ..
            } => {
                self.deletion(&pod.uid);
                self.pods.insert(pod.key.clone(), pod.clone());
            }
            TraceEvent::PodDeleted {
                namespace,
                name,
                uid,
                ..
            } => {
                self.deletion(uid);
                self.pods.remove(&PodKey::new(namespace, name));
            }
            _ => {}
        }
    }
}

/// The resourceVersion of a node or pod line.
fn rv(event: &TraceEvent) -> Option<u64> {
    match event {
        TraceEvent::NodeAdded { rv, .. }
        | TraceEvent::NodeModified { rv, .. }
        | TraceEvent::NodeDeleted { rv, .. }
        | TraceEvent::PodAdded { rv, .. }
        | TraceEvent::PodModified { rv, .. }
        | TraceEvent::PodDeleted { rv, .. } => Some(*rv),
        _ => None,
    }
}

/// JUST-1 at each successful DELETE whose answer names the incarnation it deleted, where the
/// API's history shows that incarnation deleted before any state since its bind had it on a
/// node with a NoExecute taint it does not tolerate forever. Read up to the controller's first
/// restart: its new lists show objects as they are, not the versions it missed while down; and
/// only for pods first seen bound once their node's versions are in the trace.
pub(super) fn unjustified_deletions(
    trace: &[TraceRecord],
    comparison_operators: bool,
) -> Vec<Sighting> {
    let known = trace
        .iter()
        .position(|r| matches!(r.event, TraceEvent::ControllerRestarted))
        .unwrap_or(trace.len());
    let mut versions: Vec<(u64, usize)> = trace[..known]
        .iter()
        .enumerate()
        .filter_map(|(i, r)| rv(&r.event).map(|v| (v, i)))
        .collect();
    versions.sort_unstable();
    let mut api = Api::default();
    for (_, i) in versions {
        api.apply(&trace[i].event, comparison_operators);
    }
    let mut deletes = BTreeMap::new();
    let mut out = Vec::new();
    for (i, r) in trace[..known].iter().enumerate() {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: taintcheck_formats::trace::RequestVerb::Delete,
                namespace,
                name,
                ..
            } => {
                deletes.insert(*id, PodKey::new(namespace, name));
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid: Some(uid),
                ..
            } => {
                let Some(key) = deletes.remove(id) else {
                    continue;
                };
                if api.deleted.get(uid) == Some(&false) {
                    out.push(Sighting {
                        property: "JUST-1",
                        line: i + 1,
                        t: r.t,
                        what: format!(
                            "the DELETE of {key} deleted incarnation {uid}, which the API never \
                             showed, since its bind, on a node with a NoExecute taint it does not \
                             tolerate forever"
                        ),
                        pod: key,
                    });
                }
            }
            _ => {}
        }
    }
    out
}
