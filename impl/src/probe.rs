//! An optional record of what the controller's threads did, for the schedule-exploring tests
//! (`tests/shuttle.rs`): which keys were queued, which worker handled which item and when, and
//! what was buffered on a worker's node channel when it took a pod item. Off in normal runs.

use crate::sync::{lock, Arc, Mutex};
use taintcheck_model::api::NodeName;
use taintcheck_model::core::PodItem;

/// A work-queue key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Node(NodeName),
    Pod(PodItem),
}

/// One observation, in the order the probe's lock saw them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probed {
    /// An informer handed the key to its queue.
    Added(Key),
    /// Worker `worker` started handling the key.
    Began { worker: usize, key: Key },
    /// Worker `worker` finished handling the key (before `Done`).
    Ended { worker: usize, key: Key },
    /// Worker `worker` took a pod item; these node items were buffered on its channel then.
    TookPod {
        worker: usize,
        buffered: Vec<NodeName>,
    },
}

/// Cheap to clone.
#[derive(Clone, Default)]
pub struct Probe {
    log: Arc<Mutex<Vec<Probed>>>,
}

impl Probe {
    pub fn new() -> Probe {
        Probe::default()
    }

    pub fn push(&self, p: Probed) {
        lock(&self.log).push(p);
    }

    pub fn log(&self) -> Vec<Probed> {
        lock(&self.log).clone()
    }
}
