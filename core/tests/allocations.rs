//! `handleNodeUpdate` allocates per node, never per pod, once the pods' work exists,
//! and the matching hot path (`tolerates`, `verdict`) never allocates:
//! counted with a global allocator, not timed. Counts are per thread, so tests running in
//! parallel do not see each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::handlers::{handle_node_update, TaintedNodes};
use taintcheck_core::matching::{tolerates, verdict, TolerationTime, Verdict};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::{Arrivals, Context};
use taintcheck_core::{Immediate, TimedQueue};

struct Counting;

thread_local! {
    // `const`-initialised and without a destructor: touching it never allocates.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made so far by the calling thread.
fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn cluster(pods: usize) -> Cluster {
    let taints: Vec<Taint> = ["a", "b", "c"]
        .iter()
        .map(|k| Taint::new(k, "", TaintEffect::NoExecute))
        .collect();
    let mut cluster = Cluster::default();
    let node = Node {
        name: "node1".into(),
        taints: taints.clone(),
    };
    cluster.nodes.insert(node.name.clone(), node);
    for i in 0..pods {
        let pod = Pod {
            key: PodKey::new("default", &format!("pod-{i:03}")),
            uid: Uid(format!("uid-{i}").into()),
            node_name: Some("node1".into()),
            tolerations: taints
                .iter()
                .map(|t| Toleration::exists(&t.key, Some(TaintEffect::NoExecute), Some(300)))
                .collect(),
        };
        cluster.pods.insert(pod.key.clone(), pod);
    }
    cluster
}

#[test]
fn node_update_allocates_per_node_not_per_pod() {
    for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
        let cluster = cluster(110);
        let name = "node1".into();
        // What `fixed`'s informer handlers would have recorded by then (the others ignore it).
        let mut arrivals = Arrivals::default();
        arrivals.node_observed(&name, cluster.nodes.get(&name), Time(0));
        for (key, pod) in &cluster.pods {
            arrivals.pod_observed(key, Some(pod), Time(0));
        }
        let mut queue = TimedQueue::new();
        let mut tainted = TaintedNodes::new();
        let mut out = Vec::with_capacity(1024);
        let at = |now| Context {
            profile: &profile,
            view: &cluster,
            arrivals: &arrivals,
            now,
        };
        let nil = Immediate::Nil;
        handle_node_update(&mut queue, &mut tainted, at(Time(0)), &name, nil, &mut out);
        out.clear();
        let before = allocations();
        let pods = handle_node_update(&mut queue, &mut tainted, at(Time(1)), &name, nil, &mut out);
        let allocations = allocations() - before;
        assert_eq!(pods, 110);
        assert_eq!(out.len(), 110, "{}: one decision per pod", profile.name);
        // The taint list (one Arc) and the listing (a Vec growing to 110): far below one per pod.
        assert!(
            allocations <= 12,
            "{}: {allocations} allocations",
            profile.name
        );
    }
}

/// The shape of the criterion bench: 5 NoExecute taints, 10 tolerations, the tolerating ones
/// last; `Lt`/`Gt` included so the integer parsing path is exercised too.
#[test]
fn tolerates_and_verdict_never_allocate() {
    let taints: Vec<Taint> = (0..5)
        .map(|i| {
            Taint::new(
                &format!("example.com/t{i}"),
                &format!("{}", 900 + i),
                TaintEffect::NoExecute,
            )
        })
        .collect();
    let mut tolerations: Vec<Toleration> = (0..6)
        .map(|i| Toleration::equal(&format!("example.com/o{i}"), "v", None, None))
        .collect();
    tolerations.extend(
        (0..4).map(|i| Toleration::exists(&format!("example.com/t{i}"), None, Some(300 + i))),
    );
    let mut gt = Toleration::equal(
        "example.com/t4",
        "100",
        Some(TaintEffect::NoExecute),
        Some(60),
    );
    gt.operator = taintcheck_core::api::Operator::Gt;
    tolerations.push(gt);

    let before = allocations();
    let mut matched = 0;
    for taint in &taints {
        for toleration in &tolerations {
            matched += usize::from(tolerates(toleration, taint, true));
        }
    }
    let v = verdict(&taints, &tolerations, true);
    let allocated = allocations() - before;
    assert_eq!(matched, 5);
    assert_eq!(
        v,
        Verdict::Tolerated(TolerationTime::After(
            taintcheck_core::time::Duration::from_secs(60)
        ))
    );
    assert_eq!(
        allocated, 0,
        "tolerates/verdict allocated {allocated} times"
    );
}
