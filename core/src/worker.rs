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
    Updated {
        /// The node's NoExecute taints as read.
        taints: Arc<[Taint]>,
    },
    /// Pods listed at `now` (the one `now` of the node), in name order; `pods[next]` is
    /// processed next (or, with no taints, cancelled by the short-circuit). Under
    /// [`crate::Listing::Any`] a processed pod leaves the list instead and `next` stays 0, so a
    /// state holds the set of pods still to do, whatever the order they were taken in.
    Pods {
        /// The node's NoExecute taints as read in phase 1.
        taints: Arc<[Taint]>,
        /// The pods on the node, from the cache at listing time.
        pods: Listed,
        /// The index of the pod processed next.
        next: usize,
        /// The one `now` every pod of this node is judged at.
        now: Time,
    },
}

/// What a worker is doing. Spec: CORE-S6.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Worker {
    /// Waiting on its shard's channels.
    #[default]
    Idle,
    /// Holding a pod item, draining the shard's node channel first.
    Draining {
        /// The pod item handled once the node channel is empty.
        pod: PodItem,
    },
    /// Handling a node item; `then` is the pod item whose drain it belongs to.
    Node {
        /// The node being handled.
        node: NodeName,
        /// How far `handleNodeUpdate` has got.
        phase: NodePhase,
        /// The pod item handled after the drain, if the node item was taken while draining.
        then: Option<PodItem>,
    },
}
