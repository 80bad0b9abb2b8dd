//! The scheduler's TaintToleration plugin (`pkg/scheduler/framework/plugins/tainttoleration/
//! taint_toleration.go`; spec SCHED-1..3): would a new pod be placed on a node, and how much
//! does the node's `PreferNoSchedule` set count against it.
//!
//! `tolerationSeconds` plays no part here: a pod that tolerates a NoExecute taint for 10 s is
//! schedulable onto that node (and is then evicted 10 s later; upstream T7).

use crate::api::{Taint, TaintEffect, Toleration};
use crate::matching::{find_untolerated_taint, tolerations_tolerate_taint};

/// Upstream `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;

/// Why Filter rejects a node (status `UnschedulableAndUnresolvable`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unschedulable {
    /// Index of the first untolerated NoSchedule/NoExecute taint, in node order.
    pub taint_index: usize,
    /// Upstream's reason: `node(s) had untolerated taint {key: value}`.
    pub reason: String,
}

/// Filter: the first NoSchedule or NoExecute taint no toleration tolerates makes the node
/// unschedulable; PreferNoSchedule taints never do. Spec: SCHED-1.
#[doc(alias = "Filter")]
pub fn filter(
    taints: &[Taint],
    tolerations: &[Toleration],
    comparison_operators: bool,
) -> Result<(), Unschedulable> {
    let do_not_schedule =
        |t: &Taint| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute);
    match find_untolerated_taint(taints, tolerations, do_not_schedule, comparison_operators) {
        None => Ok(()),
        Some(i) => Err(Unschedulable {
            taint_index: i,
            reason: format!(
                "node(s) had untolerated taint {{{}: {}}}",
                taints[i].key, taints[i].value
            ),
        }),
    }
}

/// PreScore + Score: how many PreferNoSchedule taints the pod's PreferNoSchedule-or-any-effect
/// tolerations leave untolerated (higher is worse). Spec: SCHED-2.
#[doc(alias = "countIntolerableTaintsPreferNoSchedule")]
pub fn score(taints: &[Taint], tolerations: &[Toleration], comparison_operators: bool) -> i64 {
    let prefer: Vec<Toleration> = tolerations
        .iter()
        .filter(|t| matches!(t.effect, None | Some(TaintEffect::PreferNoSchedule)))
        .cloned()
        .collect();
    let untolerated = taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
        .filter(|t| !tolerations_tolerate_taint(&prefer, t, comparison_operators))
        .count();
    i64::try_from(untolerated).unwrap_or(i64::MAX)
}

/// NormalizeScore: upstream `DefaultNormalizeScore(MaxNodeScore, reverse=true)` over the raw
/// scores of all candidate nodes, in place. Fewer untolerated taints → higher score; if no node
/// has any, every node gets 100. Spec: SCHED-3.
#[doc(alias = "DefaultNormalizeScore")]
pub fn normalize_scores(scores: &mut [i64]) {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        scores.iter_mut().for_each(|s| *s = MAX_NODE_SCORE);
        return;
    }
    for s in scores.iter_mut() {
        *s = MAX_NODE_SCORE - MAX_NODE_SCORE * *s / max;
    }
}

#[cfg(test)]
mod tests;
