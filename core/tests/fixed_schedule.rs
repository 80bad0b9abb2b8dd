//! The fixed design's scheduling in `processPodOnNode` (spec CORE-A7, PROFILE-10): which existing
//! work it keeps and which it replaces.

mod common;
use common::web0;
use taintcheck_core::api::{Node, Taint, TaintEffect};
use taintcheck_core::driver::Cluster;
use taintcheck_core::handlers::process_pod_on_node;
use taintcheck_core::profile::Profile;
use taintcheck_core::shared::Shared;
use taintcheck_core::time::Time;
use taintcheck_core::timed_queue::{Entry, Immediate, KeyView, TimedQueue, WorkPhase};
use taintcheck_core::Context;
use taintcheck_core::{work, Arrivals, Note, Outcome};

/// A work whose function has returned (here: abandoned by its re-check, the pod being gone from
/// the caches) no longer evicts, although its entry stays until the completion step: a new
/// decision to evict replaces it with a new work instead of keeping it.
#[test]
fn a_finished_work_is_replaced_not_kept() {
    let profile = Profile::fixed();
    let arrivals = Arrivals::default();
    let taints = [Taint::new("t", "", TaintEffect::NoExecute)];
    let mut queue = Shared::new(TimedQueue::new());
    let mut out = vec![];
    // The pod is gone from the caches; the node keeps its taint.
    let gone = Cluster {
        nodes: [(
            "node1".into(),
            Node {
                name: "node1".into(),
                taints: taints.to_vec(),
            },
        )]
        .into(),
        pods: Default::default(),
    };
    let first = process_pod_on_node(
        &mut queue,
        Context {
            profile: &profile,
            view: &gone,
            arrivals: &arrivals,
            now: Time(0),
        },
        &web0("u1", Some("node1"), None),
        &taints,
        Immediate::Nil,
        &mut out,
    );
    assert_eq!(first, Note::EvictNow);
    let pod = web0("u1", Some("node1"), None);
    let key = KeyView::new(profile.work_key, &pod.key, &pod.uid);
    let old = queue.entry(&key).and_then(Entry::work).unwrap();

    assert!(work::start_work(
        queue.make_mut(),
        old,
        Context {
            profile: &profile,
            view: &gone,
            arrivals: &arrivals,
            now: Time(1),
        },
        &mut out
    ));
    assert_eq!(
        queue.work(old).unwrap().phase,
        WorkPhase::Finished {
            outcome: Outcome::Abandoned
        }
    );
    assert_eq!(queue.entry(&key).and_then(Entry::work), Some(old));

    let again = process_pod_on_node(
        &mut queue,
        Context {
            profile: &profile,
            view: &gone,
            arrivals: &arrivals,
            now: Time(2),
        },
        &pod,
        &taints,
        Immediate::Nil,
        &mut out,
    );
    assert_eq!(again, Note::EvictNow);
    let new = queue.entry(&key).and_then(Entry::work).unwrap();
    assert_ne!(new, old);
    assert_eq!(queue.work(new).unwrap().phase, WorkPhase::Spawned);
}
