//! Which `sometimes` properties a configuration can exemplify at all. A built-in `sometimes`
//! property (SOME-1..SOME-5) is a non-vacuity alarm; on a configuration whose nodes, pods and
//! operations rule its example out, its missing example says nothing about the controller, and
//! `check` reports it "not applicable" with the reason instead of "no example" (and `--gate`
//! does not fail on it). The rule is conservative: a property is not applicable only when no
//! behaviour of the configuration can exemplify it, whatever the profile. Spec: CHECK-1.

use super::config::{CheckConfig, OpKind};
use taintcheck_core::api::{Taint, Toleration};
use taintcheck_core::matching;

/// Why the configuration cannot exemplify the `sometimes` property with spec id `id`; `None`
/// when it can (or may: every user-defined property, and every built-in the rule below does
/// not rule out).
pub fn not_applicable(config: &CheckConfig, id: &str) -> Option<&'static str> {
    let op = |k: OpKind| config.budget > 0 && config.operations.contains(&k);
    match id {
        "SOME-1" if !may_evict_at_once(config) => Some(
            "no pod can be evicted at once: one NoExecute taint at most, which every pod \
             tolerates for a positive tolerationSeconds in every choice",
        ),
        "SOME-2" if !has_positive_seconds(config) => {
            Some("no toleration with a positive tolerationSeconds is configured")
        }
        "SOME-3" if config.budget == 0 || config.operations.is_empty() => {
            Some("no operation may change the cluster, so nothing is cancelled")
        }
        "SOME-4" if !op(OpKind::FailNextCall) => {
            Some("no failing request is configured (operation fail_next_call)")
        }
        "SOME-5" if !op(OpKind::Restart) => {
            Some("no controller restart is configured (operation restart)")
        }
        _ => None,
    }
}

/// The tolerations a pod may carry in some behaviour: its own, and the appendable ones.
fn tolerations(config: &CheckConfig) -> impl Iterator<Item = &Toleration> {
    let appended = config.operations.contains(&OpKind::AppendToleration) && config.budget > 0;
    let extra = if appended {
        &config.append_tolerations[..]
    } else {
        &[]
    };
    config
        .pods
        .iter()
        .flat_map(|p| p.tolerations.iter())
        .chain(extra)
}

/// The `tolerationSeconds` values a toleration may take: those configured, and the choices of
/// `set_seconds`.
fn seconds(config: &CheckConfig) -> impl Iterator<Item = Option<i64>> + '_ {
    let set = config.operations.contains(&OpKind::SetSeconds) && config.budget > 0;
    let choices = if set {
        &config.seconds_choices[..]
    } else {
        &[]
    };
    tolerations(config)
        .map(|t| t.seconds)
        .chain(choices.iter().copied())
}

/// SOME-2 needs an eviction later than its exposure start: a finite positive
/// `tolerationSeconds` somewhere.
fn has_positive_seconds(config: &CheckConfig) -> bool {
    seconds(config).any(|s| s.is_some_and(|s| s > 0))
}

/// SOME-1 needs an eviction whose earliest legal time is at or before its exposure start (the
/// latest NoExecute taint arrival or the bind). With one taint identity (key and effect) a
/// node carries one such taint at a time, so the exposure start is that taint's arrival (or the
/// bind) and the eviction is at once only if the pod's toleration seconds are at most 0, or no
/// toleration matches. Ruled out when every pod tolerates every variant of that taint (under
/// either setting of the comparison operators) and every seconds value in play is positive or
/// forever.
fn may_evict_at_once(config: &CheckConfig) -> bool {
    let taints: Vec<&Taint> = config
        .nodes
        .iter()
        .flat_map(|n| n.taints.iter())
        .chain(config.taints.iter())
        .filter(|t| matching::is_no_execute(t))
        .collect();
    let Some(first) = taints.first() else {
        return false; // no NoExecute taint: no eviction at all.
    };
    if taints
        .iter()
        .any(|t| t.key != first.key || t.effect != first.effect)
    {
        return true;
    }
    let tolerated_everywhere = config.pods.iter().all(|p| {
        taints.iter().all(|taint| {
            [false, true].iter().all(|&ops| {
                p.tolerations
                    .iter()
                    .any(|t| matching::tolerates(t, taint, ops))
            })
        })
    });
    !tolerated_everywhere || seconds(config).any(|s| s.is_some_and(|s| s <= 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(name: &str) -> Vec<Option<&'static str>> {
        let config = CheckConfig::builtin(name).expect("built-in config");
        ["SOME-1", "SOME-2", "SOME-3", "SOME-4", "SOME-5"]
            .iter()
            .map(|id| not_applicable(&config, id))
            .collect()
    }

    /// issue 41's case: `timer-vs-cancel` has no failing request, no restart and no pod
    /// without a positive tolerationSeconds; it can exemplify SOME-2 and SOME-3.
    #[test]
    fn timer_vs_cancel_rules_out_three() {
        let v = verdicts("timer-vs-cancel");
        assert!(v[0].is_some() && v[3].is_some() && v[4].is_some(), "{v:?}");
        assert!(v[1].is_none() && v[2].is_none(), "{v:?}");
    }

    /// Each property stays applicable where its configuration is built to show it.
    #[test]
    fn the_configurations_built_for_them_keep_them() {
        assert!(verdicts("failing-delete")[3].is_none());
        assert!(verdicts("restart")[4].is_none());
        assert!(verdicts("default")[0].is_none());
        assert!(verdicts("default")[1].is_none());
        assert!(verdicts("default")[2].is_none());
    }

    /// A pod that tolerates nothing, or a 0 s choice, can be evicted at once; user-defined and
    /// `always` properties are never ruled out.
    #[test]
    fn an_untolerating_pod_or_a_zero_choice_keeps_some_1() {
        let mut c = CheckConfig::builtin("timer-vs-cancel").expect("built-in config");
        c.seconds_choices = vec![Some(0)];
        assert_eq!(not_applicable(&c, "SOME-1"), None);
        let mut c = CheckConfig::builtin("timer-vs-cancel").expect("built-in config");
        c.pods[0].tolerations.clear();
        assert_eq!(not_applicable(&c, "SOME-1"), None);
        assert_eq!(not_applicable(&c, "EVICT-1"), None);
        assert_eq!(not_applicable(&c, "my-own"), None);
    }
}
