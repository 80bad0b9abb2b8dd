//! The deletion work function and the races around it, per profile, through the driver
//! (spec CORE-A8..CORE-A14, profiles PROFILE-3..PROFILE-10). Timelines are snapshotted.

mod common;
use common::{node1, web0};
use std::fmt::Write as _;
use taintcheck_core::api::{Node, PodKey};
use taintcheck_core::driver::Driver;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Effect, Note, Step, Verb};

fn requests(d: &Driver, verb: Verb) -> Vec<Time> {
    d.log
        .iter()
        .filter_map(|(t, e)| match e {
            Effect::Api(r) if r.verb == verb => Some(*t),
            _ => None,
        })
        .collect()
}

fn noted(d: &Driver, note: Note) -> bool {
    d.log
        .iter()
        .any(|(_, e)| matches!(e, Effect::Decision(x) if x.note == note))
}

fn profiles() -> [Profile; 3] {
    [Profile::v1_18(), Profile::latest(), Profile::fixed()]
}

/// PROFILE-6: upstream makes five attempts 10 ms apart, then drops the work (S2, N14); the fixed
/// design retries with a doubling backoff until the deletion goes through.
#[test]
fn failed_deletions_retry_then_drop_or_persist() {
    let mut snapshot = String::new();
    for profile in profiles() {
        let mut d = Driver::new(profile);
        d.fail_next(Verb::Delete, 7);
        d.put_pod(web0("u1", Some("node1"), None));
        d.settle();
        d.put_node(node1(true));
        d.advance(Duration(2_000));
        let deletes = requests(&d, Verb::Delete);
        match profile.name {
            "fixed" => {
                let gaps: Vec<i64> = deletes.windows(2).map(|w| w[1].0 - w[0].0).collect();
                assert_eq!(gaps, [10, 20, 40, 80, 160, 320, 640]);
                assert!(d.cluster.pods.is_empty(), "the eighth DELETE succeeds");
            }
            _ => {
                assert_eq!(deletes.len(), 5, "{}", profile.name);
                assert_eq!(deletes[4].0 - deletes[0].0, 40, "{}", profile.name);
                assert!(noted(&d, Note::GaveUp), "{}", profile.name);
                assert_eq!(d.cluster.pods.len(), 1, "{}: dropped", profile.name);
                assert!(
                    d.controller.timed_queue().entries().is_empty(),
                    "{}: a failure deletes the key",
                    profile.name
                );
            }
        }
        let _ = writeln!(snapshot, "## {}\n{}", profile.name, d.timeline());
    }
    insta::assert_snapshot!(snapshot);
}

/// Take every enabled step, round after round, until a request is pending.
fn until_request(d: &mut Driver) {
    while d.controller.pending_requests().next().is_none() {
        let steps = d.enabled();
        assert!(!steps.is_empty(), "no request came");
        steps.into_iter().for_each(|s| d.step(s));
    }
}

/// I2 (tombstone era, no race needed): the evicted pod's successor (same name) already exists,
/// pending, when the delete event is handled, so nothing cancels the nil tombstone; the node is
/// untainted and re-tainted after the successor is bound there, and its finite toleration never
/// schedules anything ("already existing"). Newer profiles evict it in time.
#[test]
fn successor_after_eviction_i2() {
    let mut snapshot = String::new();
    for (profile, evicted) in [
        (Profile::v1_18(), false),
        (Profile::latest(), true),
        (Profile::fixed(), true),
    ] {
        let mut d = Driver::new(profile);
        d.put_pod(web0("u1", Some("node1"), None));
        d.settle();
        d.put_node(node1(true));
        until_request(&mut d);
        while d.controller.pending_requests().next().is_some() {
            d.respond_all();
        }
        assert!(d.cluster.pods.is_empty(), "{}", profile.name);
        let mut successor = web0("u2", Some("node1"), Some(5));
        successor.node_name = None;
        d.put_pod(successor.clone());
        d.settle();
        d.put_node(node1(false));
        d.settle();
        successor.node_name = Some("node1".into());
        d.put_pod(successor);
        d.settle();
        d.put_node(node1(true));
        d.advance(Duration(10_000));
        assert_eq!(d.cluster.pods.is_empty(), evicted, "{}", profile.name);
        let _ = writeln!(snapshot, "## {}\n{}", profile.name, d.timeline());
    }
    insta::assert_snapshot!(snapshot);
}

/// N1: the timer fires while the node update that removed the taint is still queued. Upstream
/// deletes the pod; the fixed design's re-check against the cache abandons the work.
#[test]
fn timer_fires_while_untaint_is_queued_n1() {
    let mut snapshot = String::new();
    for profile in profiles() {
        let mut d = Driver::new(profile);
        d.put_node(node1(true));
        d.put_pod(web0("u1", Some("node1"), Some(1)));
        d.advance_to(Time(999));
        d.now = Time(1_000);
        d.put_node(node1(false));
        d.settle();
        let deleted = d.cluster.pods.is_empty();
        assert_eq!(deleted, profile.name != "fixed", "{}", profile.name);
        if !deleted {
            assert!(noted(&d, Note::RecheckAbandoned));
            assert!(d.controller.timed_queue().entries().is_empty());
        }
        let _ = writeln!(snapshot, "## {}\n{}", profile.name, d.timeline());
    }
    insta::assert_snapshot!(snapshot);
}

/// Run every enabled step except `StartWork` until none is left, so fired works wait at
/// their start.
fn run_all_but_starts(d: &mut Driver) {
    loop {
        let steps: Vec<Step> = d
            .enabled()
            .into_iter()
            .filter(|s| !matches!(s, Step::StartWork(_)))
            .collect();
        if steps.is_empty() {
            return;
        }
        steps.into_iter().for_each(|s| d.step(s));
    }
}

/// PROFILE-4 and N2: the taint is removed after the timer fired but before the work started.
/// Every profile cancels (with the "Cancelling deletion" event); with a cancelled flag (`latest`,
/// `fixed`) the work then exits unstarted, in 1.18 it deletes the pod anyway.
#[test]
fn cancel_between_fire_and_start() {
    let mut snapshot = String::new();
    for profile in profiles() {
        let mut d = Driver::new(profile);
        d.put_node(node1(true));
        d.put_pod(web0("u1", Some("node1"), Some(1)));
        d.advance_to(Time(999));
        d.now = Time(1_000);
        run_all_but_starts(&mut d);
        assert!(d.enabled().iter().any(|s| matches!(s, Step::StartWork(_))));
        d.put_node(node1(false));
        run_all_but_starts(&mut d);
        d.settle();
        let cancelled = d
            .log
            .iter()
            .any(|(_, e)| matches!(e, Effect::Event(ev) if ev.message().starts_with("Cancelling")));
        assert!(cancelled, "{}", profile.name);
        let deleted = d.cluster.pods.is_empty();
        assert_eq!(deleted, profile.name == "v1.18", "{}", profile.name);
        if !deleted {
            assert!(noted(&d, Note::Suppressed), "{}", profile.name);
        }
        let _ = writeln!(snapshot, "## {}\n{}", profile.name, d.timeline());
    }
    insta::assert_snapshot!(snapshot);
}

/// N5/I1: the pod is deleted and a successor with the same name lands on a healthy node before
/// the predecessor's timer fires. Upstream's timer deletes the successor by name; the fixed
/// design's UID-keyed work is cancelled when the successor is seen, and its DELETE would carry
/// the predecessor's UID anyway.
#[test]
fn successor_on_another_node_n5() {
    for profile in profiles() {
        let mut d = Driver::new(profile);
        d.put_node(node1(true));
        d.put_node(Node {
            name: "node2".into(),
            taints: vec![],
        });
        d.put_pod(web0("u1", Some("node1"), Some(300)));
        d.advance(Duration(1_000));
        d.delete_pod(&PodKey::new("ns", "web-0"));
        let mut successor = web0("u2", Some("node1"), None);
        successor.node_name = Some("node2".into());
        d.put_pod(successor);
        d.advance(Duration(400_000));
        let survived = !d.cluster.pods.is_empty();
        assert_eq!(survived, profile.name == "fixed", "{}", profile.name);
    }
}
