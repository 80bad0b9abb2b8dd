//! Sharding of node and pod items onto workers (semantics §3): FNV-1a 32-bit of the node name
//! modulo the worker count, so a node and the pods bound to it meet on one worker. Spec: CORE-A3.
//! The shards themselves (channels and workers, CORE-S5, CORE-S6) live in [`Shards`].

use super::intake::PodItem;
use crate::api::NodeName;
use crate::worker::Worker;
use smallvec::SmallVec;

/// FNV-1a, 32 bit (offset basis `0x811c9dc5`, prime `16777619`), over the UTF-8 bytes.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash: u32, &b| {
        (hash ^ u32::from(b)).wrapping_mul(16_777_619)
    })
}

/// The worker that handles items of node `node` (upstream `hash(nodeName, workers)`).
/// Spec: CORE-A3.
pub fn shard_of(node: &str, workers: usize) -> usize {
    fnv1a32(node.as_bytes()) as usize % workers.max(1)
}

/// Which item an idle worker may take from its shard (upstream's `select`, which picks at random
/// among ready channels; the model offers every ready choice). Spec: CORE-A4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pick {
    /// The node channel's oldest item.
    Node,
    /// The pod channel's oldest item.
    Pod,
}

/// The choices an idle worker has given which of its two channels hold items.
pub fn worker_choices(node_ready: bool, pod_ready: bool) -> impl Iterator<Item = Pick> {
    [(node_ready, Pick::Node), (pod_ready, Pick::Pod)]
        .into_iter()
        .filter_map(|(ready, pick)| ready.then_some(pick))
}

/// What a worker holding a pod item does next: upstream drains every node item buffered on its
/// shard's node channel, handling each, before it handles the pod. Spec: CORE-A4.
pub fn drain_first(node_channel_len: usize) -> Pick {
    if node_channel_len > 0 {
        Pick::Node
    } else {
        Pick::Pod
    }
}

/// A bounded channel's buffer, oldest first. Upstream's buffers hold 10 node and 1 pod item, so
/// the first two are stored inline: a model state or oracle branch copies a shard holding one
/// item without an allocation. Taking the oldest shifts the rest, at most a capacity's worth.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Channel<T>(SmallVec<[T; 2]>);

impl<T> Default for Channel<T> {
    fn default() -> Self {
        Channel::new()
    }
}

impl<T> Channel<T> {
    /// An empty channel (no allocation).
    pub const fn new() -> Self {
        Channel(SmallVec::new_const())
    }

    /// Send: append `item` (the caller checks the capacity).
    pub fn push_back(&mut self, item: T) {
        self.0.push(item);
    }

    /// Receive: take the oldest item, if any.
    pub fn pop_front(&mut self) -> Option<T> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    /// The number of buffered items.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Nothing buffered.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Drop every buffered item.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The buffered items, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// The buffered items, oldest first, to change (renaming a state).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }
}

impl<'a, T> IntoIterator for &'a Channel<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// One shard: its two bounded channels and its worker. Spec: CORE-S5, CORE-S6.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Shard {
    /// Upstream `nodeUpdateChannels[i]`.
    pub nodes: Channel<NodeName>,
    /// Upstream `podUpdateChannels[i]`.
    pub pods: Channel<PodItem>,
    /// The worker goroutine that reads both.
    pub worker: Worker,
}

impl Shard {
    /// Nothing buffered and the worker idle: the shard every worker starts as.
    pub fn is_idle(&self) -> bool {
        self.nodes.is_empty() && self.pods.is_empty() && self.worker == Worker::Idle
    }
}

/// An idle shard, for the workers [`Shards`] does not store.
static IDLE: Shard = Shard {
    nodes: Channel::new(),
    pods: Channel::new(),
    worker: Worker::Idle,
};

/// Every worker's shard, storing only the busy ones (in worker order): an oracle component or a
/// model state clones, hashes and scans the one or two shards its pods' nodes map to, not all
/// eight. Equal controllers store equal lists because every mutation ends with `Shards::prune`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shards {
    count: usize,
    busy: Vec<(usize, Shard)>,
}

impl Shards {
    /// `count` idle shards (at least one).
    pub fn new(count: usize) -> Shards {
        Shards {
            count: count.max(1),
            busy: Vec::new(),
        }
    }

    /// The number of workers.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Never true: there is at least one worker.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Worker `w`'s shard, idle if not stored; `None` past the last worker.
    pub fn get(&self, w: usize) -> Option<&Shard> {
        if w >= self.count {
            return None;
        }
        Some(match self.position(w) {
            Ok(i) => &self.busy[i].1,
            Err(_) => &IDLE,
        })
    }

    /// Every shard that is not idle, with its worker index, in worker order.
    pub fn busy(&self) -> impl Iterator<Item = (usize, &Shard)> {
        self.busy.iter().map(|(w, s)| (*w, s))
    }

    /// Whether every shard is idle.
    pub fn all_idle(&self) -> bool {
        self.busy.is_empty()
    }

    /// Worker `w`'s shard for a change (`w` must be a worker); the caller calls
    /// [`Shards::prune`] once done.
    pub(crate) fn get_mut(&mut self, w: usize) -> &mut Shard {
        debug_assert!(w < self.count);
        let i = match self.position(w) {
            Ok(i) => i,
            Err(i) => {
                self.busy.insert(i, (w, Shard::default()));
                i
            }
        };
        &mut self.busy[i].1
    }

    /// The stored shards for a change that keeps them where they are.
    pub(crate) fn busy_mut(&mut self) -> impl Iterator<Item = &mut Shard> {
        self.busy.iter_mut().map(|(_, s)| s)
    }

    /// Whether a stored shard became idle ([`Shards::prune`] has something to do).
    pub(crate) fn has_idle(&self) -> bool {
        self.busy.iter().any(|(_, s)| s.is_idle())
    }

    /// Forgets the shards that became idle.
    pub(crate) fn prune(&mut self) {
        self.busy.retain(|(_, s)| !s.is_idle());
    }

    fn position(&self, w: usize) -> Result<usize, usize> {
        self.busy.binary_search_by_key(&w, |(i, _)| *i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_test_vectors() {
        assert_eq!(fnv1a32(b"node1"), 0x0f4e_2874);
        assert_eq!(fnv1a32(b"node2"), 0x124e_2d2d);
        assert_eq!(fnv1a32(b"node3"), 0x114e_2b9a);
        let shards: Vec<usize> = ["node1", "node2", "node3", "", "worker-0", "worker-1"]
            .iter()
            .map(|n| shard_of(n, 8))
            .collect();
        assert_eq!(shards, [4, 5, 2, 5, 2, 5]);
    }

    #[test]
    fn idle_worker_offers_every_ready_channel() {
        assert_eq!(worker_choices(true, true).count(), 2);
        assert_eq!(worker_choices(false, true).collect::<Vec<_>>(), [Pick::Pod]);
        assert_eq!(worker_choices(false, false).count(), 0);
        assert_eq!(drain_first(3), Pick::Node);
        assert_eq!(drain_first(0), Pick::Pod);
    }

    #[test]
    fn only_busy_shards_are_stored() {
        let mut shards = Shards::new(8);
        assert_eq!(shards.len(), 8);
        assert!(shards.get(8).is_none());
        assert_eq!(shards.get(5), Some(&IDLE));
        shards.get_mut(5).nodes.push_back("n".into());
        shards.get_mut(2).worker = Worker::Draining {
            pod: PodItem {
                key: crate::api::PodKey::new("default", "p"),
                node_name: Some("n".into()),
            },
        };
        shards.get_mut(7);
        shards.prune();
        assert_eq!(shards.busy().map(|(w, _)| w).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(shards.get(5).map(|s| s.nodes.len()), Some(1));
        shards.get_mut(5).nodes.clear();
        shards.prune();
        assert_eq!(shards.busy().count(), 1);
        // Equal contents compare and hash equal whatever the history.
        let mut other = Shards::new(8);
        other.get_mut(2).worker = shards.get(2).unwrap().worker.clone();
        assert_eq!(other, shards);
        shards.get_mut(2).worker = Worker::Idle;
        shards.prune();
        assert!(shards.all_idle());
        assert_eq!(shards, Shards::new(8));
    }

    /// A shard with a buffered item keeps the controller from idling (`handlers_idle`, CORE-S5):
    /// `all_idle` is false until its channel is emptied and pruned.
    #[test]
    fn a_busy_shard_is_not_idle() {
        let mut shards = Shards::new(2);
        assert!(shards.all_idle());
        shards.get_mut(1).nodes.push_back("n".into());
        shards.prune();
        assert!(!shards.all_idle());
        shards.get_mut(1).nodes.clear();
        shards.prune();
        assert!(shards.all_idle());
    }

    /// `busy_mut` yields every stored shard, in place (renaming a state changes their items
    /// without moving them), and no idle one.
    #[test]
    fn busy_mut_changes_the_stored_shards_in_place() {
        let mut shards = Shards::new(8);
        shards.get_mut(3).nodes.push_back("a".into());
        shards.get_mut(6).nodes.push_back("b".into());
        shards.prune();
        assert_eq!(shards.busy_mut().count(), 2);
        for shard in shards.busy_mut() {
            shard
                .nodes
                .iter_mut()
                .for_each(|n| *n = format!("{n}2").into());
        }
        let names = |w| {
            shards
                .get(w)
                .unwrap()
                .nodes
                .iter()
                .cloned()
                .collect::<Vec<NodeName>>()
        };
        assert_eq!(names(3), [NodeName::from("a2")]);
        assert_eq!(names(6), [NodeName::from("b2")]);
        assert_eq!(shards.busy().count(), 2);
    }

    /// A channel is a FIFO (upstream's buffered Go channels): the oldest item is received first,
    /// and its length counts what is buffered.
    #[test]
    fn channels_receive_oldest_first() {
        let mut c: Channel<u8> = Channel::default();
        assert!(c.is_empty() && c.pop_front().is_none());
        for i in [1, 2, 3] {
            c.push_back(i);
        }
        assert_eq!(c.len(), 3);
        assert!(!c.is_empty());
        c.iter_mut().for_each(|i| *i *= 10);
        assert_eq!((&c).into_iter().copied().collect::<Vec<_>>(), [10, 20, 30]);
        assert_eq!(c.pop_front(), Some(10));
        assert_eq!(c.iter().copied().collect::<Vec<_>>(), [20, 30]);
    }

    /// A shard is idle only with both channels empty and its worker idle (CORE-S5, CORE-S6): each
    /// one alone keeps it busy, so it stays stored.
    #[test]
    fn a_shard_is_idle_only_when_all_three_are() {
        assert!(Shard::default().is_idle());
        let item = PodItem {
            key: crate::api::PodKey::new("default", "p"),
            node_name: Some("n".into()),
        };
        let mut node = Shard::default();
        node.nodes.push_back("n".into());
        let mut pod = Shard::default();
        pod.pods.push_back(item.clone());
        let working = Shard {
            worker: Worker::Draining { pod: item },
            ..Shard::default()
        };
        for busy in [node, pod, working] {
            assert!(!busy.is_idle(), "{busy:?}");
        }
        assert!(!Shards::new(0).is_empty(), "at least one worker");
        assert_eq!(Shards::new(0).len(), 1);
    }
}
