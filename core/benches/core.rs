//! `handleNodeUpdate` on a node with 110 pods (the kubelet's default pod limit) and 3 NoExecute
//! taints, run by the composed controller (intake, dispatch, the worker's phases): pod decisions
//! per second on one core. `fresh`: no work exists yet, every pod gets a timer; `steady`: every
//! pod already has one (the common re-processing case, N9).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;

#[path = "../tests/common/node_update.rs"]
mod node_update;

const PODS: usize = 110;

const TAINTS: [&str; 3] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "example.com/maintenance",
];

fn bench(c: &mut Criterion) {
    let cluster = node_update::cluster(&TAINTS, PODS);
    let mut group = c.benchmark_group("handle_node_update");
    group.throughput(Throughput::Elements(PODS as u64));
    for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
        let mut steps = Vec::with_capacity(64);
        let mut out = Vec::with_capacity(4 * PODS);
        group.bench_function(format!("fresh/{}", profile.name), |b| {
            b.iter_batched_ref(
                || node_update::fresh(profile, &cluster),
                |controller| {
                    out.clear();
                    black_box(node_update::node_update(
                        controller,
                        &cluster,
                        Time(0),
                        &mut steps,
                        &mut out,
                    ))
                },
                BatchSize::SmallInput,
            )
        });
        let mut controller = node_update::fresh(profile, &cluster);
        node_update::node_update(&mut controller, &cluster, Time(0), &mut steps, &mut out);
        group.bench_function(format!("steady/{}", profile.name), |b| {
            b.iter(|| {
                out.clear();
                black_box(node_update::node_update(
                    &mut controller,
                    &cluster,
                    Time(1),
                    &mut steps,
                    &mut out,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
