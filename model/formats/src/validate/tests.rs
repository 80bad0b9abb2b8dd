//! Upstream `pkg/apis/core/validation/validation_test.go` rows for tolerations (`TestValidatePod`
//! error cases, `TestValidatePodSpec` success cases), node taints (`TestValidateNode`) and pod
//! updates (`TestValidatePodUpdate`, toleration and nodeName rows), plus the gated `Lt`/`Gt`
//! rules and an insta snapshot of every message.

use super::*;
use k8s_openapi::api::core::v1 as k8s;

fn tol(key: &str, op: &str, value: &str, effect: &str, seconds: Option<i64>) -> k8s::Toleration {
    let s = |v: &str| (!v.is_empty()).then(|| v.to_owned());
    k8s::Toleration {
        key: s(key),
        operator: s(op),
        value: s(value),
        effect: s(effect),
        toleration_seconds: seconds,
    }
}

fn taint(key: &str, value: &str, effect: &str) -> k8s::Taint {
    k8s::Taint {
        key: key.into(),
        value: (!value.is_empty()).then(|| value.to_owned()),
        effect: effect.into(),
        time_added: None,
    }
}

fn pod(tolerations: Vec<k8s::Toleration>, node: &str) -> k8s::Pod {
    k8s::Pod {
        spec: Some(k8s::PodSpec {
            tolerations: Some(tolerations),
            node_name: (!node.is_empty()).then(|| node.to_owned()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn node(taints: Vec<k8s::Taint>) -> k8s::Node {
    k8s::Node {
        spec: Some(k8s::NodeSpec {
            taints: Some(taints),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn paths(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.path.to_string()).collect()
}

#[test]
fn tolerations_match_upstream_test_validate_pod_error_cases() {
    let cases = [
        (
            "invalid toleration key",
            tol("nospecialchars^=@", "Equal", "bar", "NoSchedule", None),
            "spec.tolerations[0].key",
        ),
        (
            "invalid toleration operator",
            tol("foo", "In", "bar", "NoSchedule", None),
            "spec.tolerations[0].operator",
        ),
        (
            "value must be empty when `operator` is 'Exists'",
            tol("foo", "Exists", "bar", "NoSchedule", None),
            "spec.tolerations[0].operator",
        ),
        (
            "operator must be 'Exists' when `key` is empty",
            tol("", "Equal", "bar", "NoSchedule", None),
            "spec.tolerations[0].operator",
        ),
        (
            "effect must be 'NoExecute' when `TolerationSeconds` is set",
            tol(
                "node.kubernetes.io/not-ready",
                "Exists",
                "",
                "NoSchedule",
                Some(20),
            ),
            "spec.tolerations[0].effect",
        ),
    ];
    for (name, t, want) in cases {
        let errs = super::pod(&pod(vec![t], ""), false);
        assert_eq!(
            paths(&errs),
            vec![want],
            "TestValidatePod: {name}: {errs:?}"
        );
    }
}

#[test]
fn tolerations_match_upstream_test_validate_pod_spec_success_cases() {
    let valid = vec![
        tol(
            "node.kubernetes.io/not-ready",
            "Exists",
            "",
            "NoExecute",
            Some(300),
        ),
        tol("foo", "Equal", "bar", "NoSchedule", None),
        tol("foo", "", "bar", "PreferNoSchedule", None),
        tol("", "Exists", "", "", None),
        tol("foo", "Exists", "", "", None),
        tol(
            "example.com/Upper_Case.name",
            "Equal",
            "",
            "NoExecute",
            Some(-5),
        ),
        tol("k", "Exists", "", "NoExecute", Some(i64::MAX)),
        tol("k", "Equal", "v", "NoExecute", Some(0)),
        tol("k", "Exists", "", "NoExecute", None),
        tol("k", "Exists", "", "NoExecute", None),
    ];
    assert_eq!(
        super::pod(&pod(valid, ""), false),
        vec![],
        "no bound on seconds, duplicates allowed (8.1)"
    );
}

#[test]
fn every_error_is_reported_in_upstream_order() {
    let t = tol("Bad/x", "Exists", "v", "Sometimes", Some(1));
    let errs = super::pod(&pod(vec![t], ""), false);
    assert_eq!(
        paths(&errs),
        vec![
            "spec.tolerations[0].key",
            "spec.tolerations[0].effect",
            "spec.tolerations[0].operator",
            "spec.tolerations[0].effect"
        ]
    );
}

#[test]
fn comparison_operators_need_the_gate_and_canonical_integers() {
    let lt = |v: &str| pod(vec![tol("sla", "Lt", v, "NoSchedule", None)], "");
    let off = super::pod(&lt("950"), false);
    assert_eq!(
        off[0].to_string(),
        r#"spec.tolerations[0].operator: Unsupported value: "Lt": supported values: "Equal", "Exists""#
    );
    assert_eq!(super::pod(&lt("950"), true), vec![]);
    assert_eq!(super::pod(&lt("-3"), true), vec![]);
    for bad in ["0950", "+5", "-0", "1.5", "high", ""] {
        let errs = super::pod(&lt(bad), true);
        assert_eq!(paths(&errs), vec!["spec.tolerations[0].value"], "{bad:?}");
    }
    let gt_unknown = super::pod(&pod(vec![tol("k", "In", "", "", None)], ""), true);
    assert!(gt_unknown[0]
        .to_string()
        .ends_with(r#"supported values: "Equal", "Exists", "Lt", "Gt""#));
}

#[test]
fn node_taints_match_upstream_test_validate_node_taint_cases() {
    let cases: Vec<(&str, Vec<k8s::Taint>, Vec<&str>)> = vec![
        (
            "valid taints",
            vec![
                taint("dedicated", "special-user-1", "NoSchedule"),
                taint("foo", "", "NoExecute"),
                taint("foo", "", "NoSchedule"),
            ],
            vec![],
        ),
        (
            "invalid taint key",
            vec![taint(
                "NoUppercaseOrSpecialCharsLike=Equals",
                "bar",
                "NoSchedule",
            )],
            vec!["spec.taints[0].key"],
        ),
        (
            "missing taint key",
            vec![taint("", "bar", "NoSchedule")],
            vec!["spec.taints[0].key", "spec.taints[0].key"],
        ),
        (
            "too long taint key",
            vec![taint(&"a".repeat(64), "bar", "NoSchedule")],
            vec!["spec.taints[0].key"],
        ),
        (
            "invalid taint value",
            vec![taint("foo", "some\\bad\\value", "NoSchedule")],
            vec!["spec.taints[0].value"],
        ),
        (
            "missing taint effect",
            vec![taint("foo", "bar", "")],
            vec!["spec.taints[0].effect"],
        ),
        (
            "unsupported taint effect",
            vec![taint("foo", "bar", "NoScheduleNoAdmit")],
            vec!["spec.taints[0].effect"],
        ),
        (
            "duplicated taints with same key and effect",
            vec![
                taint("foo", "bar", "NoSchedule"),
                taint("foo", "baz", "NoSchedule"),
            ],
            vec!["spec.taints[1]"],
        ),
    ];
    for (name, taints, want) in cases {
        assert_eq!(
            paths(&super::node(&node(taints))),
            want,
            "TestValidateNode: {name}"
        );
    }
}

#[test]
fn pod_updates_match_upstream_test_validate_pod_update_toleration_rows() {
    let a = tol("a", "Equal", "x", "NoExecute", Some(10));
    let b = tol("b", "Exists", "", "NoSchedule", None);
    let cases: Vec<(&str, k8s::Pod, k8s::Pod, Vec<&str>)> = vec![
        (
            "added valid new toleration to existing tolerations in pod with bound node",
            pod(vec![a.clone(), b.clone()], "n"),
            pod(vec![a.clone()], "n"),
            vec![],
        ),
        (
            "added valid new toleration to existing tolerations in pod with unbound node",
            pod(vec![a.clone(), b.clone()], ""),
            pod(vec![a.clone()], ""),
            vec![],
        ),
        (
            "modified tolerationSeconds in existing toleration value",
            pod(vec![tol("a", "Equal", "x", "NoExecute", Some(20))], "n"),
            pod(vec![a.clone()], "n"),
            vec![],
        ),
        (
            "tolerationSeconds removed (nil is forever)",
            pod(vec![tol("a", "Equal", "x", "NoExecute", None)], "n"),
            pod(vec![a.clone()], "n"),
            vec![],
        ),
        (
            "toleration modified in updating pod with bound node",
            pod(vec![tol("a", "Equal", "y", "NoExecute", Some(10))], "n"),
            pod(vec![a.clone()], "n"),
            vec!["spec.tolerations"],
        ),
        (
            "removed toleration",
            pod(vec![b.clone()], "n"),
            pod(vec![a.clone(), b.clone()], "n"),
            vec!["spec.tolerations"],
        ),
        (
            "reordered tolerations (set-like check, 8.2)",
            pod(vec![b.clone(), a.clone()], "n"),
            pod(vec![a.clone(), b.clone()], "n"),
            vec![],
        ),
        (
            "empty operator is not Equal",
            pod(vec![tol("a", "", "x", "NoExecute", Some(10))], "n"),
            pod(vec![a.clone()], "n"),
            vec!["spec.tolerations"],
        ),
        (
            "added invalid new toleration",
            pod(vec![a.clone(), tol("b", "Foo", "", "", None)], "n"),
            pod(vec![a.clone()], "n"),
            vec!["spec.tolerations[1].operator"],
        ),
        (
            "nodeName changed",
            pod(vec![], "other"),
            pod(vec![], "n"),
            vec!["spec"],
        ),
        (
            "nodeName set by binding",
            pod(vec![], "n"),
            pod(vec![], ""),
            vec![],
        ),
    ];
    for (name, new, old, want) in cases {
        assert_eq!(
            paths(&pod_update(&new, &old, false)),
            want,
            "TestValidatePodUpdate: {name}"
        );
    }
}

#[test]
fn comparison_operators_are_ratcheted_on_update() {
    let gt = tol("sla", "Gt", "900", "NoSchedule", None);
    let old = pod(vec![gt.clone()], "n");
    let new = pod(
        vec![gt.clone(), tol("sla", "Lt", "990", "NoSchedule", None)],
        "n",
    );
    assert_eq!(
        pod_update(&new, &old, false),
        vec![],
        "old pod used them: allowed with the gate off"
    );
    assert_eq!(
        paths(&pod_update(&new, &pod(vec![], "n"), false)),
        vec![
            "spec.tolerations[0].operator",
            "spec.tolerations[1].operator"
        ]
    );
}

#[test]
fn label_helpers_follow_apimachinery() {
    assert!(label_key_errors("example.com/Name_1.x").is_empty());
    assert!(label_key_errors(&format!("{}/n", "a".repeat(253))).is_empty());
    assert_eq!(
        label_key_errors(&format!("{}/n", "a".repeat(254))),
        vec!["prefix part must be no more than 253 bytes"]
    );
    assert_eq!(
        label_key_errors("/n"),
        vec!["prefix part must be non-empty"]
    );
    assert!(label_key_errors("a/b/c")[0].starts_with("a valid label key must consist of"));
    assert!(label_value_errors("").is_empty());
    assert_eq!(
        label_value_errors(&"v".repeat(64)),
        vec!["must be no more than 63 bytes"]
    );
    assert!(label_value_errors("-x").len() == 1);
}

#[test]
fn validation_messages_snapshot() {
    let bad_pod = pod(
        vec![
            tol("nospecialchars^=@", "Equal", "bar", "NoSchedule", None),
            tol("foo", "In", "bar", "NoSchedule", None),
            tol("foo", "Exists", "bar", "NoSchedule", None),
            tol("", "Equal", "bar", "NoSchedule", None),
            tol(
                "node.kubernetes.io/not-ready",
                "Exists",
                "",
                "NoSchedule",
                Some(20),
            ),
            tol("k", "Equal", "not valid!", "Sometimes", None),
            tol("UPPER.example.com/k", "Lt", "07", "", None),
            tol("a/b/c", "Gt", "x", "NoExecute", None),
        ],
        "",
    );
    let bad_node = node(vec![
        taint("", "", ""),
        taint("k", &"v".repeat(64), "NoScheduleNoAdmit"),
        taint("dup", "1", "NoExecute"),
        taint("dup", "2", "NoExecute"),
    ]);
    let update = pod_update(
        &pod(vec![tol("a", "Exists", "", "NoExecute", None)], "n2"),
        &pod(vec![tol("a", "Equal", "", "NoExecute", None)], "n1"),
        false,
    );
    let all: Vec<String> = super::pod(&bad_pod, false)
        .iter()
        .chain(&super::pod(&bad_pod, true))
        .chain(&super::node(&bad_node))
        .chain(&update)
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(all.join("\n"));
}

mod properties {
    use super::*;
    use crate::manifest::convert;
    use proptest::prelude::*;
    use taintcheck_core::strategies;

    proptest! {
        /// PROP: what `valid_toleration` generates, validation accepts (with the gate on).
        #[test]
        fn generated_valid_tolerations_validate(tols in prop::collection::vec(strategies::valid_toleration(), 0..6)) {
            let k: Vec<k8s::Toleration> = tols.iter().map(convert::toleration_to_k8s).collect();
            prop_assert_eq!(super::super::pod(&pod(k, ""), true), vec![]);
        }

        /// PROP: validation never panics on arbitrary strings and reports paths inside the list.
        #[test]
        fn validation_never_panics(
            fields in prop::collection::vec((".{0,70}", ".{0,12}", ".{0,70}", ".{0,20}", any::<Option<i64>>()), 0..5),
            taints in prop::collection::vec((".{0,70}", ".{0,70}", ".{0,20}"), 0..5),
            gate: bool,
        ) {
            let tols: Vec<k8s::Toleration> = fields.iter().map(|(k, o, v, e, s)| tol(k, o, v, e, *s)).collect();
            for e in super::super::pod(&pod(tols.clone(), ""), gate).iter().chain(&pod_update(&pod(tols, "n"), &pod(vec![], ""), gate)) {
                prop_assert!(e.path.to_string().starts_with("spec"));
            }
            let ts: Vec<k8s::Taint> = taints.iter().map(|(k, v, e)| taint(k, v, e)).collect();
            for e in super::super::node(&node(ts)) {
                prop_assert!(e.path.to_string().starts_with("spec.taints["));
            }
        }
    }
}
