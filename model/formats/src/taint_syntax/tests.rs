//! Upstream kubectl `staging/src/k8s.io/kubectl/pkg/cmd/taint/utils_test.go` (`TestParseTaints`,
//! `TestReorganizeTaints`, `TestDeleteTaint`, `TestDeleteTaintByKey`,
//! `TestCheckIfTaintsAlreadyExists`) and `staging/src/k8s.io/api/core/v1/taint_test.go`
//! (`TestTaintToString`, `TestMatchTaint`), every row.

use super::*;
use taintcheck_core::api::TaintEffect as E;

/// (upstream case, overwrite, arguments, expected taints, operation, expect an error)
type ReorganizeCase = (
    &'static str,
    bool,
    Vec<TaintSpec>,
    Vec<Taint>,
    Operation,
    bool,
);

fn t(key: &str, value: &str, effect: E) -> Taint {
    Taint::new(key, value, effect)
}

fn rm(key: &str, effect: Option<E>) -> TaintSpec {
    TaintSpec::Remove {
        key: key.into(),
        effect,
    }
}

#[test]
fn parse_specs_matches_upstream_test_parse_taints() {
    for bad in [
        "",
        "foo=abc",
        "foo=abc=xyz:NoSchedule",
        "foo=abc:xyz:NoSchedule",
        "foo",
        "foo=abc:invalid_effect",
        "foo:invalid_effect-",
    ] {
        assert!(
            parse_specs(&[bad]).is_err(),
            "TestParseTaints: invalid spec {bad:?}"
        );
    }
    let add = [
        "foo=abc:NoSchedule",
        "bar=abc:NoSchedule",
        "baz:NoSchedule",
        "qux:NoSchedule",
        "foobar=:NoSchedule",
    ];
    let added = vec![
        TaintSpec::Add(t("foo", "abc", E::NoSchedule)),
        TaintSpec::Add(t("bar", "abc", E::NoSchedule)),
        TaintSpec::Add(t("baz", "", E::NoSchedule)),
        TaintSpec::Add(t("qux", "", E::NoSchedule)),
        TaintSpec::Add(t("foobar", "", E::NoSchedule)),
    ];
    assert_eq!(
        parse_specs(&add).unwrap(),
        added,
        "TestParseTaints: add new taints"
    );
    let del = [
        "foo:NoSchedule-",
        "bar:NoSchedule-",
        "qux=:NoSchedule-",
        "dedicated-",
    ];
    assert_eq!(
        parse_specs(&del).unwrap(),
        vec![
            rm("foo", Some(E::NoSchedule)),
            rm("bar", Some(E::NoSchedule)),
            rm("qux", Some(E::NoSchedule)),
            rm("dedicated", None)
        ],
        "TestParseTaints: delete taints"
    );
    let both: Vec<&str> = add
        .iter()
        .copied()
        .chain(["foo:NoSchedule-", "bar:NoSchedule-", "baz=:NoSchedule-"])
        .collect();
    let mut want = added.clone();
    want.extend([
        rm("foo", Some(E::NoSchedule)),
        rm("bar", Some(E::NoSchedule)),
        rm("baz", Some(E::NoSchedule)),
    ]);
    assert_eq!(
        parse_specs(&both).unwrap(),
        want,
        "TestParseTaints: add taints and delete taints"
    );
}

#[test]
fn parse_errors_use_kubectl_wording() {
    let err = |s: &[&str]| parse_specs(s).unwrap_err().to_string();
    assert_eq!(err(&["foo"]), "invalid taint spec: foo");
    assert_eq!(
        err(&["foo=abc=xyz:NoSchedule"]),
        "invalid taint spec: foo=abc=xyz:NoSchedule"
    );
    assert_eq!(
        err(&["foo=abc:invalid_effect"]),
        "invalid taint effect: invalid_effect, unsupported taint effect"
    );
    assert_eq!(
        err(&["a=b:NoSchedule", "a=c:NoSchedule"]),
        "duplicated taints with the same key and effect: {a c NoSchedule <nil>}"
    );
    assert!(err(&["foo=a b:NoExecute"])
        .starts_with("invalid taint spec: foo=a b:NoExecute, a valid label must be"));
    assert!(err(&["Bad/x:NoExecute"])
        .starts_with("invalid taint spec: Bad/x:NoExecute, prefix part a lowercase RFC 1123"));
    assert_eq!(
        parse_spec("k=v:NoExecute").unwrap(),
        TaintSpec::Add(t("k", "v", E::NoExecute))
    );
}

#[test]
fn reorganize_matches_upstream_test_reorganize_taints() {
    let node = vec![t("foo", "bar", E::NoSchedule)];
    let cases: Vec<ReorganizeCase> = vec![
        (
            "no changes with overwrite is true",
            true,
            vec![],
            node.clone(),
            Operation::Modified,
            false,
        ),
        (
            "no changes with overwrite is false",
            false,
            vec![],
            node.clone(),
            Operation::Untainted,
            false,
        ),
        (
            "add new taint",
            false,
            vec![TaintSpec::Add(t("foo_1", "", E::NoExecute))],
            vec![t("foo_1", "", E::NoExecute), t("foo", "bar", E::NoSchedule)],
            Operation::Tainted,
            false,
        ),
        (
            "delete taint with effect",
            false,
            vec![rm("foo", Some(E::NoSchedule))],
            vec![],
            Operation::Untainted,
            false,
        ),
        (
            "delete taint with no effect",
            false,
            vec![rm("foo", None)],
            vec![],
            Operation::Untainted,
            false,
        ),
        (
            "delete non-exist taint",
            false,
            vec![rm("foo_1", Some(E::NoSchedule))],
            node.clone(),
            Operation::Untainted,
            true,
        ),
        (
            "add new taint and delete old one",
            false,
            vec![
                TaintSpec::Add(t("foo_1", "", E::NoSchedule)),
                rm("foo", Some(E::NoSchedule)),
            ],
            vec![t("foo_1", "", E::NoSchedule)],
            Operation::Modified,
            false,
        ),
    ];
    for (name, overwrite, specs, want, op, want_err) in cases {
        let (got_op, got, errs) = reorganize(&node, &specs, overwrite);
        assert_eq!(
            (got_op, got, !errs.is_empty()),
            (op, want, want_err),
            "TestReorganizeTaints: {name}"
        );
    }
    let (_, _, errs) = reorganize(
        &node,
        &[rm("nope", Some(E::NoExecute)), rm("gone", None)],
        false,
    );
    assert_eq!(
        errs,
        vec![
            r#"taint "nope:NoExecute" not found"#,
            r#"taint "gone" not found"#
        ]
    );
}

#[test]
fn removal_matches_upstream_test_delete_taint_and_by_key() {
    let one = vec![t("foo", "", E::NoSchedule)];
    let cases: Vec<(&str, Vec<Taint>, TaintSpec, Vec<Taint>)> = vec![
        (
            "TestDeleteTaint: different name",
            one.clone(),
            rm("foo_1", Some(E::NoSchedule)),
            one.clone(),
        ),
        (
            "TestDeleteTaint: different effect",
            one.clone(),
            rm("foo", Some(E::NoExecute)),
            one.clone(),
        ),
        (
            "TestDeleteTaint: successfully",
            one.clone(),
            rm("foo", Some(E::NoSchedule)),
            vec![],
        ),
        (
            "TestDeleteTaint: from empty",
            vec![],
            rm("foo", Some(E::NoSchedule)),
            vec![],
        ),
        (
            "TestDeleteTaintByKey: unsuccessfully",
            vec![t("foo", "bar", E::NoSchedule)],
            rm("foo_1", None),
            vec![t("foo", "bar", E::NoSchedule)],
        ),
        (
            "TestDeleteTaintByKey: successfully",
            vec![t("foo", "bar", E::NoSchedule)],
            rm("foo", None),
            vec![],
        ),
        (
            "TestDeleteTaintByKey: from empty",
            vec![],
            rm("foo", None),
            vec![],
        ),
    ];
    for (name, old, spec, want) in cases {
        let (_, got, errs) = reorganize(&old, &[spec], false);
        assert_eq!(
            errs.is_empty(),
            old.len() != want.len(),
            "{name}: removed iff changed"
        );
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn already_existing_matches_upstream_test_check_if_taints_already_exists() {
    let old = vec![
        t("foo_1", "bar", E::NoSchedule),
        t("foo_2", "bar", E::NoSchedule),
        t("foo_3", "bar", E::NoSchedule),
    ];
    assert_eq!(already_existing(&old, &[]), "", "empty array");
    assert_eq!(
        already_existing(&old, &[t("foo_1", "", E::NoExecute)]),
        "",
        "no match"
    );
    assert_eq!(
        already_existing(&old, &[t("foo_2", "", E::NoSchedule)]),
        "foo_2",
        "match one taint"
    );
    assert_eq!(
        already_existing(
            &old,
            &[t("foo_2", "", E::NoSchedule), t("foo_3", "", E::NoSchedule)]
        ),
        "foo_2,foo_3",
        "match two taints"
    );
}

#[test]
fn display_matches_upstream_test_taint_to_string() {
    let none = E::Other("".into());
    assert_eq!(
        t("foo", "bar", E::NoSchedule).to_string(),
        "foo=bar:NoSchedule"
    );
    assert_eq!(t("foo", "", E::NoSchedule).to_string(), "foo:NoSchedule");
    assert_eq!(t("foo", "", none.clone()).to_string(), "foo");
    assert_eq!(t("foo", "bar", none).to_string(), "foo=bar:");
}

#[test]
fn display_parses_back_in_all_four_forms() {
    for s in ["foo=bar:NoSchedule", "foo:NoSchedule", "foo", "foo=bar:"] {
        assert_eq!(parse_display(s).to_string(), s);
    }
}

#[test]
fn identity_matches_upstream_test_match_taint() {
    let a = t("foo", "bar", E::NoSchedule);
    assert!(
        a.same_identity(&t("foo", "bar", E::NoSchedule)),
        "same key, value, effect"
    );
    assert!(
        a.same_identity(&t("foo", "different-value", E::NoSchedule)),
        "different value"
    );
    assert!(
        !a.same_identity(&t("different-key", "bar", E::NoSchedule)),
        "different key"
    );
    assert!(
        !a.same_identity(&t("foo", "bar", E::PreferNoSchedule)),
        "different effect"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use quickcheck::quickcheck;
    use taintcheck_core::strategies;

    proptest! {
        /// PROP: print → parse is the identity for kubectl syntax and for `Taint.ToString`.
        #[test]
        fn print_then_parse_is_identity(taint in strategies::taint()) {
            let text = taint.to_string();
            prop_assert_eq!(parse_spec(&text), Ok(TaintSpec::Add(taint.clone())));
            prop_assert_eq!(parse_display(&text), taint.clone());
            let removal = format!("{}:{}-", taint.key, taint.effect);
            prop_assert_eq!(parse_spec(&removal), Ok(TaintSpec::Remove { key: taint.key.clone(), effect: Some(taint.effect.clone()) }));
        }
    }

    quickcheck! {
        /// PROP (quickcheck): kubectl syntax parsing never panics, and whatever it accepts as an
        /// addition prints back to an argument it parses identically.
        fn parsing_arbitrary_arguments_never_panics(args: Vec<String>) -> bool {
            match parse_specs(&args) {
                Err(e) => !e.to_string().is_empty(),
                Ok(specs) => specs.iter().all(|s| match s {
                    TaintSpec::Add(t) => parse_spec(&t.to_string()) == Ok(s.clone()),
                    TaintSpec::Remove { .. } => true,
                }),
            }
        }
    }
}
