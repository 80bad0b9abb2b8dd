//! Renaming the pods and nodes a controller remembers, and renumbering its works, for the
//! model's symmetry reduction (spec MODEL-SYM).

use super::{Controller, Listing};
use crate::api::Pod;
use crate::arrivals::Arrivals;
use crate::effect::WorkId;
use crate::renaming::Renaming;
use crate::shared::Shared;
use crate::worker::{NodePhase, Worker};
use smallvec::SmallVec;

impl Controller {
    /// Renames every pod and node the controller remembers (keys, UIDs, node names, listed
    /// pods, queue and channel items, works, requests, the arrival record) by `r`, keeping each
    /// queue's order and re-sorting its sets: the one place that knows where pods and nodes live
    /// in the core, for the model's symmetry reduction (spec MODEL-SYM). Node renamings keep
    /// items in their channels, so they are only sound where every node has the same shard.
    pub fn rename(&mut self, r: &impl Renaming) {
        // Parts that name nothing the renaming moves stay shared, their kept hashes valid.
        if !self.timed.entries().is_empty() || !self.timed.works().is_empty() {
            self.timed.make_mut().rename(r);
        }
        if *self.arrivals != Arrivals::default() {
            self.arrivals.make_mut().rename(r);
        }
        if r.moves_nodes() {
            self.tainted_nodes = Shared::new(
                self.tainted_nodes
                    .iter()
                    .map(|(n, t)| (r.node(n), t.clone()))
                    .collect(),
            );
            self.node_queue = Shared::new(self.node_queue.map(|n| r.node(n)));
            self.node_held = self.node_held.as_ref().map(|n| r.node(n));
        }
        if !self.pod_queue.is_idle() {
            self.pod_queue = Shared::new(self.pod_queue.map(|i| r.item(i)));
        }
        self.pod_held = self.pod_held.as_ref().map(|i| r.item(i));
        if self.shards.all_idle() {
            return;
        }
        for shard in self.shards.make_mut().busy_mut() {
            shard.nodes.iter_mut().for_each(|n| *n = r.node(n));
            shard.pods.iter_mut().for_each(|i| *i = r.item(i));
            match &mut shard.worker {
                Worker::Idle => {}
                Worker::Draining { pod } => *pod = r.item(pod),
                Worker::Node { node, phase, then } => {
                    *node = r.node(node);
                    *then = then.as_ref().map(|i| r.item(i));
                    if let NodePhase::Pods { pods, .. } = phase {
                        let mut renamed: Vec<Pod> = pods.iter().map(|p| r.pod(p)).collect();
                        // Under `Any` the list is the set still to do, kept in name order.
                        if self.config.listing == Listing::Any {
                            renamed.sort_unstable_by(|a, b| a.key.cmp(&b.key));
                        }
                        *pods = renamed.into();
                    }
                }
            }
        }
    }

    /// Renumbers the works (and with them their timers and requests) canonically, keeping the
    /// set of ids in use; returns the renumbering (old id, new id, by old id), for ids the
    /// caller keeps. Ids are only compared for equality, so the result is equivalent; for the
    /// model's symmetry reduction (spec MODEL-SYM). Allocates nothing for a handful of works.
    pub fn canonicalise_ids(&mut self) -> IdRenumbering {
        let to = self.timed.works().keys().copied();
        let mut map: IdRenumbering = self.timed.canonical_order().into_iter().zip(to).collect();
        if map.iter().any(|(a, b)| a != b) {
            let to = |id: WorkId| map.iter().find(|(a, _)| *a == id).map_or(id, |(_, b)| *b);
            self.timed.make_mut().renumber_by(to);
        }
        map.sort_unstable();
        map
    }

    /// Whether [`Controller::canonicalise_ids`] would renumber nothing.
    pub fn ids_are_canonical(&self) -> bool {
        self.timed.ids_are_canonical()
    }
}

/// A renumbering of works: pairs (old id, new id), sorted by old id.
pub type IdRenumbering = SmallVec<[(WorkId, WorkId); 8]>;
