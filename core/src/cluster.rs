//! An in-memory cluster: nodes and pods in ordered maps, read as a [`ClusterView`]. The
//! sequential [`crate::driver`] keeps the API server's truth in one, and a caller that must show
//! the controller caches other than its own (the runtime's misreading mutants) builds one.

use crate::api::{Node, NodeName, Pod, PodKey};
use crate::ClusterView;
use std::collections::BTreeMap;

/// An in-memory cluster; as a [`ClusterView`], caches that never lag it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cluster {
    /// The nodes by name.
    pub nodes: BTreeMap<NodeName, Node>,
    /// The pods by `namespace/name`.
    pub pods: BTreeMap<PodKey, Pod>,
}

impl ClusterView for Cluster {
    fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name)
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key)
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        self.pods
            .values()
            .filter(|p| p.node_name.as_deref() == Some(name))
            .collect()
    }
}
