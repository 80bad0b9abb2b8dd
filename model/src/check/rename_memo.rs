//! Renamed copies of the state's shared parts, remembered per thread (spec MODEL-SYM).
//!
//! A step changes one part of a state (usually the controller) and shares the others with its
//! predecessor, and the successors of a state mostly get the same renaming as their
//! predecessor's representative did. Renaming a part is a pure function of the part and the
//! renaming, so the renamed copy made for one state serves every later state that shares the
//! part and gets the same renaming: no copy, and the copy's hash is already kept. Each slot
//! holds the part it was made from, so that a match by identity cannot be a reused allocation.
//! The controller's parts are not remembered: its timed queue changes with almost every step,
//! and a memo of it missed too often to pay for its lookups.

use super::state::{ApiServer, CachedNode, CachedPod};
use super::symmetry::Permutation;
use crate::api::{NodeName, PodKey};
use crate::shared::Shared;
use crate::small_map::SmallMap;
use std::cell::RefCell;
use std::hash::Hash;

/// Slots per kind of part: a direct-mapped table, the latest renaming of a part winning.
const SLOTS: usize = 1024;

/// A part, the renaming it went through, and the result.
type Slot<T> = Option<(Shared<T>, Permutation, Shared<T>)>;

/// The remembered renamings of one kind of part.
struct Memo<T>(Vec<Slot<T>>);

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo((0..SLOTS).map(|_| None).collect())
    }
}

impl<T: Hash> Memo<T> {
    /// `from` renamed by `r`: remembered, or made by `rename` and remembered.
    fn get_or(
        &mut self,
        from: &Shared<T>,
        r: &Permutation,
        rename: impl FnOnce() -> Shared<T>,
    ) -> Shared<T> {
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

/// The memos of a thread, one per kind of part.
#[derive(Default)]
struct Memos {
    api: Memo<ApiServer>,
    nodes: Memo<NodeCache>,
    pods: Memo<PodCache>,
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
