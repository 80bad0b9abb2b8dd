//! client-go's basic work queue (`util/workqueue/queue.go`), without its blocking: `get` returns
//! `None` where client-go's `Get` would wait, and the runtime blocks around it. Spec: WQ-1..WQ-4.

use crate::small_map::SmallMap;
use std::collections::VecDeque;

/// Where a key stands: client-go's `dirty` and `processing` sets, as the three combinations
/// they can be in (a dirty key that is not processing is always queued).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mark {
    /// Dirty and queued.
    Queued,
    /// Handed out; not added since.
    Processing,
    /// Handed out and added since: queued again by `done`.
    ProcessingDirty,
}

/// A deduplicating FIFO: a key is queued at most once, handed out to at most one consumer at a
/// time, and an `add` while it is processing is deferred until `done` (semantics §2.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkQueue<T: Ord + Clone> {
    queue: VecDeque<T>,
    /// Every key queued or handed out.
    marks: SmallMap<T, Mark>,
}

impl<T: Ord + Clone> Default for WorkQueue<T> {
    fn default() -> Self {
        WorkQueue {
            queue: VecDeque::new(),
            marks: SmallMap::default(),
        }
    }
}

impl<T: Ord + Clone> WorkQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Upstream `Add`. A dirty key is not queued again (adds collapse); a key being processed is
    /// marked dirty and queued by [`WorkQueue::done`]. Spec: WQ-1.
    pub fn add(&mut self, item: T) {
        match self.marks.get_mut(&item) {
            Some(Mark::Queued | Mark::ProcessingDirty) => {}
            Some(m @ Mark::Processing) => *m = Mark::ProcessingDirty,
            None => {
                self.marks.insert(item.clone(), Mark::Queued);
                self.queue.push_back(item);
            }
        }
    }

    /// Upstream `Get`, non-blocking: the head moves from dirty to processing. Spec: WQ-2.
    pub fn get(&mut self) -> Option<T> {
        let item = self.queue.pop_front()?;
        if let Some(m) = self.marks.get_mut(&item) {
            *m = Mark::Processing;
        }
        Some(item)
    }

    /// Upstream `Done`: the key may be handed out again; if it was added meanwhile it is queued
    /// now, once. A key not handed out is left as it is. Spec: WQ-3.
    pub fn done(&mut self, item: &T) {
        match self.marks.get_mut(item) {
            Some(m @ Mark::ProcessingDirty) => {
                *m = Mark::Queued;
                self.queue.push_back(item.clone());
            }
            Some(Mark::Processing) => {
                self.marks.remove(item);
            }
            Some(Mark::Queued) | None => {}
        }
    }

    /// Keys waiting to be handed out (upstream `Len`).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// No key waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// True iff `item` was handed out and not yet `done`.
    pub fn is_processing<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: std::borrow::Borrow<Q>,
    {
        matches!(
            self.marks.get(item),
            Some(Mark::Processing | Mark::ProcessingDirty)
        )
    }

    /// True iff `item` was handed out and added since: [`WorkQueue::done`] queues it again.
    pub fn requeues<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: std::borrow::Borrow<Q>,
    {
        self.marks.get(item) == Some(&Mark::ProcessingDirty)
    }

    /// No key queued and none handed out.
    pub fn is_idle(&self) -> bool {
        self.marks.is_empty()
    }

    /// The same queue with every key mapped by `f`, an injection (queue order kept).
    pub fn map(&self, f: impl Fn(&T) -> T) -> WorkQueue<T> {
        WorkQueue {
            queue: self.queue.iter().map(&f).collect(),
            marks: self.marks.iter().map(|(k, m)| (f(k), *m)).collect(),
        }
    }

    /// The queued keys, head first.
    pub fn queued(&self) -> impl Iterator<Item = &T> {
        self.queue.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn adds_collapse_while_queued() {
        let mut q = WorkQueue::new();
        q.add(1);
        q.add(1);
        q.add(2);
        assert_eq!(q.len(), 2);
        assert_eq!(q.get(), Some(1));
        assert_eq!(q.get(), Some(2));
        assert_eq!(q.get(), None);
    }

    #[test]
    fn add_while_processing_waits_for_done() {
        let mut q = WorkQueue::new();
        q.add("a");
        assert_eq!(q.get(), Some("a"));
        q.add("a");
        q.add("a");
        assert_eq!(
            q.get(),
            None,
            "WQ-1: a processing key is not handed out again"
        );
        q.done(&"a");
        assert_eq!(q.get(), Some("a"), "WQ-3: one more round after done");
        q.done(&"a");
        assert!(q.is_idle());
    }

    /// Upstream `Len` counts the keys waiting, not those handed out; `is_processing` holds from
    /// `Get` to `Done`, also when the key was added again meanwhile (semantics §2.4, WQ-1..WQ-3).
    #[test]
    fn waiting_and_processing_keys_are_told_apart() {
        let mut q = WorkQueue::new();
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
        q.add("a");
        assert!(!q.is_empty());
        assert!(!q.is_processing("a"), "queued, not handed out");
        assert_eq!(q.get(), Some("a"));
        assert!(q.is_empty(), "handed out, no longer waiting");
        assert_eq!(q.len(), 0);
        assert!(q.is_processing("a") && !q.is_idle());
        q.add("a");
        assert!(
            q.is_processing("a"),
            "added while processing: still processing"
        );
        assert!(q.is_empty(), "queued only by done");
        q.done(&"a");
        assert!(!q.is_processing("a") && q.len() == 1);
    }

    /// `map` renames every key, queued or handed out, and keeps the queue order (the model's
    /// symmetry reduction, MODEL-SYM).
    #[test]
    fn map_renames_queued_and_processing_keys_in_order() {
        let mut q = WorkQueue::new();
        for k in [1, 2, 3] {
            q.add(k);
        }
        assert_eq!(q.get(), Some(1));
        let m = q.map(|k| k * 10);
        assert_eq!(m.queued().collect::<Vec<_>>(), [&20, &30]);
        assert!(m.is_processing(&10) && !m.is_processing(&1));
        assert_eq!(q.queued().collect::<Vec<_>>(), [&2, &3]);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Add(u8),
        Get,
        Done(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..4).prop_map(Op::Add),
            Just(Op::Get),
            (0usize..4).prop_map(Op::Done)
        ]
    }

    proptest! {
        /// WQ-4: a key is never handed out twice at once, and every added key is eventually
        /// handed out after its last add.
        #[test]
        fn never_hands_out_a_key_twice_at_once(ops in proptest::collection::vec(op(), 0..64)) {
            let mut q = WorkQueue::new();
            let mut held: Vec<u8> = Vec::new();
            let mut owed: BTreeSet<u8> = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Add(k) => { q.add(k); owed.insert(k); }
                    Op::Get => if let Some(k) = q.get() {
                        prop_assert!(!held.contains(&k), "key {} handed out twice", k);
                        held.push(k);
                        owed.remove(&k);
                    },
                    Op::Done(i) => if i < held.len() { let k = held.remove(i); q.done(&k); }
                }
            }
            for k in held.drain(..) { q.done(&k); }
            while let Some(k) = q.get() { owed.remove(&k); q.done(&k); }
            prop_assert!(owed.is_empty(), "adds lost: {:?}", owed);
            prop_assert!(q.is_idle());
        }
    }
}
