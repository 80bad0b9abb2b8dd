//! Work id allocation for the timed queue: a new work takes the lowest id not in use, so that
//! states differing only in history get equal ids (the model's state space and the snapshots
//! depend on it). Kept in O(log n) per allocation and release instead of a scan of the live
//! works, which made the runtime's eviction storm quadratic. Spec: CORE-S3.

use super::effect::WorkId;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// The ids in use, as the complement below a high-water mark: `[0, end)` minus `free`.
///
/// Canonical for the set of ids in use (`end` is one past the highest id in use, and `free`
/// holds exactly the unused ids below it), so two queues with the same works have equal
/// allocators: the derived `Eq` and `Hash` agree with the works' own.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct WorkIds {
    /// Ids below `end` not in use; its first element, if any, is the lowest free id.
    free: BTreeSet<u32>,
    /// One past the highest id in use; 0 when none is.
    end: u32,
}

impl WorkIds {
    /// Marks the lowest id not in use as in use and returns it.
    pub(crate) fn take(&mut self) -> WorkId {
        match self.free.pop_first() {
            Some(id) => WorkId(id),
            None => {
                let id = self.end;
                self.end = id.checked_add(1).expect("fewer than 2^32 live works");
                WorkId(id)
            }
        }
    }

    /// Marks `id` as no longer in use; releasing an id not in use is a no-op.
    pub(crate) fn release(&mut self, id: WorkId) {
        let Some(top) = self.end.checked_sub(1) else {
            return;
        };
        match id.0.cmp(&top) {
            Ordering::Less => {
                self.free.insert(id.0);
            }
            Ordering::Greater => {}
            // The highest id went (`top` is always in use): lower the mark past the free ids
            // just below it.
            Ordering::Equal => {
                self.end = top;
                while self.end > 0 && self.free.last() == Some(&(self.end - 1)) {
                    self.free.pop_last();
                    self.end -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule the allocator replaces: the lowest id not in `used`.
    fn lowest_unused(used: &BTreeSet<u32>) -> u32 {
        (0..)
            .find(|id| !used.contains(id))
            .expect("u32 is not exhausted")
    }

    /// The canonical allocator for `used`, as a fresh one would reach it.
    fn canonical(used: &BTreeSet<u32>) -> WorkIds {
        let end = used.last().map_or(0, |top| top + 1);
        WorkIds {
            free: (0..end).filter(|id| !used.contains(id)).collect(),
            end,
        }
    }

    proptest! {
        /// Any sequence of allocations and releases hands out exactly what the lowest-free-id
        /// scan would, and leaves the allocator canonical for the ids in use (so equal work sets
        /// hash and compare equal whatever their history).
        #[test]
        fn takes_the_lowest_unused_id_and_stays_canonical(
            ops in prop::collection::vec((any::<bool>(), 0u32..24), 0..200)
        ) {
            let mut ids = WorkIds::default();
            let mut used = BTreeSet::new();
            for (allocate, pick) in ops {
                if allocate || used.is_empty() {
                    let expected = lowest_unused(&used);
                    prop_assert_eq!(ids.take(), WorkId(expected));
                    used.insert(expected);
                } else {
                    // Release a used id (chosen by `pick`) or, one time in four, an unused one.
                    let id = if pick % 4 == 0 {
                        pick + 1000
                    } else {
                        *used.iter().nth(pick as usize % used.len()).expect("non-empty")
                    };
                    ids.release(WorkId(id));
                    used.remove(&id);
                }
                prop_assert_eq!(&ids, &canonical(&used));
            }
        }
    }

    #[test]
    fn releasing_the_top_lowers_the_mark_past_free_ids() {
        let mut ids = WorkIds::default();
        let taken: Vec<WorkId> = (0..5).map(|_| ids.take()).collect();
        assert_eq!(taken, (0..5).map(WorkId).collect::<Vec<_>>());
        ids.release(WorkId(1));
        ids.release(WorkId(3));
        ids.release(WorkId(4));
        assert_eq!(
            ids,
            WorkIds {
                free: BTreeSet::from([1]),
                end: 3
            }
        );
        assert_eq!(ids.take(), WorkId(1));
        assert_eq!(ids.take(), WorkId(3));
        for id in [3, 2, 1, 0] {
            ids.release(WorkId(id));
        }
        assert_eq!(ids, WorkIds::default());
    }
}
