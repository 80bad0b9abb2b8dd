//! The projection of a Rust model state on the variables it shares with the Quint specification
//! (specs/quint/README.md "Cross-check"): the Rust side of both replays.

use taintcheck_core::api::{Node, Pod};
use taintcheck_model::check::properties::{Flag, Witness};
use taintcheck_model::check::SysState;

use super::itf::{PodView, Projection};

/// `s` projected; a UID `name-n` becomes `n`, as Quint numbers incarnations.
pub fn project(s: &SysState) -> Projection {
    let taint_keys = |node: &Node| -> Vec<String> {
        node.no_execute_taints()
            .map(|t| t.key.to_string())
            .collect()
    };
    let pod = |p: &Pod, dt: bool, terminating: bool| PodView {
        uid: p
            .uid
            .0
            .rsplit('-')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(-1),
        node: p.node_name.as_deref().unwrap_or("").to_string(),
        tolerations: p
            .tolerations
            .iter()
            .map(|t| (t.key.to_string(), t.seconds.unwrap_or(-1)))
            .collect(),
        disruption_target: dt,
        terminating,
    };
    Projection {
        now: s.now.0,
        budget: i64::from(s.env.budget),
        fail_next: s.env.fail_next,
        api_nodes: s
            .api
            .nodes
            .iter()
            .map(|(k, n)| (k.to_string(), taint_keys(&n.node)))
            .collect(),
        api_pods: s
            .api
            .pods
            .iter()
            .map(|(k, p)| {
                (
                    k.name.to_string(),
                    pod(&p.pod, p.disruption_target, p.deletion.is_some()),
                )
            })
            .collect(),
        node_cache: s
            .nodes
            .cache
            .iter()
            .map(|(k, n)| (k.to_string(), taint_keys(&n.node)))
            .collect(),
        pod_cache: s
            .pods
            .cache
            .iter()
            .map(|(k, p)| (k.name.to_string(), pod(&p.pod, false, false)))
            .collect(),
        nodes_pending: s.nodes.pending.len(),
        pods_pending: s.pods.pending.len(),
        tainted_nodes: s
            .ctrl
            .tainted_nodes()
            .iter()
            .map(|(k, ts)| {
                (
                    k.to_string(),
                    ts.iter().map(|t| t.key.to_string()).collect(),
                )
            })
            .collect(),
        violated: [
            (Flag::EvictAfterRemoval, "EVICT-1"),
            (Flag::Premature, "EVICT-2"),
            (Flag::UidSafety, "UID-1"),
            (Flag::HonestCancel, "CANCEL-1"),
        ]
        .into_iter()
        .filter(|(f, _)| s.history.violated & f.bit() != 0)
        .map(|(_, id)| id.to_string())
        .collect(),
        witnessed: [
            (Witness::ImmediateEviction, "SOME-1"),
            (Witness::SecondsEviction, "SOME-2"),
            (Witness::CancelledTimer, "SOME-3"),
            (Witness::RetriedDeletion, "SOME-4"),
        ]
        .into_iter()
        .filter(|(w, _)| s.history.witnessed & w.bit() != 0)
        .map(|(_, id)| id.to_string())
        .collect(),
    }
}
