//! Renamings of pods and nodes, which the model's symmetry reduction applies to a state
//! (spec MODEL-SYM).

use crate::api::{NodeName, Pod, PodKey, Uid};
use crate::intake::PodItem;

/// A bijection on pods (their keys and the UIDs of their incarnations) and on nodes, applied to
/// a state by [`Controller::rename`]. Spec: MODEL-SYM.
pub trait Renaming {
    fn key(&self, key: &PodKey) -> PodKey;
    fn uid(&self, uid: &Uid) -> Uid;
    fn node(&self, node: &NodeName) -> NodeName;

    /// The pod object under the renaming (its tolerations are not identities).
    fn pod(&self, pod: &Pod) -> Pod {
        Pod {
            key: self.key(&pod.key),
            uid: self.uid(&pod.uid),
            node_name: pod.node_name.as_ref().map(|n| self.node(n)),
            tolerations: pod.tolerations.clone(),
        }
    }

    fn item(&self, item: &PodItem) -> PodItem {
        PodItem {
            key: self.key(&item.key),
            node_name: item.node_name.as_ref().map(|n| self.node(n)),
        }
    }
}
