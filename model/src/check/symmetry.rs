//! What a run's symmetry reduction may rename (spec MODEL-SYM), decided once from the
//! configuration, and the renamings it allows.
//!
//! Without `recreate_pod` and `restart`, names fix no order anywhere in the model (a node's pods
//! are listed in any order, [`taintcheck_core::Listing::Any`]; queues and event streams are FIFO),
//! and the environment treats every pod and every node alike, so any permutation of the pods
//! and, with one worker (node names fix the FNV shard), of the nodes is a symmetry. With
//! `restart`, a re-list delivers pods and nodes in name order: then only identically configured
//! pods that are gone for good are permuted (the live ones keep their name order) and nodes are
//! not. With `recreate_pod` no pod is renamed. `representative` picks the canonical
//! member of each orbit.

use super::config::{CheckConfig, OpKind, PodSpec};
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use taintcheck_core::api::{NodeName, PodKey, Uid};
use taintcheck_core::fx::Fx;
use taintcheck_core::Renaming;

/// What may be renamed in a run, carried in every state because stateright's representative
/// function sees only the state. Equal and hashed as nothing: it is the same in every state of
/// a run. One pointer, so that copying a state counts one reference.
#[derive(Clone, Default)]
pub struct Symmetry(Arc<Group>);

/// The renamings of a run.
#[derive(Default)]
struct Group {
    /// Names fix no order (no `restart`, no `recreate_pod`): every pod is interchangeable,
    /// whatever its configuration (the environment's operations are global).
    free: bool,
    /// When `free`, the pods; else the identically configured pods (same node and
    /// tolerations), of which only gone ones move. Either way split by what the declared
    /// properties' patterns match (PROP-SYM); each class sorted, of two or more.
    classes: Vec<Vec<PodKey>>,
    /// The classes one after another: the pods whose signatures a representative computes,
    /// always this one slice, so that what it memoises is about the same pods.
    members: Vec<PodKey>,
    /// The nodes, when `free` with one worker (sorted); else none.
    nodes: Vec<NodeName>,
    /// The one UID of each pod (by key, sorted): without `recreate_pod` a pod never gets
    /// another, so a renaming of pods is also one of UIDs.
    uids: Vec<(PodKey, Uid)>,
}

impl Symmetry {
    /// The symmetries of `config`, whose pods got the UIDs `uids` and whose nodes are `nodes`
    /// (sorted).
    pub fn of(config: &CheckConfig, uids: BTreeMap<PodKey, Uid>, nodes: &[NodeName]) -> Symmetry {
        if config.operations.contains(&OpKind::RecreatePod) {
            return Symmetry::default();
        }
        // The keys the state holds: copies of these, so that lookups match by pointer.
        let uids: Vec<(PodKey, Uid)> = uids.into_iter().collect();
        if !config.operations.contains(&OpKind::Restart) {
            let pods: Vec<PodKey> = uids.iter().map(|(k, _)| k.clone()).collect();
            return Symmetry::group(
                config,
                true,
                vec![pods],
                if config.workers == 1 && nodes.len() > 1 {
                    nodes.to_vec()
                } else {
                    Vec::new()
                },
                uids,
            );
        }
        let mut classes: Vec<Vec<PodKey>> = Vec::new();
        for (i, p) in config.pods.iter().enumerate() {
            let same = |q: &&PodSpec| q.node == p.node && q.tolerations == p.tolerations;
            if config.pods[..i].iter().any(|q| same(&q)) {
                continue;
            }
            let mut class: Vec<PodKey> = config.pods[i..]
                .iter()
                .filter(same)
                .map(|q| {
                    let key = q.key();
                    uids.iter()
                        .find(|(k, _)| *k == key)
                        .map_or(key, |(k, _)| k.clone())
                })
                .collect();
            class.sort();
            classes.push(class);
        }
        Symmetry::group(config, false, classes, Vec::new(), uids)
    }

    /// The group of `classes` split by the declared properties' patterns: two pods stay
    /// interchangeable only when every pattern matches both or neither (PROP-SYM), so that no
    /// declared property can tell a state from its renaming.
    fn group(
        config: &CheckConfig,
        free: bool,
        classes: Vec<Vec<PodKey>>,
        nodes: Vec<NodeName>,
        uids: Vec<(PodKey, Uid)>,
    ) -> Symmetry {
        let mut split: Vec<Vec<PodKey>> = Vec::new();
        for class in classes {
            let mut parts: BTreeMap<Vec<bool>, Vec<PodKey>> = BTreeMap::new();
            for key in class {
                let membership = config
                    .properties
                    .iter()
                    .map(|d| d.claim.pods().matches(&key))
                    .collect();
                parts.entry(membership).or_default().push(key);
            }
            split.extend(parts.into_values().filter(|part| part.len() > 1));
        }
        split.sort();
        let members = split.concat();
        Symmetry(Arc::new(Group {
            free,
            classes: split,
            members,
            nodes,
            uids,
        }))
    }

    /// Names fix no order: every pod, and with one worker every node, may be renamed.
    pub fn is_free(&self) -> bool {
        self.0.free
    }

    /// The sets of pods that may be permuted among themselves.
    pub fn classes(&self) -> &[Vec<PodKey>] {
        &self.0.classes
    }

    /// What the reduction renames, for the report: each class of interchangeable pods and the
    /// nodes.
    pub fn describe(&self) -> String {
        let set = |names: Vec<String>| format!("{{{}}}", names.join(", "));
        let pods: Vec<String> = self
            .classes()
            .iter()
            .map(|c| set(c.iter().map(|k| k.name.to_string()).collect()))
            .collect();
        let pods = if pods.is_empty() {
            "no pods".to_string()
        } else {
            format!("pods {}", pods.join(" "))
        };
        let nodes = match self.nodes() {
            [] => "no nodes".to_string(),
            n => format!("nodes {}", set(n.iter().map(|n| n.to_string()).collect())),
        };
        format!(
            "permutes {pods} (interchangeable within each set: same configuration where names \
             fix an order, and the same membership in every declared property's pattern), \
             {nodes}"
        )
    }

    /// [`Symmetry::classes`] one after another.
    pub(super) fn members(&self) -> &[PodKey] {
        &self.0.members
    }

    /// The nodes that may be permuted among themselves.
    pub fn nodes(&self) -> &[NodeName] {
        &self.0.nodes
    }
}

impl PartialEq for Symmetry {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Symmetry {}

impl Hash for Symmetry {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for Symmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<Vec<&str>> = self
            .classes()
            .iter()
            .map(|c| c.iter().map(|k| &*k.name).collect())
            .collect();
        write!(f, "pods {names:?}, nodes {:?}", self.nodes())
    }
}

/// A permutation of pods (keys, with their UIDs) and of nodes; what it leaves out is fixed.
/// Pairs in small vectors: a run renames a handful of names, so a scan beats a map and one
/// allocation per kind is all a renaming pays (stored inline, they cost more in copies).
#[derive(Clone, Default)]
pub(super) struct Permutation {
    pods: Pairs<PodKey>,
    uids: Pairs<Uid>,
    nodes: Pairs<NodeName>,
}

/// The moved members of one kind of name, each with its image.
pub(super) type Pairs<T> = Vec<(T, T)>;

/// Where `pairs` sends `x` (itself if nowhere).
#[inline]
fn image<'a, T: SameName>(pairs: &'a [(T, T)], x: &'a T) -> &'a T {
    pairs.iter().find(|(a, _)| a.same(x)).map_or(x, |(_, b)| b)
}

/// Equality of names that the state copies from one allocation: a pointer compare decides
/// a match, and the last byte (where `pod-1` and `pod-2` differ) most mismatches, without the
/// `memcmp` call that `==` makes for names of equal length (a tenth of a representative's
/// instructions went to comparing names).
pub(super) trait SameName {
    /// `self == other`.
    fn same(&self, other: &Self) -> bool;
}

/// `a == b`, by pointer first, then length and last byte.
#[inline]
fn same_str(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b)
        || (a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b)
}

impl SameName for NodeName {
    fn same(&self, other: &Self) -> bool {
        same_str(self, other)
    }
}

impl SameName for Uid {
    fn same(&self, other: &Self) -> bool {
        same_str(&self.0, &other.0)
    }
}

impl SameName for PodKey {
    fn same(&self, other: &Self) -> bool {
        same_str(&self.name, &other.name) && same_str(&self.namespace, &other.namespace)
    }
}

/// The position of `key` in `pods`.
#[inline]
pub(super) fn position(pods: &[PodKey], key: &PodKey) -> Option<usize> {
    pods.iter().position(|k| k.same(key))
}

impl Permutation {
    /// The renaming `from → to` for each pair, with each pod's UID following it.
    pub(super) fn new(
        pods: impl IntoIterator<Item = (PodKey, PodKey)>,
        nodes: impl IntoIterator<Item = (NodeName, NodeName)>,
        symmetry: &Symmetry,
    ) -> Permutation {
        let pods: Pairs<PodKey> = pods.into_iter().filter(|(a, b)| !a.same(b)).collect();
        let uid = |key: &PodKey| {
            let uids = &symmetry.0.uids;
            uids.iter()
                .find(|(k, _)| k.same(key))
                .map(|(_, u)| u.clone())
        };
        let uids = pods
            .iter()
            .filter_map(|(a, b)| Some((uid(a)?, uid(b)?)))
            .collect();
        Permutation {
            pods,
            uids,
            nodes: nodes.into_iter().filter(|(a, b)| !a.same(b)).collect(),
        }
    }

    /// This renaming of nodes with the renaming `pods` of pods (each UID following its pod).
    pub(super) fn with_pods(
        self,
        pods: impl IntoIterator<Item = (PodKey, PodKey)>,
        symmetry: &Symmetry,
    ) -> Permutation {
        Permutation::new(pods, self.nodes, symmetry)
    }

    /// The name the node `node` gets.
    pub(super) fn image_of_node<'a>(&'a self, node: &'a NodeName) -> &'a NodeName {
        image(&self.nodes, node)
    }

    /// Renames nothing.
    pub(super) fn is_identity(&self) -> bool {
        self.pods.is_empty() && self.nodes.is_empty()
    }

    /// Whether it renames the pod `key` or the node `node` it is bound to: an object that
    /// names neither stays as it is (and keeps its cached hash).
    pub(super) fn moves(&self, key: &PodKey, node: Option<&NodeName>) -> bool {
        self.pods.iter().any(|(a, _)| a.same(key)) || node.is_some_and(|n| self.moves_node(n))
    }

    /// The same renaming as `other`, pair for pair (as two constructions from the same
    /// signatures give; a renaming listed in another order only counts as another).
    pub(super) fn same_as(&self, other: &Permutation) -> bool {
        fn same_pairs<T: SameName>(a: &[(T, T)], b: &[(T, T)]) -> bool {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((x, y), (u, v))| x.same(u) && y.same(v))
        }
        same_pairs(&self.pods, &other.pods)
            && same_pairs(&self.uids, &other.uids)
            && same_pairs(&self.nodes, &other.nodes)
    }

    /// A hash of the renaming's names by address (equal renamings of one run's names, which
    /// the state copies from one allocation, mostly agree): where a memo looks first.
    pub(super) fn tag(&self) -> u64 {
        let mut h = Fx::default();
        let at = |s: &Arc<str>| s.as_ptr() as usize;
        for (a, b) in &self.pods {
            (at(&a.name), at(&b.name)).hash(&mut h);
        }
        for (a, b) in &self.nodes {
            (at(a), at(b)).hash(&mut h);
        }
        h.finish()
    }

    /// Whether it renames the node `node`.
    pub(super) fn moves_node(&self, node: &NodeName) -> bool {
        self.nodes.iter().any(|(a, _)| a.same(node))
    }
}

impl Renaming for Permutation {
    fn key(&self, key: &PodKey) -> PodKey {
        image(&self.pods, key).clone()
    }

    fn uid(&self, uid: &Uid) -> Uid {
        image(&self.uids, uid).clone()
    }

    fn node(&self, node: &NodeName) -> NodeName {
        image(&self.nodes, node).clone()
    }

    fn moves_nodes(&self) -> bool {
        !self.nodes.is_empty()
    }
}
