//! The API server's state as the trace shows it, with the instants explanations need: since when
//! each NoExecute taint has been on its node and since when each pod has been bound to its node.

use crate::api::{Name, Node, NodeName, Pod, PodKey, ResourceVersion, TaintEffect, Uid};
use crate::fx::FxBuild;
use crate::matching::{first_tolerating, verdict, TolerationTime, Verdict};
use crate::time::{Duration, Time};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// A pod in the API server and since when it has been on its node.
#[derive(Clone, Debug)]
pub struct TruePod {
    pub pod: Arc<Pod>,
    /// When this incarnation was bound to its current node (or created).
    pub bound_since: Time,
    /// Its `deletionTimestamp` is set (a graceful delete is under way).
    pub terminating: bool,
    /// The resourceVersion of the trace line that stored it.
    pub version: ResourceVersion,
    /// Its status has the taint manager's `DisruptionTarget` condition.
    pub disruption_target: bool,
}

/// What a pod line says besides the object.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodStatus {
    pub version: ResourceVersion,
    pub terminating: bool,
    pub disruption_target: bool,
}

/// The API state and its history of taints.
#[derive(Clone, Debug, Default)]
pub struct Truth {
    pub nodes: BTreeMap<NodeName, Arc<Node>>,
    /// Looked up on nearly every line and never iterated, so hashed.
    pub pods: HashMap<PodKey, TruePod, FxBuild>,
    /// Per node, per NoExecute taint key: since when it has been present without interruption.
    since: BTreeMap<NodeName, BTreeMap<Name, Time>>,
    /// Per node: when its last NoExecute taint went away (while it has none).
    cleared: BTreeMap<NodeName, Time>,
}

impl Truth {
    pub fn pod(&self, key: &PodKey) -> Option<&Arc<Pod>> {
        self.pods.get(key).map(|p| &p.pod)
    }

    /// Stores a node as of `t`, keeping the first instant of each NoExecute taint.
    pub fn put_node(&mut self, node: Arc<Node>, t: Time) {
        let old = self.since.remove(&node.name).unwrap_or_default();
        if node.no_execute_taints().next().is_some() {
            self.cleared.remove(&node.name);
        } else if !old.is_empty() {
            self.cleared.insert(node.name.clone(), t);
        }
        let since = node
            .no_execute_taints()
            .map(|taint| {
                let first = old.get(&taint.key).copied().unwrap_or(t);
                (taint.key.clone(), first)
            })
            .collect();
        self.since.insert(node.name.clone(), since);
        self.nodes.insert(node.name.clone(), node);
    }

    pub fn remove_node(&mut self, name: &str) -> Option<Arc<Node>> {
        self.since.remove(name);
        self.cleared.remove(name);
        self.nodes.remove(name)
    }

    /// Stores a pod as of `t`; a new incarnation or a new node restarts `bound_since`. A status
    /// condition, like `deletionTimestamp`, stays with the incarnation once set.
    pub fn put_pod(&mut self, pod: Arc<Pod>, status: PodStatus, t: Time) {
        let bound_since = match self.pods.get(&pod.key) {
            Some(old) if old.pod.uid == pod.uid && old.pod.node_name == pod.node_name => {
                old.bound_since
            }
            _ => t,
        };
        let same = self.pods.get(&pod.key).filter(|old| old.pod.uid == pod.uid);
        let terminating = status.terminating || same.is_some_and(|old| old.terminating);
        let disruption_target =
            status.disruption_target || same.is_some_and(|old| old.disruption_target);
        self.pods.insert(
            pod.key.clone(),
            TruePod {
                pod,
                bound_since,
                terminating,
                version: status.version,
                disruption_target,
            },
        );
    }

    pub fn remove_pod(&mut self, key: &PodKey) -> Option<TruePod> {
        self.pods.remove(key)
    }

    /// Since when the NoExecute taint `key` has been on `node`.
    pub fn taint_since(&self, node: &str, key: &str) -> Option<Time> {
        self.since.get(node)?.get(key).copied()
    }

    /// When the node's last NoExecute taint went away, if it has none now.
    pub fn cleared(&self, node: &str) -> Option<Time> {
        self.cleared.get(node).copied()
    }

    /// What the pod's tolerations say about its node's NoExecute taints now, for messages.
    /// Computed with [`crate::matching`], the single source of every match decision.
    pub fn why(&self, key: &PodKey, comparison_operators: bool) -> Why {
        let Some(p) = self.pods.get(key) else {
            return Why::Gone;
        };
        let Some(node_name) = p.pod.node_name.clone() else {
            return Why::Unbound;
        };
        let Some(node) = self.nodes.get(&node_name) else {
            return Why::NoNode { node: node_name };
        };
        let taints: Vec<_> = node.no_execute_taints().cloned().collect();
        if taints.is_empty() {
            return Why::NoTaints { node: node_name };
        }
        let tolerations = &p.pod.tolerations;
        let from = |taint: &Name| {
            let since = self.taint_since(&node_name, taint).unwrap_or(p.bound_since);
            if since >= p.bound_since {
                From::Taint(since)
            } else {
                From::Bound(p.bound_since)
            }
        };
        match verdict(&taints, tolerations, comparison_operators) {
            Verdict::Untolerated => {
                let taint = taints
                    .iter()
                    .find(|t| first_tolerating(t, tolerations, comparison_operators).is_none())
                    .map_or_else(|| "".into(), |t| t.key.clone());
                let from = from(&taint);
                Why::Untolerated {
                    node: node_name,
                    taint,
                    from,
                }
            }
            Verdict::Tolerated(TolerationTime::Forever) => Why::Forever { node: node_name },
            Verdict::Tolerated(TolerationTime::After(m)) => {
                // The taint whose used toleration sets the minimum.
                let binding = taints
                    .iter()
                    .filter_map(|t| {
                        let i = first_tolerating(t, tolerations, comparison_operators)?;
                        let s = tolerations[i].seconds?;
                        Some((Duration::from_secs(s.max(0)), t))
                    })
                    .min_by_key(|(d, _)| *d)
                    .map_or_else(|| "".into(), |(_, t)| t.key.clone());
                let from = from(&binding);
                Why::Tolerates {
                    node: node_name,
                    taint: binding,
                    seconds: m,
                    from,
                }
            }
        }
    }

    /// The uid of the pod called `key`, if the API server has it.
    pub fn uid(&self, key: &PodKey) -> Option<&Uid> {
        self.pods.get(key).map(|p| &p.pod.uid)
    }
}

/// Since when a toleration clock runs: the taint appeared, or the pod came to the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    Taint(Time),
    Bound(Time),
}

impl From {
    pub fn at(self) -> Time {
        match self {
            From::Taint(t) | From::Bound(t) => t,
        }
    }
}

/// A pod's situation, in the words of an explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    Gone,
    Unbound,
    NoNode {
        node: NodeName,
    },
    NoTaints {
        node: NodeName,
    },
    Untolerated {
        node: NodeName,
        taint: Name,
        from: From,
    },
    Forever {
        node: NodeName,
    },
    Tolerates {
        node: NodeName,
        taint: Name,
        seconds: Duration,
        from: From,
    },
}

impl Why {
    /// The earliest instant the controller may delete the pod for this reason, if any.
    pub fn earliest(&self) -> Option<Time> {
        match self {
            Why::Untolerated { from, .. } => Some(from.at()),
            Why::Tolerates { seconds, from, .. } => Some(from.at().plus(*seconds)),
            _ => None,
        }
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = |from: &From| match from {
            From::Taint(t) => format!("from {t}, when the taint was first observable"),
            From::Bound(t) => format!("from {t}, when it was bound to the node"),
        };
        match self {
            Why::Gone => f.write_str("the API server no longer has it"),
            Why::Unbound => f.write_str("it is not bound to a node"),
            Why::NoNode { node } => write!(f, "its node {node} does not exist"),
            Why::NoTaints { node } => write!(f, "node {node} has no NoExecute taint"),
            Why::Untolerated {
                node,
                taint,
                from: since,
            } => write!(
                f,
                "it does not tolerate {taint}:{} on node {node} ({})",
                TaintEffect::NoExecute,
                from(since)
            ),
            Why::Forever { node } => {
                write!(
                    f,
                    "it tolerates every NoExecute taint of node {node} forever"
                )
            }
            Why::Tolerates {
                taint,
                seconds,
                from: since,
                ..
            } => write!(
                f,
                "it tolerates {taint} for {} {}",
                seconds_text(*seconds),
                from(since)
            ),
        }
    }
}

/// `300 s`, `1.5 s`.
pub fn seconds_text(d: Duration) -> String {
    let ms = d.millis();
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        let fraction = format!("{}.{:03}", ms / 1000, ms % 1000);
        format!("{} s", fraction.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Taint, Toleration};

    fn node(taints: &[&str]) -> Arc<Node> {
        Arc::new(Node {
            name: "n1".into(),
            taints: taints
                .iter()
                .map(|k| Taint::new(k, "", TaintEffect::NoExecute))
                .collect(),
        })
    }

    fn pod(tolerations: Vec<Toleration>) -> Arc<Pod> {
        Arc::new(Pod {
            key: PodKey::new("default", "web-0"),
            uid: Uid("u1".into()),
            node_name: Some("n1".into()),
            tolerations,
        })
    }

    #[test]
    fn taint_since_survives_unrelated_changes_and_restarts_after_removal() {
        let mut t = Truth::default();
        t.put_node(node(&["a"]), Time(1_000));
        t.put_node(node(&["a", "b"]), Time(2_000));
        assert_eq!(t.taint_since("n1", "a"), Some(Time(1_000)));
        assert_eq!(t.taint_since("n1", "b"), Some(Time(2_000)));
        t.put_node(node(&["b"]), Time(3_000));
        t.put_node(node(&["a", "b"]), Time(4_000));
        assert_eq!(t.taint_since("n1", "a"), Some(Time(4_000)));
    }

    #[test]
    fn why_names_the_binding_taint_and_its_clock() {
        let mut t = Truth::default();
        t.put_pod(
            pod(vec![
                Toleration::exists("a", Some(TaintEffect::NoExecute), Some(300)),
                Toleration::exists("b", Some(TaintEffect::NoExecute), Some(60)),
            ]),
            PodStatus::default(),
            Time(0),
        );
        t.put_node(node(&["a", "b"]), Time(2_000));
        let why = t.why(&PodKey::new("default", "web-0"), false);
        assert_eq!(why.earliest(), Some(Time(62_000)));
        assert_eq!(
            why.to_string(),
            "it tolerates b for 60 s from 2.000s, when the taint was first observable"
        );
        t.put_node(node(&["c"]), Time(5_000));
        let why = t.why(&PodKey::new("default", "web-0"), false);
        assert_eq!(
            why.to_string(),
            "it does not tolerate c:NoExecute on node n1 (from 5.000s, when the taint was first observable)"
        );
    }

    #[test]
    fn seconds_text_is_short() {
        assert_eq!(seconds_text(Duration(300_000)), "300 s");
        assert_eq!(seconds_text(Duration(1_500)), "1.5 s");
    }
}
