//! Renamed copies of the state's shared parts, remembered per thread (spec MODEL-SYM).
//!
//! A step changes one part of a state (usually the controller) and shares the others with its
//! predecessor, and the successors of a state mostly get the same renaming as their
//! predecessor's representative did. Renaming a part is a pure function of the part and the
//! renaming, so the renamed copy made for one state serves every later state that shares the
//! part and gets the same renaming: no copy, and the copy's hash is already kept. Each slot
//! holds the part it was made from, so that a match by identity cannot be a reused allocation.
//! The controller's parts are not remembered: its timed queue changes with almost every step,
//! and a memo of it missed too often to pay for its lookups. The same tables remember what the
//! API server and the pod cache say about each pod, the signatures that choose the renaming.

use super::state::{ApiServer, CachedNode, CachedPod};
use super::symmetry::Permutation;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::hash::Hash;
use taintcheck_core::api::{NodeName, PodKey};
use taintcheck_core::shared::Shared;
use taintcheck_core::small_map::SmallMap;

/// Slots per kind of part: a direct-mapped table, the latest renaming of a part winning.
const SLOTS: usize = 1024;

/// A part, the renaming it went through, and what came of it.
type Slot<T, V> = Option<(Shared<T>, Permutation, V)>;

/// The remembered renamings of one kind of part, or what it says about each pod ([`Signatures`]).
struct Memo<T, V = Shared<T>>(Vec<Slot<T, V>>);

impl<T, V> Default for Memo<T, V> {
    fn default() -> Self {
        Memo((0..SLOTS).map(|_| None).collect())
    }
}

impl<T: Hash, V: Clone> Memo<T, V> {
    /// What `from` gives under `r`: remembered, or made by `rename` and remembered.
    fn get_or(&mut self, from: &Shared<T>, r: &Permutation, rename: impl FnOnce() -> V) -> V {
        let at = ((from.hash64() ^ r.tag()) % SLOTS as u64) as usize;
        if let Some((was, with, to)) = &self.0[at] {
            if Shared::ptr_eq(was, from) && with.same_as(r) {
                return to.clone();
            }
        }
        let to = rename();
        self.0[at] = Some((from.clone(), r.clone(), to.clone()));
        to
    }
}

type NodeCache = SmallMap<NodeName, Shared<CachedNode>>;
type PodCache = SmallMap<PodKey, Shared<CachedPod>>;

/// What a part says about each pod of the run's class, in class order, its nodes' names taken
/// through a renaming of nodes (see `SysState::pod_signatures`).
pub(super) type Signatures = SmallVec<[u64; 8]>;

/// The memos of a thread, one per kind of part and use.
#[derive(Default)]
struct Memos {
    api: Memo<ApiServer>,
    nodes: Memo<NodeCache>,
    pods: Memo<PodCache>,
    api_signatures: Memo<ApiServer, Signatures>,
    pod_cache_signatures: Memo<PodCache, Signatures>,
}

thread_local! {
    static MEMOS: RefCell<Memos> = RefCell::default();
}

/// The API server's objects renamed by `r` (made by `rename` unless remembered).
pub(super) fn api(
    from: &Shared<ApiServer>,
    r: &Permutation,
    rename: impl FnOnce() -> Shared<ApiServer>,
) -> Shared<ApiServer> {
    MEMOS.with_borrow_mut(|m| m.api.get_or(from, r, rename))
}

/// The node informer's cache renamed by `r` (made by `rename` unless remembered).
pub(super) fn node_cache(
    from: &Shared<NodeCache>,
    r: &Permutation,
    rename: impl FnOnce() -> Shared<NodeCache>,
) -> Shared<NodeCache> {
    MEMOS.with_borrow_mut(|m| m.nodes.get_or(from, r, rename))
}

/// The pod informer's cache renamed by `r` (made by `rename` unless remembered).
pub(super) fn pod_cache(
    from: &Shared<PodCache>,
    r: &Permutation,
    rename: impl FnOnce() -> Shared<PodCache>,
) -> Shared<PodCache> {
    MEMOS.with_borrow_mut(|m| m.pods.get_or(from, r, rename))
}

/// What the API server says about each pod of the class, nodes named through `nodes` (made by
/// `sign` unless remembered). A run has one class, so the part and `nodes` decide it.
pub(super) fn api_signatures(
    from: &Shared<ApiServer>,
    nodes: &Permutation,
    sign: impl FnOnce() -> Signatures,
) -> Signatures {
    MEMOS.with_borrow_mut(|m| m.api_signatures.get_or(from, nodes, sign))
}

/// What the pod informer's cache says about each pod of the class (as [`api_signatures`]).
pub(super) fn pod_cache_signatures(
    from: &Shared<PodCache>,
    nodes: &Permutation,
    sign: impl FnOnce() -> Signatures,
) -> Signatures {
    MEMOS.with_borrow_mut(|m| m.pod_cache_signatures.get_or(from, nodes, sign))
}
