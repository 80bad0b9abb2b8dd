use super::prune;
use crate::state::{Pending, State};
use taintcheck_core::api::{PodKey, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::Config;

fn state() -> State {
    State::new(Config::new(Profile::by_name("latest").unwrap()))
}

/// A state whose pod informer has not delivered the pod's deletion made at `at`.
fn undelivered(s: &mut State, at: i64) {
    s.pods.push_back(Pending {
        at: Time(at),
        key: PodKey::new("default", "p0"),
        new: None,
    });
}

fn deleted_at(s: &mut State, at: i64) {
    s.deleted.insert(Uid("u1".into()), (Time(at), Time(at)));
}

#[test]
fn a_later_deadline_subsumes_an_earlier_one() {
    let (mut early, mut late) = (state(), state());
    undelivered(&mut early, 100);
    undelivered(&mut late, 200);
    let kept = prune(vec![early, late.clone()], Time(300));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].fingerprint(), late.fingerprint());
    // Either order.
    let (mut early, late2) = (state(), late);
    undelivered(&mut early, 100);
    let kept = prune(vec![late2.clone(), early], Time(300));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].fingerprint(), late2.fingerprint());
}

#[test]
fn deadlines_that_do_not_all_agree_keep_both() {
    let (mut a, mut b) = (state(), state());
    undelivered(&mut a, 100);
    undelivered(&mut a, 250);
    undelivered(&mut b, 200);
    undelivered(&mut b, 210);
    assert_eq!(prune(vec![a, b], Time(300)).len(), 2);
}

#[test]
fn states_that_differ_in_more_than_deadlines_are_kept() {
    let (mut a, mut b) = (state(), state());
    undelivered(&mut a, 100);
    undelivered(&mut b, 100);
    undelivered(&mut b, 100);
    assert_eq!(prune(vec![a, b], Time(300)).len(), 2);
}

#[test]
fn the_state_kept_takes_in_the_deletion_windows_of_those_dropped() {
    let (mut a, mut b, mut c) = (state(), state(), state());
    deleted_at(&mut a, 120);
    deleted_at(&mut b, 40);
    deleted_at(&mut c, 80);
    undelivered(&mut a, 100);
    undelivered(&mut b, 200);
    undelivered(&mut c, 150);
    let kept = prune(vec![a, b, c], Time(300));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].pods[0].at, Time(200));
    assert_eq!(
        kept[0].deleted[&Uid("u1".into())],
        (Time(40), Time(120)),
        "the window spans every dropped state's deletion"
    );
}

#[test]
fn a_state_that_deleted_is_not_merged_with_one_that_did_not() {
    let (mut a, b) = (state(), state());
    deleted_at(&mut a, 120);
    assert_eq!(prune(vec![a, b], Time(300)).len(), 2);
}
