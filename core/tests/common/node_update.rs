//! `handleNodeUpdate` on one node through the composed [`Controller`]: what the allocation test
//! (`tests/allocations.rs`) counts and the bench (`benches/core.rs`) times, so that both measure
//! the steps the model, the oracle and the runtime run (intake, dispatch, the worker's phases),
//! not a composition of their own.

// Each target compiles this module and uses only part of it.
#![allow(dead_code)]

use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::driver::Cluster;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Time;
use taintcheck_core::{Config, Controller, Effect, Step};

/// `node1` with the NoExecute taints `keys`, and `pods` pods on it tolerating each taint for
/// 300 s plus the pod's index (so that every pod has a deadline of its own).
pub fn cluster(keys: &[&str], pods: usize) -> Cluster {
    let taints: Vec<Taint> = keys
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
        let seconds = 300 + i as i64;
        let pod = Pod {
            key: PodKey::new("default", &format!("pod-{i:03}")),
            uid: Uid(format!("uid-{i:03}").into()),
            node_name: Some("node1".into()),
            tolerations: taints
                .iter()
                .map(|t| Toleration::exists(&t.key, Some(TaintEffect::NoExecute), Some(seconds)))
                .collect(),
        };
        cluster.pods.insert(pod.key.clone(), pod);
    }
    cluster
}

/// A controller that has seen every pod of `cluster` (handled while their node was unknown, so
/// no work exists yet) but not the node.
pub fn fresh(profile: Profile, cluster: &Cluster) -> Controller {
    let mut c = Controller::new(Config::new(profile));
    for pod in cluster.pods.values() {
        c.pod_observed(None, Some(pod), Time(0));
    }
    let without_nodes = Cluster {
        nodes: Default::default(),
        pods: cluster.pods.clone(),
    };
    let (mut steps, mut out) = (Vec::new(), Vec::new());
    run_handlers(
        &mut c,
        &without_nodes,
        Time(0),
        usize::MAX,
        &mut steps,
        &mut out,
    );
    c
}

/// The node informer delivers `node1` as an add (as a re-list does) at `now`, and the
/// dispatcher and workers run until idle: the node item's `handleNodeUpdate`, one step per
/// phase and per listed pod. Returns the number of steps taken.
pub fn node_update(
    c: &mut Controller,
    cluster: &Cluster,
    now: Time,
    steps: &mut Vec<Step>,
    out: &mut Vec<Effect>,
) -> usize {
    c.node_observed(None, cluster.nodes.get("node1"), now);
    run_handlers(c, cluster, now, usize::MAX, steps, out)
}

/// Runs the first enabled dispatcher or worker step until none is or `limit` ran; returns how
/// many ran.
pub fn run_handlers(
    c: &mut Controller,
    cluster: &Cluster,
    now: Time,
    limit: usize,
    steps: &mut Vec<Step>,
    out: &mut Vec<Effect>,
) -> usize {
    let mut taken = 0;
    while taken < limit {
        steps.clear();
        c.enabled_handler_steps(steps);
        let Some(step) = steps.first().cloned() else {
            return taken;
        };
        c.step(step, cluster, now, out);
        taken += 1;
    }
    taken
}
