//! Symmetry reduction over interchangeable pods (spec MODEL-SYM): a canonical representative per
//! class of states that differ only in which of several identically configured pods is which.
//!
//! Pods are interchangeable when their configuration is identical (node, tolerations; the
//! environment's operations are global). The model lists a node's pods in any order (as
//! upstream's indexer does, [`crate::core::Listing::Any`]), so names fix no order there; only a
//! re-list after a restart delivers the API's pods in name order. Without `restart` every
//! permutation of each class is a symmetry, and the representative is the candidate with the
//! smallest state hash over the whole group (the same for every state of an orbit). With
//! `restart`, a renaming must keep the name order of every *live* pod (one in the API, the pod
//! cache or a pending watch event); live pods take the first names of their class in order and
//! only the pods gone for good are permuted. With `recreate_pod` there are no classes. Nodes are
//! never renamed (their names fix the FNV shard), nor work, timer or request ids.

use super::config::{CheckConfig, OpKind};
use super::state::{ApiServer, Delta, SysState};
use crate::api::{Name, PodKey, Uid};
use crate::core::{Entry, PodRenaming, WorkId};
use crate::fx::Fx;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The classes of interchangeable pods of a configuration (each sorted, of two or more), carried
/// in every state because stateright's representative function sees only the state. Equal and
/// hashed as nothing: it is the same in every state of a run.
#[derive(Clone, Default)]
pub struct PodClasses {
    classes: Arc<[Vec<PodKey>]>,
    /// The one UID of each class member: without `recreate_pod` a pod never gets another, so a
    /// renaming of pods is also one of UIDs.
    uids: Arc<BTreeMap<Name, Uid>>,
    /// Whether live pods may be permuted too: no name order is visible (the model lists a
    /// node's pods in any order), which holds unless a restart can re-list them by name.
    free: bool,
}

impl PodClasses {
    /// Pods with the same node and tolerations; none at all when pods may be recreated, since a
    /// recreated pod re-enters the API's name order (a re-list's order) under its name. `api`
    /// holds the configured pods with their UIDs.
    pub fn of(config: &CheckConfig, api: &ApiServer) -> PodClasses {
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
        let uids = classes
            .iter()
            .flatten()
            .filter_map(|k| Some((k.name.clone(), api.pods.get(k)?.pod.uid.clone())))
            .collect();
        PodClasses {
            classes: classes.into(),
            uids: Arc::new(uids),
            free: !config.operations.contains(&OpKind::Restart),
        }
    }

    pub fn classes(&self) -> &[Vec<PodKey>] {
        &self.classes
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
            .classes
            .iter()
            .map(|c| c.iter().map(|k| &*k.name).collect())
            .collect();
        write!(f, "{names:?}")
    }
}

/// A permutation of pod names (one namespace) and of their pods' UIDs.
#[derive(Default)]
struct Permutation {
    names: BTreeMap<Name, Name>,
    uids: BTreeMap<Uid, Uid>,
}

impl Permutation {
    /// The renaming `from → to` for each pair, with each pod's UID following its name.
    fn new(pairs: impl IntoIterator<Item = (Name, Name)>, classes: &PodClasses) -> Permutation {
        let names: BTreeMap<Name, Name> = pairs.into_iter().filter(|(a, b)| a != b).collect();
        let uids = names
            .iter()
            .filter_map(|(a, b)| Some((classes.uids.get(a)?.clone(), classes.uids.get(b)?.clone())))
            .collect();
        Permutation { names, uids }
    }
}

impl PodRenaming for Permutation {
    fn key(&self, key: &PodKey) -> PodKey {
        PodKey {
            namespace: key.namespace.clone(),
            name: self.names.get(&key.name).unwrap_or(&key.name).clone(),
        }
    }

    fn uid(&self, uid: &Uid) -> Uid {
        self.uids.get(uid).unwrap_or(uid).clone()
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

impl SysState {
    /// What the state says about pod `key`, without its name, UID or any work id: equal for
    /// `p` in `s` and `σ(p)` in `σ(s)`, so sorting a class by it is the same for a whole orbit.
    /// It need not tell pods apart; ties are resolved by trying every order of the tied pods.
    fn signature(&self, key: &PodKey) -> u64 {
        let mut h = Fx::default();
        if let Some(p) = self.api.pods.get(key) {
            h.write_u8(1);
            p.pod.node_name.hash(&mut h);
            p.pod.tolerations.hash(&mut h);
            (p.bound_since, p.changed_at, p.exposed_in_api).hash(&mut h);
            (p.version, p.disruption_target).hash(&mut h);
        }
        if let Some(p) = self.pods.cache.get(key) {
            h.write_u8(2);
            p.pod.node_name.hash(&mut h);
            p.pod.tolerations.hash(&mut h);
            p.bound_since.hash(&mut h);
        }
        for (i, d) in self.pods.pending.iter().enumerate() {
            match d {
                Delta::Upsert(p) if p.pod.key == *key => (3u8, i, &p.pod.tolerations).hash(&mut h),
                Delta::Delete(k) if k == key => (4u8, i).hash(&mut h),
                _ => {}
            }
        }
        let q = self.ctrl.timed_queue();
        for (k, e) in q.entries() {
            if k.pod == *key {
                h.write_u8(5);
                match e {
                    Entry::Nil { work } => (0u8, work.is_some()).hash(&mut h),
                    Entry::Timer {
                        created_at,
                        fire_at,
                        ..
                    } => (1u8, created_at, fire_at).hash(&mut h),
                }
            }
        }
        for w in q.works().values() {
            if w.key.pod == *key {
                (6u8, w.created_at, w.fire_at, w.cancelled).hash(&mut h);
                std::mem::discriminant(&w.phase).hash(&mut h);
            }
        }
        self.history
            .cancelled
            .binary_search(key)
            .is_ok()
            .hash(&mut h);
        h.finish()
    }

    /// The renamings that give each class's pods its names in signature order, one per order
    /// of the pods with equal signatures: all the group elements the representative may be.
    fn sorted_candidates(&self) -> Vec<Permutation> {
        let mut candidates: Vec<Vec<(Name, Name)>> = vec![Vec::new()];
        for class in self.classes.classes() {
            let mut members: Vec<(u64, &PodKey)> =
                class.iter().map(|k| (self.signature(k), k)).collect();
            members.sort_unstable();
            let mut start = 0;
            while start < members.len() {
                let end = start
                    + members[start..]
                        .iter()
                        .take_while(|(sig, _)| *sig == members[start].0)
                        .count();
                let tied: Vec<Name> = members[start..end]
                    .iter()
                    .map(|(_, k)| k.name.clone())
                    .collect();
                let names: Vec<Name> = class[start..end].iter().map(|k| k.name.clone()).collect();
                candidates = candidates
                    .iter()
                    .flat_map(|base| assignments(base, &tied, &names))
                    .collect();
                start = end;
            }
        }
        candidates
            .into_iter()
            .map(|pairs| Permutation::new(pairs, &self.classes))
            .collect()
    }

    /// Work ids renumbered canonically (`Controller::canonicalise_ids`), the history's failed
    /// requests (ids of works) with them.
    fn canonicalise_ids(&mut self) {
        let map = self.ctrl.canonicalise_ids();
        let failed = &mut self.history.failed;
        if !failed.is_empty() {
            for id in failed.iter_mut() {
                if let Some(to) = map.get(&WorkId(*id)) {
                    *id = to.0;
                }
            }
            failed.sort_unstable();
        }
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
    let mut h = Fx::default();
    s.hash(&mut h);
    h.finish()
}

impl stateright::Representative for SysState {
    /// Some `σ(self)` with σ permuting each class and keeping the name order of live pods, so
    /// the result is always equivalent to `self` (sound); equivalent states get the same result
    /// unless two candidates collide in the 64-bit hash (then only less reduction).
    fn representative(&self) -> Self {
        let apply = |p: &Permutation| {
            let mut s = if p.names.is_empty() {
                self.clone()
            } else {
                self.renamed(p)
            };
            s.canonicalise_ids();
            s
        };
        if self.classes.free {
            let candidates = self.sorted_candidates();
            if let [only] = &candidates[..] {
                return apply(only);
            }
            return candidates
                .iter()
                .map(apply)
                .min_by_key(state_hash)
                .expect("at least one candidate");
        }
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
        let candidates: Vec<Permutation> = candidates
            .into_iter()
            .map(|pairs| Permutation::new(pairs, &self.classes))
            .collect();
        if let [only] = &candidates[..] {
            return apply(only);
        }
        candidates
            .iter()
            .map(apply)
            .min_by_key(state_hash)
            .expect("at least one candidate")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::TaintSys;
    use crate::profile::Profile;
    use stateright::{Model, Representative};
    use std::collections::{HashSet, VecDeque};

    /// The first `limit` states of a breadth-first walk of `three-pods` (budget 1).
    fn reachable(profile: Profile, limit: usize) -> (TaintSys, Vec<SysState>) {
        let mut config = CheckConfig::builtin("three-pods").expect("built-in config");
        config.budget = 1;
        let model = TaintSys::new(profile, config);
        let mut seen = HashSet::new();
        let mut queue: VecDeque<SysState> = model.init_states().into();
        let mut out = Vec::new();
        while let Some(s) = queue.pop_front() {
            if out.len() == limit {
                break;
            }
            if !seen.insert(state_hash(&s)) {
                continue;
            }
            let mut actions = Vec::new();
            model.actions(&s, &mut actions);
            queue.extend(actions.into_iter().filter_map(|a| model.next_state(&s, a)));
            out.push(s);
        }
        (model, out)
    }

    fn swap(s: &SysState, a: &str, b: &str) -> SysState {
        s.renamed(&Permutation::new(
            [(a.into(), b.into()), (b.into(), a.into())],
            &s.classes,
        ))
    }

    fn successors(model: &TaintSys, s: &SysState) -> BTreeSet<u64> {
        let mut actions = Vec::new();
        model.actions(s, &mut actions);
        actions
            .into_iter()
            .filter_map(|a| model.next_state(s, a))
            .map(|t| state_hash(&t.representative()))
            .collect()
    }

    /// MODEL-SYM: swapping two interchangeable pods is a symmetry of the transition relation
    /// (the swapped state's successors are the swapped successors, up to representatives), and
    /// the representative is the same for the whole orbit.
    #[test]
    fn swapping_pods_commutes_with_every_step() {
        for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
            let (model, states) = reachable(profile, 600);
            assert_eq!(model.initial_state().classes.classes().len(), 1);
            for s in &states {
                let rep = s.representative();
                for (a, b) in [("p1", "p2"), ("p2", "p3"), ("p1", "p3")] {
                    let t = swap(s, a, b);
                    assert_eq!(t.representative(), rep, "{}: orbit of {s:?}", profile.name);
                    assert_eq!(
                        successors(&model, &t),
                        successors(&model, s),
                        "{}: successors of {s:?} swapped {a} {b}",
                        profile.name
                    );
                }
            }
        }
    }

    /// Renumbering works gives an equivalent state with the same ids in use, the same for
    /// states that differ only in which work got which id.
    #[test]
    fn canonical_ids_keep_the_ids_in_use() {
        let (_, states) = reachable(Profile::latest(), 600);
        let mut renumbered = 0;
        for s in &states {
            let mut c = s.clone();
            c.canonicalise_ids();
            let ids = |s: &SysState| s.ctrl.timed_queue().works().keys().copied().collect();
            let before: Vec<WorkId> = ids(s);
            assert_eq!(ids(&c), before);
            let mut again = c.clone();
            again.canonicalise_ids();
            assert_eq!(again, c, "canonical twice is canonical once");
            renumbered += usize::from(c != *s);
        }
        assert!(
            renumbered > 0,
            "no state was renumbered: the test shows nothing"
        );
    }
}
