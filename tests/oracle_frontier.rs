//! The oracle's cost on hostile traces, counted in states and retained pods, never in time:
//!
//! * repeated and simultaneous identical updates keep a pod's frontier as small as one update
//!   does, and queue nothing (ORACLE-F1);
//! * memory follows the live pods: a stream of short-lived pods retains only those deleted within
//!   the latency bound (ORACLE-6).

use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::trace::{TraceEvent, TraceRecord, TRACE_VERSION};
use taintcheck_oracle::{Footprint, Oracle, Summary};

const D: Duration = Duration(1_000);

fn profiles() -> [Profile; 3] {
    Profile::NAMES.map(|n| Profile::by_name(n).unwrap())
}

fn header() -> TraceRecord {
    TraceRecord {
        t: Time(0),
        event: TraceEvent::Header {
            version: TRACE_VERSION,
            source: "test".into(),
            profile: None,
            scenario: None,
            observed: None,
            start: None,
            end: None,
            qps: None,
            burst: None,
        },
    }
}

fn at(ms: i64, event: TraceEvent) -> TraceRecord {
    TraceRecord { t: Time(ms), event }
}

/// Node `n1` with the taint `maintenance:NoExecute`.
fn tainted() -> Node {
    Node {
        name: "n1".into(),
        taints: vec![Taint::new("maintenance", "", TaintEffect::NoExecute)],
    }
}

/// Pod `default/NAME` on `n1`, tolerating `maintenance` for 300 s.
fn pod(name: &str) -> Pod {
    Pod {
        key: PodKey::new("default", name),
        uid: Uid(format!("{name}-uid").into()),
        node_name: Some("n1".into()),
        tolerations: vec![Toleration::exists(
            "maintenance",
            Some(TaintEffect::NoExecute),
            Some(300),
        )],
    }
}

/// A tainted node and a tolerating pod at 0, then `lines` of `line(i)`.
fn trace(lines: usize, line: impl Fn(usize) -> TraceRecord) -> Vec<TraceRecord> {
    let start = [
        header(),
        at(
            0,
            TraceEvent::NodeAdded {
                rv: 1,
                node: tainted(),
            },
        ),
        at(
            0,
            TraceEvent::PodAdded {
                rv: 2,
                pod: pod("web-0"),
            },
        ),
    ];
    start.into_iter().chain((0..lines).map(line)).collect()
}

/// Feeds `records`; the summary and the largest footprint seen after any line.
fn run(profile: Profile, records: &[TraceRecord]) -> (Summary, Footprint) {
    let mut oracle = Oracle::new(profile, D);
    let mut most = Footprint::default();
    for r in records {
        oracle.feed(r).unwrap();
        let f = oracle.footprint();
        most = Footprint {
            components: most.components.max(f.components),
            states: most.states.max(f.states),
            pending: most.pending.max(f.pending),
            pods: most.pods.max(f.pods),
            node_changes: most.node_changes.max(f.node_changes),
        };
    }
    (oracle.finish(None).unwrap(), most)
}

fn node_modified(ms: i64, rv: usize) -> TraceRecord {
    let rv = 3 + rv as u64;
    at(
        ms,
        TraceEvent::NodeModified {
            rv,
            node: tainted(),
        },
    )
}

/// The figures: 160 identical node updates 10 ms apart made 10,201 states, 5,000 did not
/// finish in a minute. Now 5,000 keep the frontier and the queues of one update.
#[test]
fn identical_node_updates_keep_the_frontier_of_one_update() {
    for profile in profiles() {
        let one = run(profile, &trace(1, |i| node_modified(10, i)));
        for n in [160, 5_000] {
            let (summary, most) = run(profile, &trace(n, |i| node_modified(10 + 10 * i as i64, i)));
            assert!(summary.max_frontier <= 4, "{summary:?} [{}]", profile.name);
            assert!(
                most.states <= 4 && most.pending <= 2,
                "{most:?} {:?}",
                one.1
            );
            assert!(most.node_changes <= 1, "{most:?} [{}]", profile.name);
        }
    }
}

/// 1M identical lines at one instant grew memory for over a minute; 100,000 queue nothing.
#[test]
fn identical_node_updates_at_one_instant_queue_nothing() {
    for profile in profiles() {
        let one = run(profile, &trace(1, |i| node_modified(10, i)));
        let (summary, most) = run(profile, &trace(100_000, |i| node_modified(10, i)));
        assert_eq!(
            summary.max_frontier, one.0.max_frontier,
            "[{}]",
            profile.name
        );
        assert!(most.states <= 4, "{most:?} {:?}", one.1);
        assert!(most.pending <= 2 && most.node_changes <= 1, "{most:?}");
    }
}

/// A pod's status writes (resourceVersion, `DisruptionTarget`) change nothing its informer
/// delivers: the frontier does not grow with their number, only with the instants its own lines
/// offer within the bound, and nothing is queued for them.
#[test]
fn repeated_status_writes_of_a_pod_keep_the_frontier_bounded() {
    let status = |i: usize| {
        at(
            10 + 10 * i as i64,
            TraceEvent::PodModified {
                rv: 3 + i as u64,
                pod: pod("web-0"),
                terminating: false,
                disruption_target: i % 2 == 1,
            },
        )
    };
    for profile in profiles() {
        let (few, few_most) = run(profile, &trace(500, status));
        let (many, many_most) = run(profile, &trace(5_000, status));
        assert_eq!(many.max_frontier, few.max_frontier, "[{}]", profile.name);
        // One state per instant the pod's first delivery may take within D (a line every
        // 10 ms), and a few more.
        assert!(many.max_frontier <= 110, "{many:?} [{}]", profile.name);
        assert_eq!(many_most.pending, few_most.pending, "[{}]", profile.name);
    }
}

/// A stream of 100,000 pods, each deleted 5 ms after it was added, one every 10 ms: the oracle
/// keeps the pods deleted within the last D (about 100), not every pod it has seen.
#[test]
fn short_lived_pods_are_forgotten() {
    for (profile, pods) in [(Profile::latest(), 100_000), (Profile::fixed(), 20_000)] {
        let mut oracle = Oracle::new(profile, D);
        oracle.feed(&header()).unwrap();
        let node = TraceEvent::NodeAdded {
            rv: 1,
            node: tainted(),
        };
        oracle.feed(&at(0, node)).unwrap();
        let mut rv = 2;
        let mut most = Footprint::default();
        for i in 0..pods {
            let p = pod(&format!("p{i}"));
            let t = 10 * i as i64;
            let uid = p.uid.clone();
            oracle
                .feed(&at(t, TraceEvent::PodAdded { rv, pod: p }))
                .unwrap();
            let deleted = TraceEvent::PodDeleted {
                rv: rv + 1,
                namespace: "default".into(),
                name: format!("p{i}"),
                uid,
            };
            oracle.feed(&at(t + 5, deleted)).unwrap();
            rv += 2;
            if i % 1_000 == 999 {
                let f = oracle.footprint();
                most.components = most.components.max(f.components);
                most.states = most.states.max(f.states);
                most.pods = most.pods.max(f.pods);
                most.node_changes = most.node_changes.max(f.node_changes);
            }
        }
        let end = oracle.footprint();
        let summary = oracle.finish(None).unwrap();
        assert_eq!(summary.pods, pods, "[{}]", profile.name);
        assert!(most.components <= 120, "{most:?} [{}]", profile.name);
        assert!(most.states <= 4 * 120, "{most:?} [{}]", profile.name);
        assert_eq!((most.pods, most.node_changes), (0, 1), "[{}]", profile.name);
        assert!(end.components <= 120, "{end:?} [{}]", profile.name);
    }
}

/// Bytes allocated and not yet freed by the current thread: the oracle runs on the test's own
/// thread, so other tests running at the same time do not count.
mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
    }

    pub struct Counting;

    fn add(n: isize) {
        let _ = LIVE.try_with(|l| l.set(l.get() + n));
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            System.alloc(layout)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-(layout.size() as isize));
            System.dealloc(ptr, layout)
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
            add(new as isize - layout.size() as isize);
            System.realloc(ptr, layout, new)
        }
    }

    pub fn live() -> isize {
        LIVE.with(|l| l.get())
    }
}

#[global_allocator]
static HEAP: heap::Counting = heap::Counting;

/// Memory follows the live pods at a bounded cost each (ORACLE-F2): 2,000 pods bound to a tainted
/// node, each tolerating it for 300 s and still waiting for its eviction, one every 10 ms. The
/// heap the oracle keeps per live pod is printed (`--nocapture`) and bounded.
#[test]
fn a_live_pod_costs_a_bounded_heap() {
    const PODS: usize = 2_000;
    for profile in profiles() {
        let before = heap::live();
        let mut oracle = Oracle::new(profile, D);
        oracle.feed(&header()).unwrap();
        let node = TraceEvent::NodeAdded {
            rv: 1,
            node: tainted(),
        };
        oracle.feed(&at(0, node)).unwrap();
        for i in 0..PODS {
            let added = TraceEvent::PodAdded {
                rv: 2 + i as u64,
                pod: pod(&format!("p{i}")),
            };
            oracle.feed(&at(10 * i as i64, added)).unwrap();
        }
        let f = oracle.footprint();
        let per_pod = (heap::live() - before) / PODS as isize;
        println!("{}: {per_pod} bytes per live pod, {f:?}", profile.name);
        assert_eq!(f.components, PODS, "[{}]", profile.name);
        // A state that delivered the pod at its line and one at the bound, until its eviction.
        assert!(f.states <= 2 * PODS + 100, "{f:?} [{}]", profile.name);
        assert!(per_pod <= 12_288, "{per_pod} bytes [{}]", profile.name);
        drop(oracle);
    }
}
