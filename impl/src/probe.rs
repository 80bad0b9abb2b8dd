//! An optional record of what the controller's threads did, for the schedule-exploring tests
//! (`tests/shuttle.rs`): which keys were queued, which worker handled which item and when, and
//! what was buffered on a worker's node channel when it took a pod item. Off in normal runs.

use crate::sync::{lock, Arc, Mutex};
use taintcheck_core::api::NodeName;
use taintcheck_core::{PodItem, Step, WorkerStatus};

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

/// What worker `worker`'s `step` did, from what it held before and after: items taken, begun
/// and finished.
pub(crate) fn observe(
    worker: usize,
    step: &Step,
    before: &WorkerStatus,
    after: &WorkerStatus,
) -> Vec<Probed> {
    let mut seen = Vec::new();
    let took_pod = matches!(step, Step::WorkerTakePod(_));
    if took_pod {
        seen.push(Probed::TookPod {
            worker,
            buffered: before.node_channel.clone(),
        });
    }
    let (was, is) = (
        before.node.clone().map(Key::Node),
        after.node.clone().map(Key::Node),
    );
    // A node item taken from the channel (and possibly done within the same step).
    if after.node_channel.len() < before.node_channel.len() && !took_pod {
        let key = before.node_channel.first().cloned().map(Key::Node);
        seen.extend(key.clone().map(|key| Probed::Began { worker, key }));
        if is != key {
            seen.extend(key.map(|key| Probed::Ended { worker, key }));
        }
    } else if was.is_some() && is != was {
        seen.extend(was.map(|key| Probed::Ended { worker, key }));
    } else if let (Some(pod), None, true) =
        (&before.pod, &before.node, before.node_channel.is_empty())
    {
        // A taken pod item with nothing left to drain: this step handles it.
        if matches!(step, Step::WorkerContinue { .. }) {
            let key = Key::Pod(pod.clone());
            seen.push(Probed::Began {
                worker,
                key: key.clone(),
            });
            seen.push(Probed::Ended { worker, key });
        }
    }
    seen
}
