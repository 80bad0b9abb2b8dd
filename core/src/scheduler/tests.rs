//! Upstream `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go`, every row.

use super::*;
use crate::api::{Operator, Taint, TaintEffect as E, Toleration};

/// (upstream test case, pod tolerations, node taints, expected Filter reason)
type FilterCase = (&'static str, Vec<Toleration>, Vec<Taint>, Option<String>);
/// (upstream test case, pod tolerations, each node's taints, expected normalized scores)
type ScoreCase = (&'static str, Vec<Toleration>, Vec<Vec<Taint>>, Vec<i64>);

fn taint(key: &str, value: &str, effect: E) -> Taint {
    Taint::new(key, value, effect)
}

fn tol(key: &str, op: Operator, value: &str, effect: Option<E>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: op,
        value: value.into(),
        effect,
        seconds: None,
    }
}

#[test]
fn filter_matches_upstream_test_taint_toleration_filter() {
    let reason = |k: &str, v: &str| Some(format!("node(s) had untolerated taint {{{k}: {v}}}"));
    let cases: Vec<FilterCase> = vec![
        ("TestTaintTolerationFilter: no tolerations, nonempty taints", vec![],
         vec![taint("dedicated", "user1", E::NoSchedule)], reason("dedicated", "user1")),
        ("TestTaintTolerationFilter: dedicated node for user1, NoSchedule",
         vec![tol("dedicated", Operator::Equal, "user1", Some(E::NoSchedule))],
         vec![taint("dedicated", "user1", E::NoSchedule)], None),
        ("TestTaintTolerationFilter: dedicated node for user2 cannot take user1",
         vec![tol("dedicated", Operator::Equal, "user2", Some(E::NoSchedule))],
         vec![taint("dedicated", "user1", E::NoSchedule)], reason("dedicated", "user1")),
        ("TestTaintTolerationFilter: Exists tolerates the taint",
         vec![tol("foo", Operator::Exists, "", Some(E::NoSchedule))],
         vec![taint("foo", "bar", E::NoSchedule)], None),
        ("TestTaintTolerationFilter: multiple tolerations, all taints tolerated",
         vec![tol("dedicated", Operator::Equal, "user2", Some(E::NoSchedule)), tol("foo", Operator::Exists, "", Some(E::NoSchedule))],
         vec![taint("dedicated", "user2", E::NoSchedule), taint("foo", "bar", E::NoSchedule)], None),
        ("TestTaintTolerationFilter: key and value match but non-empty effect differs",
         vec![tol("foo", Operator::Equal, "bar", Some(E::PreferNoSchedule))],
         vec![taint("foo", "bar", E::NoSchedule)], reason("foo", "bar")),
        ("TestTaintTolerationFilter: empty toleration effect matches NoSchedule",
         vec![tol("foo", Operator::Equal, "bar", None)],
         vec![taint("foo", "bar", E::NoSchedule)], None),
        ("TestTaintTolerationFilter: PreferNoSchedule taint never filters (mismatching toleration)",
         vec![tol("dedicated", Operator::Equal, "user2", Some(E::NoSchedule))],
         vec![taint("dedicated", "user1", E::PreferNoSchedule)], None),
        ("TestTaintTolerationFilter: PreferNoSchedule taint never filters (no toleration)",
         vec![], vec![taint("dedicated", "user1", E::PreferNoSchedule)], None),
    ];
    for (name, tolerations, taints, want) in cases {
        let got = filter(&taints, &tolerations, false).err().map(|u| u.reason);
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn score_matches_upstream_test_taint_toleration_score() {
    let pns = Some(E::PreferNoSchedule);
    let cpu = taint("cpu-type", "arm64", E::PreferNoSchedule);
    let disk = taint("disk-type", "ssd", E::PreferNoSchedule);
    let cases: Vec<ScoreCase> = vec![
        (
            "TestTaintTolerationScore: tolerated node scores higher than intolerable one",
            vec![tol("foo", Operator::Equal, "bar", pns.clone())],
            vec![
                vec![taint("foo", "bar", E::PreferNoSchedule)],
                vec![taint("foo", "blah", E::PreferNoSchedule)],
            ],
            vec![100, 0],
        ),
        (
            "TestTaintTolerationScore: number of tolerated taints does not matter",
            vec![
                tol("cpu-type", Operator::Equal, "arm64", pns.clone()),
                tol("disk-type", Operator::Equal, "ssd", pns.clone()),
            ],
            vec![vec![], vec![cpu.clone()], vec![cpu.clone(), disk.clone()]],
            vec![100, 100, 100],
        ),
        (
            "TestTaintTolerationScore: more intolerable taints, lower score",
            vec![tol("foo", Operator::Equal, "bar", pns.clone())],
            vec![vec![], vec![cpu.clone()], vec![cpu.clone(), disk.clone()]],
            vec![100, 50, 0],
        ),
        (
            "TestTaintTolerationScore: only PreferNoSchedule taints and tolerations count",
            vec![
                tol("cpu-type", Operator::Equal, "arm64", Some(E::NoSchedule)),
                tol("disk-type", Operator::Equal, "ssd", Some(E::NoSchedule)),
            ],
            vec![
                vec![],
                vec![taint("cpu-type", "arm64", E::NoSchedule)],
                vec![cpu.clone(), disk.clone()],
            ],
            vec![100, 100, 0],
        ),
        (
            "TestTaintTolerationScore: default, no taints and tolerations",
            vec![],
            vec![vec![], vec![cpu.clone()]],
            vec![100, 0],
        ),
    ];
    for (name, tolerations, nodes, want) in cases {
        let mut scores: Vec<i64> = nodes
            .iter()
            .map(|t| score(t, &tolerations, false))
            .collect();
        normalize_scores(&mut scores);
        assert_eq!(scores, want, "{name}");
    }
}

#[test]
fn filter_ignores_toleration_seconds_t7() {
    let mut t = tol("k", Operator::Exists, "", Some(E::NoExecute));
    t.seconds = Some(10);
    assert!(filter(&[taint("k", "", E::NoExecute)], &[t], false).is_ok());
}

#[test]
fn filter_reports_the_first_untolerated_taint_in_node_order() {
    let taints = [
        taint("a", "1", E::PreferNoSchedule),
        taint("b", "2", E::NoExecute),
        taint("c", "3", E::NoSchedule),
    ];
    let u = filter(&taints, &[], false).unwrap_err();
    assert_eq!(
        (u.taint_index, u.reason.as_str()),
        (1, "node(s) had untolerated taint {b: 2}")
    );
}

#[test]
fn comparison_operators_follow_the_gate_in_filter() {
    let taints = [taint("sla", "950", E::NoSchedule)];
    let gt = [tol("sla", Operator::Gt, "900", Some(E::NoSchedule))];
    assert!(filter(&taints, &gt, true).is_ok());
    assert!(filter(&taints, &gt, false).is_err());
}
