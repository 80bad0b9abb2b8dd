//! `handleNodeUpdate`, run by the composed controller, decides without allocating per pod once
//! the pods' work exists, and the matching hot path (`tolerates`, `verdict`) never allocates:
//! counted with a global allocator, not timed. Counts are per thread, so tests running in
//! parallel do not see each other's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use taintcheck_core::api::{Taint, TaintEffect, Toleration};
use taintcheck_core::matching::{tolerates, verdict, TolerationTime, Verdict};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;

#[path = "common/node_update.rs"]
mod node_update;

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

/// Once the pods' works exist, the node update's decisions allocate nothing per pod: only its
/// listing does, which copies each listed pod (the controller holds the pods as listed).
#[test]
fn node_update_decisions_allocate_nothing_per_pod() {
    let cluster = node_update::cluster(&["a", "b", "c"], 110);
    for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
        let mut c = node_update::fresh(profile, &cluster);
        let mut steps = Vec::with_capacity(64);
        let mut out = Vec::with_capacity(1024);
        node_update::node_update(&mut c, &cluster, Time(0), &mut steps, &mut out);
        assert_eq!(c.timed_queue().works().len(), 110, "{}", profile.name);
        out.clear();
        c.node_observed(None, cluster.nodes.get("node1"), Time(1));
        let before = allocations();
        // Dispatch, take the node item, list its pods.
        let run = |c: &mut _, limit, steps: &mut _, out: &mut _| {
            node_update::run_handlers(c, &cluster, Time(1), limit, steps, out)
        };
        assert_eq!(run(&mut c, 3, &mut steps, &mut out), 3);
        let listing = allocations() - before;
        let before = allocations();
        let taken = run(&mut c, usize::MAX, &mut steps, &mut out);
        let deciding = allocations() - before;
        assert_eq!(taken, 110, "{}: one step per listed pod", profile.name);
        assert_eq!(out.len(), 110, "{}: one decision per pod", profile.name);
        assert!(
            listing <= 110 + 12,
            "{}: {listing} allocations listing 110 pods",
            profile.name
        );
        assert!(
            deciding <= 4,
            "{}: {deciding} allocations deciding 110 pods",
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
