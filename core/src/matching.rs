//! Toleration matching, exactly as upstream evaluates it (spec: specs/matching.md).
//!
//! Every function here is the single place its rule lives; the core, `explain`, the scheduler
//! predicates and the oracle all call these.

use crate::api::{Node, Operator, Pod, Taint, TaintEffect, Toleration};
use crate::time::{Duration, Time};

/// Upstream `Toleration.ToleratesTaint` (`staging/src/k8s.io/api/core/v1/toleration.go`, newest
/// gated variant; spec MATCH-1). Effect first, then key, then operator. An empty key matches every
/// key whatever the operator; an empty effect matches every effect; unknown operators never match;
/// `Lt`/`Gt` compare canonical int64 values and never match with `comparison_operators` off.
#[doc(alias = "ToleratesTaint")]
pub fn tolerates(toleration: &Toleration, taint: &Taint, comparison_operators: bool) -> bool {
    if let Some(effect) = &toleration.effect {
        if *effect != taint.effect {
            return false;
        }
    }
    if !toleration.key.is_empty() && toleration.key != taint.key {
        return false;
    }
    match &toleration.operator {
        Operator::Equal => toleration.value == taint.value,
        Operator::Exists => true,
        Operator::Lt | Operator::Gt if !comparison_operators => false,
        Operator::Lt => {
            compare_values(&taint.value, &toleration.value).is_some_and(|(taint, tol)| taint < tol)
        }
        Operator::Gt => {
            compare_values(&taint.value, &toleration.value).is_some_and(|(taint, tol)| taint > tol)
        }
        Operator::Other(_) => false,
    }
}

/// Both values as int64 if both are canonical decimal integers (apimachinery
/// `IsDecimalInteger`: `0`, or an optional `-` then a digit 1-9 then digits); else `None`,
/// which upstream logs and treats as "does not match".
fn compare_values(taint: &str, toleration: &str) -> Option<(i64, i64)> {
    Some((canonical_int(taint)?, canonical_int(toleration)?))
}

/// A canonical decimal int64: rejects `-0`, `+5`, `007`, `""`, `1.5` and out-of-range values.
pub fn canonical_int(s: &str) -> Option<i64> {
    if is_decimal_integer(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// Apimachinery `content.IsDecimalInteger`: `0`, or an optional `-`, a digit 1-9, then digits
/// (any length: range is not checked here).
pub fn is_decimal_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    match digits.as_bytes() {
        [b'0'] => digits.len() == s.len(),
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Upstream `GetMatchingTolerations` (`pkg/apis/core/v1/helper`, spec MATCH-2): for each taint in
/// node order, the index of the first toleration (pod order) that tolerates it. `None` when some
/// taint is not tolerated. Zero taints: `Some([])`. Taints but no tolerations: `None`.
#[doc(alias = "GetMatchingTolerations")]
pub fn matching_tolerations(
    taints: &[Taint],
    tolerations: &[Toleration],
    comparison_operators: bool,
) -> Option<Vec<usize>> {
    taints
        .iter()
        .map(|taint| first_tolerating(taint, tolerations, comparison_operators))
        .collect()
}

/// The index of the first toleration that tolerates `taint`.
pub fn first_tolerating(
    taint: &Taint,
    tolerations: &[Toleration],
    comparison_operators: bool,
) -> Option<usize> {
    tolerations
        .iter()
        .position(|t| tolerates(t, taint, comparison_operators))
}

/// How long the used tolerations allow a pod to stay: upstream `getMinTolerationTime`'s result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TolerationTime {
    /// Evict after this delay; `Duration::ZERO` is "now".
    After(Duration),
    /// Every used toleration has no `tolerationSeconds` (upstream's `-1`).
    Forever,
}

/// Upstream `getMinTolerationTime` (spec MATCH-3), over the used tolerations' seconds in order.
///
/// * empty → `After(0)`: "evict now", not forever (semantics §1.4, §4.4);
/// * any value ≤ 0 → `After(0)` (upstream returns at the first one);
/// * all `None` → `Forever`; `i64::MAX` is upstream's "none seen" sentinel, so it is forever too;
/// * otherwise the minimum, converted as Go does: `time.Duration(s) * time.Second`, a wrapping
///   int64 nanosecond product. Above 9,223,372,036 s it wraps (T6, N19): a negative product means
///   forever, a positive one is the wrapped delay. The delay is then truncated to milliseconds,
///   the core's resolution.
#[doc(alias = "getMinTolerationTime")]
pub fn min_toleration_time(used_seconds: impl IntoIterator<Item = Option<i64>>) -> TolerationTime {
    let mut fold = MinToleration::default();
    used_seconds.into_iter().for_each(|s| fold.push(s));
    fold.finish()
}

/// The running state of [`min_toleration_time`], so callers can fold without collecting.
#[derive(Clone, Copy, Debug)]
struct MinToleration {
    any: bool,
    zero: bool,
    min: i64,
}

impl Default for MinToleration {
    fn default() -> Self {
        MinToleration {
            any: false,
            zero: false,
            min: i64::MAX,
        }
    }
}

impl MinToleration {
    fn push(&mut self, seconds: Option<i64>) {
        self.any = true;
        match seconds {
            Some(s) if s <= 0 => self.zero = true,
            Some(s) => self.min = self.min.min(s),
            None => {}
        }
    }

    fn finish(self) -> TolerationTime {
        if !self.any || self.zero {
            return TolerationTime::After(Duration::ZERO);
        }
        if self.min == i64::MAX {
            return TolerationTime::Forever;
        }
        let nanos = self.min.wrapping_mul(1_000_000_000);
        if nanos < 0 {
            TolerationTime::Forever
        } else {
            TolerationTime::After(Duration(nanos / 1_000_000))
        }
    }
}

/// What a pod's tolerations say about a list of (NoExecute) taints: upstream's
/// `GetMatchingTolerations` followed by `getMinTolerationTime`, fused so the core's hot path does
/// not allocate. Spec MATCH-4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Some taint has no tolerating toleration: evict now (after cancelling any timer).
    Untolerated,
    /// Every taint is tolerated; the pod may stay this long.
    Tolerated(TolerationTime),
}

/// See [`Verdict`]. Zero taints give `Tolerated(After(0))`, exactly as upstream's helpers do;
/// callers must never act on that (semantics §4.4, spec CORE-PRE).
pub fn verdict(
    taints: &[Taint],
    tolerations: &[Toleration],
    comparison_operators: bool,
) -> Verdict {
    let mut fold = MinToleration::default();
    for taint in taints {
        match first_tolerating(taint, tolerations, comparison_operators) {
            Some(i) => fold.push(tolerations[i].seconds),
            None => return Verdict::Untolerated,
        }
    }
    Verdict::Tolerated(fold.finish())
}

/// Upstream `TolerationsTolerateTaint` (component-helpers `scheduling/corev1/helpers.go`, spec
/// MATCH-5): some toleration tolerates `taint`.
#[doc(alias = "TolerationsTolerateTaint")]
pub fn tolerations_tolerate_taint(
    tolerations: &[Toleration],
    taint: &Taint,
    comparison_operators: bool,
) -> bool {
    first_tolerating(taint, tolerations, comparison_operators).is_some()
}

/// Upstream `FindMatchingUntoleratedTaint` (spec MATCH-5): the index of the first taint, in node
/// order, that passes `filter` and that no toleration tolerates.
#[doc(alias = "FindMatchingUntoleratedTaint")]
pub fn find_untolerated_taint(
    taints: &[Taint],
    tolerations: &[Toleration],
    filter: impl Fn(&Taint) -> bool,
    comparison_operators: bool,
) -> Option<usize> {
    taints.iter().position(|taint| {
        filter(taint) && !tolerations_tolerate_taint(tolerations, taint, comparison_operators)
    })
}

/// The time the toleration `tolerations` uses for `taint` allows (the first that tolerates it,
/// MATCH-2, converted as MATCH-3); `None` when none tolerates it. Spec: MATCH-6.
pub fn used_time(
    taint: &Taint,
    tolerations: &[Toleration],
    comparison_operators: bool,
) -> Option<TolerationTime> {
    first_tolerating(taint, tolerations, comparison_operators)
        .map(|i| min_toleration_time([tolerations[i].seconds]))
}

/// The earliest legal eviction of a pod (spec EVICT-2, MATCH-6): for each NoExecute taint, given
/// with the instant it arrived, that the pod does not tolerate forever, the later of that instant
/// and `pod_since` plus the used toleration's time (0 when untolerated); the minimum over those
/// taints. `None`: every NoExecute taint is tolerated forever, or there is none. The property
/// (on the model's caches) and the fixed design's deadlines (on the controller's own arrival
/// record) both use it.
pub fn earliest_eviction<'a>(
    taints: impl IntoIterator<Item = (&'a Taint, Time)>,
    tolerations: &[Toleration],
    pod_since: Time,
    comparison_operators: bool,
) -> Option<Time> {
    taints
        .into_iter()
        .filter(|(t, _)| is_no_execute(t))
        .filter_map(|(t, since)| {
            let start = since.max(pod_since);
            match used_time(t, tolerations, comparison_operators) {
                None => Some(start),
                Some(TolerationTime::After(d)) => Some(start.plus(d)),
                Some(TolerationTime::Forever) => None,
            }
        })
        .min()
}

/// True when `node` has a NoExecute taint that `pod` does not tolerate forever: the pod is due
/// for eviction at some instant. The model's JUST-1 witness (on the API's objects) and the fixed
/// design's live re-check (on the objects it just read) both use it. Spec: MATCH-6, JUST-1.
pub fn exposed(node: &Node, pod: &Pod, comparison_operators: bool) -> bool {
    earliest_eviction(
        node.taints.iter().map(|t| (t, Time::ZERO)),
        &pod.tolerations,
        Time::ZERO,
        comparison_operators,
    )
    .is_some()
}

/// True iff the effect is `NoExecute` (upstream `getNoExecuteTaints`' filter).
pub fn is_no_execute(taint: &Taint) -> bool {
    taint.effect == TaintEffect::NoExecute
}

#[cfg(test)]
mod tests;
