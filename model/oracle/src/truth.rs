//! The API server's state as the trace shows it, with the instants explanations need: since when
//! each NoExecute taint has been on its node and since when each pod has been bound to its node.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use taintcheck_core::api::{
    Name, Node, NodeName, Pod, PodKey, ResourceVersion, Taint, TaintEffect,
};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::matching::{earliest_eviction, used_time, TolerationTime};
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::trace::Clock;

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
    /// Per node, its NoExecute taints in node order, each with since when it has been present
    /// without interruption. A taint is the whole object (an equal taint is the same taint), as
    /// in the core's arrival record (CORE-S9) and the model's caches (MODEL-S3).
    since: BTreeMap<NodeName, Vec<(Taint, Time)>>,
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
        // Looked up in a map, not by scanning `old` for each taint: a node's taint list is bounded
        // only by the object's size, and a scan costs taints² per update. SipHash, not Fx: the
        // keys come from the trace.
        let mut first_seen: HashMap<&Taint, Time> = HashMap::with_capacity(old.len());
        for (taint, since) in &old {
            first_seen.entry(taint).or_insert(*since);
        }
        let since: Vec<(Taint, Time)> = node
            .no_execute_taints()
            .map(|taint| (taint.clone(), first_seen.get(taint).copied().unwrap_or(t)))
            .collect();
        if !since.is_empty() {
            self.cleared.remove(&node.name);
            self.since.insert(node.name.clone(), since);
        } else if !old.is_empty() {
            self.cleared.insert(node.name.clone(), t);
        }
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

    /// What the pod's tolerations say about its node's NoExecute taints now, for messages: the
    /// taint that sets the pod's earliest legal eviction (EVICT-2), computed by the core's
    /// [`earliest_eviction`] (MATCH-6) for each taint, whose minimum is the pod's. On a tie an
    /// untolerated taint is named before a tolerated one, then node order decides.
    pub fn why(&self, key: &PodKey, comparison_operators: bool) -> Why {
        let Some(p) = self.pods.get(key) else {
            return Why::Gone;
        };
        let Some(node) = p.pod.node_name.clone() else {
            return Why::Unbound;
        };
        if !self.nodes.contains_key(&node) {
            return Why::NoNode { node };
        }
        let Some(taints) = self.since.get(&node) else {
            let cleared = self.cleared.get(&node).copied();
            return Why::NoTaints { node, cleared };
        };
        let tolerations = &p.pod.tolerations;
        let binding = taints
            .iter()
            .filter_map(|(taint, since)| {
                let at = earliest_eviction(
                    [(taint, *since)],
                    tolerations,
                    p.bound_since,
                    comparison_operators,
                )?;
                let tolerated = match used_time(taint, tolerations, comparison_operators) {
                    Some(TolerationTime::After(d)) => Some(d),
                    _ => None,
                };
                Some((at, tolerated, taint, *since))
            })
            .min_by_key(|(at, tolerated, ..)| (*at, tolerated.is_some()));
        let Some((at, tolerated, taint, since)) = binding else {
            return Why::Forever { node };
        };
        let from = if since >= p.bound_since {
            From::Taint(since)
        } else {
            From::Bound(p.bound_since)
        };
        let taint = taint.key.clone();
        match tolerated {
            Some(seconds) => Why::Tolerates {
                node,
                taint,
                seconds,
                from,
                at,
            },
            None => Why::Untolerated {
                node,
                taint,
                from,
                at,
            },
        }
    }
}

impl Truth {
    /// The uid of the pod called `key`, if the API server has it (the tests read it).
    #[cfg(test)]
    pub fn uid(&self, key: &PodKey) -> Option<&taintcheck_core::api::Uid> {
        self.pods.get(key).map(|p| &p.pod.uid)
    }
}

/// Since when a toleration clock runs: the taint appeared, or the pod came to the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    Taint(Time),
    Bound(Time),
}

/// A pod's situation, in the words of an explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The API server no longer has the pod.
    Gone,
    /// The pod is not bound to a node.
    Unbound,
    /// The pod's node does not exist.
    NoNode {
        /// The node the pod is bound to.
        node: NodeName,
    },
    /// `cleared`: when its last NoExecute taint went away, if the trace shows it.
    NoTaints {
        /// The node the pod is bound to.
        node: NodeName,
        /// When the node's last NoExecute taint went away; `None` if the trace does not show it.
        cleared: Option<Time>,
    },
    /// The earliest legal eviction `at` is set by `taint`, which the pod does not tolerate.
    Untolerated {
        /// The node the pod is bound to.
        node: NodeName,
        /// The NoExecute taint's key the pod does not tolerate.
        taint: Name,
        /// Since when the toleration clock runs: the taint appeared, or the pod came to the node.
        from: From,
        /// The earliest instant a legal behaviour may evict the pod.
        at: Time,
    },
    /// Every NoExecute taint of the node is tolerated forever.
    Forever {
        /// The node the pod is bound to.
        node: NodeName,
    },
    /// The earliest legal eviction `at` is set by `taint`, tolerated for `seconds`.
    Tolerates {
        /// The node the pod is bound to.
        node: NodeName,
        /// The NoExecute taint's key that sets the earliest legal eviction.
        taint: Name,
        /// How long the pod tolerates the taint.
        seconds: Duration,
        /// Since when the toleration clock runs.
        from: From,
        /// The earliest instant a legal behaviour may evict the pod.
        at: Time,
    },
}

impl Why {
    /// The earliest instant the controller may delete the pod for this reason, if any.
    pub fn earliest(&self) -> Option<Time> {
        match self {
            Why::Untolerated { at, .. } | Why::Tolerates { at, .. } => Some(*at),
            _ => None,
        }
    }

    /// The taint whose clock an eviction runs on and the span from its first observable instant
    /// to `t`, when the taint (not the binding) started it: `128 s after … appeared`.
    pub fn since_taint(&self, t: Time) -> Option<(&Name, Duration)> {
        match self {
            Why::Untolerated {
                taint,
                from: From::Taint(since),
                ..
            }
            | Why::Tolerates {
                taint,
                from: From::Taint(since),
                ..
            } => Some((taint, Duration(t.millis() - since.millis()))),
            _ => None,
        }
    }

    /// This explanation with its instants shown by `clock`.
    pub fn shown(&self, clock: Clock) -> WhyText<'_> {
        WhyText { why: self, clock }
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shown(Clock::default()).fmt(f)
    }
}

/// A [`Why`] rendered with a trace's [`Clock`].
pub struct WhyText<'a> {
    why: &'a Why,
    clock: Clock,
}

impl fmt::Display for WhyText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clock = self.clock;
        let from = |from: &From| match from {
            From::Taint(t) => format!("from {}, when the taint was first observable", clock.at(*t)),
            From::Bound(t) => format!("from {}, when it was bound to the node", clock.at(*t)),
        };
        match self.why {
            Why::Gone => f.write_str("the API server no longer has it"),
            Why::Unbound => f.write_str("it is not bound to a node"),
            Why::NoNode { node } => write!(f, "its node {node} does not exist"),
            Why::NoTaints { node, .. } => write!(f, "node {node} has no NoExecute taint"),
            Why::Untolerated {
                node,
                taint,
                from: since,
                ..
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
    use taintcheck_core::api::{Toleration, Uid};

    fn taint(spec: &str) -> Taint {
        let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
        Taint::new(key, value, TaintEffect::NoExecute)
    }

    fn node(taints: &[&str]) -> Arc<Node> {
        Arc::new(Node {
            name: "n1".into(),
            taints: taints.iter().map(|k| taint(k)).collect(),
        })
    }

    fn pod(tolerations: &[(&str, Option<i64>)]) -> Arc<Pod> {
        Arc::new(Pod {
            key: PodKey::new("default", "web-0"),
            uid: Uid("u1".into()),
            node_name: Some("n1".into()),
            tolerations: tolerations
                .iter()
                .map(|(k, s)| Toleration::exists(k, Some(TaintEffect::NoExecute), *s))
                .collect(),
        })
    }

    fn key() -> PodKey {
        PodKey::new("default", "web-0")
    }

    /// The instant each NoExecute taint of `n1` has been present since, in node order.
    fn since(t: &Truth) -> Vec<(String, Time)> {
        t.since["n1"]
            .iter()
            .map(|(taint, s)| (taint.to_string(), *s))
            .collect()
    }

    #[test]
    fn a_taint_keeps_its_instant_until_it_changes_or_goes() {
        let mut t = Truth::default();
        t.put_node(node(&["a"]), Time(1_000));
        t.put_node(node(&["a", "b"]), Time(2_000));
        assert_eq!(
            since(&t),
            [
                ("a:NoExecute".into(), Time(1_000)),
                ("b:NoExecute".into(), Time(2_000))
            ]
        );
        // Removed and re-added, or given another value: a new taint, as the core records it.
        t.put_node(node(&["b=x"]), Time(3_000));
        t.put_node(node(&["a", "b=x"]), Time(4_000));
        assert_eq!(
            since(&t),
            [
                ("a:NoExecute".into(), Time(4_000)),
                ("b=x:NoExecute".into(), Time(3_000))
            ]
        );
        t.put_node(node(&[]), Time(5_000));
        t.put_pod(pod(&[]), PodStatus::default(), Time(6_000));
        t.put_node(node(&[]), Time(7_000));
        assert_eq!(
            t.why(&key(), false),
            Why::NoTaints {
                node: "n1".into(),
                cleared: Some(Time(5_000))
            }
        );
    }

    /// Taint a since 0 s tolerated 100 s, taint b since 50 s tolerated 60 s: the earliest legal
    /// eviction is 100 s (a's own), not 110 s (b's shorter toleration from b's arrival).
    #[test]
    fn the_earliest_eviction_is_the_cores() {
        let mut t = Truth::default();
        let p = pod(&[("a", Some(100)), ("b", Some(60))]);
        t.put_pod(p.clone(), PodStatus::default(), Time(0));
        t.put_node(node(&["a"]), Time(0));
        t.put_node(node(&["a", "b"]), Time(50_000));
        let why = t.why(&key(), false);
        let core = earliest_eviction(
            [(&taint("a"), Time(0)), (&taint("b"), Time(50_000))],
            &p.tolerations,
            Time(0),
            false,
        );
        assert_eq!(core, Some(Time(100_000)));
        assert_eq!(why.earliest(), core);
        assert_eq!(
            why.to_string(),
            "it tolerates a for 100 s from 0.000s, when the taint was first observable"
        );
    }

    /// An untolerated taint that arrives after a tolerated one's clock would have run out does
    /// not move the earliest eviction later; one that arrives first is named.
    #[test]
    fn an_untolerated_taint_is_named_only_when_it_sets_the_instant() {
        let mut t = Truth::default();
        t.put_pod(pod(&[("a", Some(10))]), PodStatus::default(), Time(0));
        t.put_node(node(&["a"]), Time(0));
        t.put_node(node(&["a", "c"]), Time(50_000));
        let why = t.why(&key(), false);
        assert_eq!(why.earliest(), Some(Time(10_000)));
        assert_eq!(
            why.to_string(),
            "it tolerates a for 10 s from 0.000s, when the taint was first observable"
        );
        // a goes and comes back: its clock restarts, and c, present since 50 s, sets the instant.
        t.put_node(node(&["c"]), Time(60_000));
        t.put_node(node(&["c", "a"]), Time(61_000));
        let why = t.why(&key(), false);
        assert_eq!(why.earliest(), Some(Time(50_000)));
        assert_eq!(
            why.to_string(),
            "it does not tolerate c:NoExecute on node n1 (from 50.000s, when the taint was first observable)"
        );
    }

    #[test]
    fn why_names_the_binding_taint_and_its_clock() {
        let mut t = Truth::default();
        t.put_pod(
            pod(&[("a", Some(300)), ("b", Some(60))]),
            PodStatus::default(),
            Time(0),
        );
        t.put_node(node(&["a", "b"]), Time(2_000));
        let why = t.why(&key(), false);
        assert_eq!(why.earliest(), Some(Time(62_000)));
        assert_eq!(
            why.to_string(),
            "it tolerates b for 60 s from 2.000s, when the taint was first observable"
        );
        // Bound after the taints arrived: the clock runs from the binding.
        t.put_pod(
            Arc::new(Pod {
                uid: Uid("u2".into()),
                ..(*pod(&[("a", Some(300)), ("b", Some(60))])).clone()
            }),
            PodStatus::default(),
            Time(7_000),
        );
        let why = t.why(&key(), false);
        assert_eq!(why.earliest(), Some(Time(67_000)));
        assert_eq!(
            why.to_string(),
            "it tolerates b for 60 s from 7.000s, when it was bound to the node"
        );
        t.put_pod(
            pod(&[("a", None), ("b", None)]),
            PodStatus::default(),
            Time(8_000),
        );
        assert_eq!(t.why(&key(), false), Why::Forever { node: "n1".into() });
    }

    /// The accessors answer from the stored state; a removed node takes its taints' instants
    /// with it, and a removed pod is gone.
    #[test]
    fn stored_objects_are_read_back_and_removed() {
        let mut t = Truth::default();
        let p = pod(&[]);
        t.put_pod(p.clone(), PodStatus::default(), Time(0));
        assert_eq!(t.pod(&key()), Some(&p));
        assert_eq!(t.uid(&key()), Some(&Uid("u1".into())));
        t.put_node(node(&["a"]), Time(1_000));
        assert_eq!(t.why(&key(), false).earliest(), Some(Time(1_000)));
        assert_eq!(t.remove_node("n1"), Some(node(&["a"])));
        assert_eq!(t.why(&key(), false), Why::NoNode { node: "n1".into() });
        t.put_node(node(&[]), Time(2_000));
        assert_eq!(
            t.why(&key(), false),
            Why::NoTaints {
                node: "n1".into(),
                cleared: None
            }
        );
        assert_eq!(t.remove_pod(&key()).map(|r| r.pod), Some(p));
        assert!(t.pod(&key()).is_none() && t.uid(&key()).is_none());
        assert_eq!(t.why(&key(), false), Why::Gone);
    }

    /// A pod's toleration clock starts when this incarnation came to this node; a terminating
    /// or DisruptionTarget status, once seen, stays with the incarnation (not with the name).
    #[test]
    fn binding_and_status_belong_to_the_incarnation() {
        let status = |version, terminating, disruption_target| PodStatus {
            version: ResourceVersion(version),
            terminating,
            disruption_target,
        };
        let mut t = Truth::default();
        let p = pod(&[("a", Some(100))]);
        t.put_pod(p.clone(), PodStatus::default(), Time(1_000));
        t.put_pod(p.clone(), status(2, true, false), Time(5_000));
        let stored = &t.pods[&key()];
        assert_eq!(stored.bound_since, Time(1_000));
        assert!(stored.terminating && !stored.disruption_target);
        t.put_pod(p.clone(), status(3, false, true), Time(6_000));
        let stored = &t.pods[&key()];
        assert!(stored.terminating && stored.disruption_target);
        assert_eq!(stored.version, ResourceVersion(3));
        let moved = Arc::new(Pod {
            node_name: Some("n2".into()),
            ..(*p).clone()
        });
        t.put_pod(moved.clone(), status(4, false, false), Time(7_000));
        let stored = &t.pods[&key()];
        assert_eq!(stored.bound_since, Time(7_000));
        assert!(stored.terminating && stored.disruption_target);
        let next = Arc::new(Pod {
            uid: Uid("u2".into()),
            ..(*moved).clone()
        });
        t.put_pod(next, status(5, false, false), Time(8_000));
        let stored = &t.pods[&key()];
        assert_eq!(stored.bound_since, Time(8_000));
        assert!(!stored.terminating && !stored.disruption_target);
    }

    /// How long after the taint's arrival an instant is, when the taint started the clock.
    #[test]
    fn since_taint_counts_from_the_taint_only() {
        let mut t = Truth::default();
        t.put_pod(pod(&[("a", Some(100))]), PodStatus::default(), Time(0));
        t.put_node(node(&["a"]), Time(10_000));
        let why = t.why(&key(), false);
        assert_eq!(
            why.since_taint(Time(138_000)),
            Some((&Name::from("a"), Duration(128_000)))
        );
        t.put_pod(
            Arc::new(Pod {
                uid: Uid("u2".into()),
                ..(*pod(&[("a", Some(100))])).clone()
            }),
            PodStatus::default(),
            Time(20_000),
        );
        assert_eq!(t.why(&key(), false).since_taint(Time(138_000)), None);
    }

    #[test]
    fn seconds_text_is_short() {
        assert_eq!(seconds_text(Duration(300_000)), "300 s");
        assert_eq!(seconds_text(Duration(1_500)), "1.5 s");
    }
}
