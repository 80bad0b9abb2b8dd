//! What a node's taints mean for one pod: the answer `taintcheck explain` prints (spec EXPL-1).
//!
//! Every decision comes from [`matching`] and [`scheduler`]; this module only gathers them.
//! Serializes to exactly the JSON shape of `explain --json`.

use crate::api::{Node, Pod, Taint};
use crate::matching::{self, TolerationTime, Verdict};
use crate::scheduler;
use serde::{Serialize, Serializer};

/// The explanation of one (node, pod) pair.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// Every taint of the node, any effect, in node order.
    pub taints: Vec<TaintLine>,
    /// Whether every NoExecute taint is tolerated.
    pub all_tolerated: bool,
    /// `getMinTolerationTime` over the tolerations used for the NoExecute taints; `None` is
    /// forever. 0 when some NoExecute taint is untolerated (upstream's helpers return an empty
    /// "used" list then, whose minimum is 0). `None` when there is no NoExecute taint.
    pub min_toleration_seconds: Option<Seconds>,
    /// What happens to a pod already running on the node.
    pub eviction: Eviction,
    /// With [`Eviction::After`]: the delay.
    pub eviction_after_seconds: Option<Seconds>,
    /// Whether the scheduler's TaintToleration Filter admits a new pod.
    pub schedulable: bool,
    /// When the Filter rejects it: the scheduler's reason, naming the first untolerated taint.
    pub unschedulable_reason: Option<String>,
    /// The TaintToleration Score: untolerated PreferNoSchedule taints.
    pub prefer_no_schedule_untolerated: i64,
}

/// One taint and the toleration that tolerates it (the first in pod order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaintLine {
    /// `Taint.ToString`, e.g. `k=v:NoExecute`.
    pub taint: String,
    /// The taint's effect as written (`NoExecute`, `NoSchedule`, `PreferNoSchedule`, or other).
    pub effect: String,
    /// The index in the pod's tolerations of the first one that tolerates it, if any.
    pub toleration_index: Option<usize>,
    /// That toleration's `tolerationSeconds`; `None` is forever (or no toleration).
    pub seconds: Option<i64>,
}

/// The outcome for a running pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Eviction {
    /// Evicted at once: some NoExecute taint is untolerated, or tolerated for 0 s or less.
    Immediate,
    /// Evicted after the smallest `tolerationSeconds` of the tolerations used.
    After,
    /// Never evicted: every NoExecute taint is tolerated forever (or there is none).
    Never,
}

/// A span in milliseconds printed as seconds: an integer when whole, else with a fraction (only
/// the wrapped values of MATCH-3 have one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub i64);

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % 1000 == 0 {
            s.serialize_i64(self.0 / 1000)
        } else {
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 % 1000 == 0 {
            write!(f, "{}", self.0 / 1000)
        } else {
            write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
        }
    }
}

impl Explanation {
    /// Explain `pod` on `node`, with or without the comparison-operator gate.
    pub fn new(node: &Node, pod: &Pod, comparison_operators: bool) -> Explanation {
        let tolerations = &pod.tolerations;
        let taints = node
            .taints
            .iter()
            .map(|taint| {
                let index = matching::first_tolerating(taint, tolerations, comparison_operators);
                TaintLine {
                    taint: taint.to_string(),
                    effect: taint.effect.as_str().to_owned(),
                    toleration_index: index,
                    seconds: index.and_then(|i| tolerations[i].seconds),
                }
            })
            .collect();
        let no_execute: Vec<Taint> = node.no_execute_taints().cloned().collect();
        let verdict = matching::verdict(&no_execute, tolerations, comparison_operators);
        let (all_tolerated, min, eviction, after) = match verdict {
            _ if no_execute.is_empty() => (true, None, Eviction::Never, None),
            Verdict::Untolerated => (false, Some(Seconds(0)), Eviction::Immediate, None),
            Verdict::Tolerated(TolerationTime::Forever) => (true, None, Eviction::Never, None),
            Verdict::Tolerated(TolerationTime::After(d)) if d.millis() == 0 => {
                (true, Some(Seconds(0)), Eviction::Immediate, None)
            }
            Verdict::Tolerated(TolerationTime::After(d)) => {
                let s = Seconds(d.millis());
                (true, Some(s), Eviction::After, Some(s))
            }
        };
        let filter = scheduler::filter(&node.taints, tolerations, comparison_operators);
        Explanation {
            taints,
            all_tolerated,
            min_toleration_seconds: min,
            eviction,
            eviction_after_seconds: after,
            schedulable: filter.is_ok(),
            unschedulable_reason: filter.err().map(|u| u.reason),
            prefer_no_schedule_untolerated: scheduler::score(
                &node.taints,
                tolerations,
                comparison_operators,
            ),
        }
    }
}

#[cfg(test)]
mod tests;
