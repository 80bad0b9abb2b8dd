//! Symmetry reduction over interchangeable pods (spec MODEL-SYM): a canonical representative per
//! class of states that differ only in which of several identically configured pods is which.
//!
//! Pods are interchangeable when their configuration is identical (node, tolerations; the
//! environment's operations are global). The model is not fully symmetric in them: the pod
//! indexer lists a node's pods in name order and a re-list delivers the API's pods in name order.
//! So a renaming is only applied where it keeps the name order of every *live* pod (one in the
//! API, the pod cache or a pending watch event), the only pods a future listing or re-list can
//! see; a pod that is gone for good (no `recreate_pod`) may take any name of its class. Live pods
//! take the first names of their class in order; the gone ones take the rest in the order that
//! gives the smallest state hash. Nodes are never renamed (their names fix the FNV shard), nor
//! work, timer or request ids.

use super::config::{CheckConfig, OpKind};
use super::state::{Delta, SysState};
use crate::api::{Name, PodKey, Uid};
use crate::core::PodRenaming;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// The classes of interchangeable pods of a configuration (each sorted, of two or more), carried
/// in every state because stateright's representative function sees only the state. Equal and
/// hashed as nothing: it is the same in every state of a run.
#[derive(Clone, Default)]
pub struct PodClasses(Arc<[Vec<PodKey>]>);

impl PodClasses {
    /// Pods with the same node and tolerations; none at all when pods may be recreated, since a
    /// recreated pod re-enters the listing order under its name.
    pub fn of(config: &CheckConfig) -> PodClasses {
        if config.operations.contains(&OpKind::RecreatePod) {
            return PodClasses::default();
        }
        let mut classes: Vec<Vec<PodKey>> = Vec::new();
        for (i, p) in config.pods.iter().enumerate() {
            if config.pods[..i]
                .iter()
                .any(|q| q.node == p.node && q.tolerations == p.tolerations)
            {
                continue;
            }
            let mut class: Vec<PodKey> = config.pods[i..]
                .iter()
                .filter(|q| q.node == p.node && q.tolerations == p.tolerations)
                .map(|q| q.key())
                .collect();
            class.sort();
            if class.len() > 1 {
                classes.push(class);
            }
        }
        PodClasses(classes.into())
    }

    pub fn classes(&self) -> &[Vec<PodKey>] {
        &self.0
    }
}

impl PartialEq for PodClasses {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PodClasses {}

impl Hash for PodClasses {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for PodClasses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<Vec<&str>> = self
            .0
            .iter()
            .map(|c| c.iter().map(|k| &*k.name).collect())
            .collect();
        write!(f, "{names:?}")
    }
}

/// A permutation of pod names (one namespace). UIDs are `<name>-<n>` (`ApiServer::fresh_uid`),
/// so an incarnation's UID follows its pod's name.
struct Permutation(BTreeMap<Name, Name>);

impl Permutation {
    fn name<'a>(&'a self, name: &'a Name) -> &'a Name {
        self.0.get(name).unwrap_or(name)
    }
}

impl PodRenaming for Permutation {
    fn key(&self, key: &PodKey) -> PodKey {
        PodKey {
            namespace: key.namespace.clone(),
            name: self.name(&key.name).clone(),
        }
    }

    fn uid(&self, uid: &Uid) -> Uid {
        match uid.0.rsplit_once('-') {
            Some((name, n)) => match self.0.get(name) {
                Some(to) => Uid(format!("{to}-{n}").into()),
                None => uid.clone(),
            },
            None => uid.clone(),
        }
    }
}

impl SysState {
    /// Pods a future listing or re-list may show: in the API, in the pod cache, or on their way
    /// to it. Without `recreate_pod` the set only shrinks.
    fn live_pods(&self) -> BTreeSet<&PodKey> {
        let mut live: BTreeSet<&PodKey> = self.api.pods.keys().collect();
        live.extend(self.pods.cache.keys());
        live.extend(self.pods.pending.iter().filter_map(|d| match d {
            Delta::Upsert(p) => Some(&p.pod.key),
            Delta::Delete(_) => None,
        }));
        live
    }

    /// This state with every pod renamed by `r`, in the API server, the pod informer, the
    /// controller and the history.
    fn renamed(&self, r: &impl PodRenaming) -> SysState {
        let mut s = self.clone();
        let api = Arc::make_mut(&mut s.api);
        api.pods = std::mem::take(&mut api.pods)
            .into_values()
            .map(|mut p| {
                p.pod = r.pod(&p.pod);
                (p.pod.key.clone(), p)
            })
            .collect();
        s.pods.cache = Arc::new(
            s.pods
                .cache
                .values()
                .map(|p| {
                    let mut p = p.clone();
                    p.pod = r.pod(&p.pod);
                    (p.pod.key.clone(), p)
                })
                .collect(),
        );
        for d in &mut s.pods.pending {
            match d {
                Delta::Upsert(p) => p.pod = r.pod(&p.pod),
                Delta::Delete(k) => *k = r.key(k),
            }
        }
        s.ctrl.rename_pods(r);
        let h = &mut s.history;
        h.cancelled.iter_mut().for_each(|k| *k = r.key(k));
        h.cancelled.sort_unstable();
        h.decided.iter_mut().for_each(|u| *u = r.uid(u));
        h.decided.sort_unstable();
        s
    }
}

/// Every assignment of `gone` pods to the free names `to`, appended to `base`.
fn assignments(base: &[(Name, Name)], gone: &[Name], to: &[Name]) -> Vec<Vec<(Name, Name)>> {
    let Some((first, rest)) = gone.split_first() else {
        return vec![base.to_vec()];
    };
    let mut out = Vec::new();
    for (i, name) in to.iter().enumerate() {
        let mut b = base.to_vec();
        b.push((first.clone(), name.clone()));
        let mut free = to.to_vec();
        free.remove(i);
        out.extend(assignments(&b, rest, &free));
    }
    out
}

fn state_hash(s: &SysState) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl stateright::Representative for SysState {
    /// Some `σ(self)` with σ permuting each class and keeping the name order of live pods, so
    /// the result is always equivalent to `self` (sound); equivalent states get the same result
    /// unless two candidates collide in the 64-bit hash (then only less reduction).
    fn representative(&self) -> Self {
        let live = self.live_pods();
        let mut candidates: Vec<Vec<(Name, Name)>> = vec![Vec::new()];
        for class in self.classes.classes() {
            let names: Vec<Name> = class.iter().map(|k| k.name.clone()).collect();
            let (alive, gone): (Vec<&PodKey>, Vec<&PodKey>) =
                class.iter().partition(|k| live.contains(k));
            let fixed = alive
                .iter()
                .zip(&names)
                .map(|(k, n)| (k.name.clone(), n.clone()));
            let gone: Vec<Name> = gone.iter().map(|k| k.name.clone()).collect();
            let free = &names[alive.len()..];
            candidates = candidates
                .iter()
                .flat_map(|c| {
                    let mut base = c.clone();
                    base.extend(fixed.clone());
                    assignments(&base, &gone, free)
                })
                .collect();
        }
        let apply = |pairs: Vec<(Name, Name)>| {
            let p = Permutation(pairs.into_iter().filter(|(a, b)| a != b).collect());
            if p.0.is_empty() {
                self.clone()
            } else {
                self.renamed(&p)
            }
        };
        if candidates.len() == 1 {
            return apply(candidates.pop().expect("one candidate"));
        }
        candidates
            .into_iter()
            .map(apply)
            .min_by_key(state_hash)
            .expect("at least one candidate")
    }
}
