//! The one seam between the runtime and the core's boundary: what the core reads (the informer
//! caches as a [`ClusterView`], `now`, informer events) and what it asks for (API requests), and
//! whether an incarnation's memory survives a restart. The runtime passes everything through
//! [`Boundary`], whose defaults change nothing; [`Faithful`] is the runtime `taintcheck run`
//! uses.
//!
//! With the `mutants` feature, [`Mutant`]s are deliberately wrong controllers, to measure how
//! well the conformance oracle catches them (the kill rate of `tests/oracle.rs`): each bends one thing at this
//! boundary (misreads the caches, drops informer events, shifts the clock, rewrites or repeats
//! a request, keeps its memory across a restart). The core itself is never changed. Run them
//! with [`crate::driver::run_scenario_mutated`].

use crate::informer::Cache;
#[cfg(feature = "mutants")]
use taintcheck_core::api::TaintEffect;
use taintcheck_core::api::{Node, Pod, PodKey};
use taintcheck_core::time::Time;
use taintcheck_core::Cluster;
use taintcheck_core::{ApiRequest, ClusterView};

/// Where a controller incarnation may deviate from the core's view of the world. Every default
/// passes the value through unchanged.
pub trait Boundary: Copy + Send + Sync + 'static {
    /// The caches the core reads.
    fn view<'a>(&self, cache: &'a Cache) -> View<'a> {
        View::Cache(cache)
    }

    /// The `now` a worker's step decides with.
    fn decision_now(&self, now: Time) -> Time {
        now
    }

    /// Whether a pod informer event is kept from the core.
    fn drops_pod_event(&self, _old: Option<&Pod>, _new: Option<&Pod>) -> bool {
        false
    }

    /// The request actually sent for the core's `request`.
    fn request(&self, request: ApiRequest) -> ApiRequest {
        request
    }

    /// Whether the request is sent a second time (an answer nobody awaits).
    fn repeats(&self, _request: &ApiRequest) -> bool {
        false
    }

    /// Whether a controller restart keeps the incarnation running, memory and timers included.
    fn survives_restart(&self) -> bool {
        false
    }
}

/// The caches as the core reads them: the informer cache, or a mutant's misreading of it.
pub enum View<'a> {
    Cache(&'a Cache),
    Misread(Cluster),
}

impl ClusterView for View<'_> {
    fn node(&self, name: &str) -> Option<&Node> {
        match self {
            View::Cache(c) => Cache::node(c, name),
            View::Misread(m) => m.node(name),
        }
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        match self {
            View::Cache(c) => Cache::pod(c, key),
            View::Misread(m) => m.pod(key),
        }
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        match self {
            View::Cache(c) => Cache::pods_on_node(c, name),
            View::Misread(m) => m.pods_on_node(name),
        }
    }
}

/// The runtime as it should be: every boundary passed through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faithful;

impl Boundary for Faithful {}

/// What a controller incarnation runs: the faithful runtime, or (feature `mutants`) a mutant.
#[cfg(not(feature = "mutants"))]
pub type Mutation = Faithful;

#[cfg(feature = "mutants")]
/// The mutant a controller incarnation runs, if any.
pub type Mutation = Option<Mutant>;

/// One wrong implementation of the taint manager.
#[cfg(feature = "mutants")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutant {
    /// Treats a toleration with `tolerationSeconds` as tolerating forever.
    IgnoresTolerationSeconds,
    /// Waits for the longest `tolerationSeconds` of the pod instead of the shortest.
    MaxInsteadOfMin,
    /// Treats `NoSchedule` taints as `NoExecute`.
    EvictsOnNoSchedule,
    /// Does not cancel scheduled deletions when a node's last NoExecute taint goes away: it
    /// reads a node without NoExecute taints as absent, which ends `handleNodeUpdate` before
    /// the pods are listed.
    NeverCancelsOnTaintRemoval,
    /// Cancels on node updates, but ignores the pod events that may cancel: deletions and
    /// toleration changes.
    CancelsOnNodeUpdatesOnly,
    /// Treats tolerations without `tolerationSeconds` (forever) as zero seconds.
    EvictsToleratedForever,
    /// A deleted pod's scheduled deletion survives (its delete event is ignored, and requests
    /// carry no UID or resourceVersion precondition), so it hits a later pod of the same name.
    DeletesSameNameSuccessor,
    /// Keeps its timers (and all memory) across a controller restart.
    KeepsTimersAcrossRestart,
    /// Computes every deadline one tick (1 ms) early: its handlers' clock is 1 ms behind.
    OffByOneTick,
    /// Sends every DELETE twice.
    DeletesTwice,
}

#[cfg(feature = "mutants")]
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
                | Mutant::NeverCancelsOnTaintRemoval
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

#[cfg(feature = "mutants")]
impl Boundary for Mutation {
    fn view<'a>(&self, cache: &'a Cache) -> View<'a> {
        let Some(m) = self.filter(|m| m.misreads()) else {
            return View::Cache(cache);
        };
        let hides_untainted = m == Mutant::NeverCancelsOnTaintRemoval;
        View::Misread(Cluster {
            nodes: cache
                .nodes()
                .filter(|n| !hides_untainted || n.no_execute_taints().next().is_some())
                .map(|n| (n.name.clone(), m.node(n)))
                .collect(),
            pods: cache
                .pods()
                .into_iter()
                .map(|p| (p.key.clone(), m.pod(p)))
                .collect(),
        })
    }

    fn decision_now(&self, now: Time) -> Time {
        match self {
            Some(Mutant::OffByOneTick) => Time(now.millis() - 1),
            _ => now,
        }
    }

    fn drops_pod_event(&self, old: Option<&Pod>, new: Option<&Pod>) -> bool {
        let changed = |o: &Pod, n: &Pod| o.tolerations != n.tolerations;
        match self {
            Some(Mutant::DeletesSameNameSuccessor) => new.is_none(),
            Some(Mutant::CancelsOnNodeUpdatesOnly) => {
                new.is_none() || old.zip(new).is_some_and(|(o, n)| changed(o, n))
            }
            _ => false,
        }
    }

    fn request(&self, request: ApiRequest) -> ApiRequest {
        match self {
            Some(Mutant::DeletesSameNameSuccessor) => ApiRequest {
                uid: None,
                version: None,
                ..request
            },
            _ => request,
        }
    }

    fn repeats(&self, request: &ApiRequest) -> bool {
        *self == Some(Mutant::DeletesTwice) && request.verb == taintcheck_core::Verb::Delete
    }

    fn survives_restart(&self) -> bool {
        *self == Some(Mutant::KeepsTimersAcrossRestart)
    }
}

#[cfg(all(test, feature = "mutants"))]
mod tests {
    use super::*;
    use taintcheck_core::api::{PodKey, Toleration, Uid};

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
