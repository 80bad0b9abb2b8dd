//! Symmetry reduction (spec MODEL-SYM): a representative per orbit of states that differ only
//! in which pod or node is which, or in which work got which id, under the renamings
//! [`super::symmetry`] allows.
//!
//! Without `restart` the representative renames nodes, then pods, in the order of a signature
//! of what the state says about each, tied members in every order; each renaming is applied
//! only to the objects it moves. With `restart`, live pods keep their name order and gone ones
//! take the remaining names in every order. Of several candidates the one with the smallest
//! hash is kept; work ids are canonicalised.

use super::rename_memo::{self, Signatures};
use super::state::CustomHistory;
use super::state::{ApiServer, CachedNode, CachedPod, Delta, SysState};
use super::symmetry::{position, Pairs, Permutation, SameName};
use smallvec::{smallvec, SmallVec};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::fx::Fx;
use taintcheck_core::shared::Shared;
use taintcheck_core::small_map::SmallMap;
use taintcheck_core::{Entry, Renaming, WorkId, WorkPhase, Worker};

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

    /// This state renamed by `r` everywhere: the API server, both informers, the controller and
    /// the history. Objects that name no moved pod or node stay shared, their hashes cached;
    /// the API server and the caches come from the thread's memo when an earlier state shared
    /// them and got the same renaming.
    fn renamed(&self, r: &Permutation) -> SysState {
        let mut s = self.clone();
        s.api = rename_memo::api(&self.api, r, || renamed_api(&self.api, r));
        let nodes = &self.nodes.cache;
        s.nodes.cache = rename_memo::node_cache(nodes, r, || renamed_node_cache(nodes, r));
        for d in &mut s.nodes.pending {
            match d {
                Delta::Upsert(n) if r.moves_node(&n.node.name) => {
                    let name = r.node(&n.node.name);
                    n.make_mut().node.name = name;
                }
                Delta::Upsert(_) => {}
                Delta::Delete(name) => *name = r.node(name),
            }
        }
        let pods = &self.pods.cache;
        s.pods.cache = rename_memo::pod_cache(pods, r, || renamed_pod_cache(pods, r));
        for d in &mut s.pods.pending {
            match d {
                Delta::Upsert(p) if r.moves(&p.pod.key, p.pod.node_name.as_ref()) => {
                    let pod = r.pod(&p.pod);
                    p.make_mut().pod = pod;
                }
                Delta::Upsert(_) => {}
                Delta::Delete(k) => *k = r.key(k),
            }
        }
        s.ctrl.make_mut().rename(r);
        let h = &mut s.history;
        if !h.cancelled.is_empty() {
            let cancelled = h.cancelled.make_mut();
            cancelled.iter_mut().for_each(|k| *k = r.key(k));
            cancelled.sort_unstable();
        }
        if !h.decided.is_empty() {
            let decided = h.decided.make_mut();
            decided.iter_mut().for_each(|u| *u = r.uid(u));
            decided.sort_unstable();
        }
        if let Some(custom) = &mut h.custom {
            CustomHistory::rename(custom, r);
        }
        s
    }

    /// What the state says about node `name`, without any pod's or node's name: equal for `n`
    /// in `s` and `σ(n)` in `σ(s)`. The finer it is, the rarer ties of nodes that are not
    /// interchangeable (spec MODEL-SYM).
    fn node_signature(&self, name: &NodeName) -> u64 {
        let mut h = Fx::default();
        if let Some(n) = self.api.nodes.get(name) {
            (1u8, &n.node.taints, &n.taint_since).hash(&mut h);
        }
        if let Some(n) = self.nodes.cache.get(name) {
            (2u8, &n.node.taints, &n.taint_since).hash(&mut h);
        }
        for (i, d) in self.nodes.pending.iter().enumerate() {
            match d {
                Delta::Upsert(n) if n.node.name == *name => (3u8, i, &n.node.taints).hash(&mut h),
                Delta::Delete(n) if n == name => (4u8, i).hash(&mut h),
                _ => {}
            }
        }
        if let Some(t) = self.ctrl.tainted_nodes().get(name) {
            (5u8, t).hash(&mut h);
        }
        if let Some(i) = self.ctrl.node_queue().queued().position(|n| n == name) {
            (6u8, i).hash(&mut h);
        }
        (self.ctrl.held().0 == Some(name)).hash(&mut h);
        for (w, shard) in self.ctrl.shards().busy() {
            if let Some(i) = shard.nodes.iter().position(|n| n == name) {
                (8u8, w, i).hash(&mut h);
            }
            if matches!(&shard.worker, Worker::Node { node, .. } if node == name) {
                (9u8, w).hash(&mut h);
            }
        }
        let mut bound: Vec<_> = self
            .api
            .pods
            .values()
            .filter(|p| p.pod.node_name.as_ref() == Some(name))
            .map(|p| (&p.pod.tolerations, p.bound_since))
            .collect();
        bound.sort_unstable();
        (7u8, bound).hash(&mut h);
        h.finish()
    }

    /// What the state says about each pod of `pods` (sorted), without its name, UID or any
    /// work id, its node's name taken through `nodes`: equal for `p` in `s` and `σ(p)` in `σ(s)`
    /// once nodes are renamed by `σ`. The finer it is, the rarer ties of pods that are not
    /// interchangeable. One pass over the state: each object that names a pod adds to that
    /// pod's hash, in the order the state holds them.
    fn pod_signatures(&self, pods: &[PodKey], nodes: &Permutation) -> SmallVec<[u64; 8]> {
        // The API server and the cache change with few steps: what they say is remembered.
        let api = rename_memo::api_signatures(&self.api, nodes, || {
            api_signatures(&self.api, pods, nodes)
        });
        let cache = &self.pods.cache;
        let cached = rename_memo::pod_cache_signatures(cache, nodes, || {
            pod_cache_signatures(cache, pods, nodes)
        });
        let mut hs: SmallVec<[Fx; 8]> = api
            .iter()
            .zip(&cached)
            .map(|(a, c)| {
                let mut h = Fx::default();
                (a, c).hash(&mut h);
                h
            })
            .collect();
        // The state's keys are copies of these: a scan finds them by pointer.
        let at = |key: &PodKey| position(pods, key);
        for (i, d) in self.pods.pending.iter().enumerate() {
            match d {
                Delta::Upsert(p) => {
                    if let Some(at) = at(&p.pod.key) {
                        let tolerations = &p.pod.tolerations;
                        (3u8, i, through(nodes, &p.pod.node_name), tolerations).hash(&mut hs[at]);
                    }
                }
                Delta::Delete(k) => {
                    if let Some(at) = at(k) {
                        (4u8, i).hash(&mut hs[at]);
                    }
                }
            }
        }
        let q = self.ctrl.timed_queue();
        for (k, e) in q.entries() {
            if let Some(i) = at(&k.pod) {
                let h = &mut hs[i];
                h.write_u8(5);
                match e {
                    Entry::Nil { work } => (0u8, work.is_some()).hash(h),
                    Entry::Timer {
                        created_at,
                        fire_at,
                        ..
                    } => (1u8, created_at, fire_at).hash(h),
                }
            }
        }
        let failed = |id: WorkId| self.history.failed.binary_search(&id.0).is_ok();
        for (id, w) in q.works().iter() {
            if let Some(i) = at(&w.key.pod) {
                let h = &mut hs[i];
                (6u8, w.created_at, w.fire_at, w.cancelled, failed(*id)).hash(h);
                let current = q.entries().get(&w.key).and_then(Entry::work) == Some(*id);
                current.hash(h);
                phase_signature(&w.phase, h);
            }
        }
        for (i, item) in self.ctrl.pod_queue().queued().enumerate() {
            if let Some(at) = at(&item.key) {
                (7u8, i, through(nodes, &item.node_name)).hash(&mut hs[at]);
            }
        }
        if let Some(item) = self.ctrl.held().1 {
            if let Some(at) = at(&item.key) {
                (8u8, through(nodes, &item.node_name)).hash(&mut hs[at]);
            }
        }
        for (w, shard) in self.ctrl.shards().busy() {
            for (i, item) in shard.pods.iter().enumerate() {
                if let Some(at) = at(&item.key) {
                    (9u8, w, i, through(nodes, &item.node_name)).hash(&mut hs[at]);
                }
            }
            let held = match &shard.worker {
                Worker::Idle => None,
                Worker::Draining { pod } => Some((10u8, pod)),
                Worker::Node { then, .. } => then.as_ref().map(|pod| (11u8, pod)),
            };
            if let Some((tag, item)) = held {
                if let Some(at) = at(&item.key) {
                    (tag, w, through(nodes, &item.node_name)).hash(&mut hs[at]);
                }
            }
        }
        pods.iter()
            .zip(hs)
            .map(|(key, mut h)| {
                let cancelled = self.history.cancelled.binary_search(key).is_ok();
                cancelled.hash(&mut h);
                h.finish()
            })
            .collect()
    }

    /// The renamings without `restart`: nodes in signature order, then pods in signature order
    /// given those node names, one per order of tied members (one when nothing ties).
    fn free_candidates(&self) -> SmallVec<[Permutation; 1]> {
        let node_orders = match self.symmetry.nodes() {
            [] | [_] => smallvec![Pairs::new()],
            nodes => {
                let signatures: SmallVec<[u64; 8]> =
                    nodes.iter().map(|n| self.node_signature(n)).collect();
                signature_orders(nodes, &signatures)
            }
        };
        let mut out = SmallVec::new();
        for nodes in node_orders {
            let nodes = Permutation::new([], nodes, &self.symmetry);
            let pods = self.class_orders(&nodes);
            out.extend(
                pods.into_iter()
                    .map(|pods| nodes.clone().with_pods(pods, &self.symmetry)),
            );
        }
        out
    }

    /// The renamings of pods in signature order within each class, given the renaming `nodes`
    /// of nodes: one per combination of the classes' orders of tied members.
    fn class_orders(&self, nodes: &Permutation) -> SmallVec<[Pairs<PodKey>; 1]> {
        let members = self.symmetry.members();
        if members.is_empty() {
            return smallvec![Pairs::new()];
        }
        let signatures = self.pod_signatures(members, nodes);
        let mut out: SmallVec<[Pairs<PodKey>; 1]> = smallvec![Pairs::new()];
        let mut start = 0;
        for class in self.symmetry.classes() {
            let orders = signature_orders(class, &signatures[start..start + class.len()]);
            start += class.len();
            out = match &orders[..] {
                [only] => {
                    out.iter_mut()
                        .for_each(|base| base.extend(only.iter().cloned()));
                    out
                }
                _ => out
                    .iter()
                    .flat_map(|base| {
                        orders.iter().map(move |o| {
                            let mut b = base.clone();
                            b.extend(o.iter().cloned());
                            b
                        })
                    })
                    .collect(),
            };
        }
        out
    }

    /// The candidates with `restart`: in each class, live pods keep their name order and take
    /// the first names; gone ones take the rest in every order.
    fn restart_candidates(&self) -> SmallVec<[Permutation; 1]> {
        let live = self.live_pods();
        let mut candidates: Vec<Vec<(PodKey, PodKey)>> = vec![Vec::new()];
        for class in self.symmetry.classes() {
            let (alive, gone): (Vec<&PodKey>, Vec<&PodKey>) =
                class.iter().partition(|k| live.contains(k));
            let fixed: Vec<(PodKey, PodKey)> = alive
                .iter()
                .zip(class)
                .map(|(k, n)| ((*k).clone(), n.clone()))
                .collect();
            let gone: Vec<PodKey> = gone.into_iter().cloned().collect();
            let free = &class[alive.len()..];
            candidates = candidates
                .iter()
                .flat_map(|c| {
                    let mut base = c.clone();
                    base.extend(fixed.iter().cloned());
                    assignments(&base, &gone, free)
                })
                .collect();
        }
        candidates
            .into_iter()
            .map(|pods| Permutation::new(pods, [], &self.symmetry))
            .collect()
    }

    /// Work ids renumbered canonically (`Controller::canonicalise_ids`), the history's failed
    /// requests (ids of works) with them. The controller is copied only if an id changes.
    fn canonicalise_ids(&mut self) {
        if self.ctrl.timed_queue().works().is_empty() || self.ctrl.ids_are_canonical() {
            return;
        }
        self.renumber_works();
    }

    /// [`SysState::canonicalise_ids`] without the check that spares a copy.
    fn renumber_works(&mut self) {
        if self.ctrl.timed_queue().works().is_empty() {
            return;
        }
        let map = self.ctrl.make_mut().canonicalise_ids();
        let failed = &mut self.history.failed;
        if !failed.is_empty() {
            for id in failed.iter_mut() {
                if let Ok(i) = map.binary_search_by_key(&WorkId(*id), |(from, _)| *from) {
                    *id = map[i].1 .0;
                }
            }
            failed.sort_unstable();
        }
    }

    /// This state renamed by `p`, work ids canonical.
    fn renamed_canonically(&self, p: &Permutation) -> SysState {
        if p.is_identity() {
            let mut s = self.clone();
            s.canonicalise_ids();
            return s;
        }
        let mut s = self.renamed(p);
        // The renaming copied the controller: renumbering it in place costs no second copy.
        s.renumber_works();
        s
    }
}

/// The API server's objects renamed by `r`; shared as they are if none moves.
fn renamed_api(api: &Shared<ApiServer>, r: &Permutation) -> Shared<ApiServer> {
    let nodes_move = api.nodes.keys().any(|n| r.moves_node(n));
    let pods_move = api
        .pods
        .values()
        .any(|p| r.moves(&p.pod.key, p.pod.node_name.as_ref()));
    if !nodes_move && !pods_move {
        return api.clone();
    }
    let mut out = api.clone();
    let a = out.make_mut();
    if nodes_move {
        a.nodes = std::mem::take(&mut a.nodes)
            .into_iter()
            .map(|(name, mut n)| {
                if !r.moves_node(&name) {
                    return (name, n);
                }
                let name = r.node(&name);
                n.make_mut().node.name = name.clone();
                (name, n)
            })
            .collect();
    }
    if pods_move {
        a.pods = std::mem::take(&mut a.pods)
            .into_iter()
            .map(|(key, mut p)| {
                if !r.moves(&key, p.pod.node_name.as_ref()) {
                    return (key, p);
                }
                let pod = r.pod(&p.pod);
                let key = pod.key.clone();
                p.make_mut().pod = pod;
                (key, p)
            })
            .collect();
    }
    out
}

/// The node informer's cache renamed by `r`; shared as it is if no node moves.
fn renamed_node_cache(
    cache: &Shared<SmallMap<NodeName, Shared<CachedNode>>>,
    r: &Permutation,
) -> Shared<SmallMap<NodeName, Shared<CachedNode>>> {
    if !cache.keys().any(|n| r.moves_node(n)) {
        return cache.clone();
    }
    Shared::new(
        cache
            .iter()
            .map(|(name, n)| {
                let mut n = n.clone();
                if r.moves_node(name) {
                    n.make_mut().node.name = r.node(name);
                }
                (n.node.name.clone(), n)
            })
            .collect(),
    )
}

/// The pod informer's cache renamed by `r`; shared as it is if no pod in it moves.
fn renamed_pod_cache(
    cache: &Shared<SmallMap<PodKey, Shared<CachedPod>>>,
    r: &Permutation,
) -> Shared<SmallMap<PodKey, Shared<CachedPod>>> {
    if !cache
        .values()
        .any(|p| r.moves(&p.pod.key, p.pod.node_name.as_ref()))
    {
        return cache.clone();
    }
    Shared::new(
        cache
            .values()
            .map(|p| {
                let mut p = p.clone();
                if r.moves(&p.pod.key, p.pod.node_name.as_ref()) {
                    let pod = r.pod(&p.pod);
                    p.make_mut().pod = pod;
                }
                (p.pod.key.clone(), p)
            })
            .collect(),
    )
}

/// What the API server says about each pod of `pods` (zero for a pod it lacks), without names,
/// its node's name taken through `nodes` (see `SysState::pod_signatures`).
fn api_signatures(api: &ApiServer, pods: &[PodKey], nodes: &Permutation) -> Signatures {
    let mut out: Signatures = smallvec![0; pods.len()];
    for (key, p) in api.pods.iter() {
        if let Some(i) = position(pods, key) {
            let mut h = Fx::default();
            h.write_u8(1);
            through(nodes, &p.pod.node_name).hash(&mut h);
            p.pod.tolerations.hash(&mut h);
            (p.bound_since, p.changed_at, p.exposed_in_api).hash(&mut h);
            (p.version, p.disruption_target, p.deletion).hash(&mut h);
            out[i] = h.finish();
        }
    }
    out
}

/// What the pod informer's cache says about each pod of `pods` (as [`api_signatures`]).
fn pod_cache_signatures(
    cache: &SmallMap<PodKey, Shared<CachedPod>>,
    pods: &[PodKey],
    nodes: &Permutation,
) -> Signatures {
    let mut out: Signatures = smallvec![0; pods.len()];
    for (key, p) in cache.iter() {
        if let Some(i) = position(pods, key) {
            let mut h = Fx::default();
            h.write_u8(2);
            through(nodes, &p.pod.node_name).hash(&mut h);
            p.pod.tolerations.hash(&mut h);
            p.bound_since.hash(&mut h);
            out[i] = h.finish();
        }
    }
    out
}

/// The renamings that give the members of `set` (sorted) its own names in the order of their
/// `signatures` (one per member), one per order of the members with equal ones. Without a tie
/// (the usual case) the one renaming is read off the sorted signatures, without enumerating.
fn signature_orders<T: Clone + SameName>(set: &[T], signatures: &[u64]) -> SmallVec<[Pairs<T>; 1]> {
    let mut members: SmallVec<[(u64, usize); 8]> = signatures.iter().copied().zip(0..).collect();
    members.sort_unstable();
    if members.windows(2).all(|w| w[0].0 != w[1].0) {
        let moved = members
            .iter()
            .zip(set)
            .filter(|(&(_, i), to)| !set[i].same(to))
            .map(|(&(_, i), to)| (set[i].clone(), to.clone()))
            .collect();
        return smallvec![moved];
    }
    let mut out = vec![Vec::new()];
    let mut start = 0;
    for tied in members.chunk_by(|a, b| a.0 == b.0) {
        let from: Vec<T> = tied.iter().map(|&(_, i)| set[i].clone()).collect();
        let to = &set[start..start + tied.len()];
        out = out
            .iter()
            .flat_map(|base| assignments(base, &from, to))
            .collect();
        start += tied.len();
    }
    out.into_iter()
        .map(|pairs| pairs.into_iter().collect())
        .collect()
}

/// What a work's phase says without names: its kind, attempt, instants, the request's verb and
/// precondition version, the answer's kind.
fn phase_signature(phase: &WorkPhase, h: &mut Fx) {
    use std::mem::discriminant;
    discriminant(phase).hash(h);
    match phase {
        WorkPhase::Armed | WorkPhase::Spawned | WorkPhase::Marked => {}
        WorkPhase::Requesting {
            attempt, request, ..
        } => (attempt, discriminant(&request.verb), request.version).hash(h),
        WorkPhase::Answered {
            attempt,
            request,
            result,
            ..
        } => {
            (attempt, discriminant(&request.verb), request.version).hash(h);
            discriminant(result).hash(h);
        }
        WorkPhase::Throttled {
            attempt,
            request,
            until,
            ..
        } => (attempt, discriminant(&request.verb), request.version, until).hash(h),
        WorkPhase::Backoff { attempt, until } => (attempt, until).hash(h),
        WorkPhase::Finished { outcome } => outcome.hash(h),
    }
}

/// The name the node `n` gets from `nodes`.
fn through<'a>(nodes: &'a Permutation, n: &'a Option<NodeName>) -> Option<&'a NodeName> {
    n.as_ref().map(|n| nodes.image_of_node(n))
}

/// Every assignment of the `from` members to the free names `to`, appended to `base`.
fn assignments<T: Clone>(base: &[(T, T)], from: &[T], to: &[T]) -> Vec<Vec<(T, T)>> {
    let Some((first, rest)) = from.split_first() else {
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
    /// Some `σ(self)` for a symmetry σ, with ids canonicalised (sound); every state of an orbit
    /// gets the same result unless two candidates collide in the 64-bit hash (then only less
    /// reduction).
    fn representative(&self) -> Self {
        let candidates = if self.symmetry.is_free() {
            self.free_candidates()
        } else {
            self.restart_candidates()
        };
        match &candidates[..] {
            [] => self.renamed_canonically(&Permutation::default()),
            [only] => self.renamed_canonically(only),
            _ => candidates
                .iter()
                .map(|p| self.renamed_canonically(p))
                .min_by_key(state_hash)
                .expect("at least one candidate"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::config::{CheckConfig, OpKind};
    use crate::check::transition::TaintSys;
    use stateright::{Model, Representative};
    use std::collections::{HashSet, VecDeque};
    use taintcheck_core::profile::Profile;

    /// The first `limit` states of a breadth-first walk of built-in `config` with `budget`.
    fn reachable(
        profile: Profile,
        config: &str,
        budget: u8,
        limit: usize,
    ) -> (TaintSys, Vec<SysState>) {
        let mut config = CheckConfig::builtin(config).expect("built-in config");
        config.budget = budget;
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

    /// Every transposition of two pods, and of two nodes, the configuration allows.
    fn transpositions(s: &SysState) -> Vec<Permutation> {
        let mut out = Vec::new();
        for class in s.symmetry.classes() {
            for (i, a) in class.iter().enumerate() {
                for b in &class[i + 1..] {
                    let pods = [(a.clone(), b.clone()), (b.clone(), a.clone())];
                    out.push(Permutation::new(pods, [], &s.symmetry));
                }
            }
        }
        let nodes = s.symmetry.nodes();
        for (i, a) in nodes.iter().enumerate() {
            for b in &nodes[i + 1..] {
                let swap = [(a.clone(), b.clone()), (b.clone(), a.clone())];
                out.push(Permutation::new([], swap, &s.symmetry));
            }
        }
        out
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

    /// MODEL-SYM: swapping two pods, or two nodes, is a symmetry of the transition relation (the
    /// swapped state's successors are the swapped successors, up to representatives), and the
    /// representative is the same for the whole orbit.
    fn transpositions_commute_with_every_step(config: &str, budget: u8, pods: usize, nodes: usize) {
        for profile in [Profile::v1_18(), Profile::latest(), Profile::fixed()] {
            // 500 states spread over the first 20,000, so that works, timers and deletions
            // are among them, not only the environment's first moves.
            let (model, states) = reachable(profile, config, budget, 20_000);
            let init = model.initial_state();
            assert_eq!(
                init.symmetry.classes().iter().map(Vec::len).sum::<usize>(),
                pods
            );
            assert_eq!(init.symmetry.nodes().len(), nodes);
            let mut busy = 0;
            for s in states.iter().step_by(40) {
                busy += usize::from(!s.ctrl.timed_queue().works().is_empty());
                let rep = s.representative();
                for r in transpositions(s) {
                    let t = s.renamed(&r);
                    assert_eq!(t.representative(), rep, "{}: orbit of {s:?}", profile.name);
                    assert_eq!(
                        successors(&model, &t),
                        successors(&model, s),
                        "{}: successors of {s:?}",
                        profile.name
                    );
                }
            }
            assert!(busy > 50, "{}: only {busy} states with works", profile.name);
        }
    }

    #[test]
    fn swapping_pods_commutes_with_every_step() {
        transpositions_commute_with_every_step("three-pods", 1, 3, 0);
    }

    #[test]
    fn swapping_pods_and_nodes_commutes_with_every_step() {
        transpositions_commute_with_every_step("pods-and-nodes", 3, 3, 2);
    }

    /// The thread's memo is transparent: the parts it hands back equal the parts renamed
    /// afresh, for renamings that alternate on one state (so that a slot holding the same part
    /// under another renaming must not match), and a repeated renaming reuses the copy.
    #[test]
    fn remembered_renamings_equal_fresh_ones() {
        let (_, states) = reachable(Profile::latest(), "pods-and-nodes", 2, 3_000);
        let mut reused = 0;
        for s in states.iter().step_by(5) {
            for r in transpositions(s).iter().chain(transpositions(s).iter()) {
                let t = s.renamed(r);
                assert_eq!(*t.api, *renamed_api(&s.api, r));
                assert_eq!(*t.nodes.cache, *renamed_node_cache(&s.nodes.cache, r));
                assert_eq!(*t.pods.cache, *renamed_pod_cache(&s.pods.cache, r));
                let again = s.renamed(r);
                assert_eq!(again, t);
                let moved = !Shared::ptr_eq(&t.api, &s.api);
                reused += usize::from(moved && Shared::ptr_eq(&again.api, &t.api));
            }
        }
        assert!(
            reused > 100,
            "the memo served only {reused} renamed API servers"
        );
    }

    /// The signatures the thread's memo hands back for the API server and the pod cache equal
    /// fresh ones, under every renaming of nodes tried (so the candidates, and with them the
    /// representative, are those a fresh computation gives): what an earlier state left in a
    /// slot, and what the same request finds right after.
    #[test]
    fn remembered_signatures_equal_fresh_ones() {
        for config in ["three-pods", "pods-and-nodes"] {
            let (_, states) = reachable(Profile::latest(), config, 2, 3_000);
            let (mut asked, mut served) = (0, 0);
            for s in &states {
                let [pods] = s.symmetry.classes() else {
                    panic!("{config}: one class of pods");
                };
                let mut renamings = vec![Permutation::default()];
                renamings.extend(transpositions(s).into_iter().filter(|r| r.moves_nodes()));
                for nodes in &renamings {
                    let fresh = api_signatures(&s.api, pods, nodes);
                    for _ in 0..2 {
                        let mut made = false;
                        let got = rename_memo::api_signatures(&s.api, nodes, || {
                            made = true;
                            fresh.clone()
                        });
                        assert_eq!(got, fresh, "{config}: API server of {s:?}");
                        served += usize::from(!made);
                    }
                    let fresh = pod_cache_signatures(&s.pods.cache, pods, nodes);
                    for _ in 0..2 {
                        let got = rename_memo::pod_cache_signatures(&s.pods.cache, nodes, || {
                            fresh.clone()
                        });
                        assert_eq!(got, fresh, "{config}: pod cache of {s:?}");
                    }
                    asked += 1;
                }
            }
            assert!(
                served >= asked,
                "{config}: the memo served {served} of {asked} repeated requests"
            );
        }
    }

    /// With `restart` only identically configured pods move, and nodes never do.
    #[test]
    fn restart_keeps_nodes_and_live_pod_order() {
        let mut config = CheckConfig::builtin("three-pods").expect("built-in config");
        config.operations.insert(OpKind::Restart);
        let s = TaintSys::new(Profile::latest(), config).initial_state();
        assert!(!s.symmetry.is_free());
        assert!(s.symmetry.nodes().is_empty());
        assert_eq!(s.symmetry.classes().len(), 1);
        assert_eq!(s.restart_candidates().len(), 1, "all three pods are live");
    }

    /// Renumbering works gives an equivalent state with the same ids in use, the same for
    /// states that differ only in which work got which id.
    #[test]
    fn canonical_ids_keep_the_ids_in_use() {
        let (_, states) = reachable(Profile::latest(), "three-pods", 1, 600);
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
