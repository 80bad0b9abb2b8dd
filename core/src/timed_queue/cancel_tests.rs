//! What `CancelWork` reports and does for each kind of entry and each phase of its work, per
//! cancelled-flag design (semantics §5; spec CORE-A9, CANCEL-1).

use super::*;
use crate::effect::{RequestId, TimerId, Verb};

fn key() -> WorkKey {
    WorkKey {
        pod: PodKey::new("ns", "pod"),
        uid: None,
    }
}

/// A queue holding one work for [`key`]: under a nil entry (`delay` 0, started at once) or a
/// timer entry (`delay` > 0), moved to `phase` as the work steps would.
fn queue_with(delay: i64, phase: Option<WorkPhase>) -> (TimedQueue, WorkId) {
    let mut q = TimedQueue::new();
    let id = q
        .add_work(&key(), Time(0), Time(delay), Immediate::Nil, &mut vec![])
        .unwrap();
    if let Some(phase) = phase {
        q.work_mut(id).unwrap().phase = phase;
    }
    (q, id)
}

/// Work `id` waiting for the answer to `verb`.
fn requesting(id: WorkId, verb: Verb) -> WorkPhase {
    WorkPhase::Requesting {
        attempt: 1,
        request: ApiRequest {
            id: RequestId(id.0),
            verb,
            pod: key().pod,
            uid: None,
            version: None,
        },
        fetched: None,
    }
}

/// Upstream `CancelWork` on a nil entry (1.18 `ab6399db` through `008b3652`, semantics §5.1 and
/// §5.5): it deletes the key and returns false, so no "Cancelling deletion"; the running work is
/// out of reach, so its cancelled flag stays clear and it goes on to evict.
#[test]
fn upstream_cancel_of_a_nil_entry_deletes_it_and_leaves_the_work_running() {
    for profile in [Profile::v1_18(), Profile::latest()] {
        let (mut q, id) = queue_with(0, None);
        let mut out = vec![];
        assert!(
            !q.cancel_work(&key(), &profile, &mut out),
            "{}",
            profile.name
        );
        assert_eq!(q.entry(&key()), None, "{}", profile.name);
        assert!(!q.work(id).unwrap().cancelled, "{}", profile.name);
        assert_eq!(out, [], "{}", profile.name);
    }
}

/// Upstream `CancelWork` on a timer entry whose timer fired: `Timer.Stop()`'s result is ignored,
/// so the cancel is reported even though the work may still delete (N2, semantics §5.1); from
/// `008b3652` the cancelled flag is set too (§5.5), 1.18 has none.
#[test]
fn upstream_cancel_of_a_fired_timer_is_reported_whatever_the_work_does() {
    for (profile, flagged) in [(Profile::v1_18(), false), (Profile::latest(), true)] {
        for verb in [Verb::Get, Verb::PatchDisruptionTarget, Verb::Delete] {
            let (mut q, id) = queue_with(50, None);
            q.work_mut(id).unwrap().phase = requesting(id, verb.clone());
            assert!(q.cancel_work(&key(), &profile, &mut vec![]), "{verb:?}");
            assert_eq!(q.entry(&key()), None, "{verb:?}");
            assert_eq!(q.work(id).unwrap().cancelled, flagged, "{}", profile.name);
        }
    }
}

/// Fixed design (spec profiles.md, `fixed`): a nil entry's running work is reachable, so
/// cancelling flags it and reports the cancel when the flag stops it before its DELETE (its
/// start, or its next request).
#[test]
fn fixed_cancel_of_a_nil_entry_flags_its_running_work() {
    let fixed = Profile::fixed();
    for phase in [
        None,
        Some(requesting(WorkId(0), Verb::Get)),
        Some(WorkPhase::Backoff {
            attempt: 1,
            until: Time(10),
        }),
    ] {
        let (mut q, id) = queue_with(0, phase.clone());
        assert!(q.cancel_work(&key(), &fixed, &mut vec![]), "{phase:?}");
        assert_eq!(q.entry(&key()), None, "{phase:?}");
        assert!(q.work(id).unwrap().cancelled, "{phase:?}");
    }
}

/// Fixed design: a work whose DELETE is in flight cannot be recalled, so the cancel claims
/// nothing and the entry stays, keeping a second work from being added beside it (CANCEL-1).
#[test]
fn fixed_cancel_keeps_the_entry_of_a_work_whose_delete_is_in_flight() {
    let fixed = Profile::fixed();
    for delay in [0, 50] {
        let (mut q, id) = queue_with(delay, Some(requesting(WorkId(0), Verb::Delete)));
        let entry = q.entry(&key()).cloned();
        assert!(!q.cancel_work(&key(), &fixed, &mut vec![]), "delay {delay}");
        assert_eq!(q.entry(&key()).cloned(), entry, "delay {delay}");
        assert!(!q.work(id).unwrap().cancelled, "delay {delay}");
    }
}

/// Fixed design: a fired work whose GET, node GET or PATCH is in flight, or that sleeps between
/// attempts, is stopped by its flag before its next request, so the cancel is reported and the
/// entry goes; an armed one is simply stopped.
#[test]
fn fixed_cancel_reports_a_work_stopped_before_its_delete() {
    let fixed = Profile::fixed();
    let id = WorkId(0);
    for phase in [
        requesting(id, Verb::Get),
        requesting(id, Verb::GetNode("node".into())),
        requesting(id, Verb::PatchDisruptionTarget),
        WorkPhase::Backoff {
            attempt: 1,
            until: Time(60),
        },
        WorkPhase::Spawned,
    ] {
        let (mut q, w) = queue_with(50, Some(phase.clone()));
        assert!(q.cancel_work(&key(), &fixed, &mut vec![]), "{phase:?}");
        assert_eq!(q.entry(&key()), None, "{phase:?}");
        assert!(q.work(w).unwrap().cancelled, "{phase:?}");
    }
    let (mut q, w) = queue_with(50, None);
    let mut out = vec![];
    assert!(q.cancel_work(&key(), &fixed, &mut out));
    assert_eq!(q.work(w), None, "an armed work is dropped");
    assert_eq!(out, [Effect::CancelTimer { id: TimerId(0) }]);
}

/// The fixed design's cleanup of dead incarnations (UID keys, spec CORE-A6): every entry of the
/// pod's name except the kept UID's is cancelled, other pods' entries stay, and the result says
/// whether any cancel was reported.
#[test]
fn cancel_pod_cancels_every_other_incarnation_of_the_name_only() {
    let fixed = Profile::fixed();
    let uid_key = |name: &str, uid: &str| WorkKey {
        pod: PodKey::new("ns", name),
        uid: Some(Uid(uid.into())),
    };
    let mut q = TimedQueue::new();
    for k in [
        uid_key("pod", "u1"),
        uid_key("pod", "u2"),
        uid_key("pod", "u3"),
        uid_key("poe", "u1"),
    ] {
        q.add_work(&k, Time(0), Time(50), Immediate::Nil, &mut vec![]);
    }
    let pod = PodKey::new("ns", "pod");
    let keep = Uid("u2".into());
    assert!(q.cancel_pod(&pod, Some(&keep), &fixed, &mut vec![]));
    let left: Vec<&WorkKey> = q.entries().keys().collect();
    assert_eq!(left, [&uid_key("pod", "u2"), &uid_key("poe", "u1")]);
    assert!(
        !q.cancel_pod(&pod, Some(&keep), &fixed, &mut vec![]),
        "nothing left to cancel"
    );
    assert!(q.cancel_pod(&pod, None, &fixed, &mut vec![]));
    let left: Vec<&WorkKey> = q.entries().keys().collect();
    assert_eq!(left, [&uid_key("poe", "u1")]);
}

/// `cancel_pod` reports a cancel if any one of its cancels did, not only the last.
#[test]
fn cancel_pod_reports_any_reported_cancel() {
    let fixed = Profile::fixed();
    let uid_key = |uid: &str| WorkKey {
        pod: PodKey::new("ns", "pod"),
        uid: Some(Uid(uid.into())),
    };
    let mut q = TimedQueue::new();
    q.add_work(
        &uid_key("u1"),
        Time(0),
        Time(50),
        Immediate::Nil,
        &mut vec![],
    );
    let deleting = q
        .add_work(
            &uid_key("u2"),
            Time(0),
            Time(50),
            Immediate::Nil,
            &mut vec![],
        )
        .unwrap();
    q.work_mut(deleting).unwrap().phase = requesting(deleting, Verb::Delete);
    assert!(q.cancel_pod(&PodKey::new("ns", "pod"), None, &fixed, &mut vec![]));
}

/// Work `id` holding the answer `result` to `verb`, not yet taken in by its next step.
fn answered(id: WorkId, verb: Verb, result: ApiResult) -> WorkPhase {
    let WorkPhase::Requesting {
        attempt,
        request,
        fetched,
    } = requesting(id, verb)
    else {
        panic!("requesting builds a Requesting phase");
    };
    WorkPhase::Answered {
        attempt,
        request,
        fetched,
        result,
    }
}

/// Fixed design, between a work's steps (CORE-A12, CORE-A13): a work that emitted "Marking for
/// deletion" but sent nothing yet, or holds the answer to a read or a PATCH, reads its flag
/// before its next request, so the cancel is reported, flags it and removes the entry, under a
/// nil entry or a timer entry alike. A work holding the answer to its DELETE cannot be recalled:
/// the cancel claims nothing and the entry stays (CANCEL-1).
#[test]
fn fixed_cancel_between_a_works_steps() {
    let fixed = Profile::fixed();
    let id = WorkId(0);
    for delay in [0, 50] {
        for phase in [
            WorkPhase::Marked,
            answered(id, Verb::Get, ApiResult::Failed),
            answered(id, Verb::PatchDisruptionTarget, ApiResult::Failed),
        ] {
            let (mut q, w) = queue_with(delay, Some(phase.clone()));
            assert!(q.cancel_work(&key(), &fixed, &mut vec![]), "{phase:?}");
            assert_eq!(q.entry(&key()), None, "{phase:?}");
            assert!(q.work(w).unwrap().cancelled, "{phase:?}");
        }
        let phase = answered(id, Verb::Delete, ApiResult::Deleted);
        let (mut q, w) = queue_with(delay, Some(phase));
        let entry = q.entry(&key()).cloned();
        assert!(!q.cancel_work(&key(), &fixed, &mut vec![]), "delay {delay}");
        assert_eq!(q.entry(&key()).cloned(), entry, "delay {delay}");
        assert!(!q.work(w).unwrap().cancelled, "delay {delay}");
    }
}

/// Upstream from `008b3652` (semantics §5.5) reads the flag only when the goroutine starts: a
/// cancel of a fired timer entry whose work already marked the pod is reported (the stop's
/// result is ignored) and flags the work, which goes on; 1.18 has no flag.
#[test]
fn upstream_cancel_of_a_marked_work_is_reported() {
    for (profile, flagged) in [(Profile::v1_18(), false), (Profile::latest(), true)] {
        let (mut q, w) = queue_with(50, Some(WorkPhase::Marked));
        assert!(
            q.cancel_work(&key(), &profile, &mut vec![]),
            "{}",
            profile.name
        );
        assert_eq!(q.entry(&key()), None, "{}", profile.name);
        assert_eq!(q.work(w).unwrap().cancelled, flagged, "{}", profile.name);
    }
}
