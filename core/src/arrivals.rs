//! The fixed design's arrival record: when the controller first observed each NoExecute taint
//! on each node, and each pod incarnation bound to its node, continuously since. Kept by the
//! informer event handlers (they see every change, so a taint removed and re-added between two
//! node updates still restarts its clock) and read by the deadline computation and the re-check,
//! which derive the earliest legal eviction from it (spec CORE-S9, PROFILE-10). Upstream keeps
//! nothing of the kind: its deadline is the first decision's `now + m` (N9, T2, T3).

use super::timed_queue::{AsKey, KeyView, WorkKey};
use crate::api::{Node, NodeName, Pod, PodKey, Taint, Uid};
use crate::matching::{self, is_no_execute};
use crate::small_map::SmallMap;
use crate::time::Time;
use smallvec::SmallVec;

/// The representative of instants no decision tells apart ([`Arrivals::canonicalize`]): earlier
/// than any instant observed, so that `max` with it is the other instant.
const LONG_AGO: Time = Time(i64::MIN);

/// Arrival instants as observed by the controller's informer handlers. Spec: CORE-S9.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Arrivals {
    /// Per node, its NoExecute taints in node order, each with the instant it was first observed.
    taints: SmallMap<NodeName, Vec<(Taint, Time)>>,
    /// Per pod name, the bound incarnation observed and since when it was observed bound there.
    /// Keyed as the timed queue keys works by name: in name order, which tells pods apart
    /// sooner than `PodKey`'s namespace-first order (looked up once per pod decision).
    pods: SmallMap<WorkKey, PodArrival>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PodArrival {
    uid: Uid,
    node: NodeName,
    since: Time,
}

impl Arrivals {
    /// A node informer event at `now` (`new` None: deleted). A taint equal to one observed before
    /// keeps its instant (the model's caches use the same identity, MODEL-S3); others start now.
    pub fn node_observed(&mut self, name: &NodeName, new: Option<&Node>, now: Time) {
        let old = self.taints.remove(name).unwrap_or_default();
        let Some(node) = new else {
            return;
        };
        let seen: Vec<(Taint, Time)> = node
            .taints
            .iter()
            .filter(|t| is_no_execute(t))
            .map(|t| {
                let since = old.iter().find(|(o, _)| o == t).map_or(now, |(_, s)| *s);
                (t.clone(), since)
            })
            .collect();
        if !seen.is_empty() {
            self.taints.insert(name.clone(), seen);
        }
    }

    /// A pod informer event at `now` (`new` None: deleted). The same incarnation on the same node
    /// keeps its instant; a new incarnation or node starts now; an unbound pod has none.
    pub fn pod_observed(&mut self, key: &PodKey, new: Option<&Pod>, now: Time) {
        let old = self.pods.remove(&KeyView {
            pod: key,
            uid: None,
        } as &dyn AsKey);
        let Some((pod, node)) = new.and_then(|p| Some((p, p.node_name.as_ref()?))) else {
            return;
        };
        let since = old
            .filter(|o| o.uid == pod.uid && o.node == *node)
            .map_or(now, |o| o.since);
        let arrival = PodArrival {
            uid: pod.uid.clone(),
            node: node.clone(),
            since,
        };
        self.pods.insert(
            KeyView {
                pod: key,
                uid: None,
            }
            .to_key(),
            arrival,
        );
    }

    /// Replaces the instants no later decision can tell apart by one representative, where every
    /// later observation comes no earlier than the instants recorded (the oracle's frontier, whose
    /// components each hold one pod name; [`super::Controller::canonicalize_arrivals`]).
    ///
    /// Why this changes no decision: [`Arrivals::earliest_eviction`] reads a taint's instant
    /// `t` only as `max(t, p)` with the instant `p` of a pod recorded on the taint's node, and
    /// every later observation records an instant no earlier than both. So on a node with pods,
    /// raising each taint to the earliest pod's `p` and then setting that pod's `p` to
    /// [`LONG_AGO`] keeps every `max`; on a node without pods, a taint's `t` only ever meets a
    /// later pod's `p >= t` and becomes [`LONG_AGO`]. Two states that observed a tolerating pod
    /// and its node's taint in either order within the latency bound, at instants with the same
    /// maximum, become equal. Spec: ORACLE-F1.
    pub fn canonicalize(&mut self) {
        if self.is_canonical() {
            return;
        }
        let floors: SmallVec<[Option<Time>; 2]> =
            self.taints.keys().map(|n| self.first_pod_on(n)).collect();
        for (taints, floor) in self.taints.values_mut().zip(floors) {
            for (_, since) in taints.iter_mut() {
                *since = floor.map_or(LONG_AGO, |floor| (*since).max(floor));
            }
        }
        let floors: SmallVec<[Option<Time>; 2]> = self
            .pods
            .values()
            .map(|a| self.first_pod_on(&a.node))
            .collect();
        for (arrival, floor) in self.pods.values_mut().zip(floors) {
            if Some(arrival.since) == floor {
                arrival.since = LONG_AGO;
            }
        }
    }

    /// Whether [`Arrivals::canonicalize`] would leave the record as it is: every node with pods
    /// has one at [`LONG_AGO`], every taint of a node without pods is at [`LONG_AGO`].
    pub(crate) fn is_canonical(&self) -> bool {
        let pods = self
            .pods
            .values()
            .all(|a| self.first_pod_on(&a.node) == Some(LONG_AGO));
        pods && self.taints.iter().all(|(n, taints)| {
            self.first_pod_on(n).is_some() || taints.iter().all(|(_, t)| *t == LONG_AGO)
        })
    }

    /// The earliest instant since which a recorded pod is bound to `node`.
    fn first_pod_on(&self, node: &NodeName) -> Option<Time> {
        let on = self.pods.values().filter(|a| a.node == *node);
        on.map(|a| a.since).min()
    }

    /// Renames every recorded pod incarnation and node (see [`super::Controller::rename`]).
    pub(crate) fn rename(&mut self, r: &impl super::Renaming) {
        self.taints = std::mem::take(&mut self.taints)
            .into_iter()
            .map(|(n, t)| (r.node(&n), t))
            .collect();
        self.pods = std::mem::take(&mut self.pods)
            .into_iter()
            .map(|(key, a)| {
                let uid = r.uid(&a.uid);
                let node = r.node(&a.node);
                let pod = r.key(&key.pod);
                (WorkKey { pod, uid: None }, PodArrival { uid, node, ..a })
            })
            .collect();
    }

    /// The earliest legal eviction of `pod` from its node whose NoExecute taints are `taints`
    /// ([`matching::earliest_eviction`] on the recorded instants). A taint or pod not (or no
    /// longer) recorded counts from `now`, the latest instant it can have arrived: a handler may
    /// act on a listing the informer has since changed, and the re-check then corrects it.
    /// Spec: PROFILE-10.
    pub fn earliest_eviction(
        &self,
        pod: &Pod,
        taints: &[Taint],
        comparison_operators: bool,
        now: Time,
    ) -> Option<Time> {
        let node = pod.node_name.as_ref();
        let recorded = node.and_then(|n| self.taints.get(n));
        let pod_since = self
            .pods
            .get(&KeyView {
                pod: &pod.key,
                uid: None,
            } as &dyn AsKey)
            .filter(|a| a.uid == pod.uid && Some(&a.node) == node)
            .map_or(now, |a| a.since);
        // Both lists are the node's NoExecute taints in node order: look at the same place
        // first.
        let since = |i: usize, t: &Taint| {
            recorded
                .and_then(|r| {
                    r.get(i)
                        .filter(|(o, _)| o == t)
                        .or_else(|| r.iter().find(|(o, _)| o == t))
                })
                .map_or(now, |(_, s)| *s)
        };
        matching::earliest_eviction(
            taints.iter().enumerate().map(|(i, t)| (t, since(i, t))),
            &pod.tolerations,
            pod_since,
            comparison_operators,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{TaintEffect, Toleration};
    use crate::time::Duration;

    fn taint(key: &str) -> Taint {
        Taint::new(key, "", TaintEffect::NoExecute)
    }

    fn node(taints: &[&str]) -> Node {
        Node {
            name: "node1".into(),
            taints: taints.iter().map(|k| taint(k)).collect(),
        }
    }

    fn pod(uid: &str, tolerations: &[(&str, i64)]) -> Pod {
        Pod {
            key: PodKey::new("ns", "p"),
            uid: Uid(uid.into()),
            node_name: Some("node1".into()),
            tolerations: tolerations
                .iter()
                .map(|(k, s)| Toleration::exists(k, Some(TaintEffect::NoExecute), Some(*s)))
                .collect(),
        }
    }

    /// Two taints tolerated for different times, observed at different instants: the deadline is
    /// the earlier of each taint's own `since + s`, not the first decision's `now + m`.
    #[test]
    fn each_taint_counts_from_its_own_arrival() {
        let mut a = Arrivals::default();
        let p = pod("p-1", &[("a", 100), ("b", 10)]);
        a.pod_observed(&p.key, Some(&p), Time(0));
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(1_000));
        a.node_observed(&"node1".into(), Some(&node(&["a", "b"])), Time(50_000));
        let taints = node(&["a", "b"]).taints;
        // Not 1 s + 10 s (the minimum from the first taint) nor 95 s + 10 s (from the decision).
        let due = a.earliest_eviction(&p, &taints, true, Time(95_000));
        assert_eq!(due, Some(Time(50_000).plus(Duration::from_secs(10))));
        let alone = a.earliest_eviction(&p, &taints[..1], true, Time(95_000));
        assert_eq!(alone, Some(Time(1_000).plus(Duration::from_secs(100))));
    }

    /// A taint removed and re-added restarts its clock, however quickly it comes back; the pod's
    /// own arrival bounds every taint's start.
    #[test]
    fn removal_restarts_a_taint_and_pod_arrival_bounds_it() {
        let mut a = Arrivals::default();
        let p = pod("p-1", &[("a", 10)]);
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(0));
        a.pod_observed(&p.key, Some(&p), Time(3_000));
        let taints = node(&["a"]).taints;
        assert_eq!(
            a.earliest_eviction(&p, &taints, true, Time(3_000)),
            Some(Time(13_000))
        );
        a.node_observed(&"node1".into(), Some(&node(&[])), Time(20_000));
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(20_000));
        assert_eq!(
            a.earliest_eviction(&p, &taints, true, Time(20_000)),
            Some(Time(30_000))
        );
        let successor = pod("p-2", &[("a", 10)]);
        assert_eq!(
            a.earliest_eviction(&successor, &taints, true, Time(25_000)),
            Some(Time(35_000)),
            "an unrecorded incarnation counts from now"
        );
    }

    /// The same incarnation observed again on the same node keeps its instant; a new
    /// incarnation of the name, or the pod bound to another node, starts from that event; an
    /// unbound or deleted pod has none (PROFILE-10: a pod's clock starts when it is bound there).
    #[test]
    fn a_pod_keeps_its_instant_only_as_the_same_incarnation_on_the_same_node() {
        let taints = node(&["a"]).taints;
        let due = |a: &Arrivals, p: &Pod| a.earliest_eviction(p, &taints, true, Time(90_000));
        let mut a = Arrivals::default();
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(0));
        let p = pod("p-1", &[("a", 10)]);
        a.pod_observed(&p.key, Some(&p), Time(5_000));
        a.pod_observed(&p.key, Some(&p), Time(7_000));
        assert_eq!(due(&a, &p), Some(Time(15_000)), "seen again: keeps 5 s");
        let successor = pod("p-2", &[("a", 10)]);
        a.pod_observed(&p.key, Some(&successor), Time(8_000));
        assert_eq!(
            due(&a, &successor),
            Some(Time(18_000)),
            "new incarnation: 8 s"
        );
        let mut moved = successor.clone();
        moved.node_name = Some("node2".into());
        a.pod_observed(&p.key, Some(&moved), Time(9_000));
        a.pod_observed(&p.key, Some(&successor), Time(11_000));
        assert_eq!(due(&a, &successor), Some(Time(21_000)), "rebound: 11 s");
        let mut unbound = successor.clone();
        unbound.node_name = None;
        a.pod_observed(&p.key, Some(&unbound), Time(12_000));
        assert_eq!(
            due(&a, &successor),
            Some(Time(100_000)),
            "unbound: from now"
        );
    }

    /// Each taint is found by identity wherever the node lists it: taints recorded in one order
    /// and decided in another keep their own instants.
    #[test]
    fn taints_listed_in_another_order_keep_their_own_instants() {
        let mut a = Arrivals::default();
        let p = pod("p-1", &[("a", 100), ("b", 10)]);
        a.pod_observed(&p.key, Some(&p), Time(0));
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(1_000));
        a.node_observed(&"node1".into(), Some(&node(&["a", "b"])), Time(50_000));
        let swapped = node(&["b", "a"]).taints;
        let due = a.earliest_eviction(&p, &swapped, true, Time(95_000));
        assert_eq!(due, Some(Time(60_000)));
        let due = a.earliest_eviction(&p, &swapped[1..], true, Time(95_000));
        assert_eq!(due, Some(Time(101_000)));
    }

    /// The canonical record gives every decision the uncanonical one gives, after any sequence
    /// of observations of one pod name and two nodes in time order (ORACLE-F1), and merges the
    /// records of a pod and a taint observed in either order at instants with the same maximum.
    #[test]
    fn canonical_records_decide_alike() {
        use proptest::prelude::*;
        let names = ["node1", "node2"];
        let op = (0..3i64, 0..6u8, 0..2usize, 0..4u8);
        proptest!(|(ops in proptest::collection::vec(op, 1..24))| {
            let (mut plain, mut canonical) = (Arrivals::default(), Arrivals::default());
            let mut now = Time(0);
            for (dt, kind, n, arg) in ops {
                now = now.plus(Duration::from_secs(dt));
                let name: NodeName = names[n].into();
                match kind {
                    0..=2 => {
                        let keys = [&["a"][..], &["b"], &["a", "b"], &[]][arg as usize];
                        let node = Node { name: name.clone(), taints: node(keys).taints };
                        plain.node_observed(&name, Some(&node), now);
                        canonical.node_observed(&name, Some(&node), now);
                    }
                    3 => {
                        plain.node_observed(&name, None, now);
                        canonical.node_observed(&name, None, now);
                    }
                    _ => {
                        let mut p = pod(["p-1", "p-2"][arg as usize % 2], &[("a", 10)]);
                        p.node_name = (arg < 3).then_some(name);
                        let p = (kind == 4).then_some(&p);
                        plain.pod_observed(&PodKey::new("ns", "p"), p, now);
                        canonical.pod_observed(&PodKey::new("ns", "p"), p, now);
                    }
                }
                canonical.canonicalize();
                prop_assert!(canonical.is_canonical());
                for uid in ["p-1", "p-2"] {
                    for on in names {
                        for keys in [&["a"][..], &["b"], &["a", "b"]] {
                            let mut p = pod(uid, &[("a", 10), ("b", 3)]);
                            p.node_name = Some(on.into());
                            let taints = node(keys).taints;
                            let later = now.plus(Duration::from_secs(1));
                            prop_assert_eq!(
                                plain.earliest_eviction(&p, &taints, true, later),
                                canonical.earliest_eviction(&p, &taints, true, later)
                            );
                        }
                    }
                }
            }
        });
        let p = pod("p-1", &[("a", 10)]);
        let (mut first, mut second) = (Arrivals::default(), Arrivals::default());
        first.node_observed(&"node1".into(), Some(&node(&["a"])), Time(0));
        first.pod_observed(&p.key, Some(&p), Time(500));
        second.pod_observed(&p.key, Some(&p), Time(0));
        second.node_observed(&"node1".into(), Some(&node(&["a"])), Time(500));
        assert_ne!(first, second);
        first.canonicalize();
        second.canonicalize();
        assert_eq!(first, second);
    }

    /// Renaming (spec MODEL-SYM) carries each recorded instant to the renamed node and pod
    /// incarnation.
    #[test]
    fn rename_carries_the_instants_to_the_new_names() {
        struct Prime;
        impl crate::Renaming for Prime {
            fn key(&self, key: &PodKey) -> PodKey {
                PodKey::new(&key.namespace, &format!("{}'", key.name))
            }
            fn uid(&self, uid: &Uid) -> Uid {
                Uid(format!("{}'", uid.0).into())
            }
            fn node(&self, node: &NodeName) -> NodeName {
                format!("{node}'").as_str().into()
            }
        }
        let mut a = Arrivals::default();
        let p = pod("p-1", &[("a", 10)]);
        a.node_observed(&"node1".into(), Some(&node(&["a"])), Time(0));
        a.pod_observed(&p.key, Some(&p), Time(5_000));
        a.rename(&Prime);
        let renamed = crate::Renaming::pod(&Prime, &p);
        let taints = node(&["a"]).taints;
        let due = a.earliest_eviction(&renamed, &taints, true, Time(90_000));
        assert_eq!(due, Some(Time(15_000)));
        assert_eq!(
            a.earliest_eviction(&p, &taints, true, Time(90_000)),
            Some(Time(100_000)),
            "the old names are gone"
        );
    }
}
