//! What a caller running the controller may watch without reading its parts: a worker's
//! items, and a finished work's outcome. The runtime's schedule probe and its trace notes read
//! these; the controller's state types stay free to change shape behind them.

use super::Controller;
use crate::api::{NodeName, PodKey};
use crate::effect::WorkId;
use crate::intake::PodItem;
use crate::timed_queue::{Outcome, WorkPhase};
use crate::worker::Worker;

/// What worker `i` holds: the items waiting on its node channel and the items it has taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStatus {
    /// The node items buffered on the worker's node channel, oldest first.
    pub node_channel: Vec<NodeName>,
    /// The node item in `handleNodeUpdate`, if any.
    pub node: Option<NodeName>,
    /// The pod item taken, if any: waiting for the node channel to drain (and for `node`, if
    /// one is being handled meanwhile), or being handled.
    pub pod: Option<PodItem>,
}

impl Controller {
    /// What worker `worker` holds (nothing for an idle worker or an index past the last).
    pub fn worker_status(&self, worker: usize) -> WorkerStatus {
        let Some(shard) = self.shards.get(worker) else {
            return WorkerStatus::default();
        };
        let (node, pod) = match &shard.worker {
            Worker::Idle => (None, None),
            Worker::Draining { pod } => (None, Some(pod.clone())),
            Worker::Node { node, then, .. } => (Some(node.clone()), then.clone()),
        };
        WorkerStatus {
            node_channel: shard.nodes.iter().cloned().collect(),
            node,
            pod,
        }
    }

    /// The pod and outcome of work `id` if its work function has returned and its completion
    /// step ([`super::Step::CompleteWork`]) is next.
    pub fn finished_work(&self, id: WorkId) -> Option<(&PodKey, Outcome)> {
        let work = self.timed.work(id)?;
        match work.phase {
            WorkPhase::Finished { outcome } => Some((&work.key.pod, outcome)),
            _ => None,
        }
    }
}
