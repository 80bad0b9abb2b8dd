//! The fixed design's arrival record (spec CORE-S9, PROFILE-10): which informer events restart a
//! taint's or a pod's clock, and how the earliest legal eviction reads it.

use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::time::Time;
use taintcheck_core::Arrivals;

fn taint(key: &str) -> Taint {
    Taint::new(key, "", TaintEffect::NoExecute)
}

fn node(taints: &[Taint]) -> Node {
    Node {
        name: "node1".into(),
        taints: taints.to_vec(),
    }
}

/// `web-0` incarnation `uid` on `node`, tolerating `t` for 10 s and `u` for 100 s.
fn pod(uid: &str, node: &str) -> Pod {
    let tolerate = |key: &str, s| Toleration::exists(key, Some(TaintEffect::NoExecute), Some(s));
    Pod {
        key: PodKey::new("ns", "web-0"),
        uid: Uid(uid.into()),
        node_name: Some(node.into()),
        tolerations: vec![tolerate("t", 10), tolerate("u", 100)],
    }
}

/// The earliest eviction of `pod` at 50 s under `taints`, in seconds.
fn due(arrivals: &Arrivals, pod: &Pod, taints: &[Taint]) -> Option<i64> {
    arrivals
        .earliest_eviction(pod, taints, false, Time(50_000))
        .map(|t| t.0 / 1_000)
}

fn observed(arrivals: &mut Arrivals, at: i64, node: Option<&Node>, pod: Option<&Pod>) {
    let key = PodKey::new("ns", "web-0");
    arrivals.node_observed(&"node1".into(), node, Time(at * 1_000));
    arrivals.pod_observed(&key, pod, Time(at * 1_000));
}

/// A taint seen again keeps the instant it was first seen; one that came later counts from then;
/// NoSchedule taints are not recorded; a deleted node forgets its taints.
#[test]
fn a_taint_keeps_its_first_instant_while_observed() {
    let p = pod("u1", "node1");
    let mut a = Arrivals::default();
    observed(&mut a, 0, Some(&node(&[taint("t")])), Some(&p));
    assert_eq!(due(&a, &p, &[taint("t")]), Some(10));
    let both = [
        taint("t"),
        Taint::new("s", "", TaintEffect::NoSchedule),
        taint("u"),
    ];
    a.node_observed(&"node1".into(), Some(&node(&both)), Time(5_000));
    assert_eq!(due(&a, &p, &[taint("t"), taint("u")]), Some(10));
    assert_eq!(due(&a, &p, &[taint("u")]), Some(105));
    // Listed in another order than observed: each taint still gets its own instant.
    assert_eq!(due(&a, &p, &[taint("u"), taint("t")]), Some(10));
    a.node_observed(&"node1".into(), None, Time(6_000));
    assert_eq!(
        due(&a, &p, &[taint("t")]),
        Some(60),
        "forgotten: counts from now"
    );
}

/// A node whose NoExecute taints are all gone restarts them when they come back.
#[test]
fn an_untainted_node_restarts_its_taints() {
    let p = pod("u1", "node1");
    let mut a = Arrivals::default();
    observed(&mut a, 0, Some(&node(&[taint("t")])), Some(&p));
    a.node_observed(&"node1".into(), Some(&node(&[])), Time(1_000));
    a.node_observed(&"node1".into(), Some(&node(&[taint("t")])), Time(2_000));
    assert_eq!(due(&a, &p, &[taint("t")]), Some(12));
}

/// The same incarnation on the same node keeps its instant; a successor of the name, a move to
/// another node or an unbound pod restarts it.
#[test]
fn a_pod_keeps_its_instant_while_the_same_incarnation_stays_bound_there() {
    let mut a = Arrivals::default();
    let t = [taint("t")];
    let first = pod("u1", "node1");
    observed(&mut a, 0, Some(&node(&t)), Some(&first));
    let node2 = Node {
        name: "node2".into(),
        taints: t.to_vec(),
    };
    a.node_observed(&node2.name, Some(&node2), Time(0));
    a.pod_observed(&first.key, Some(&first), Time(20_000));
    assert_eq!(due(&a, &first, &t), Some(10));

    let successor = pod("u2", "node1");
    assert_eq!(due(&a, &successor, &t), Some(60), "not recorded: from now");
    a.pod_observed(&first.key, Some(&successor), Time(30_000));
    assert_eq!(due(&a, &successor, &t), Some(40));

    let moved = pod("u2", "node2");
    assert_eq!(due(&a, &moved, &t), Some(60), "not recorded there");
    a.pod_observed(&first.key, Some(&moved), Time(35_000));
    assert_eq!(due(&a, &moved, &t), Some(45));

    let unbound = Pod {
        node_name: None,
        ..moved.clone()
    };
    a.pod_observed(&first.key, Some(&unbound), Time(36_000));
    a.pod_observed(&first.key, Some(&moved), Time(40_000));
    assert_eq!(due(&a, &moved, &t), Some(50));
}
