//! Sharding of node and pod items onto workers (semantics §3): FNV-1a 32-bit of the node name
//! modulo the worker count, so a node and the pods bound to it meet on one worker. Spec: CORE-A3.

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
    Node,
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
}
