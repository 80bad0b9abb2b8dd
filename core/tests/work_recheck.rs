//! The fixed design's re-check of a work against the informer caches before it starts and before
//! each request that writes (spec CORE-A14): when it goes on, when it waits for a later deadline,
//! when it is abandoned.

mod common;
use common::web0;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::timed_queue::{Entry, Immediate, TimedQueue, WorkKey, WorkPhase};
use taintcheck_core::work::{self, Recheck};
use taintcheck_core::Context;
use taintcheck_core::{Arrivals, Effect, Note, Outcome, Verb};

fn key() -> WorkKey {
    WorkKey::new(
        Profile::fixed().work_key,
        &PodKey::new("ns", "web-0"),
        &Uid("u1".into()),
    )
}

fn cluster(pod: Option<Pod>, taint: Option<TaintEffect>) -> Cluster {
    Cluster {
        nodes: [(
            "node1".into(),
            Node {
                name: "node1".into(),
                taints: taint.map(|e| Taint::new("t", "", e)).into_iter().collect(),
            },
        )]
        .into(),
        pods: pod.map(|p| (p.key.clone(), p)).into_iter().collect(),
    }
}

/// The verdict of the re-check at 5 s for a work decided for `web-0` incarnation `u1`, with the
/// taint and the pod both first observed at 0.
fn recheck(view: &Cluster) -> Recheck {
    let profile = Profile::fixed();
    let mut queue = TimedQueue::new();
    let id = queue
        .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut vec![])
        .unwrap();
    let mut arrivals = Arrivals::default();
    for node in view.nodes.values() {
        arrivals.node_observed(&node.name, Some(node), Time(0));
    }
    for pod in view.pods.values() {
        arrivals.pod_observed(&pod.key, Some(pod), Time(0));
    }
    work::evaluate(
        queue.work(id).unwrap(),
        Context {
            profile: &profile,
            view,
            arrivals: &arrivals,
            now: Time(5_000),
        },
    )
}

#[test]
fn the_recheck_goes_on_only_while_the_caches_call_for_eviction() {
    let exe = || Some(TaintEffect::NoExecute);
    let here = Some("node1");
    assert_eq!(
        recheck(&cluster(Some(web0("u1", here, None)), exe())),
        Recheck::Due
    );
    assert_eq!(
        recheck(&cluster(Some(web0("u1", here, Some(5))), exe())),
        Recheck::Due,
        "due exactly now"
    );
    assert_eq!(
        recheck(&cluster(Some(web0("u1", here, Some(6))), exe())),
        Recheck::Later(Time(6_000))
    );
    for (why, view) in [
        ("pod gone", cluster(None, exe())),
        ("successor", cluster(Some(web0("u2", here, None)), exe())),
        ("unbound", cluster(Some(web0("u1", None, None)), exe())),
        (
            "node gone",
            cluster(Some(web0("u1", Some("node2"), None)), exe()),
        ),
        ("untainted", cluster(Some(web0("u1", here, None)), None)),
        (
            "only NoSchedule",
            cluster(Some(web0("u1", here, None)), Some(TaintEffect::NoSchedule)),
        ),
    ] {
        assert_eq!(recheck(&view), Recheck::Void, "{why}");
    }
}

/// Applying the re-check when the work starts: a later deadline re-arms the work and its entry
/// (no "Marking for deletion"), a void one abandons it.
#[test]
fn a_work_rechecked_at_its_start_waits_or_ends() {
    let profile = Profile::fixed();
    for (seconds, view_pod) in [(Some(9), true), (None, false)] {
        let view = cluster(
            view_pod.then(|| web0("u1", Some("node1"), seconds)),
            Some(TaintEffect::NoExecute),
        );
        let mut arrivals = Arrivals::default();
        arrivals.node_observed(&"node1".into(), view.nodes.get("node1"), Time(0));
        for pod in view.pods.values() {
            arrivals.pod_observed(&pod.key, Some(pod), Time(0));
        }
        let mut queue = TimedQueue::new();
        let mut out = vec![];
        let id = queue
            .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut out)
            .unwrap();
        assert!(work::start_work(
            &mut queue,
            id,
            Context {
                profile: &profile,
                view: &view,
                arrivals: &arrivals,
                now: Time(1_000),
            },
            &mut out
        ));
        let marked = out.iter().any(|e| matches!(e, Effect::Event(_)));
        assert!(
            !marked,
            "no \"Marking for deletion\" for a work that waits or ends"
        );
        if view_pod {
            assert_eq!(queue.work(id).unwrap().phase, WorkPhase::Armed);
            assert_eq!(queue.work(id).unwrap().fire_at, Time(9_000));
            assert_eq!(queue.entry(&key()), Some(&Entry::Nil { work: Some(id) }));
            assert!(out.contains(&Effect::ArmTimer {
                id: id.timer(),
                fire_at: Time(9_000)
            }));
        } else {
            assert_eq!(
                queue.work(id).unwrap().phase,
                WorkPhase::Finished {
                    outcome: Outcome::Abandoned
                }
            );
            assert!(out
                .iter()
                .any(|e| matches!(e, Effect::Decision(d) if d.note == Note::RecheckAbandoned)));
        }
    }
}

/// Fixed design: a cancel that lands while a read is in flight stops the work before its next
/// request; upstream's flag is read only at the start, so a running work goes on.
#[test]
fn the_cancelled_flag_stops_a_fixed_work_before_its_next_request() {
    let view = cluster(
        Some(web0("u1", Some("node1"), None)),
        Some(TaintEffect::NoExecute),
    );
    let arrivals = Arrivals::default();
    for (profile, stopped) in [(Profile::fixed(), true), (Profile::latest(), false)] {
        let key = WorkKey::new(
            profile.work_key,
            &PodKey::new("ns", "web-0"),
            &Uid("u1".into()),
        );
        let mut queue = TimedQueue::new();
        let mut out = vec![];
        let id = queue
            .add_work(&key, Time(0), Time(0), Immediate::Nil, &mut out)
            .unwrap();
        let cx = |now| Context {
            profile: &profile,
            view: &view,
            arrivals: &arrivals,
            now: Time(now),
        };
        assert!(work::start_work(&mut queue, id, cx(0), &mut out));
        assert!(work::continue_work(&mut queue, id, cx(0), &mut out));
        queue.cancel_work(&key, &profile, &mut out);
        let WorkPhase::Requesting { request, .. } = queue.work(id).unwrap().phase.clone() else {
            panic!("the work reads the pod first");
        };
        assert_eq!(request.verb, Verb::Get);
        let answer =
            taintcheck_core::ApiResult::Pod(std::sync::Arc::new(taintcheck_core::FetchedPod {
                pod: web0("u1", Some("node1"), None),
                version: taintcheck_core::api::ResourceVersion(3),
                disruption_target: false,
            }));
        assert!(work::responded(&mut queue, request.id, answer));
        assert!(work::continue_work(&mut queue, id, cx(1), &mut out));
        let phase = queue.work(id).unwrap().phase.clone();
        let finished = phase
            == WorkPhase::Finished {
                outcome: Outcome::Abandoned,
            };
        assert_eq!(finished, stopped, "{}: {phase:?}", profile.name);
    }
}
