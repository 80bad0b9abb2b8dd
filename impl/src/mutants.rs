//! Deliberately wrong controllers, to measure how well the conformance oracle catches them
//! (the kill rate of `tests/oracle.rs`). Built only with the `mutants` feature, never into the
//! runtime `taintcheck run` uses: each mutant bends one decision of the reference runtime,
//! either by misreading the informer caches it hands to the core, or by a small change around a
//! core call (skipping it, undoing it, shifting its clock, repeating a request). The core itself is
//! never changed. Run them with [`crate::driver::run_scenario_mutated`].

use crate::informer::Cache;
use taintcheck_model::api::{Node, Pod, TaintEffect};
use taintcheck_model::core::driver::Cluster;
use taintcheck_model::core::{ClusterView, Effect, EventKind, PodItem};

/// The mutant a controller incarnation runs, if any.
pub type Mutation = Option<Mutant>;

/// One wrong implementation of the taint manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutant {
    /// Treats a toleration with `tolerationSeconds` as tolerating forever.
    IgnoresTolerationSeconds,
    /// Waits for the longest `tolerationSeconds` of the pod instead of the shortest.
    MaxInsteadOfMin,
    /// Treats `NoSchedule` taints as `NoExecute`.
    EvictsOnNoSchedule,
    /// Does not cancel scheduled deletions when a node's last NoExecute taint goes away.
    NeverCancelsOnTaintRemoval,
    /// Cancels on node updates, but ignores pod updates that would cancel (forever
    /// tolerations, a deleted pod).
    CancelsOnNodeUpdatesOnly,
    /// Treats tolerations without `tolerationSeconds` (forever) as zero seconds.
    EvictsToleratedForever,
    /// A deleted pod's scheduled deletion survives (no cancel, no UID or resourceVersion
    /// precondition), so it hits a later pod of the same name.
    DeletesSameNameSuccessor,
    /// Keeps its timers (and all memory) across a controller restart.
    KeepsTimersAcrossRestart,
    /// Computes every deadline one tick (1 ms) early: its handlers' clock is 1 ms behind.
    OffByOneTick,
    /// Sends every DELETE twice.
    DeletesTwice,
}

impl Mutant {
    pub const ALL: [Mutant; 10] = [
        Mutant::IgnoresTolerationSeconds,
        Mutant::MaxInsteadOfMin,
        Mutant::EvictsOnNoSchedule,
        Mutant::NeverCancelsOnTaintRemoval,
        Mutant::CancelsOnNodeUpdatesOnly,
        Mutant::EvictsToleratedForever,
        Mutant::DeletesSameNameSuccessor,
        Mutant::KeepsTimersAcrossRestart,
        Mutant::OffByOneTick,
        Mutant::DeletesTwice,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutant::IgnoresTolerationSeconds => "ignores tolerationSeconds",
            Mutant::MaxInsteadOfMin => "max instead of min",
            Mutant::EvictsOnNoSchedule => "evicts on NoSchedule",
            Mutant::NeverCancelsOnTaintRemoval => "never cancels on taint removal",
            Mutant::CancelsOnNodeUpdatesOnly => "cancels on node updates, not pod updates",
            Mutant::EvictsToleratedForever => "evicts pods tolerated forever",
            Mutant::DeletesSameNameSuccessor => "deletes a same-name successor",
            Mutant::KeepsTimersAcrossRestart => "keeps timers across restart",
            Mutant::OffByOneTick => "off-by-one-tick deadlines",
            Mutant::DeletesTwice => "deletes twice",
        }
    }

    fn misreads(self) -> bool {
        matches!(
            self,
            Mutant::IgnoresTolerationSeconds
                | Mutant::MaxInsteadOfMin
                | Mutant::EvictsOnNoSchedule
                | Mutant::EvictsToleratedForever
        )
    }

    fn node(self, n: &Node) -> Node {
        let mut n = n.clone();
        if self == Mutant::EvictsOnNoSchedule {
            for t in &mut n.taints {
                if t.effect == TaintEffect::NoSchedule {
                    t.effect = TaintEffect::NoExecute;
                }
            }
        }
        n
    }

    fn pod(self, p: &Pod) -> Pod {
        let mut p = p.clone();
        let longest = p.tolerations.iter().filter_map(|t| t.seconds).max();
        for t in &mut p.tolerations {
            t.seconds = match self {
                Mutant::IgnoresTolerationSeconds => None,
                Mutant::MaxInsteadOfMin => t.seconds.and(longest),
                Mutant::EvictsToleratedForever => Some(t.seconds.unwrap_or(0)),
                _ => t.seconds,
            };
        }
        p
    }
}

/// Whether the mutant may throw away the outcome of a `handlePodUpdate` (see
/// [`ignores_pod_update`]).
pub(crate) fn may_ignore_pod_update(mutation: Mutation) -> bool {
    matches!(
        mutation,
        Some(Mutant::CancelsOnNodeUpdatesOnly | Mutant::DeletesSameNameSuccessor)
    )
}

/// Whether the mutant throws away the outcome of `handlePodUpdate` for `item`, whose effects
/// were `effects` (the caller restores the timed queue as it was).
pub(crate) fn ignores_pod_update(
    mutation: Mutation,
    view: &impl ClusterView,
    item: &PodItem,
    effects: &[Effect],
) -> bool {
    match mutation {
        Some(Mutant::CancelsOnNodeUpdatesOnly) => effects.iter().any(|e| match e {
            Effect::CancelTimer { .. } => true,
            Effect::Event(ev) => ev.kind == EventKind::CancellingDeletion,
            _ => false,
        }),
        Some(Mutant::DeletesSameNameSuccessor) => view.pod(&item.key).is_none(),
        _ => false,
    }
}

/// The caches as a misreading mutant sees them (`None` unless `mutation` misreads them), as a
/// plain map-backed view.
pub fn misread(mutation: Mutation, cache: &Cache) -> Option<Cluster> {
    let m = mutation.filter(|m| m.misreads())?;
    Some(Cluster {
        nodes: cache.nodes().map(|n| (n.name.clone(), m.node(n))).collect(),
        pods: cache
            .pods()
            .into_iter()
            .map(|p| (p.key.clone(), m.pod(p)))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use taintcheck_model::api::{PodKey, Toleration, Uid};

    #[test]
    fn misreadings_change_exactly_what_they_say() {
        let pod = Pod {
            key: PodKey::new("default", "p"),
            uid: Uid("u".into()),
            node_name: None,
            tolerations: vec![
                Toleration::exists("a", Some(TaintEffect::NoExecute), Some(10)),
                Toleration::exists("b", Some(TaintEffect::NoExecute), Some(300)),
                Toleration::exists("c", Some(TaintEffect::NoExecute), None),
            ],
        };
        let seconds = |m: Mutant| -> Vec<Option<i64>> {
            m.pod(&pod).tolerations.iter().map(|t| t.seconds).collect()
        };
        assert_eq!(
            seconds(Mutant::IgnoresTolerationSeconds),
            [None, None, None]
        );
        assert_eq!(
            seconds(Mutant::MaxInsteadOfMin),
            [Some(300), Some(300), None]
        );
        assert_eq!(
            seconds(Mutant::EvictsToleratedForever),
            [Some(10), Some(300), Some(0)]
        );
        assert_eq!(seconds(Mutant::DeletesTwice), [Some(10), Some(300), None]);
    }
}
