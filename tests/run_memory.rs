//! A run's memory follows what it holds live, not the length of its trace (RT-REC-1, limits'
//! defect "taint operations on one node"): `taintcheck run` hands each record to its outputs and
//! to the expectation check as it is made. N taints added to one node make a trace of N node
//! versions carrying up to N taints each, quadratic in N; the run itself holds one node with N
//! taints. The peak heap of the streamed run, measured by a counting global allocator (this
//! binary holds this one test, so nothing else allocates meanwhile), must grow about linearly
//! from N to 4N operations: kept records would grow it about 16 times.

use std::sync::atomic::Ordering;
use taintcheck_core::profile::Profile;
use taintcheck_formats::scenario::{parse_scenario, RunCheck};
use taintcheck_formats::trace::to_line;
use taintcheck_runtime::driver::{run_scenario_streamed, ClockKind};
use taintcheck_runtime::timeline;

mod heap {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicIsize, Ordering};

    /// Bytes allocated and not freed, over every thread (the runtime's included).
    pub static LIVE: AtomicIsize = AtomicIsize::new(0);
    /// The most `LIVE` has been since it was last reset.
    pub static PEAK: AtomicIsize = AtomicIsize::new(0);

    pub struct Counting;

    fn add(n: isize) {
        let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
        PEAK.fetch_max(now, Ordering::Relaxed);
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
}

#[global_allocator]
static HEAP: heap::Counting = heap::Counting;

/// A pod tolerating every NoExecute taint, and `n` taints added to its node 10 ms apart, with
/// an expectation and a property so that the check reads every record.
fn taint_ops(n: usize) -> String {
    let mut s = String::from(
        "name: ops\nnodes: [{name: n1}]\npods:\n  - {name: p, node: n1, tolerations: \
         [{operator: Exists, effect: NoExecute}]}\nops:\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "  - {{at: {}ms, taint: n1 k{i}=v:NoExecute}}\n",
            i * 10
        ));
    }
    s.push_str(
        "expect:\n  all:\n    notDeleted: [p]\n    properties:\n      - {name: stays, always: \
         {never_deleted: {pods: p}}}\n",
    );
    s
}

/// The peak heap above the start of a streamed run of `taint_ops(n)`, with what `run` does
/// with each record (its trace line, its timeline line, the check), and the records seen.
fn peak_of_a_run(n: usize) -> (isize, usize) {
    let scenario = parse_scenario("ops.yaml", &taint_ops(n)).unwrap_or_else(|e| panic!("{e}"));
    let profile = Profile::by_name("latest").unwrap();
    let check = std::sync::Arc::new(std::sync::Mutex::new(Some(RunCheck::new(
        scenario.expectations_for(profile.name),
    ))));
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (sink_check, sink_seen) = (check.clone(), seen.clone());
    let before = heap::LIVE.load(Ordering::SeqCst);
    heap::PEAK.store(before, Ordering::SeqCst);
    run_scenario_streamed(
        &scenario,
        profile,
        ClockKind::Virtual,
        Box::new(move |record| {
            std::hint::black_box((to_line(&record), timeline::line(&record)));
            if let Some(c) = sink_check.lock().unwrap().as_mut() {
                c.record(&record);
            }
            sink_seen.fetch_add(1, Ordering::Relaxed);
        }),
    );
    let peak = heap::PEAK.load(Ordering::SeqCst) - before;
    let failures = check.lock().unwrap().take().unwrap().failures();
    assert!(failures.is_empty(), "{failures:?}");
    (peak, seen.load(Ordering::Relaxed))
}

#[test]
fn a_runs_heap_follows_its_live_node_not_its_trace() {
    const N: usize = 500;
    let (small, records) = peak_of_a_run(N);
    let (large, records_4n) = peak_of_a_run(4 * N);
    println!(
        "peak heap: {N} taint operations {small} bytes ({records} records), {} operations \
         {large} bytes ({records_4n} records), ratio {:.1}",
        4 * N,
        large as f64 / small as f64
    );
    assert!(records_4n >= 4 * N, "every operation is recorded");
    // Linear: about 4 (the node's taints, the check's first sightings); kept node versions
    // would make it about 16.
    assert!(
        large <= 7 * small,
        "peak heap {small} -> {large} bytes from {N} to {} operations",
        4 * N
    );
}
