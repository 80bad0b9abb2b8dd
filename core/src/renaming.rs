//! Renamings of pods and nodes, which the model's symmetry reduction applies to a state
//! (spec MODEL-SYM).

use crate::api::{NodeName, Pod, PodKey, Uid};
use crate::intake::PodItem;

/// A bijection on pods (their keys and the UIDs of their incarnations) and on nodes, applied to
/// a state by [`crate::Controller::rename`]. Spec: MODEL-SYM.
pub trait Renaming {
    /// The pod key `key` is renamed to.
    fn key(&self, key: &PodKey) -> PodKey;
    /// The UID `uid` is renamed to.
    fn uid(&self, uid: &Uid) -> Uid;
    /// The node name `node` is renamed to.
    fn node(&self, node: &NodeName) -> NodeName;

    /// Whether some node is renamed: if not, what names only nodes is left as it is (and
    /// shared). A renaming that cannot tell answers `true`.
    fn moves_nodes(&self) -> bool {
        true
    }

    /// The pod object under the renaming (its tolerations are not identities).
    fn pod(&self, pod: &Pod) -> Pod {
        Pod {
            key: self.key(&pod.key),
            uid: self.uid(&pod.uid),
            node_name: pod.node_name.as_ref().map(|n| self.node(n)),
            tolerations: pod.tolerations.clone(),
        }
    }

    /// The pod work-queue item under the renaming.
    fn item(&self, item: &PodItem) -> PodItem {
        PodItem {
            key: self.key(&item.key),
            node_name: item.node_name.as_ref().map(|n| self.node(n)),
        }
    }
}
