//! Relabelling the works onto other ids, for comparing states up to a renaming of work ids
//! (the model's partial-order reduction, spec MODEL-POR).

use super::TimedQueue;
use crate::effect::WorkId;
use crate::work_ids::WorkIds;
use std::collections::BTreeMap;

impl TimedQueue {
    /// Gives each work the id `map` names for it (an injective map covering every work; the
    /// targets need not be the ids in use), with its entry, timer and request, and rebuilds the
    /// allocator for the new ids in use, so that two queues that differ only in their works' ids
    /// become equal under suitable maps.
    pub(crate) fn relabel(&mut self, map: &BTreeMap<WorkId, WorkId>) {
        self.renumber(map);
        let top = self.works.keys().map(|id| id.0).max();
        let mut ids = WorkIds::default();
        if let Some(top) = top {
            for _ in 0..=top {
                ids.take();
            }
            for id in (0..top).filter(|id| !self.works.contains_key(&WorkId(*id))) {
                ids.release(WorkId(id));
            }
        }
        self.ids = ids;
    }
}
