//! `handleNodeUpdate` on a node with 110 pods (the kubelet's default pod limit) and 3 NoExecute
//! taints: pod decisions per second on one core. `fresh`: no work exists yet, every pod gets a
//! timer; `steady`: every pod already has one (the common re-processing case, N9).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::handlers::{handle_node_update, TaintedNodes};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::{Arrivals, Context};
use taintcheck_core::{Immediate, TimedQueue};

const PODS: usize = 110;

fn cluster() -> Cluster {
    let mut cluster = Cluster::default();
    let taints = [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "example.com/maintenance",
    ]
    .map(|k| Taint::new(k, "", TaintEffect::NoExecute));
    cluster.nodes.insert(
        "node1".into(),
        Node {
            name: "node1".into(),
            taints: taints.to_vec(),
        },
    );
    for i in 0..PODS {
        let tolerations = taints
            .iter()
            .map(|t| Toleration::exists(&t.key, Some(TaintEffect::NoExecute), Some(300 + i as i64)))
            .collect();
        let pod = Pod {
            key: PodKey::new("default", &format!("pod-{i:03}")),
            uid: Uid(format!("uid-{i:03}").into()),
            node_name: Some("node1".into()),
            tolerations,
        };
        cluster.pods.insert(pod.key.clone(), pod);
    }
    cluster
}

fn bench(c: &mut Criterion) {
    let cluster = cluster();
    let name = "node1".into();
    // The node and pods as `fixed`'s informer handlers record them before the update (the
    // upstream profiles ignore the record).
    let mut arrivals = Arrivals::default();
    arrivals.node_observed(&name, cluster.nodes.get(&name), Time(0));
    for (key, pod) in &cluster.pods {
        arrivals.pod_observed(key, Some(pod), Time(0));
    }
    let mut group = c.benchmark_group("handle_node_update");
    group.throughput(Throughput::Elements(PODS as u64));
    for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
        let mut out = Vec::with_capacity(4 * PODS);
        group.bench_function(format!("fresh/{}", profile.name), |b| {
            b.iter_batched_ref(
                || (TimedQueue::new(), TaintedNodes::new()),
                |(queue, tainted)| {
                    out.clear();
                    let cx = Context {
                        profile: &profile,
                        view: &cluster,
                        arrivals: &arrivals,
                        now: Time(0),
                    };
                    black_box(handle_node_update(
                        queue,
                        tainted,
                        cx,
                        &name,
                        Immediate::Nil,
                        &mut out,
                    ))
                },
                BatchSize::SmallInput,
            )
        });
        let mut queue = TimedQueue::new();
        let mut tainted = TaintedNodes::new();
        let at = |now| Context {
            profile: &profile,
            view: &cluster,
            arrivals: &arrivals,
            now,
        };
        handle_node_update(
            &mut queue,
            &mut tainted,
            at(Time(0)),
            &name,
            Immediate::Nil,
            &mut out,
        );
        group.bench_function(format!("steady/{}", profile.name), |b| {
            b.iter(|| {
                out.clear();
                black_box(handle_node_update(
                    &mut queue,
                    &mut tainted,
                    at(Time(1)),
                    &name,
                    Immediate::Nil,
                    &mut out,
                ))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
