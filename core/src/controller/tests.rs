use super::*;
use crate::api::Taint;
use crate::api::{PodKey, TaintEffect, Toleration, Uid};
use crate::driver::Cluster;
use crate::effect::WorkId;
use crate::timed_queue::Immediate;
use crate::worker::{NodePhase, Worker};
use crate::{handlers, shards};
use crate::{Context, Effect, Note};

fn tainted(name: &str) -> Node {
    Node {
        name: name.into(),
        taints: vec![Taint::new("t", "", TaintEffect::NoExecute)],
    }
}

fn pod(name: &str, node: &str, seconds: Option<i64>) -> Pod {
    Pod {
        key: PodKey::new("ns", name),
        uid: Uid(format!("{name}-1").into()),
        node_name: Some(node.into()),
        tolerations: seconds
            .map(|s| {
                vec![Toleration::exists(
                    "t",
                    Some(TaintEffect::NoExecute),
                    Some(s),
                )]
            })
            .unwrap_or_default(),
    }
}

fn steps(c: &Controller, now: Time) -> Vec<Step> {
    let mut out = Vec::new();
    c.enabled_steps(now, &mut out);
    out
}

fn notes(effects: &[Effect]) -> Vec<Note> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Decision(d) => Some(d.note),
            _ => None,
        })
        .collect()
}

fn cont(worker: usize) -> Step {
    Step::WorkerContinue {
        worker,
        immediate: Immediate::Nil,
        pick: 0,
    }
}

/// CORE-A3: a full channel makes the dispatcher hold the item, blocking every shard.
#[test]
fn dispatcher_blocks_on_a_full_channel() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    let view = Cluster::default();
    let mut out = vec![];
    for name in ["a", "b"] {
        c.pod_observed(None, Some(&pod(name, "node1", None)), Time(0));
    }
    c.pod_observed(None, Some(&pod("c", "node3", None)), Time(0));
    c.step(Step::DispatchPod, &view, Time(0), &mut out);
    c.step(Step::DispatchPod, &view, Time(0), &mut out);
    assert_eq!(c.held().1.map(|i| &*i.key.name), Some("b"));
    assert!(
        !steps(&c, Time(0)).contains(&Step::DispatchPod),
        "head-of-line blocked"
    );
    assert_eq!(
        c.shards()
            .get(shards::shard_of("node3", 8))
            .unwrap()
            .pods
            .len(),
        0
    );
    c.step(Step::WorkerTakePod(4), &view, Time(0), &mut out);
    assert!(steps(&c, Time(0)).contains(&Step::DispatchPod));
    c.step(Step::DispatchPod, &view, Time(0), &mut out);
    assert_eq!(c.held().1, None);
    assert_eq!(c.shards().get(4).unwrap().pods.len(), 1);
}

/// CORE-A4: a worker holding a pod item first handles the node items buffered on its shard.
#[test]
fn pod_item_waits_for_buffered_node_items() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    let p = pod("p", "node1", None);
    view.pods.insert(p.key.clone(), p.clone());
    let mut out = vec![];
    c.pod_observed(None, Some(&p), Time(0));
    c.step(Step::DispatchPod, &view, Time(0), &mut out);
    c.step(Step::WorkerTakePod(4), &view, Time(0), &mut out);
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    c.step(Step::DispatchNode, &view, Time(0), &mut out);
    assert!(c.tainted_nodes().is_empty());
    c.step(cont(4), &view, Time(0), &mut out);
    assert!(
        c.tainted_nodes().contains_key("node1"),
        "node item handled first"
    );
    assert!(matches!(
        c.shards().get(4).unwrap().worker,
        Worker::Node { then: Some(_), .. }
    ));
    // list, then the pod from the node update, then the held pod item.
    for _ in 0..3 {
        c.step(cont(4), &view, Time(0), &mut out);
    }
    assert_eq!(c.shards().get(4).unwrap().worker, Worker::Idle);
    assert_eq!(notes(&out), [Note::EvictNow, Note::EvictNow]);
    assert!(c.node_queue().is_idle() && c.pod_queue().is_idle());
}

/// CORE-A5: taintedNodes is updated before the pods are listed, and every pod of the node is
/// decided with the `now` of the listing.
#[test]
fn node_update_phases_use_the_listing_now() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    for name in ["a", "b"] {
        let p = pod(name, "node1", Some(10));
        view.pods.insert(p.key.clone(), p);
    }
    let mut out = vec![];
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    c.step(Step::DispatchNode, &view, Time(0), &mut out);
    c.step(Step::WorkerTakeNode(4), &view, Time(1), &mut out);
    assert!(c.tainted_nodes().contains_key("node1"));
    assert!(matches!(
        c.shards().get(4).unwrap().worker,
        Worker::Node {
            phase: NodePhase::Updated { .. },
            ..
        }
    ));
    c.step(cont(4), &view, Time(2), &mut out);
    c.step(cont(4), &view, Time(50), &mut out);
    c.step(cont(4), &view, Time(90), &mut out);
    let fire = Time(2).plus(crate::time::Duration::from_secs(10));
    assert_eq!(
        notes(&out),
        [
            Note::Scheduled { fire_at: fire },
            Note::Scheduled { fire_at: fire }
        ]
    );
    assert!(c.is_quiescent());
    assert_eq!(c.next_deadline(), Some(fire));
}

/// CORE-A5: with no NoExecute taints left, every listed pod's work is cancelled without
/// `processPodOnNode` (CORE-PRE).
#[test]
fn untainted_node_cancels_its_pods_work() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    let mut view = Cluster::default();
    let p = pod("a", "node1", Some(10));
    view.pods.insert(p.key.clone(), p);
    view.nodes.insert("node1".into(), tainted("node1"));
    let mut out = vec![];
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    for s in [
        Step::DispatchNode,
        Step::WorkerTakeNode(4),
        cont(4),
        cont(4),
    ] {
        c.step(s, &view, Time(0), &mut out);
    }
    let clean = Node {
        name: "node1".into(),
        taints: vec![],
    };
    view.nodes.insert("node1".into(), clean.clone());
    c.node_observed(Some(&tainted("node1")), Some(&clean), Time(0));
    out.clear();
    for s in [
        Step::DispatchNode,
        Step::WorkerTakeNode(4),
        cont(4),
        cont(4),
    ] {
        c.step(s, &view, Time(5), &mut out);
    }
    assert!(c.tainted_nodes().is_empty());
    assert!(c.timed_queue().entries().is_empty());
    assert!(matches!(out[0], Effect::CancelTimer { .. }));
    assert!(matches!(out[1], Effect::Event(_)));
    assert!(!c.precondition_violated());
}

/// CORE-A6: under `Listing::Any` a worker may take any listed pod next; what is left stays
/// in name order, so the state is the set still to do. `ByName` offers only the next one.
#[test]
fn any_listing_order_offers_every_listed_pod() {
    for (listing, offered) in [(Listing::ByName, 1), (Listing::Any, 3)] {
        let mut c = Controller::new(Config {
            listing,
            ..Config::new(Profile::latest())
        });
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        for name in ["a", "b", "c"] {
            let p = pod(name, "node1", Some(10));
            view.pods.insert(p.key.clone(), p);
        }
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
            c.step(s, &view, Time(0), &mut out);
        }
        let picks = |c: &Controller| {
            steps(c, Time(0))
                .iter()
                .filter(|s| matches!(s, Step::WorkerContinue { worker: 4, .. }))
                .count()
        };
        assert_eq!(picks(&c), offered, "{listing:?}");
        let last = Step::WorkerContinue {
            worker: 4,
            immediate: Immediate::Nil,
            pick: 2,
        };
        c.step(last, &view, Time(0), &mut out);
        let scheduled: Vec<&str> = c
            .timed_queue()
            .entries()
            .keys()
            .map(|k| &*k.pod.name)
            .collect();
        let left = |c: &Controller| match &c.shards().get(4).unwrap().worker {
            Worker::Node {
                phase: NodePhase::Pods { pods, next, .. },
                ..
            } => pods[*next..]
                .iter()
                .map(|p| p.key.name.to_string())
                .collect(),
            _ => Vec::new(),
        };
        if listing == Listing::Any {
            assert_eq!(scheduled, ["c"]);
            assert_eq!(left(&c), ["a", "b"]);
        } else {
            assert!(scheduled.is_empty(), "pick 2 is not offered by name");
            assert_eq!(left(&c), ["a", "b", "c"]);
        }
    }
}

/// PROFILE-2: the two-`Now()` outcomes are offered only where the immediate path is reachable.
#[test]
fn immediate_outcomes_offered_only_for_two_nows() {
    for (profile, offered) in [(Profile::v1_18(), true), (Profile::latest(), false)] {
        let mut c = Controller::new(Config::new(profile));
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        for (name, seconds) in [("a", Some(10)), ("b", None)] {
            let p = pod(name, "node1", seconds);
            view.pods.insert(p.key.clone(), p);
        }
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
            c.step(s, &view, Time(0), &mut out);
        }
        let timer = Step::WorkerContinue {
            worker: 4,
            immediate: Immediate::Timer,
            pick: 0,
        };
        assert!(!steps(&c, Time(0)).contains(&timer), "pod a is tolerated");
        c.step(cont(4), &view, Time(0), &mut out);
        assert_eq!(
            steps(&c, Time(0)).contains(&timer),
            offered,
            "{}",
            profile.name
        );
        c.step(timer, &view, Time(0), &mut out);
        let entry = c.timed_queue().entries().values().last().cloned();
        let timer_entry = matches!(entry, Some(crate::Entry::Timer { .. }));
        assert_eq!(timer_entry, offered, "{}", profile.name);
    }
}

/// N8: a recomputation at the very instant the timer was created keeps it, as production
/// clocks (always later) do.
#[test]
fn equal_instant_keeps_the_timer_n8() {
    let mut q = crate::shared::Shared::new(TimedQueue::new());
    let p = pod("a", "node1", Some(10));
    let taints = [Taint::new("t", "", TaintEffect::NoExecute)];
    let mut out = vec![];
    let profile = Profile::latest();
    let arrivals = Arrivals::default();
    let cx = Context {
        profile: &profile,
        view: &Cluster::default(),
        arrivals: &arrivals,
        now: Time(7),
    };
    let first = handlers::process_pod_on_node(&mut q, cx, &p, &taints, Immediate::Nil, &mut out);
    let p = pod("a", "node1", Some(1));
    let again = handlers::process_pod_on_node(&mut q, cx, &p, &taints, Immediate::Nil, &mut out);
    assert_eq!(
        first,
        Note::Scheduled {
            fire_at: Time(10_007)
        }
    );
    assert_eq!(
        again,
        Note::KeptExisting {
            fire_at: Time(10_007)
        }
    );
    assert!(
        !out.iter().any(|e| matches!(e, Effect::Event(_))),
        "no cancel event"
    );
}

/// CORE-A15: a restart forgets everything, armed timers included (N15).
#[test]
fn restart_loses_all_state() {
    let mut c = Controller::new(Config::new(Profile::v1_18()));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    let p = pod("a", "node1", Some(10));
    view.pods.insert(p.key.clone(), p);
    let mut out = vec![];
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    for s in [
        Step::DispatchNode,
        Step::WorkerTakeNode(4),
        cont(4),
        cont(4),
    ] {
        c.step(s, &view, Time(0), &mut out);
    }
    assert!(c.next_deadline().is_some());
    c.restarted();
    assert_eq!(c, Controller::new(Config::new(Profile::v1_18())));
}

/// CORE-A1, CORE-A2, CORE-S4: an event the intake lets through waits on its queue, which the
/// accessors show; the dispatcher then takes it off.
#[test]
fn informer_events_wait_on_their_queues() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    assert!(c.node_queue().is_empty() && c.pod_queue().is_empty());
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    let queued: Vec<&NodeName> = c.node_queue().queued().collect();
    assert_eq!(queued, [&NodeName::from("node1")]);
    assert!(c.pod_queue().is_empty());
    c.pod_observed(None, Some(&pod("a", "node1", None)), Time(0));
    let pods: Vec<&str> = c.pod_queue().queued().map(|i| &*i.key.name).collect();
    assert_eq!(pods, ["a"]);
    let view = Cluster::default();
    c.step(Step::DispatchNode, &view, Time(0), &mut vec![]);
    assert!(c.node_queue().is_empty());
    c.step(Step::DispatchPod, &view, Time(0), &mut vec![]);
    assert!(c.pod_queue().is_empty());
}

/// CORE-PRE: the precondition is violated once `processPodOnNode` was reached with zero taints
/// (the counter no reachable state raises; set here to see the accessor read it).
#[test]
fn the_precondition_reads_the_zero_taint_counter() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    assert!(!c.precondition_violated());
    c.zero_taint_calls = 1;
    assert!(c.precondition_violated());
}

/// CORE-S9: the arrival record is kept where the profile reads it, and the accessor shows it.
#[test]
fn the_arrival_record_is_kept_under_fixed() {
    let mut c = Controller::new(Config::new(Profile::fixed()));
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    assert_ne!(c.arrivals(), &Arrivals::default());
    let mut latest = Controller::new(Config::new(Profile::latest()));
    latest.node_observed(None, Some(&tainted("node1")), Time(0));
    assert_eq!(latest.arrivals(), &Arrivals::default());
}

/// `handlers_idle` (the runtime's and the oracle's quiescence): any one busy part, a queued
/// item, a held item or a busy shard, keeps the handlers from being idle.
#[test]
fn any_busy_part_keeps_the_handlers_busy() {
    let idle = Controller::new(Config::new(Profile::latest()));
    assert!(idle.handlers_idle() && idle.is_quiescent());
    let item = intake::PodItem {
        key: PodKey::new("ns", "a"),
        node_name: Some("node1".into()),
    };
    let mut busy = Vec::new();
    let mut c = idle.clone();
    c.node_queue.make_mut().add("node1".into());
    busy.push(c);
    let mut c = idle.clone();
    c.pod_queue.make_mut().add(item.clone());
    busy.push(c);
    let mut c = idle.clone();
    c.node_held = Some("node1".into());
    busy.push(c);
    let mut c = idle.clone();
    c.pod_held = Some(item);
    busy.push(c);
    let mut c = idle.clone();
    c.shards
        .make_mut()
        .get_mut(3)
        .nodes
        .push_back("node1".into());
    c.shards.make_mut().prune();
    busy.push(c);
    for c in busy {
        assert!(!c.handlers_idle(), "{c:?}");
        assert!(!c.is_quiescent(), "{c:?}");
    }
}

/// Quiescent means idle handlers and no work in flight but armed timers: a work waiting on its
/// GET is not quiescent, an armed timer alone is.
#[test]
fn a_work_in_flight_is_not_quiescent() {
    let (c, _) = two_works(Profile::latest());
    assert!(c.handlers_idle());
    assert!(c.pending_requests().count() > 0);
    assert!(!c.is_quiescent());
    let mut armed = Controller::new(Config::new(Profile::v1_18()));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    let p = pod("a", "node1", Some(10));
    view.pods.insert(p.key.clone(), p.clone());
    armed.node_observed(None, Some(&tainted("node1")), Time(0));
    armed.pod_observed(None, Some(&p), Time(0));
    settle(&mut armed, &view, Time(0), &mut vec![]);
    assert!(armed.next_deadline().is_some());
    assert!(armed.is_quiescent());
}

/// A controller with untolerating pods `b` then `a` on tainted node1, each work waiting on its
/// GET: `b`'s work was created first, so the ids are not in key order.
fn two_works(profile: Profile) -> (Controller, Cluster) {
    let mut c = Controller::new(Config::new(profile));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    settle(&mut c, &view, Time(0), &mut vec![]);
    for name in ["b", "a"] {
        let p = pod(name, "node1", None);
        view.pods.insert(p.key.clone(), p.clone());
        c.pod_observed(None, Some(&p), Time(0));
        settle(&mut c, &view, Time(0), &mut vec![]);
    }
    (c, view)
}

fn requests(c: &Controller) -> Vec<(u32, String)> {
    let mut r: Vec<(u32, String)> = c
        .pending_requests()
        .map(|r| (r.id.0, r.pod.name.to_string()))
        .collect();
    r.sort();
    r
}

/// MODEL-SYM: works are renumbered in key order (`a` before `b`), requests with them; the
/// renumbering is returned for the ids a caller keeps.
#[test]
fn canonical_ids_follow_the_keys() {
    let (mut c, _) = two_works(Profile::latest());
    assert_eq!(requests(&c), [(0, "b".into()), (1, "a".into())]);
    let map = c.canonicalise_ids();
    assert_eq!(
        map.into_iter().collect::<Vec<_>>(),
        [(WorkId(0), WorkId(1)), (WorkId(1), WorkId(0))]
    );
    assert_eq!(requests(&c), [(0, "a".into()), (1, "b".into())]);
}

/// Swaps the pod names `a` and `c` (their keys and UIDs); nodes stay.
struct Swap;

impl Swap {
    fn name<'a>(&self, n: &'a str) -> &'a str {
        match n {
            "a" => "c",
            "c" => "a",
            other => other,
        }
    }
}

impl crate::renaming::Renaming for Swap {
    fn key(&self, key: &PodKey) -> PodKey {
        PodKey::new(&key.namespace, self.name(&key.name))
    }
    fn uid(&self, uid: &Uid) -> Uid {
        let name = uid.0.trim_end_matches("-1");
        Uid(format!("{}-1", self.name(name)).into())
    }
    fn node(&self, node: &NodeName) -> NodeName {
        node.clone()
    }
}

/// MODEL-SYM: renaming reaches the works and their requests, and a worker's listed pods: kept
/// in listing order by name, re-sorted under `Any` (where the list is the set still to do).
#[test]
fn renaming_reaches_works_and_listed_pods() {
    let (mut c, _) = two_works(Profile::latest());
    c.rename(&Swap);
    assert_eq!(requests(&c), [(0, "b".into()), (1, "c".into())]);
    for (listing, order) in [
        (Listing::ByName, ["c", "b", "a"]),
        (Listing::Any, ["a", "b", "c"]),
    ] {
        let mut c = Controller::new(Config {
            listing,
            ..Config::new(Profile::latest())
        });
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        for name in ["a", "b", "c"] {
            let p = pod(name, "node1", Some(10));
            view.pods.insert(p.key.clone(), p);
        }
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
            c.step(s, &view, Time(0), &mut vec![]);
        }
        c.rename(&Swap);
        let listed: Vec<String> = match &c.shards().get(4).unwrap().worker {
            Worker::Node {
                phase: NodePhase::Pods { pods, .. },
                ..
            } => pods.iter().map(|p| p.key.name.to_string()).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(listed, order, "{listing:?}");
    }
}

/// The hash is the model's state fingerprint: controllers that differ in any part of their
/// state hash apart (with overwhelming likelihood), equal ones alike.
#[test]
fn the_hash_tells_states_apart() {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let hash = |c: &Controller| {
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(c)
    };
    let fresh = Controller::new(Config::new(Profile::latest()));
    let mut node = fresh.clone();
    node.node_observed(None, Some(&tainted("node1")), Time(0));
    let mut other = fresh.clone();
    other.node_observed(None, Some(&tainted("node2")), Time(0));
    let mut pod_ = fresh.clone();
    pod_.pod_observed(None, Some(&pod("a", "node1", None)), Time(0));
    let hashes = [hash(&fresh), hash(&node), hash(&other), hash(&pod_)];
    for (i, a) in hashes.iter().enumerate() {
        for b in &hashes[i + 1..] {
            assert_ne!(a, b);
        }
    }
    let mut again = fresh.clone();
    again.node_observed(None, Some(&tainted("node1")), Time(0));
    assert_eq!(hash(&again), hash(&node));
}

/// Runs the first enabled step until none is left at `now` (timers due included).
fn settle(c: &mut Controller, view: &Cluster, now: Time, out: &mut Vec<Effect>) {
    while let Some(step) = steps(c, now).into_iter().next() {
        c.step(step, view, now, out);
    }
}

fn deletes(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::Api(r) if r.verb == crate::Verb::Delete))
        .count()
}

/// PROFILE-10 (fixed): taint `t` is removed and re-added at the instant the work's PATCH is
/// in flight. The re-check before the DELETE sees a taint that arrived now, so the earliest
/// legal eviction is 10 s away: the work is re-armed for it, no DELETE is sent. (With the
/// deadline `created_at + m` the re-check passed and the DELETE was premature.)
#[test]
fn readded_taint_during_patch_rearms_the_work() {
    let mut c = Controller::new(Config::new(Profile::fixed()));
    let mut view = Cluster::default();
    let mut out = vec![];
    let p = pod("a", "node1", Some(10));
    view.pods.insert(p.key.clone(), p.clone());
    view.nodes.insert("node1".into(), tainted("node1"));
    c.pod_observed(None, Some(&p), Time(0));
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    settle(&mut c, &view, Time(0), &mut out);
    assert_eq!(c.next_deadline(), Some(Time(10_000)));
    settle(&mut c, &view, Time(10_000), &mut out);
    // The live read (GET pod, GET node) passes: the API shows the taint.
    let patch = loop {
        let req = c.pending_requests().next().cloned().expect("a request");
        if req.verb == crate::Verb::PatchDisruptionTarget {
            break req;
        }
        let answer = crate::api_server::answer_from_view(&req, &view);
        c.api_responded(req.id, answer);
        c.step(continue_work(req.id), &view, Time(10_000), &mut out);
    };
    let clean = Node {
        name: "node1".into(),
        taints: vec![],
    };
    c.node_observed(Some(&tainted("node1")), Some(&clean), Time(10_000));
    c.node_observed(Some(&clean), Some(&tainted("node1")), Time(10_000));
    out.clear();
    let patched = ApiResult::Patched(crate::api::ResourceVersion(2));
    c.api_responded(patch.id, patched);
    c.step(continue_work(patch.id), &view, Time(10_000), &mut out);
    assert_eq!(deletes(&out), 0, "{out:?}");
    assert_eq!(
        notes(&out),
        [Note::Rescheduled {
            fire_at: Time(20_000)
        }]
    );
    assert_eq!(c.next_deadline(), Some(Time(20_000)));
}

/// PROFILE-10 (fixed): a second taint tolerated for less time, arriving later, does not pull
/// the deadline before its own arrival plus its toleration: the first taint's deadline stays.
#[test]
fn later_shorter_taint_keeps_each_taints_own_deadline() {
    let taint = |k: &str| Taint::new(k, "", TaintEffect::NoExecute);
    let node = |keys: &[&str]| Node {
        name: "node1".into(),
        taints: keys.iter().map(|k| taint(k)).collect(),
    };
    let mut p = pod("a", "node1", None);
    p.tolerations = [("x", 100), ("y", 10)]
        .iter()
        .map(|(k, s)| Toleration::exists(k, Some(TaintEffect::NoExecute), Some(*s)))
        .collect();
    let mut c = Controller::new(Config::new(Profile::fixed()));
    let mut view = Cluster::default();
    let mut out = vec![];
    view.pods.insert(p.key.clone(), p.clone());
    view.nodes.insert("node1".into(), node(&["x"]));
    c.pod_observed(None, Some(&p), Time(0));
    c.node_observed(None, Some(&node(&["x"])), Time(0));
    settle(&mut c, &view, Time(0), &mut out);
    assert_eq!(c.next_deadline(), Some(Time(100_000)));
    view.nodes.insert("node1".into(), node(&["x", "y"]));
    c.node_observed(Some(&node(&["x"])), Some(&node(&["x", "y"])), Time(95_000));
    settle(&mut c, &view, Time(95_000), &mut out);
    assert_eq!(deletes(&out), 0, "{out:?}");
    assert_eq!(c.next_deadline(), Some(Time(100_000)));
    // With x removed, y's own deadline (95 s + 10 s) is the one left.
    view.nodes.insert("node1".into(), node(&["y"]));
    c.node_observed(Some(&node(&["x", "y"])), Some(&node(&["y"])), Time(96_000));
    settle(&mut c, &view, Time(96_000), &mut out);
    assert_eq!(c.next_deadline(), Some(Time(105_000)));
}

mod explore {
    use super::*;
    use crate::strategies;
    use crate::{ApiResult, Entry};
    use proptest::prelude::*;

    /// One thing the environment or the scheduler does.
    #[derive(Clone, Debug)]
    enum Op {
        PutNode(Node),
        DeleteNode(u8),
        PutPod(Pod),
        DeletePod(u8),
        Step(u8),
        Respond(u8, u8),
        Tick(u16),
        Restart,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => strategies::node().prop_map(Op::PutNode),
            1 => any::<u8>().prop_map(Op::DeleteNode),
            2 => strategies::pod().prop_map(Op::PutPod),
            1 => any::<u8>().prop_map(Op::DeletePod),
            8 => any::<u8>().prop_map(Op::Step),
            2 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Respond(a, b)),
            2 => (0u16..20_000).prop_map(Op::Tick),
            1 => Just(Op::Restart),
        ]
    }

    fn nth<T: Clone>(items: impl Iterator<Item = T>, i: u8) -> Option<T> {
        let items: Vec<T> = items.collect();
        (!items.is_empty()).then(|| items[usize::from(i) % items.len()].clone())
    }

    /// The invariants every reachable state keeps (CORE-PRE, CORE-A3, CORE-S2).
    fn check(c: &Controller) -> Result<(), TestCaseError> {
        prop_assert!(!c.precondition_violated(), "CORE-PRE violated");
        let n = c.shards().len();
        for (k, shard) in c.shards().busy() {
            prop_assert!(!shard.is_idle(), "idle shard {} stored", k);
            for node in &shard.nodes {
                prop_assert_eq!(shards::shard_of(node, n), k);
            }
            for item in &shard.pods {
                prop_assert_eq!(shards::shard_of(item.node_str(), n), k);
            }
            match &shard.worker {
                Worker::Idle => {}
                Worker::Draining { pod } => {
                    prop_assert_eq!(shards::shard_of(pod.node_str(), n), k)
                }
                Worker::Node { node, then, .. } => {
                    prop_assert_eq!(shards::shard_of(node, n), k);
                    if let Some(pod) = then {
                        prop_assert_eq!(shards::shard_of(pod.node_str(), n), k);
                    }
                }
            }
        }
        let q = c.timed_queue();
        for entry in q.entries().values() {
            if let Some(work) = entry.work() {
                prop_assert!(q.work(work).is_some(), "entry names a missing work");
            }
            if let Entry::Timer { work, fire_at, .. } = entry {
                prop_assert!(q.work(*work).is_some_and(|w| w.fire_at == *fire_at
                    || c.profile().deadline_policy
                        == crate::profile::DeadlinePolicy::EarliestLegal));
            }
        }
        Ok(())
    }

    /// A controller, its caches and its clock, driven by [`Op`]s.
    struct Run {
        c: Controller,
        view: Cluster,
        now: Time,
        out: Vec<Effect>,
    }

    impl Run {
        fn new(profile: &str) -> Run {
            let config = Config {
                workers: 3,
                node_channel_capacity: 2,
                pod_channel_capacity: 1,
                ..Config::new(Profile::by_name(profile).unwrap())
            };
            Run {
                c: Controller::new(config),
                view: Cluster::default(),
                now: Time(0),
                out: Vec::new(),
            }
        }

        fn apply(&mut self, op: Op) {
            let Run {
                c,
                view,
                now: clock,
                out,
            } = self;
            let now = *clock;
            match op {
                Op::PutNode(node) => {
                    let old = view.nodes.insert(node.name.clone(), node.clone());
                    c.node_observed(old.as_ref(), Some(&node), now);
                }
                Op::DeleteNode(i) => {
                    if let Some(name) = nth(view.nodes.keys().cloned(), i) {
                        let old = view.nodes.remove(&name);
                        c.node_observed(old.as_ref(), None, now);
                    }
                }
                Op::PutPod(pod) => {
                    let old = view.pods.insert(pod.key.clone(), pod.clone());
                    c.pod_observed(old.as_ref(), Some(&pod), now);
                }
                Op::DeletePod(i) => {
                    if let Some(key) = nth(view.pods.keys().cloned(), i) {
                        let old = view.pods.remove(&key);
                        c.pod_observed(old.as_ref(), None, now);
                    }
                }
                Op::Step(i) => {
                    let mut enabled = Vec::new();
                    c.enabled_steps(now, &mut enabled);
                    if let Some(step) = nth(enabled.into_iter(), i) {
                        c.step(step, view, now, out);
                    }
                }
                Op::Respond(i, r) => {
                    if let Some(req) = nth(c.pending_requests().cloned(), i) {
                        let result = match r % 4 {
                            0 => ApiResult::Failed,
                            1 => ApiResult::NotFound,
                            2 => ApiResult::PreconditionFailed,
                            _ => crate::api_server::answer_from_view(&req, view),
                        };
                        c.api_responded(req.id, result);
                    }
                }
                Op::Tick(ms) => *clock = now.plus(crate::time::Duration(i64::from(ms))),
                Op::Restart => c.restarted(),
            }
        }
    }

    fn hash_of(c: &Controller) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(c)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Random environments and schedules never break the invariants, in any profile.
        #[test]
        fn invariants_hold_under_any_schedule(
            profile in prop::sample::select(Profile::NAMES.to_vec()),
            ops in prop::collection::vec(op(), 0..120),
        ) {
            let mut run = Run::new(profile);
            for op in ops {
                run.apply(op);
                check(&run.c)?;
            }
        }

        /// The reported work steps are exactly the start, continuation and completion steps a
        /// full scan finds: after any call, every one enabled was reported since it last became
        /// enabled, and each reported one is enabled; and reporting changes neither the state, its
        /// equality nor its hash.
        #[test]
        fn reported_work_steps_agree_with_a_full_scan(
            profile in prop::sample::select(Profile::NAMES.to_vec()),
            ops in prop::collection::vec(op(), 0..120),
        ) {
            let mut plain = Run::new(profile);
            let mut run = Run::new(profile);
            run.c.report_work_steps();
            let mut known: std::collections::BTreeSet<Step> = Default::default();
            for op in ops {
                plain.apply(op.clone());
                run.apply(op);
                prop_assert!(run.c == plain.c, "reporting changed the state");
                prop_assert_eq!(hash_of(&run.c), hash_of(&plain.c));
                let mut scanned: Vec<Step> = Vec::new();
                run.c.enabled_work_steps(run.now, &mut scanned);
                scanned.retain(|s| {
                    matches!(
                        s,
                        Step::StartWork(_) | Step::ContinueWork(_) | Step::CompleteWork(_)
                    )
                });
                let mut reported: Vec<Step> = Vec::new();
                run.c.poll_work_steps(&mut reported);
                let in_order = reported.iter().filter(|s| scanned.contains(s)).count();
                prop_assert_eq!(in_order, reported.len(), "reported a step not enabled");
                let mut sorted = reported.clone();
                sorted.sort_by_key(|s| scanned.iter().position(|x| x == s));
                prop_assert_eq!(&sorted, &reported, "not in enabled_steps' order");
                known.extend(reported);
                known.retain(|s| scanned.contains(s));
                prop_assert_eq!(known.iter().cloned().collect::<Vec<_>>(), {
                    scanned.sort();
                    scanned
                });
            }
        }
    }
}

/// The step in which the work that sent `request` takes its answer in.
fn continue_work(request: crate::RequestId) -> Step {
    Step::ContinueWork(crate::WorkId(request.0))
}

/// PROFILE-2: a caller that chooses the two-`Now()` outcome once for all, as a clock would,
/// keeps of each worker step offered both ways the preferred outcome only; a step offered one
/// way only (another worker's, or another pick's) and every other step stay, in order.
#[test]
fn resolving_the_immediate_outcome_keeps_the_preferred_of_each_pair() {
    let step = |worker, immediate, pick| Step::WorkerContinue {
        worker,
        immediate,
        pick,
    };
    let (nil, timer) = (Immediate::Nil, Immediate::Timer);
    let offered = vec![
        Step::DispatchNode,
        step(1, nil, 0),
        step(1, timer, 0),
        step(2, nil, 0),
        step(3, timer, 0),
        step(4, nil, 0),
        step(4, timer, 1),
        Step::StartWork(WorkId(0)),
    ];
    for (preferred, kept) in [
        (
            timer,
            vec![
                Step::DispatchNode,
                step(1, timer, 0),
                step(2, nil, 0),
                step(3, timer, 0),
                step(4, nil, 0),
                step(4, timer, 1),
                Step::StartWork(WorkId(0)),
            ],
        ),
        (
            nil,
            vec![
                Step::DispatchNode,
                step(1, nil, 0),
                step(2, nil, 0),
                step(3, timer, 0),
                step(4, nil, 0),
                step(4, timer, 1),
                Step::StartWork(WorkId(0)),
            ],
        ),
    ] {
        let mut steps = offered.clone();
        Step::resolve_immediate(&mut steps, preferred);
        assert_eq!(steps, kept, "{preferred:?}");
    }
}

/// What a caller may watch (the runtime's schedule probe and trace notes): a worker's buffered
/// node items, the node item it handles and the pod item it holds (CORE-A4); nothing for an
/// idle worker or one past the last.
#[test]
fn worker_status_shows_the_items_a_worker_holds() {
    use crate::controller::WorkerStatus;
    let mut c = Controller::new(Config::new(Profile::latest()));
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    let p = pod("p", "node1", None);
    view.pods.insert(p.key.clone(), p.clone());
    let mut out = vec![];
    c.pod_observed(None, Some(&p), Time(0));
    c.step(Step::DispatchPod, &view, Time(0), &mut out);
    c.step(Step::WorkerTakePod(4), &view, Time(0), &mut out);
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    c.step(Step::DispatchNode, &view, Time(0), &mut out);
    let item = crate::intake::PodItem {
        key: p.key.clone(),
        node_name: Some("node1".into()),
    };
    assert_eq!(
        c.worker_status(4),
        WorkerStatus {
            node_channel: vec!["node1".into()],
            node: None,
            pod: Some(item.clone()),
        }
    );
    c.step(cont(4), &view, Time(0), &mut out);
    assert_eq!(
        c.worker_status(4),
        WorkerStatus {
            node_channel: vec![],
            node: Some("node1".into()),
            pod: Some(item),
        }
    );
    assert_eq!(c.worker_status(c.shards().len()), WorkerStatus::default());
    settle(&mut c, &view, Time(0), &mut out);
    assert_eq!(c.worker_status(4), WorkerStatus::default());
}

/// A work's outcome is visible once its function returned, until its completion step
/// (CORE-A10): a work waiting on its GET shows none; answered through to its DELETE, it shows
/// its pod and `Succeeded`.
#[test]
fn finished_work_shows_the_outcome_until_completion() {
    let (mut c, view) = two_works(Profile::latest());
    let req = c.pending_requests().next().cloned().expect("a request");
    let id = WorkId(req.id.0);
    assert_eq!(c.finished_work(id), None, "waiting on its GET");
    let mut out = vec![];
    let mut req = req;
    loop {
        let answer = crate::api_server::answer_from_view(&req, &view);
        c.api_responded(req.id, answer);
        c.step(continue_work(req.id), &view, Time(0), &mut out);
        match c.pending_requests().find(|r| r.id == req.id) {
            Some(next) => req = next.clone(),
            None => break,
        }
    }
    assert_eq!(
        c.finished_work(id),
        Some((&req.pod, crate::timed_queue::Outcome::Succeeded))
    );
    c.step(Step::CompleteWork(id), &view, Time(0), &mut out);
    assert_eq!(c.finished_work(id), None, "completed");
}

/// CORE-A3: the node dispatcher, like the pod one, holds its item while the shard's node
/// channel is full (upstream's buffered channels of `NodeUpdateChannelSize`) and moves it once
/// the worker took an item off the channel.
#[test]
fn node_dispatcher_blocks_on_a_full_node_channel() {
    let mut c = Controller::new(Config {
        node_channel_capacity: 2,
        ..Config::new(Profile::latest())
    });
    let view = Cluster::default();
    let shard = shards::shard_of("node1", 8);
    let names: Vec<String> = (0..)
        .map(|i| format!("node{i}"))
        .filter(|n| shards::shard_of(n, 8) == shard)
        .take(3)
        .collect();
    for name in &names {
        c.node_observed(None, Some(&tainted(name)), Time(0));
    }
    let mut out = vec![];
    for _ in 0..3 {
        c.step(Step::DispatchNode, &view, Time(0), &mut out);
    }
    assert_eq!(c.held().0.map(|n| &**n), Some(names[2].as_str()));
    assert_eq!(c.shards().get(shard).unwrap().nodes.len(), 2);
    assert!(!steps(&c, Time(0)).contains(&Step::DispatchNode));
    c.step(Step::WorkerTakeNode(shard), &view, Time(0), &mut out);
    assert!(steps(&c, Time(0)).contains(&Step::DispatchNode));
    c.step(Step::DispatchNode, &view, Time(0), &mut out);
    assert_eq!(c.held().0, None);
    assert_eq!(c.shards().get(shard).unwrap().nodes.len(), 2);
}

/// PROFILE-2 under `Listing::Any` (CORE-A6): the two-`Now()` outcome is offered for the pick
/// that reaches an untolerated pod, counted from the next listed pod, and not for a tolerated
/// one.
#[test]
fn immediate_outcomes_follow_the_pick_under_any_listing() {
    let mut c = Controller::new(Config {
        listing: Listing::Any,
        ..Config::new(Profile::v1_18())
    });
    let mut view = Cluster::default();
    view.nodes.insert("node1".into(), tainted("node1"));
    for (name, seconds) in [("a", Some(10)), ("b", None), ("c", Some(10))] {
        let p = pod(name, "node1", seconds);
        view.pods.insert(p.key.clone(), p);
    }
    let mut out = vec![];
    c.node_observed(None, Some(&tainted("node1")), Time(0));
    for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
        c.step(s, &view, Time(0), &mut out);
    }
    let timers: Vec<u16> = steps(&c, Time(0))
        .iter()
        .filter_map(|s| match s {
            Step::WorkerContinue {
                worker: 4,
                immediate: Immediate::Timer,
                pick,
            } => Some(*pick),
            _ => None,
        })
        .collect();
    assert_eq!(timers, [1], "only pod b is untolerated");
}

/// A step that is not enabled does nothing (CORE-A6): a pick past the offered ones, here the
/// second listed pod under `Listing::ByName` (which offers only the next), or a pick past the
/// last pod under `Listing::Any`, leaves the controller as it was.
#[test]
fn a_pick_that_is_not_offered_does_nothing() {
    for (listing, pick) in [(Listing::ByName, 1), (Listing::Any, 2)] {
        let mut c = Controller::new(Config {
            listing,
            ..Config::new(Profile::latest())
        });
        let mut view = Cluster::default();
        view.nodes.insert("node1".into(), tainted("node1"));
        for name in ["a", "b"] {
            let p = pod(name, "node1", Some(10));
            view.pods.insert(p.key.clone(), p);
        }
        let mut out = vec![];
        c.node_observed(None, Some(&tainted("node1")), Time(0));
        for s in [Step::DispatchNode, Step::WorkerTakeNode(4), cont(4)] {
            c.step(s, &view, Time(0), &mut out);
        }
        let before = c.clone();
        let step = Step::WorkerContinue {
            worker: 4,
            immediate: Immediate::Nil,
            pick,
        };
        assert!(!steps(&c, Time(0)).contains(&step), "{listing:?}");
        c.step(step, &view, Time(0), &mut out);
        assert_eq!(c, before, "{listing:?}");
    }
}

/// CORE-PRE: `processPodOnNode` reached with zero taints is counted, each time, so the model's
/// check of the precondition sees it. No step reaches it while `taintedNodes` holds tainted
/// nodes only (the zero-taint short-circuits, semantics §4.4); an entry without taints, set
/// here, lets a pod update reach it, as it would if a short-circuit were lost.
#[test]
fn each_zero_taint_call_is_counted() {
    let mut c = Controller::new(Config::new(Profile::latest()));
    let mut view = Cluster::default();
    view.nodes.insert(
        "node1".into(),
        Node {
            name: "node1".into(),
            taints: vec![],
        },
    );
    let mut out = vec![];
    c.tainted_nodes
        .make_mut()
        .insert("node1".into(), Vec::<Taint>::new().into());
    for (calls, name) in [(1, "a"), (2, "b")] {
        let p = pod(name, "node1", None);
        view.pods.insert(p.key.clone(), p.clone());
        c.pod_observed(None, Some(&p), Time(0));
        settle(&mut c, &view, Time(0), &mut out);
        assert_eq!(c.zero_taint_calls, calls);
    }
    assert_eq!(notes(&out), [Note::ZeroTaints, Note::ZeroTaints]);
    assert!(c.precondition_violated());
}

/// CORE-A2, PROFILE-7: an update that swaps in another incarnation of the name with the same
/// node and tolerations (a relist's difference, INF-1) passes the intake only where works are
/// keyed by UID; upstream's filter, keyed by name, drops it.
#[test]
fn another_incarnation_passes_the_intake_only_under_uid_keys() {
    let old = pod("p", "node1", Some(10));
    let new = Pod {
        uid: Uid("p-2".into()),
        ..old.clone()
    };
    let mut fixed = Controller::new(Config::new(Profile::fixed()));
    assert!(fixed
        .pod_observed(Some(&old), Some(&new), Time(0))
        .is_some());
    let mut latest = Controller::new(Config::new(Profile::latest()));
    assert!(latest
        .pod_observed(Some(&old), Some(&new), Time(0))
        .is_none());
    // The same incarnation with the same node and tolerations: dropped by both.
    assert!(fixed
        .pod_observed(Some(&old), Some(&old), Time(0))
        .is_none());
}

/// A caller that saw requests this controller did not send (the oracle's components, each a
/// controller for one pod) lends it the bucket they drained, and the works' next request waits
/// for its token; an unlimited client stays unlimited. Spec: CORE-THROTTLE.
#[test]
fn a_lent_bucket_replaces_the_clients_own() {
    use crate::throttle::{Bucket, RateLimit};
    let limit = RateLimit::qps(1, 1).unwrap();
    let mut drained = Bucket::new(limit);
    drained.reserve(Time(0));
    let mut c = Controller::new(Config {
        rate_limit: Some(limit),
        ..Config::new(Profile::latest())
    });
    assert_eq!(c.timed_queue().bucket(), Some(&Bucket::new(limit)));
    c.use_bucket(drained);
    assert_eq!(c.timed_queue().bucket(), Some(&drained));
    assert!(!c.timed_queue().bucket().unwrap().has_token(Time(0)));
    let mut unlimited = Controller::new(Config::new(Profile::latest()));
    unlimited.use_bucket(drained);
    assert_eq!(unlimited.timed_queue().bucket(), None);
}

/// A restart keeps the caller's choice of work-step reports (CORE-A15): on if it was on, off
/// if it was off.
#[test]
fn a_restart_keeps_the_choice_of_work_step_reports() {
    for reports in [false, true] {
        let mut c = Controller::new(Config::new(Profile::latest()));
        if reports {
            c.report_work_steps();
        }
        c.restarted();
        assert_eq!(c.timed.reports_ready(), reports);
    }
}
