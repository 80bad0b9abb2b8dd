//! Upstream's taint-manager unit tests (`taint_manager_test.go` at 1.18, `taint_eviction_test.go`
//! newest), reproduced through the sequential driver under the profile of each test's era, with
//! a snapshot of every effect sequence.
//!
//! The Go tests inject `taintedNodes` directly; here the node is created and handled first (with
//! no pods yet), which leaves the controller in the same state. The Go tests wait 500 ms of wall
//! time for the controller to progress; here the virtual clock advances by the same amount.
//! The driver's API server is the cluster itself, so a DELETE succeeds once (upstream's fake
//! clientset often lacks the pod and records five failing DELETEs; the tests only ask whether a
//! DELETE was sent).

// The case tables are tuples mirroring upstream's anonymous test-case structs.
#![allow(clippy::type_complexity)]

use std::fmt::Write as _;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::driver::Driver;
use taintcheck_core::profile::{DeleteSequence, Profile};
use taintcheck_core::time::Duration;
use taintcheck_core::{Effect, Verb};

/// Upstream `timeForControllerToProgress`.
const PROGRESS: Duration = Duration(500);

/// Upstream `testutil.NewPod(name, node)`: namespace `default`, no tolerations.
fn new_pod(name: &str, node: &str) -> Pod {
    Pod {
        key: PodKey::new("default", name),
        uid: Uid(format!("{name}-uid").into()),
        node_name: (!node.is_empty()).then(|| node.into()),
        tolerations: vec![],
    }
}

/// Upstream `createNoExecuteTaint(i)`: `testTaint{i}=test{i}:NoExecute`.
fn taint(i: u32) -> Taint {
    Taint::new(
        &format!("testTaint{i}"),
        &format!("test{i}"),
        TaintEffect::NoExecute,
    )
}

/// Upstream `addToleration(pod, i, seconds)`: an `Equal` toleration of `taint(i)`, forever when
/// `seconds < 0`.
fn tolerating(mut pod: Pod, i: u32, seconds: i64) -> Pod {
    pod.tolerations = vec![Toleration::equal(
        &format!("testTaint{i}"),
        &format!("test{i}"),
        Some(TaintEffect::NoExecute),
        (seconds >= 0).then_some(seconds),
    )];
    pod
}

/// Upstream `testutil.NewNode` plus `addTaintsToNode`.
fn node(indices: &[u32]) -> Node {
    Node {
        name: "node1".into(),
        taints: indices.iter().map(|&i| taint(i)).collect(),
    }
}

/// Whether a request with `verb` was sent for pod `name` (upstream checks the fake clientset's
/// recorded actions).
fn sent(d: &Driver, verb: Verb, name: &str) -> bool {
    d.log.iter().any(|(_, e)| match e {
        Effect::Api(r) => r.verb == verb && &*r.pod.name == name,
        _ => false,
    })
}

fn sent_any(d: &Driver, verb: Verb) -> bool {
    d.log
        .iter()
        .any(|(_, e)| matches!(e, Effect::Api(r) if r.verb == verb))
}

/// A driver whose controller already holds `taintedNodes` for `taints` (empty: none).
fn with_tainted_nodes(profile: Profile, taints: &[u32]) -> Driver {
    let mut d = Driver::new(profile);
    if !taints.is_empty() {
        d.put_node(node(taints));
        d.settle();
    }
    d
}

/// Append one case's timeline to a snapshot.
fn case(snapshot: &mut String, description: &str, d: &Driver) {
    let _ = writeln!(snapshot, "## {description}\n{}", d.timeline());
}

/// 1.18 `TestCreatePod`.
#[test]
fn create_pod_v1_18() {
    let cases: [(&str, Pod, &[u32], bool); 6] = [
        ("not scheduled - ignore", new_pod("pod1", ""), &[], false),
        (
            "scheduled on untainted Node",
            new_pod("pod1", "node1"),
            &[],
            false,
        ),
        (
            "schedule on tainted Node",
            new_pod("pod1", "node1"),
            &[1],
            true,
        ),
        (
            "schedule on tainted Node with finite toleration",
            tolerating(new_pod("pod1", "node1"), 1, 100),
            &[1],
            false,
        ),
        (
            "schedule on tainted Node with infinite toleration",
            tolerating(new_pod("pod1", "node1"), 1, -1),
            &[1],
            false,
        ),
        (
            "schedule on tainted Node with infinite ivalid toleration",
            tolerating(new_pod("pod1", "node1"), 2, -1),
            &[1],
            true,
        ),
    ];
    let mut snapshot = String::new();
    for (description, pod, taints, expect_delete) in cases {
        let mut d = with_tainted_nodes(Profile::v1_18(), taints);
        d.put_pod(pod);
        d.advance(PROGRESS);
        assert_eq!(sent_any(&d, Verb::Delete), expect_delete, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// Newest `TestCreatePod`: the cases with `PodDisruptionConditions` off run with DELETE only.
#[test]
fn create_pod_latest() {
    let gate_off = Profile {
        delete_sequence: DeleteSequence::DeleteOnly,
        ..Profile::latest()
    };
    let cases: [(&str, Pod, &[u32], bool, bool, Profile); 7] = [
        (
            "not scheduled - ignore",
            new_pod("pod1", ""),
            &[],
            false,
            false,
            gate_off,
        ),
        (
            "scheduled on untainted Node",
            new_pod("pod1", "node1"),
            &[],
            false,
            false,
            gate_off,
        ),
        (
            "schedule on tainted Node",
            new_pod("pod1", "node1"),
            &[1],
            false,
            true,
            gate_off,
        ),
        (
            "schedule on tainted Node; PodDisruptionConditions enabled",
            new_pod("pod1", "node1"),
            &[1],
            true,
            true,
            Profile::latest(),
        ),
        (
            "schedule on tainted Node with finite toleration",
            tolerating(new_pod("pod1", "node1"), 1, 100),
            &[1],
            false,
            false,
            gate_off,
        ),
        (
            "schedule on tainted Node with infinite toleration",
            tolerating(new_pod("pod1", "node1"), 1, -1),
            &[1],
            false,
            false,
            gate_off,
        ),
        (
            "schedule on tainted Node with infinite ivalid toleration",
            tolerating(new_pod("pod1", "node1"), 2, -1),
            &[1],
            false,
            true,
            gate_off,
        ),
    ];
    let mut snapshot = String::new();
    for (description, pod, taints, expect_patch, expect_delete, profile) in cases {
        let mut d = with_tainted_nodes(profile, taints);
        d.put_pod(pod);
        d.advance(PROGRESS);
        assert_eq!(
            sent_any(&d, Verb::PatchDisruptionTarget),
            expect_patch,
            "{description}"
        );
        assert_eq!(sent_any(&d, Verb::Delete), expect_delete, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// `TestDeletePod` (both eras) only sleeps "to see if nothing will panic". Here: a delete event
/// for a pod nobody scheduled work for cancels nothing and emits nothing but is handled.
#[test]
fn delete_pod() {
    for profile in [Profile::v1_18(), Profile::latest()] {
        let mut d = with_tainted_nodes(profile, &[1]);
        d.controller
            .pod_observed(Some(&new_pod("pod1", "node1")), None, d.now);
        d.advance(PROGRESS);
        assert!(d.log.is_empty(), "{}: {}", profile.name, d.timeline());
        assert!(d.controller.is_quiescent());
        assert!(d.controller.timed_queue().entries().is_empty());
    }
}

/// `TestUpdatePod` (1.18; the newest version has the same cases plus a DisruptionTarget one,
/// covered by `create_pod_latest`).
#[test]
fn update_pod_v1_18() {
    let cases: [(&str, Pod, Pod, bool, Duration); 4] = [
        (
            "scheduling onto tainted Node",
            new_pod("pod1", ""),
            new_pod("pod1", "node1"),
            true,
            Duration::ZERO,
        ),
        (
            "scheduling onto tainted Node with toleration",
            tolerating(new_pod("pod1", ""), 1, -1),
            tolerating(new_pod("pod1", "node1"), 1, -1),
            false,
            Duration::ZERO,
        ),
        (
            "removing toleration",
            tolerating(new_pod("pod1", "node1"), 1, 100),
            new_pod("pod1", "node1"),
            true,
            Duration::ZERO,
        ),
        (
            "lengthening toleration shouldn't work",
            tolerating(new_pod("pod1", "node1"), 1, 1),
            tolerating(new_pod("pod1", "node1"), 1, 100),
            true,
            Duration(1_500),
        ),
    ];
    let mut snapshot = String::new();
    for (description, prev, new, expect_delete, additional) in cases {
        let mut d = with_tainted_nodes(Profile::v1_18(), &[1]);
        d.put_pod(prev);
        d.advance(PROGRESS);
        let before = d.log.len();
        d.put_pod(new);
        d.advance(PROGRESS);
        d.advance(additional);
        let deleted_after_update = d.log[before..]
            .iter()
            .any(|(_, e)| matches!(e, Effect::Api(r) if r.verb == Verb::Delete));
        assert_eq!(deleted_after_update, expect_delete, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// The fixed design moves a deadline when a toleration is lengthened (N9, T2): the same update
/// that upstream ignores ("lengthening toleration shouldn't work") postpones the eviction.
#[test]
fn update_pod_lengthening_toleration_works_when_fixed() {
    let mut d = with_tainted_nodes(Profile::fixed(), &[1]);
    d.put_pod(tolerating(new_pod("pod1", "node1"), 1, 1));
    d.advance(PROGRESS);
    d.put_pod(tolerating(new_pod("pod1", "node1"), 1, 100));
    d.advance(Duration(2_000));
    assert!(!sent(&d, Verb::Delete, "pod1"), "{}", d.timeline());
    d.advance(Duration(100_000));
    assert!(sent(&d, Verb::Delete, "pod1"), "{}", d.timeline());
    insta::assert_snapshot!(d.timeline());
}

/// `TestCreateNode` (1.18).
#[test]
fn create_node_v1_18() {
    let cases: [(&str, Pod, &[u32], bool); 3] = [
        (
            "Creating Node matching already assigned Pod",
            new_pod("pod1", "node1"),
            &[],
            false,
        ),
        (
            "Creating tainted Node matching already assigned Pod",
            new_pod("pod1", "node1"),
            &[1],
            true,
        ),
        (
            "Creating tainted Node matching already assigned tolerating Pod",
            tolerating(new_pod("pod1", "node1"), 1, -1),
            &[1],
            false,
        ),
    ];
    let mut snapshot = String::new();
    for (description, pod, taints, expect_delete) in cases {
        let mut d = Driver::new(Profile::v1_18());
        // The pod is in the cache but its add event was consumed before the controller ran.
        d.cluster.pods.insert(pod.key.clone(), pod);
        d.put_node(node(taints));
        d.advance(PROGRESS);
        assert_eq!(sent_any(&d, Verb::Delete), expect_delete, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// `TestDeleteNode` (both eras): the node leaves `taintedNodes`; nothing else happens.
#[test]
fn delete_node() {
    for profile in [Profile::v1_18(), Profile::latest()] {
        let mut d = with_tainted_nodes(profile, &[1]);
        assert!(d.controller.tainted_nodes().contains_key("node1"));
        d.delete_node("node1");
        d.advance(PROGRESS);
        assert!(!d.controller.tainted_nodes().contains_key("node1"));
        assert!(d.log.is_empty(), "{}", d.timeline());
    }
}

/// `TestUpdateNode` (1.18; the newest version adds a DisruptionTarget case and otherwise agrees).
#[test]
fn update_node_v1_18() {
    let mut multi = new_pod("pod1", "node1");
    multi.tolerations = vec![
        Toleration::equal("testTaint1", "test1", Some(TaintEffect::NoExecute), Some(1)),
        Toleration::equal(
            "testTaint2",
            "test2",
            Some(TaintEffect::NoExecute),
            Some(100),
        ),
    ];
    let cases: [(&str, Pod, &[u32], &[u32], bool, Duration); 5] = [
        (
            "Added taint",
            new_pod("pod1", "node1"),
            &[],
            &[1],
            true,
            Duration::ZERO,
        ),
        (
            "Added tolerated taint",
            tolerating(new_pod("pod1", "node1"), 1, 100),
            &[],
            &[1],
            false,
            Duration::ZERO,
        ),
        (
            "Only one added taint tolerated",
            tolerating(new_pod("pod1", "node1"), 1, 100),
            &[],
            &[1, 2],
            true,
            Duration::ZERO,
        ),
        (
            "Taint removed",
            tolerating(new_pod("pod1", "node1"), 1, 1),
            &[1],
            &[],
            false,
            Duration(1_500),
        ),
        (
            "Pod with multiple tolerations are evicted when first one runs out",
            multi,
            &[],
            &[1, 2],
            true,
            Duration(1_500),
        ),
    ];
    let mut snapshot = String::new();
    for (description, pod, old, new, expect_delete, additional) in cases {
        let mut d = Driver::new(Profile::v1_18());
        d.cluster.nodes.insert("node1".into(), node(old));
        d.cluster.pods.insert(pod.key.clone(), pod);
        d.put_node(node(new));
        d.advance(PROGRESS);
        d.advance(additional);
        assert_eq!(sent_any(&d, Verb::Delete), expect_delete, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// `TestUpdateNodeWithMultipleTaints`, added with PR #93722: run under `latest`. Under 1.18.6
/// the last step keeps the timer (T1): the test's own era is after the fix.
#[test]
fn update_node_with_multiple_taints() {
    let mut pod = new_pod("pod1", "node1");
    pod.tolerations = vec![
        Toleration::exists("testTaint1", Some(TaintEffect::NoExecute), None),
        Toleration::exists("testTaint2", Some(TaintEffect::NoExecute), Some(60)),
    ];
    let mut snapshot = String::new();
    for profile in [Profile::latest(), Profile::v1_18()] {
        let mut d = Driver::new(profile);
        d.cluster.pods.insert(pod.key.clone(), pod.clone());
        let queued = |d: &Driver| {
            d.controller
                .timed_queue()
                .entries()
                .values()
                .next()
                .cloned()
        };
        let steps: [(&[u32], bool); 4] =
            [(&[], false), (&[1], false), (&[1, 2], true), (&[1], false)];
        for (i, (taints, expect_queued)) in steps.into_iter().enumerate() {
            d.put_node(node(taints));
            d.settle();
            let is_queued = matches!(queued(&d), Some(taintcheck_core::Entry::Timer { .. }));
            if profile.name == "v1.18" && i == 3 {
                assert!(
                    is_queued,
                    "1.18.6 keeps the timer when the rest is forever (T1)"
                );
            } else {
                assert_eq!(is_queued, expect_queued, "{} step {i}", profile.name);
            }
        }
        assert!(!sent_any(&d, Verb::Delete));
        case(&mut snapshot, profile.name, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// `TestUpdateNodeWithMultiplePods` (1.18): delete times per pod.
#[test]
fn update_node_with_multiple_pods_v1_18() {
    let pods = || {
        vec![
            new_pod("pod1", "node1"),
            tolerating(new_pod("pod2", "node1"), 1, 1),
            tolerating(new_pod("pod3", "node1"), 1, -1),
        ]
    };
    let cases: [(&str, &[u32], &[(&[&str], i64)]); 2] = [
        (
            "Pods with different toleration times are evicted appropriately",
            &[1],
            &[(&["pod1"], 0), (&["pod2"], 1_000)],
        ),
        (
            "Evict all pods not matching all taints instantly",
            &[1, 2],
            &[(&["pod1", "pod2", "pod3"], 0)],
        ),
    ];
    let mut snapshot = String::new();
    for (description, taints, expected) in cases {
        let mut d = Driver::new(Profile::v1_18());
        d.cluster.nodes.insert("node1".into(), node(&[]));
        for pod in pods() {
            d.cluster.pods.insert(pod.key.clone(), pod);
        }
        d.put_node(node(taints));
        d.advance(Duration(3_000));
        let deletes: Vec<(i64, String)> = d
            .log
            .iter()
            .filter_map(|(t, e)| match e {
                Effect::Api(r) if r.verb == Verb::Delete => Some((t.0, r.pod.name.to_string())),
                _ => None,
            })
            .collect();
        let want: Vec<(i64, String)> = expected
            .iter()
            .flat_map(|(names, at)| names.iter().map(move |n| (*at, n.to_string())))
            .collect();
        assert_eq!(deletes, want, "{description}");
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// `TestEventualConsistency` (1.18): the node update misses pod2 (not yet bound); pod2's own
/// update, processed later, reads the updated `taintedNodes`.
#[test]
fn eventual_consistency_v1_18() {
    let cases: [(&str, Option<Pod>, Pod, bool); 4] = [
        (
            "existing pod2 scheduled onto tainted Node",
            Some(new_pod("pod2", "")),
            new_pod("pod2", "node1"),
            true,
        ),
        (
            "existing pod2 with taint toleration scheduled onto tainted Node",
            Some(tolerating(new_pod("pod2", ""), 1, 100)),
            tolerating(new_pod("pod2", "node1"), 1, 100),
            false,
        ),
        (
            "new pod2 created on tainted Node",
            None,
            new_pod("pod2", "node1"),
            true,
        ),
        (
            "new pod2 with tait toleration created on tainted Node",
            None,
            tolerating(new_pod("pod2", "node1"), 1, 100),
            false,
        ),
    ];
    let mut snapshot = String::new();
    for (description, prev, new, expect_delete) in cases {
        let mut d = Driver::new(Profile::v1_18());
        d.cluster.nodes.insert("node1".into(), node(&[]));
        let pod1 = new_pod("pod1", "node1");
        d.cluster.pods.insert(pod1.key.clone(), pod1);
        if let Some(prev) = prev {
            d.put_pod(prev);
        }
        d.put_node(node(&[1]));
        d.advance(PROGRESS);
        assert!(sent(&d, Verb::Delete, "pod1"), "{description}");
        d.put_pod(new);
        d.advance(PROGRESS);
        assert_eq!(
            sent(&d, Verb::Delete, "pod2"),
            expect_delete,
            "{description}"
        );
        case(&mut snapshot, description, &d);
    }
    insta::assert_snapshot!(snapshot);
}

/// Newest `TestPodDeletionEvent`: reason and both messages, word for word.
#[test]
fn pod_deletion_event_latest() {
    let mut d = with_tainted_nodes(Profile::latest(), &[1]);
    let mut pod = tolerating(new_pod("test", "node1"), 1, 100);
    pod.key = PodKey::new("test", "test");
    d.put_pod(pod.clone());
    d.settle();
    d.put_pod(Pod {
        tolerations: vec![],
        ..pod
    });
    d.settle();
    let events: Vec<(String, &str)> = d
        .log
        .iter()
        .filter_map(|(_, e)| match e {
            Effect::Event(ev) => Some((ev.message(), ev.reason())),
            _ => None,
        })
        .collect();
    assert_eq!(
        events,
        [
            (
                "Cancelling deletion of Pod test/test".to_string(),
                "TaintManagerEviction"
            ),
            (
                "Marking for deletion Pod test/test".to_string(),
                "TaintManagerEviction"
            ),
        ]
    );
}

/// `TestGetMinTolerationTime` (same in every era): the core takes toleration times from
/// `matching`, whose `min_toleration_time` is upstream's `getMinTolerationTime`.
#[test]
fn get_min_toleration_time() {
    use taintcheck_core::matching::{min_toleration_time, TolerationTime};
    let after = |ms| TolerationTime::After(Duration(ms));
    let cases: [(&[Option<i64>], TolerationTime); 5] = [
        (&[], after(0)),
        (&[None], TolerationTime::Forever),
        (&[Some(1), Some(2)], after(1_000)),
        (&[Some(1), None], after(1_000)),
        (&[None, Some(1)], after(1_000)),
    ];
    for (seconds, want) in cases {
        assert_eq!(
            min_toleration_time(seconds.iter().copied()),
            want,
            "{seconds:?}"
        );
    }
}
