//! The handlers' branches called one at a time on a bare timed queue (semantics §4; spec
//! CORE-A5..CORE-A7, PROFILE-10): which cancels emit "Cancelling deletion", which items are left
//! alone, and how the fixed design moves, keeps or replaces a pod's work.

use super::*;
use crate::api::{Node, TaintEffect, Toleration, Uid};
use crate::arrivals::Arrivals;
use crate::driver::Cluster;
use crate::effect::TimerId;
use crate::shared::Shared;
use crate::time::Duration;

fn taint() -> Taint {
    Taint::new("t", "", TaintEffect::NoExecute)
}

/// Incarnation `uid` of `ns/web-0` on `node1`, tolerating `t` for `seconds`.
fn pod(uid: &str, seconds: i64) -> Pod {
    Pod {
        key: PodKey::new("ns", "web-0"),
        uid: Uid(uid.into()),
        node_name: Some("node1".into()),
        tolerations: vec![Toleration::exists(
            "t",
            Some(TaintEffect::NoExecute),
            Some(seconds),
        )],
    }
}

/// The caches holding `node1` tainted with `t` and the given pods.
fn cluster(pods: &[&Pod]) -> Cluster {
    let mut view = Cluster::default();
    view.nodes.insert(
        "node1".into(),
        Node {
            name: "node1".into(),
            taints: vec![taint()],
        },
    );
    for p in pods {
        view.pods.insert(p.key.clone(), (*p).clone());
    }
    view
}

fn cx<'a>(
    profile: &'a Profile,
    view: &'a Cluster,
    arrivals: &'a Arrivals,
    now: i64,
) -> Context<'a, Cluster> {
    Context {
        profile,
        view,
        arrivals,
        now: Time(now),
    }
}

/// A queue holding a timer entry for `pod` under `profile`'s key, armed at 0 for 100 s.
fn queue_with_timer(profile: &Profile, pod: &Pod) -> Queue {
    let mut q = TimedQueue::new();
    let key = KeyView::new(profile.work_key, &pod.key, &pod.uid);
    q.add_work(&key, Time(0), Time(100_000), Immediate::Nil, &mut vec![]);
    Shared::new(q)
}

fn cancel_events(out: &[Effect]) -> usize {
    out.iter()
        .filter(|e| {
            matches!(
                e,
                Effect::Event(EventRecord {
                    kind: EventKind::CancellingDeletion,
                    ..
                })
            )
        })
        .count()
}

fn item(node: &str) -> PodItem {
    PodItem {
        key: PodKey::new("ns", "web-0"),
        node_name: Some(node.into()),
    }
}

/// §4.1/§4.4: with no NoExecute taint left, each listed pod's work is cancelled with the event
/// whenever the cancel reports (upstream `cancelWorkWithEvent`), also when the cache no longer
/// holds the pod under the upstream profiles' name keys.
#[test]
fn zero_taints_cancel_each_listed_pod_with_the_event() {
    let latest = Profile::latest();
    let listed = pod("u1", 10);
    for view in [cluster(&[&listed]), cluster(&[])] {
        let mut q = queue_with_timer(&latest, &listed);
        let mut out = vec![];
        let arrivals = Arrivals::default();
        let note = node_update_pod(
            &mut q,
            cx(&latest, &view, &arrivals, 5),
            &listed,
            &[],
            Immediate::Nil,
            &mut out,
        );
        assert_eq!(note, None);
        assert!(q.entries().is_empty());
        assert_eq!(cancel_events(&out), 1, "{out:?}");
    }
}

/// Fixed design (UID keys, CORE-A5 `successor-stale-listing`): a zero-taint listing cancels the
/// listed incarnation's work only; with the event while the cache still holds that incarnation,
/// silently once a successor holds the name (the event would name the successor).
#[test]
fn zero_taints_under_uid_keys_cancel_the_listed_incarnation_silently_once_replaced() {
    let fixed = Profile::fixed();
    let listed = pod("u1", 10);
    let successor = pod("u2", 10);
    for (view, events) in [(cluster(&[&listed]), 1), (cluster(&[&successor]), 0)] {
        let mut q = queue_with_timer(&fixed, &listed);
        let kept = KeyView::new(fixed.work_key, &successor.key, &successor.uid);
        q.make_mut()
            .add_work(&kept, Time(0), Time(100_000), Immediate::Nil, &mut vec![]);
        let mut out = vec![];
        let arrivals = Arrivals::default();
        let note = node_update_pod(
            &mut q,
            cx(&fixed, &view, &arrivals, 5),
            &listed,
            &[],
            Immediate::Nil,
            &mut out,
        );
        assert_eq!(note, None);
        let left: Vec<_> = q.entries().keys().collect();
        assert_eq!(
            left,
            [&kept.to_key()],
            "only the listed incarnation's entry goes"
        );
        assert_eq!(cancel_events(&out), events, "{out:?}");
    }
}

/// `handlePodUpdate` at 5 ms for the item `ns/web-0` on `node`, with `node1` tainted.
fn pod_update(
    q: &mut Queue,
    profile: &Profile,
    view: &Cluster,
    node: &str,
) -> (Option<Note>, Vec<Effect>) {
    let arrivals = Arrivals::default();
    let mut tainted = TaintedNodes::default();
    tainted.insert("node1".into(), [taint()].into());
    let mut out = vec![];
    let cx = cx(profile, view, &arrivals, 5);
    let note = handle_pod_update(q, &tainted, cx, &item(node), Immediate::Nil, &mut out);
    (note, out)
}

/// §4.2: a pod bound elsewhere than the item says is left alone (I1); one bound where it says
/// is decided. Under name keys (upstream) the pod's own entry is kept, not cleaned up as a
/// dead incarnation: an existing timer stays (§4.3 step 7).
#[test]
fn pod_update_leaves_a_pod_bound_elsewhere_alone() {
    let latest = Profile::latest();
    let p = pod("u1", 10);
    let view = cluster(&[&p]);
    let mut q = queue_with_timer(&latest, &p);
    let (elsewhere, out) = pod_update(&mut q, &latest, &view, "node2");
    assert_eq!(elsewhere, None);
    assert_eq!(notes(&out), [Note::NotOurNode]);
    let (here, out) = pod_update(&mut q, &latest, &view, "node1");
    let kept = Note::KeptExisting {
        fire_at: Time(100_000),
    };
    assert_eq!(here, Some(kept));
    assert_eq!(cancel_events(&out), 0);
    assert_eq!(q.works().len(), 1);
}

/// A decision that changes nothing (a pod bound elsewhere, a timer kept, a pod tolerating the
/// taint forever with no work to cancel) leaves the queue shared with its other holders: the
/// handlers copy it only to change it. Decisions that change it still do, on the copy alone.
#[test]
fn a_decision_that_changes_nothing_leaves_the_queue_shared() {
    let latest = Profile::latest();
    let p = pod("u1", 10);
    let view = cluster(&[&p]);
    let mut q = queue_with_timer(&latest, &p);
    let before = q.clone();
    pod_update(&mut q, &latest, &view, "node2");
    assert!(Shared::ptr_eq(&q, &before), "bound elsewhere");
    pod_update(&mut q, &latest, &view, "node1");
    assert!(Shared::ptr_eq(&q, &before), "timer kept");
    let mut forever = pod("u1", 10);
    forever.tolerations[0].seconds = None;
    let mut empty = Queue::default();
    let untouched = empty.clone();
    let arrivals = Arrivals::default();
    let cx = cx(&latest, &view, &arrivals, 5);
    let note = process_pod_on_node(
        &mut empty,
        cx,
        &forever,
        &[taint()],
        Immediate::Nil,
        &mut vec![],
    );
    assert_eq!(note, Note::ToleratedForever);
    assert!(Shared::ptr_eq(&empty, &untouched), "nothing to cancel");
    let (gone, _) = pod_update(&mut q, &latest, &cluster(&[]), "node1");
    assert_eq!(gone, None);
    assert!(!Shared::ptr_eq(&q, &before), "a cancel copies");
    assert!(q.entries().is_empty());
    assert_eq!(before.works().len(), 1, "the other holder keeps its timer");
}

/// §4.2: a pod gone from the cache cancels its work, with the event when the cancel reports.
#[test]
fn pod_update_of_a_gone_pod_cancels_with_the_event() {
    let latest = Profile::latest();
    let p = pod("u1", 10);
    let mut q = queue_with_timer(&latest, &p);
    let (note, out) = pod_update(&mut q, &latest, &cluster(&[]), "node1");
    assert_eq!(note, None);
    assert!(q.entries().is_empty());
    assert_eq!(cancel_events(&out), 1);
}

/// Fixed design (N5, N6, CANCEL-1): a pod update drops the works of earlier incarnations of the
/// name, silently, and decides the current one.
#[test]
fn fixed_pod_update_drops_dead_incarnations_silently() {
    let fixed = Profile::fixed();
    let dead = pod("u1", 10);
    let current = pod("u2", 10);
    let mut q = queue_with_timer(&fixed, &dead);
    let (note, out) = pod_update(&mut q, &fixed, &cluster(&[&current]), "node1");
    assert_eq!(
        note,
        Some(Note::Scheduled {
            fire_at: Time(10_005)
        })
    );
    let left: Vec<_> = q.entries().keys().collect();
    let key = KeyView::new(fixed.work_key, &current.key, &current.uid).to_key();
    assert_eq!(left, [&key]);
    assert_eq!(cancel_events(&out), 0);
}

fn notes(out: &[Effect]) -> Vec<Note> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Decision(d) => Some(d.note),
            _ => None,
        })
        .collect()
}

/// The fixed design (PROFILE-10) after the arrival record saw `t` on `node1` and `pod` there at
/// 0: the deadline is 0 + its toleration.
fn fixed_decision(q: &mut Queue, p: &Pod, now: i64, out: &mut Vec<Effect>) -> Note {
    let fixed = Profile::fixed();
    let view = cluster(&[p]);
    let mut arrivals = Arrivals::default();
    arrivals.node_observed(&"node1".into(), view.nodes.get("node1"), Time(0));
    arrivals.pod_observed(&p.key, Some(p), Time(0));
    process_pod_on_node(
        q,
        cx(&fixed, &view, &arrivals, now),
        p,
        &[taint()],
        Immediate::Nil,
        out,
    )
}

/// Fixed design: an armed work due at the recomputed deadline is kept untouched; one due at
/// another instant is moved there, earlier or later (T2, N9 fixed).
#[test]
fn fixed_keeps_an_armed_work_on_time_and_moves_it_otherwise() {
    let mut q = Queue::default();
    let mut out = vec![];
    let first = fixed_decision(&mut q, &pod("u1", 10), 1_000, &mut out);
    assert_eq!(
        first,
        Note::Scheduled {
            fire_at: Time(10_000)
        }
    );
    out.clear();
    let same = fixed_decision(&mut q, &pod("u1", 10), 2_000, &mut out);
    assert_eq!(
        same,
        Note::KeptExisting {
            fire_at: Time(10_000)
        }
    );
    assert_eq!(notes(&out), [same], "no timer effect: {out:?}");
    out.clear();
    let longer = fixed_decision(&mut q, &pod("u1", 30), 3_000, &mut out);
    assert_eq!(
        longer,
        Note::Rescheduled {
            fire_at: Time(30_000)
        }
    );
    assert_eq!(
        out[0],
        Effect::ArmTimer {
            id: TimerId(0),
            fire_at: Time(30_000)
        }
    );
}

/// Fixed design: a running work is left to its re-check (kept, no second work); a cancelled or
/// finished one no longer evicts, so a new work replaces its entry, due at once when the
/// deadline has passed.
#[test]
fn fixed_replaces_a_cancelled_or_finished_work_and_keeps_a_running_one() {
    let p = pod("u1", 10);
    let finished = WorkPhase::Finished {
        outcome: crate::timed_queue::Outcome::Failed,
    };
    for (cancelled, phase, replaced) in [
        (false, WorkPhase::Spawned, false),
        (true, WorkPhase::Spawned, true),
        (false, finished.clone(), true),
        (true, finished, true),
    ] {
        let mut q = Queue::default();
        let mut out = vec![];
        fixed_decision(&mut q, &p, 0, &mut out);
        let old = q.works().keys().next().copied().unwrap();
        let mut work = q.make_mut().work_mut(old).unwrap();
        work.phase = phase.clone();
        work.cancelled = cancelled;
        drop(work);
        out.clear();
        let note = fixed_decision(&mut q, &p, 20_000, &mut out);
        let case = format!("cancelled {cancelled}, {phase:?}");
        let now_work = q.entries().values().next().and_then(Entry::work);
        if replaced {
            assert_eq!(note, Note::EvictNow, "{case}");
            assert_ne!(now_work, Some(old), "{case}");
            assert_eq!(q.works().len(), 2, "{case}");
        } else {
            assert_eq!(
                note,
                Note::KeptExisting {
                    fire_at: Time(10_000)
                },
                "{case}"
            );
            assert_eq!(now_work, Some(old), "{case}");
            assert_eq!(q.works().len(), 1, "{case}");
        }
    }
    let mut q = Queue::default();
    let early = fixed_decision(&mut q, &p, 3_000, &mut vec![]);
    let due = Time(0).plus(Duration::from_secs(10));
    assert_eq!(early, Note::Scheduled { fire_at: due });
}
