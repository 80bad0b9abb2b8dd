//! Upstream unit tests for the matching functions, every row: `toleration_test.go`
//! (`TestTolerationToleratesTaint`, both the Equal/Exists and the Lt/Gt variants),
//! component-helpers `helpers_test.go` (`TestFindMatchingUntoleratedTaint`),
//! `taint_eviction_test.go` (`TestGetMinTolerationTime`, and the matching decisions behind
//! `TestCreatePod`/`TestUpdateNode`), plus the overflow edges of MATCH-3.

use super::*;
use crate::api::{Operator, Taint, TaintEffect as E, Toleration};
use crate::time::Duration;

fn tol(key: &str, op: Operator, value: &str, effect: Option<E>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: op,
        value: value.into(),
        effect,
        seconds: None,
    }
}

fn with_seconds(mut t: Toleration, s: Option<i64>) -> Toleration {
    t.seconds = s;
    t
}

/// (upstream case, tolerations, taints, filter, expect all filtered taints tolerated)
type UntoleratedCase<'a> = (
    &'static str,
    Vec<Toleration>,
    Vec<Taint>,
    &'a dyn Fn(&Taint) -> bool,
    bool,
);

fn taint(key: &str, value: &str, effect: E) -> Taint {
    Taint::new(key, value, effect)
}

#[test]
fn tolerates_matches_upstream_test_toleration_tolerates_taint() {
    use Operator::{Equal, Exists, Gt, Lt};
    let ns = Some(E::NoSchedule);
    let sla = "node.kubernetes.io/sla";
    let cases = [
        (
            "same key and effect, Exists, taint has no value",
            tol("foo", Exists, "", ns.clone()),
            taint("foo", "", E::NoSchedule),
            true,
        ),
        (
            "same key and effect, Exists, taint has some value",
            tol("foo", Exists, "", ns.clone()),
            taint("foo", "bar", E::NoSchedule),
            true,
        ),
        (
            "same effect, empty key and Exists matches all taints",
            tol("", Exists, "", ns.clone()),
            taint("foo", "bar", E::NoSchedule),
            true,
        ),
        (
            "same key, effect and value, Equal",
            tol("foo", Equal, "bar", ns.clone()),
            taint("foo", "bar", E::NoSchedule),
            true,
        ),
        (
            "same key and effect, different values, Equal",
            tol("foo", Equal, "value1", ns.clone()),
            taint("foo", "value2", E::NoSchedule),
            false,
        ),
        (
            "same key and value, different effects, Equal",
            tol("foo", Equal, "bar", ns.clone()),
            taint("foo", "bar", E::NoExecute),
            false,
        ),
        (
            "Gt, taint value less than toleration value",
            tol(sla, Gt, "950", ns.clone()),
            taint(sla, "800", E::NoSchedule),
            false,
        ),
        (
            "Gt, taint value greater than toleration value",
            tol(sla, Gt, "750", ns.clone()),
            taint(sla, "950", E::NoSchedule),
            true,
        ),
        (
            "Lt, taint value greater than toleration value",
            tol(sla, Lt, "800", ns.clone()),
            taint(sla, "950", E::NoSchedule),
            false,
        ),
        (
            "Lt, taint value less than toleration value",
            tol(sla, Lt, "950", ns.clone()),
            taint(sla, "800", E::NoSchedule),
            true,
        ),
        (
            "Gt, equal numeric values",
            tol(sla, Gt, "950", ns.clone()),
            taint(sla, "950", E::NoSchedule),
            false,
        ),
        (
            "Gt, non-numeric taint value",
            tol(sla, Gt, "950", ns.clone()),
            taint(sla, "high", E::NoSchedule),
            false,
        ),
        (
            "Gt, negative values, taint below threshold",
            tol("test-key", Gt, "-100", ns.clone()),
            taint("test-key", "-200", E::NoSchedule),
            false,
        ),
        (
            "Gt, large int64 threshold",
            tol("test-key", Gt, "9223372036854775806", ns.clone()),
            taint("test-key", "100", E::NoSchedule),
            false,
        ),
    ];
    for (name, t, taint, want) in cases {
        assert_eq!(
            tolerates(&t, &taint, true),
            want,
            "TestTolerationToleratesTaint: {name}"
        );
    }
}

/// `Lt` is strict (semantics §1.2, the gated `ToleratesTaint` of
/// `staging/src/k8s.io/api/core/v1/toleration.go`): equal values do not match, as for `Gt`
/// (upstream's table has the `Gt` row only).
#[test]
fn lt_does_not_tolerate_an_equal_value_1_2() {
    let sla = "node.kubernetes.io/sla";
    let taint = taint(sla, "950", E::NoSchedule);
    assert!(!tolerates(
        &tol(sla, Operator::Lt, "950", None),
        &taint,
        true
    ));
    assert!(tolerates(
        &tol(sla, Operator::Lt, "951", None),
        &taint,
        true
    ));
}

/// Only NoExecute taints evict (upstream `getNoExecuteTaints` in `taint_eviction.go`, semantics
/// §4.1): an untolerated NoSchedule or PreferNoSchedule taint gives no eviction instant and does
/// not expose the pod. Spec: MATCH-6.
#[test]
fn eviction_instants_ignore_taints_that_do_not_execute() {
    let soft = [
        taint("a", "", E::NoSchedule),
        taint("b", "", E::PreferNoSchedule),
    ];
    let arrived =
        |t: &[Taint]| earliest_eviction(t.iter().map(|t| (t, Time(5))), &[], Time(7), false);
    assert_eq!(arrived(&soft), None);
    let node = |taints: &[Taint]| Node {
        name: "node".into(),
        taints: taints.to_vec(),
    };
    let pod = Pod {
        key: crate::api::PodKey::new("ns", "pod"),
        uid: crate::api::Uid("uid".into()),
        node_name: Some("node".into()),
        tolerations: vec![],
    };
    assert!(!exposed(&node(&soft), &pod, false));
    let hard = [taint("c", "", E::NoExecute)];
    let mixed: Vec<Taint> = soft.iter().chain(&hard).cloned().collect();
    assert_eq!(
        arrived(&mixed),
        Some(Time(7)),
        "the NoExecute taint alone decides, from the later of its arrival and the pod's"
    );
    assert!(exposed(&node(&mixed), &pod, false));
}

#[test]
fn comparison_operators_never_match_with_the_gate_off_1_2() {
    let t = tol("sla", Operator::Gt, "750", None);
    assert!(tolerates(&t, &taint("sla", "950", E::NoExecute), true));
    assert!(!tolerates(&t, &taint("sla", "950", E::NoExecute), false));
}

#[test]
fn canonical_integers_follow_is_decimal_integer_test_rows() {
    for ok in [
        "0",
        "1",
        "9",
        "-5",
        "100",
        "-987",
        "9223372036854775807",
        "-9223372036854775808",
    ] {
        assert!(
            canonical_int(ok).is_some(),
            "TestIsDecimalInteger valid: {ok}"
        );
    }
    for bad in [
        "-0",
        "00",
        "01",
        "0700",
        "+5",
        "+0",
        "",
        "-",
        " 1",
        "1 ",
        "1.5",
        "1e5",
        "0x1",
        "1_000",
        "abc",
        "−1",
        "１２３",
    ] {
        assert!(
            canonical_int(bad).is_none(),
            "TestIsDecimalInteger invalid: {bad:?}"
        );
    }
    assert_eq!(
        canonical_int("12345678901234567890"),
        None,
        "canonical but beyond int64: never matches"
    );
}

#[test]
fn matcher_special_cases_1_1() {
    let any = taint("k", "v", E::NoExecute);
    assert!(
        tolerates(&tol("", Operator::Equal, "v", None), &any, false),
        "empty key with Equal matches every key with that value"
    );
    assert!(!tolerates(
        &tol("", Operator::Equal, "w", None),
        &any,
        false
    ));
    assert!(
        tolerates(&tol("k", Operator::Exists, "ignored", None), &any, false),
        "Exists ignores the value"
    );
    assert!(
        !tolerates(
            &tol("k", Operator::Other("In".into()), "v", None),
            &any,
            false
        ),
        "unknown operator never matches"
    );
    assert!(
        !tolerates(&tol("K", Operator::Exists, "", None), &any, false),
        "keys are case-sensitive"
    );
    assert!(!tolerates(
        &tol(
            "k",
            Operator::Exists,
            "",
            Some(E::Other("noexecute".into()))
        ),
        &any,
        false
    ));
}

#[test]
fn find_untolerated_taint_matches_upstream_test_find_matching_untolerated_taint() {
    let foo_ns = vec![tol("foo", Operator::Exists, "", Some(E::NoSchedule))];
    let all = |_: &Taint| true;
    let cases: Vec<UntoleratedCase> = vec![
        (
            "empty tolerations tolerate empty taints",
            vec![],
            vec![],
            &all,
            true,
        ),
        (
            "non-empty tolerations tolerate empty taints",
            foo_ns.clone(),
            vec![],
            &all,
            true,
        ),
        (
            "tolerations match all taints",
            foo_ns.clone(),
            vec![taint("foo", "", E::NoSchedule)],
            &all,
            true,
        ),
        (
            "no taints apply to the filter",
            foo_ns.clone(),
            vec![taint("bar", "", E::NoSchedule)],
            &|_: &Taint| false,
            true,
        ),
        (
            "no filter: all taints apply, untolerated",
            foo_ns.clone(),
            vec![taint("bar", "", E::NoSchedule)],
            &all,
            false,
        ),
        (
            "tolerations match the filtered taints",
            vec![tol("foo", Operator::Exists, "", Some(E::NoExecute))],
            vec![
                taint("foo", "", E::NoExecute),
                taint("bar", "", E::NoSchedule),
            ],
            &|t: &Taint| t.effect == E::NoExecute,
            true,
        ),
    ];
    for (name, tolerations, taints, filter, tolerated) in cases {
        let found = find_untolerated_taint(&taints, &tolerations, filter, false);
        assert_eq!(
            found.is_none(),
            tolerated,
            "TestFindMatchingUntoleratedTaint: {name}"
        );
    }
}

#[test]
fn min_toleration_time_matches_upstream_test_get_min_toleration_time() {
    let after = |s: i64| TolerationTime::After(Duration::from_secs(s));
    let cases: [(&[Option<i64>], TolerationTime); 5] = [
        (&[], after(0)),
        (&[None], TolerationTime::Forever),
        (&[Some(1), Some(2)], after(1)),
        (&[Some(1), None], after(1)),
        (&[None, Some(1)], after(1)),
    ];
    for (seconds, want) in cases {
        assert_eq!(
            min_toleration_time(seconds.iter().copied()),
            want,
            "TestGetMinTolerationTime: {seconds:?}"
        );
    }
}

#[test]
fn min_toleration_time_edges_1_4() {
    let min = |s: &[Option<i64>]| min_toleration_time(s.iter().copied());
    let after_ms = |ms: i64| TolerationTime::After(Duration(ms));
    assert_eq!(
        min(&[Some(30), Some(0), Some(5)]),
        after_ms(0),
        "any value <= 0 is now"
    );
    assert_eq!(min(&[Some(-7)]), after_ms(0));
    assert_eq!(
        min(&[Some(i64::MAX)]),
        TolerationTime::Forever,
        "MaxInt64 is the 'none seen' sentinel"
    );
    assert_eq!(min(&[Some(i64::MAX), Some(9)]), after_ms(9000));
    assert_eq!(
        min(&[Some(9_223_372_036)]),
        after_ms(9_223_372_036_000),
        "largest that fits"
    );
    assert_eq!(
        min(&[Some(9_223_372_037)]),
        TolerationTime::Forever,
        "wraps negative: forever (T6)"
    );
    assert_eq!(
        min(&[Some(18_446_744_074)]),
        after_ms(290),
        "wraps to a small positive delay"
    );
    assert_eq!(
        min(&[Some(1 << 55)]),
        after_ms(0),
        "wraps to exactly zero: now"
    );
}

#[test]
fn matching_tolerations_takes_the_first_in_pod_order_1_3() {
    let t = taint("T", "", E::NoExecute);
    let short = with_seconds(tol("T", Operator::Exists, "", None), Some(10));
    let forever = tol("", Operator::Exists, "", None);
    assert_eq!(
        matching_tolerations(
            std::slice::from_ref(&t),
            &[short.clone(), forever.clone()],
            false
        ),
        Some(vec![0])
    );
    assert_eq!(
        verdict(
            std::slice::from_ref(&t),
            &[short.clone(), forever.clone()],
            false
        ),
        Verdict::Tolerated(TolerationTime::After(Duration(10_000)))
    );
    assert_eq!(
        verdict(std::slice::from_ref(&t), &[forever, short], false),
        Verdict::Tolerated(TolerationTime::Forever)
    );
    assert_eq!(
        matching_tolerations(&[], &[], false),
        Some(vec![]),
        "zero taints: all tolerated, none used"
    );
    assert_eq!(
        verdict(&[], &[], false),
        Verdict::Tolerated(TolerationTime::After(Duration::ZERO))
    );
    assert_eq!(
        matching_tolerations(std::slice::from_ref(&t), &[], false),
        None,
        "taints but no tolerations"
    );
}

/// The matching half of upstream `TestCreatePod`, `TestUpdateNode` and
/// `TestUpdateNodeWithMultipleTaints` (their tolerations are `{testTaintN, testN, NoExecute}`
/// with an empty operator, i.e. Equal).
#[test]
fn eviction_controller_test_fixtures_match_as_upstream_expects() {
    let nt = |i: u8| taint(&format!("testTaint{i}"), &format!("test{i}"), E::NoExecute);
    let tl = |i: u8, s: Option<i64>| {
        with_seconds(
            tol(
                &format!("testTaint{i}"),
                Operator::Equal,
                &format!("test{i}"),
                Some(E::NoExecute),
            ),
            s,
        )
    };
    let after = |s: i64| Verdict::Tolerated(TolerationTime::After(Duration::from_secs(s)));
    let cases = [
        (
            "TestCreatePod: tainted node, no toleration",
            vec![nt(1)],
            vec![],
            Verdict::Untolerated,
        ),
        (
            "TestCreatePod: finite toleration",
            vec![nt(1)],
            vec![tl(1, Some(100))],
            after(100),
        ),
        (
            "TestCreatePod: infinite toleration",
            vec![nt(1)],
            vec![tl(1, None)],
            Verdict::Tolerated(TolerationTime::Forever),
        ),
        (
            "TestCreatePod: infinite invalid toleration",
            vec![nt(1)],
            vec![tl(2, None)],
            Verdict::Untolerated,
        ),
        (
            "TestUpdateNode: only one added taint tolerated",
            vec![nt(1), nt(2)],
            vec![tl(1, Some(100))],
            Verdict::Untolerated,
        ),
        (
            "TestUpdateNode: multiple tolerations, first runs out",
            vec![nt(1), nt(2)],
            vec![tl(1, Some(1)), tl(2, Some(100))],
            after(1),
        ),
    ];
    for (name, taints, tolerations, want) in cases {
        assert_eq!(verdict(&taints, &tolerations, false), want, "{name}");
    }
    let minute = |i: u8| {
        with_seconds(
            tol(
                &format!("testTaint{i}"),
                Operator::Exists,
                "",
                Some(E::NoExecute),
            ),
            Some(60),
        )
    };
    let forever = tol("testTaint1", Operator::Exists, "", Some(E::NoExecute));
    let tolerations = [forever, minute(2)];
    assert_eq!(
        verdict(&[nt(1)], &tolerations, false),
        Verdict::Tolerated(TolerationTime::Forever),
        "TestUpdateNodeWithMultipleTaints: single taint"
    );
    assert_eq!(
        verdict(&[nt(1), nt(2)], &tolerations, false),
        after(60),
        "TestUpdateNodeWithMultipleTaints: double taint"
    );
}

mod properties {
    use super::*;
    use crate::strategies;
    use proptest::prelude::*;
    use quickcheck::quickcheck;

    proptest! {
        /// PROP: an `Exists` toleration with empty key and effect tolerates every taint.
        #[test]
        fn wildcard_exists_tolerates_everything(t in strategies::taint(), gate: bool, s in strategies::seconds()) {
            let wildcard = Toleration::exists("", None, s);
            prop_assert!(tolerates(&wildcard, &t, gate));
        }

        /// PROP: appending a toleration never makes a tolerated set untolerated, and never
        /// changes which toleration is used (first match in pod order).
        #[test]
        fn appending_a_toleration_keeps_the_used_ones(
            taints in prop::collection::vec(strategies::taint(), 0..6),
            tols in prop::collection::vec(strategies::toleration(), 0..6),
            extra in strategies::toleration(),
            gate: bool,
        ) {
            let before = matching_tolerations(&taints, &tols, gate);
            let mut more = tols.clone();
            more.push(extra);
            let after = matching_tolerations(&taints, &more, gate);
            if before.is_some() {
                prop_assert_eq!(after, before);
            }
        }

        /// PROP: `min_toleration_time` never exceeds any finite used value (below the overflow
        /// bound), and is 0 as soon as one is <= 0.
        #[test]
        fn min_never_exceeds_a_finite_used_value(used in prop::collection::vec(prop::option::of(-5i64..=9_223_372_036), 1..8)) {
            match min_toleration_time(used.iter().copied()) {
                TolerationTime::Forever => prop_assert!(used.iter().all(Option::is_none)),
                TolerationTime::After(d) => {
                    for s in used.iter().flatten() {
                        prop_assert!(d.millis() <= (*s).max(0) * 1000);
                    }
                }
            }
        }

        /// PROP: the fused `verdict` agrees with `matching_tolerations` then `min_toleration_time`.
        #[test]
        fn verdict_is_matching_then_min(
            taints in prop::collection::vec(strategies::taint(), 0..6),
            tols in prop::collection::vec(strategies::toleration(), 0..8),
            gate: bool,
        ) {
            let composed = match matching_tolerations(&taints, &tols, gate) {
                None => Verdict::Untolerated,
                Some(used) => Verdict::Tolerated(min_toleration_time(used.iter().map(|&i| tols[i].seconds))),
            };
            prop_assert_eq!(verdict(&taints, &tols, gate), composed);
        }
    }

    quickcheck! {
        /// PROP (quickcheck): the wildcard holds for arbitrary strings too, even effects and
        /// values no validation would accept.
        fn wildcard_exists_tolerates_arbitrary_taints(key: String, value: String, effect: String) -> bool {
            let t = Taint::new(&key, &value, E::parse(&effect));
            tolerates(&Toleration::exists("", None, None), &t, false)
        }

        /// PROP (quickcheck): a canonical integer prints back to itself.
        fn canonical_int_roundtrips(n: i64) -> bool {
            canonical_int(&n.to_string()) == Some(n)
        }
    }
}
