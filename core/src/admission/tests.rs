//! Upstream `plugin/pkg/admission/defaulttolerationseconds/admission_test.go`
//! (`TestForgivenessAdmission`, every row) and the DaemonSet toleration rules.

use super::*;
use crate::api::{Operator, TaintEffect as E, Toleration};

fn exists(key: &str, effect: Option<E>, seconds: Option<i64>) -> Toleration {
    Toleration::exists(key, effect, seconds)
}

#[test]
fn default_toleration_seconds_matches_upstream_test_forgiveness_admission() {
    let nr = |s| exists(NOT_READY, Some(E::NoExecute), Some(s));
    let un = |s| exists(UNREACHABLE, Some(E::NoExecute), Some(s));
    let foo = Toleration::equal("foo", "bar", Some(E::NoSchedule), Some(700));
    let cases: Vec<(&str, Vec<Toleration>, Vec<Toleration>)> = vec![
        (
            "TestForgivenessAdmission: no tolerations, both added",
            vec![],
            vec![nr(300), un(300)],
        ),
        (
            "TestForgivenessAdmission: unrelated toleration, both added",
            vec![foo.clone()],
            vec![foo, nr(300), un(300)],
        ),
        (
            "TestForgivenessAdmission: not-ready given, unreachable added",
            vec![nr(700)],
            vec![nr(700), un(300)],
        ),
        (
            "TestForgivenessAdmission: unreachable given, not-ready added",
            vec![un(700)],
            vec![un(700), nr(300)],
        ),
        (
            "TestForgivenessAdmission: both given, no change",
            vec![nr(700), un(700)],
            vec![nr(700), un(700)],
        ),
        (
            "TestForgivenessAdmission: unreachable with empty effect covers it, not-ready added",
            vec![exists(UNREACHABLE, None, Some(700))],
            vec![exists(UNREACHABLE, None, Some(700)), nr(300)],
        ),
        (
            "TestForgivenessAdmission: wildcard toleration, no change",
            vec![exists("", None, Some(700))],
            vec![exists("", None, Some(700))],
        ),
    ];
    for (name, mut tolerations, want) in cases {
        default_toleration_seconds(&mut tolerations, DefaultTolerationSeconds::default());
        assert_eq!(tolerations, want, "{name}");
    }
}

#[test]
fn coverage_ignores_operator_and_value_quirk_8_4() {
    let odd = Toleration::equal(NOT_READY, "x", Some(E::NoExecute), None);
    let mut tolerations = vec![odd.clone()];
    default_toleration_seconds(&mut tolerations, DefaultTolerationSeconds::default());
    assert_eq!(
        tolerations,
        vec![odd, exists(UNREACHABLE, Some(E::NoExecute), Some(300))]
    );
    let taint = crate::api::Taint::new(NOT_READY, "", E::NoExecute);
    assert!(
        !crate::matching::tolerations_tolerate_taint(&tolerations, &taint, false),
        "the pod keeps no toleration for the not-ready taint: evicted at once"
    );
}

#[test]
fn configured_seconds_are_used() {
    let mut tolerations = vec![];
    default_toleration_seconds(
        &mut tolerations,
        DefaultTolerationSeconds {
            not_ready: 60,
            unreachable: 5,
        },
    );
    assert_eq!(
        tolerations,
        vec![
            exists(NOT_READY, Some(E::NoExecute), Some(60)),
            exists(UNREACHABLE, Some(E::NoExecute), Some(5))
        ]
    );
}

#[test]
fn a_different_effect_does_not_cover() {
    let mut tolerations = vec![exists(NOT_READY, Some(E::NoSchedule), None)];
    default_toleration_seconds(&mut tolerations, DefaultTolerationSeconds::default());
    assert_eq!(tolerations.len(), 3);
}

#[test]
fn daemonset_tolerations_are_added_in_upstream_order() {
    let mut tolerations = vec![];
    daemonset_tolerations(&mut tolerations, true);
    let keys: Vec<(&str, Option<E>)> = tolerations
        .iter()
        .map(|t| (&*t.key, t.effect.clone()))
        .collect();
    assert_eq!(
        keys,
        vec![
            (NOT_READY, Some(E::NoExecute)),
            (UNREACHABLE, Some(E::NoExecute)),
            (DISK_PRESSURE, Some(E::NoSchedule)),
            (MEMORY_PRESSURE, Some(E::NoSchedule)),
            (PID_PRESSURE, Some(E::NoSchedule)),
            (UNSCHEDULABLE, Some(E::NoSchedule)),
            (NETWORK_UNAVAILABLE, Some(E::NoSchedule)),
        ]
    );
    assert!(tolerations
        .iter()
        .all(|t| t.operator == Operator::Exists && t.seconds.is_none()));
    let mut no_host = vec![];
    daemonset_tolerations(&mut no_host, false);
    assert_eq!(no_host.len(), 6);
}

#[test]
fn daemonset_overwrites_a_user_toleration_with_seconds_8_5() {
    let user = exists(NOT_READY, Some(E::NoExecute), Some(60));
    let other = Toleration::equal("app", "x", None, None);
    let mut tolerations = vec![other.clone(), user];
    daemonset_tolerations(&mut tolerations, false);
    assert_eq!(tolerations[0], other);
    assert_eq!(
        tolerations[1],
        exists(NOT_READY, Some(E::NoExecute), None),
        "replaced in place, now infinite"
    );
    assert_eq!(
        tolerations.iter().filter(|t| &*t.key == NOT_READY).count(),
        1
    );
}

#[test]
fn add_or_update_replaces_every_identity_match_and_appends_otherwise() {
    let t = exists("k", Some(E::NoExecute), None);
    let mut dup = vec![
        exists("k", Some(E::NoExecute), Some(1)),
        exists("k", Some(E::NoExecute), Some(2)),
    ];
    add_or_update_toleration(&mut dup, t.clone());
    assert_eq!(dup, vec![t.clone(), t.clone()]);
    let mut none = vec![Toleration::equal("k", "v", Some(E::NoExecute), None)];
    add_or_update_toleration(&mut none, t.clone());
    assert_eq!(none.len(), 2, "Equal with a value is a different identity");
}
