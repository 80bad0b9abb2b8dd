//! A work's life in the queue after `AddWork`: completion per policy (semantics §5.1 to §5.5),
//! the fixed design's rescheduling, and the deadlines the driver waits for.

use super::*;

fn key() -> WorkKey {
    WorkKey {
        pod: PodKey::new("ns", "pod"),
        uid: None,
    }
}

fn finished(q: &mut TimedQueue, id: WorkId, outcome: Outcome) {
    q.work_mut(id).unwrap().phase = WorkPhase::Finished { outcome };
}

/// A failed work deletes its key in every version (1.18 `ab6399db` deletes on failure, §5.1;
/// PR #129577 tombstones only successes, §5.3; `4766d191` deletes always, §5.4), where a
/// successful one leaves 1.18's tombstone (a nil entry that makes later `AddWork`s skip).
#[test]
fn a_failed_work_deletes_its_key_a_successful_one_tombstones_it_in_1_18() {
    let if_exists = Profile {
        completion: CompletionPolicy::TombstoneIfExists,
        ..Profile::v1_18()
    };
    for profile in [
        Profile::v1_18(),
        if_exists,
        Profile::latest(),
        Profile::fixed(),
    ] {
        for outcome in [Outcome::Failed, Outcome::Abandoned] {
            let mut q = TimedQueue::new();
            let id = q
                .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut vec![])
                .unwrap();
            finished(&mut q, id, outcome);
            assert_eq!(q.complete(id, &profile), Some(outcome));
            assert_eq!(q.entry(&key()), None, "{} {outcome:?}", profile.name);
            assert!(q.is_idle(), "the work is gone");
        }
    }
    for (profile, tombstone) in [(Profile::v1_18(), true), (if_exists, true)] {
        let mut q = TimedQueue::new();
        let id = q
            .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut vec![])
            .unwrap();
        finished(&mut q, id, Outcome::Succeeded);
        q.complete(id, &profile);
        let nil = q.entry(&key()) == Some(&Entry::Nil { work: None });
        assert_eq!(nil, tombstone, "{}", profile.name);
    }
}

/// Only a finished work completes: a running one is left alone.
#[test]
fn complete_waits_for_the_work_function_to_return() {
    let mut q = TimedQueue::new();
    let id = q
        .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut vec![])
        .unwrap();
    assert_eq!(q.complete(id, &Profile::latest()), None);
    assert!(q.work(id).is_some());
    assert!(q.entry(&key()).is_some());
}

/// Fixed design (spec CORE-A8): rescheduling an armed work moves its timer and its entry's
/// deadline; a deadline already due starts it at once; a work that has fired is left to its
/// re-check.
#[test]
fn reschedule_moves_an_armed_work_and_its_entry() {
    let mut q = TimedQueue::new();
    let id = q
        .add_work(&key(), Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    let mut out = vec![];
    q.reschedule(&key(), id, Time(80), Time(10), &mut out);
    assert_eq!(
        out,
        [Effect::ArmTimer {
            id: id.timer(),
            fire_at: Time(80)
        }]
    );
    assert_eq!(q.get_worker(&key()), Some((Time(0), Time(80), id)));
    assert_eq!(q.next_deadline(), Some(Time(80)));

    out.clear();
    q.reschedule(&key(), id, Time(10), Time(10), &mut out);
    assert_eq!(out, [Effect::CancelTimer { id: id.timer() }]);
    assert_eq!(q.work(id).unwrap().phase, WorkPhase::Spawned);
    assert_eq!(q.get_worker(&key()), Some((Time(0), Time(10), id)));
    assert_eq!(q.next_deadline(), None, "a spawned work waits for no timer");

    out.clear();
    q.reschedule(&key(), id, Time(90), Time(20), &mut out);
    assert_eq!(out, [], "a fired work is not re-armed");
    assert_eq!(q.work(id).unwrap().fire_at, Time(10));
}

/// An entry belongs to the work that created it: rescheduling an older work of the same key
/// (whose entry was replaced) leaves the newer work's entry as it is.
#[test]
fn reschedule_leaves_an_entry_another_work_owns() {
    let mut q = TimedQueue::new();
    let old = q
        .add_work(&key(), Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    q.forget(&key());
    assert_eq!(q.entry(&key()), None);
    let new = q
        .add_work(&key(), Time(5), Time(60), Immediate::Nil, &mut vec![])
        .unwrap();
    q.reschedule(&key(), old, Time(70), Time(10), &mut vec![]);
    assert_eq!(q.get_worker(&key()), Some((Time(5), Time(60), new)));
    assert_eq!(q.work(old).unwrap().fire_at, Time(70));
}

/// The driver waits for the earliest armed timer, an eviction's or a backoff's; a running work
/// keeps the queue busy without a deadline.
#[test]
fn next_deadline_is_the_earliest_armed_timer() {
    let mut q = TimedQueue::new();
    assert!(q.is_idle());
    assert_eq!(q.next_deadline(), None);
    let a = q
        .add_work(&key(), Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    assert!(!q.is_idle());
    assert_eq!(q.next_deadline(), Some(Time(50)));
    q.work_mut(a).unwrap().phase = WorkPhase::Backoff {
        attempt: 1,
        until: Time(30),
    };
    assert_eq!(q.next_deadline(), Some(Time(30)));
    q.work_mut(a).unwrap().phase = WorkPhase::Spawned;
    assert_eq!(q.next_deadline(), None);
    assert!(!q.is_idle());
    q.drop_work(a);
    assert!(q.is_idle());
}

/// A sleep that has ended is forgotten as ended at 0, and reported with its end; one still
/// running is kept; queues that differed only in when their sleeps ended are then the same.
#[test]
fn ended_sleeps_are_forgotten_and_reported() {
    let queue = |until: i64| {
        let mut q = TimedQueue::new();
        let a = q
            .add_work(&key(), Time(0), Time(0), Immediate::Nil, &mut vec![])
            .unwrap();
        q.work_mut(a).unwrap().phase = WorkPhase::Backoff {
            attempt: 2,
            until: Time(until),
        };
        (q, a)
    };
    let (mut early, a) = queue(30);
    let (mut late, _) = queue(40);
    let mut ended = Vec::new();
    late.forget_ended_sleeps(Time(35), &mut ended);
    assert!(ended.is_empty(), "a sleep ending at 40 has not ended at 35");
    early.forget_ended_sleeps(Time(40), &mut ended);
    late.forget_ended_sleeps(Time(40), &mut ended);
    assert_eq!(ended, vec![(a, Time(30)), (a, Time(40))]);
    assert_eq!(early, late);
    let phase = &early.work(a).unwrap().phase;
    assert_eq!(
        *phase,
        WorkPhase::Backoff {
            attempt: 2,
            until: Time::ZERO
        }
    );
    early.forget_ended_sleeps(Time(50), &mut ended);
    assert_eq!(ended.len(), 2, "an ended sleep is reported once");
}

/// Two queues are the same state only if their entries, works, ids and client bucket all are
/// (the model's states compare and hash them, MODEL-S*; the bucket is CORE-THROTTLE's).
#[test]
fn queues_differ_in_a_works_phase_or_their_bucket() {
    use crate::throttle::RateLimit;
    use crate::time::Duration;
    use std::hash::{DefaultHasher, Hash, Hasher};
    let hash = |q: &TimedQueue| {
        let mut h = DefaultHasher::new();
        q.hash(&mut h);
        h.finish()
    };
    let mut a = TimedQueue::new();
    let id = a
        .add_work(&key(), Time(0), Time(50), Immediate::Nil, &mut vec![])
        .unwrap();
    let mut b = a.clone();
    assert_eq!(a, b);
    b.work_mut(id).unwrap().phase = WorkPhase::Spawned;
    assert_ne!(a, b, "a work's phase");
    let limited = TimedQueue::with_rate_limit(RateLimit::new(1, Duration(100), 1));
    assert_ne!(TimedQueue::new(), limited, "the client's bucket");
    assert_ne!(hash(&TimedQueue::new()), hash(&limited));
}
