//! `handleNodeUpdate` allocates per node, never per pod, once the pods' work exists (issue 3,
//! item 8): counted with a global allocator, not timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use taintcheck_model::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_model::core::driver::Cluster;
use taintcheck_model::core::handlers::{handle_node_update, TaintedNodes};
use taintcheck_model::core::{Immediate, TimedQueue};
use taintcheck_model::profile::Profile;
use taintcheck_model::time::Time;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
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
        let mut queue = TimedQueue::new();
        let mut tainted = TaintedNodes::new();
        let mut out = Vec::with_capacity(1024);
        let args = (&cluster, &name, Immediate::Nil);
        handle_node_update(
            &mut queue,
            &mut tainted,
            &profile,
            args.0,
            args.1,
            Time(0),
            args.2,
            &mut out,
        );
        out.clear();
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let pods = handle_node_update(
            &mut queue,
            &mut tainted,
            &profile,
            args.0,
            args.1,
            Time(1),
            args.2,
            &mut out,
        );
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
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
