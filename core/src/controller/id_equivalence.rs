//! Relabelling the works of a controller onto other ids: the model's partial-order reduction
//! (spec MODEL-POR) lets two orders of steps reach states that differ only in which work ids
//! are in use, and its tests compare states up to such a renaming.

use super::Controller;
use crate::effect::WorkId;
use std::collections::BTreeMap;

impl Controller {
    /// Gives each work (with its timer, request and entry) the id `map` names for it: an
    /// injective map covering every work, onto any ids. Ids are only compared for equality, so
    /// the result behaves as the original does, up to the renaming (spec MODEL-POR).
    pub fn relabel_works(&mut self, map: &BTreeMap<WorkId, WorkId>) {
        if map.iter().any(|(a, b)| a != b) {
            self.timed.make_mut().relabel(map);
        }
    }
}
