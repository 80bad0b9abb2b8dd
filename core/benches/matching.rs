//! `tolerates`, `matching_tolerations` and `verdict` on a pod with 10 tolerations and a node with
//! 5 taints, larger than most real pods and nodes.
//! Run: `cargo bench -p taintcheck-core --bench matching`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use taintcheck_core::api::{Taint, TaintEffect, Toleration};
use taintcheck_core::matching::{matching_tolerations, tolerates, verdict};

/// Five NoExecute taints, and ten tolerations of which the last few do the tolerating, so every
/// taint scans most of the list (the realistic worst case for first-match order).
fn fixture() -> (Vec<Taint>, Vec<Toleration>) {
    let taints: Vec<Taint> = (0..5)
        .map(|i| {
            Taint::new(
                &format!("example.com/taint-{i}"),
                "v",
                TaintEffect::NoExecute,
            )
        })
        .collect();
    let mut tolerations: Vec<Toleration> = (0..6)
        .map(|i| {
            Toleration::equal(
                &format!("example.com/other-{i}"),
                "v",
                Some(TaintEffect::NoSchedule),
                None,
            )
        })
        .collect();
    tolerations.extend((0..4).map(|i| {
        Toleration::exists(
            &format!("example.com/taint-{i}"),
            Some(TaintEffect::NoExecute),
            Some(300 + i),
        )
    }));
    tolerations[9] = Toleration::exists("", Some(TaintEffect::NoExecute), None);
    (taints, tolerations)
}

fn bench(c: &mut Criterion) {
    let (taints, tolerations) = fixture();
    let hit = Toleration::equal(
        "example.com/taint-0",
        "v",
        Some(TaintEffect::NoExecute),
        Some(30),
    );
    c.bench_function("tolerates (match)", |b| {
        b.iter(|| tolerates(black_box(&hit), black_box(&taints[0]), false))
    });
    c.bench_function("tolerates (key mismatch)", |b| {
        b.iter(|| tolerates(black_box(&tolerations[0]), black_box(&taints[0]), false))
    });
    c.bench_function("matching_tolerations 5x10", |b| {
        b.iter(|| matching_tolerations(black_box(&taints), black_box(&tolerations), false))
    });
    c.bench_function("verdict 5x10", |b| {
        b.iter(|| verdict(black_box(&taints), black_box(&tolerations), false))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
