//! What a worker is doing: idle, draining its shard's node channel before a pod item, or
//! handling a node item in `handleNodeUpdate`'s phases. Spec: CORE-S6.

use crate::api::{NodeName, Pod, Taint};
use crate::intake::PodItem;
use crate::time::Time;
use std::sync::Arc;

/// A listed pod as `handleNodeUpdate` holds it: the cache object at listing time.
pub(crate) type Listed = Arc<[Pod]>;

/// A worker's progress through `handleNodeUpdate`. Spec: CORE-S6.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodePhase {
    /// `taintedNodes` updated with these taints (possibly none); the pods are listed next.
    Updated { taints: Arc<[Taint]> },
    /// Pods listed at `now` (the one `now` of the node), in name order; `pods[next]` is
    /// processed next (or, with no taints, cancelled by the short-circuit). Under
    /// [`Listing::Any`] a processed pod leaves the list instead and `next` stays 0, so a state
    /// holds the set of pods still to do, whatever the order they were taken in.
    Pods {
        taints: Arc<[Taint]>,
        pods: Listed,
        next: usize,
        now: Time,
    },
}

/// What a worker is doing. Spec: CORE-S6.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Worker {
    #[default]
    Idle,
    /// Holding a pod item, draining the shard's node channel first.
    Draining { pod: PodItem },
    /// Handling a node item; `then` is the pod item whose drain it belongs to.
    Node {
        node: NodeName,
        phase: NodePhase,
        then: Option<PodItem>,
    },
}
