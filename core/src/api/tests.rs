use super::*;
use std::collections::hash_map::DefaultHasher;

fn taint(key: &str, value: &str, effect: TaintEffect, added: Option<i64>) -> Taint {
    Taint {
        time_added: added.map(Time),
        ..Taint::new(key, value, effect)
    }
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// Pod keys order by namespace, then name (the order the timed queue and the records of pods
/// keep); UIDs order as strings. Both print as upstream names them.
#[test]
fn identities_order_and_print_as_strings() {
    let (a_z, b_a) = (PodKey::new("a", "z"), PodKey::new("b", "a"));
    assert_eq!(a_z.cmp(&b_a), Ordering::Less, "namespace first");
    assert_eq!(a_z.partial_cmp(&b_a), Some(Ordering::Less));
    assert_eq!(
        PodKey::new("a", "y").partial_cmp(&a_z),
        Some(Ordering::Less),
        "then name"
    );
    assert_eq!(a_z.to_string(), "a/z");
    let (u1, u2) = (Uid("u1".into()), Uid("u2".into()));
    assert_eq!(u1.cmp(&u2), Ordering::Less);
    assert_eq!(u2.partial_cmp(&u1), Some(Ordering::Greater));
    assert_eq!(u1.to_string(), "u1");
    assert_eq!(ResourceVersion(7).to_string(), "7");
}

/// Effects and operators read and print the API's spellings (`""` is `Equal`); anything else is
/// kept by the matcher but refused in a serialized input with the API server's message
/// (VAL-TOL-6, VAL-TOL-8).
#[test]
fn effects_and_operators_use_the_api_spellings() {
    for (s, e) in [
        ("NoSchedule", TaintEffect::NoSchedule),
        ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
        ("NoExecute", TaintEffect::NoExecute),
    ] {
        assert_eq!(TaintEffect::parse(s), e);
        assert_eq!(e.to_string(), s);
        assert_eq!(String::from(e.clone()), s);
        assert_eq!(TaintEffect::try_from(s.to_string()), Ok(e));
    }
    assert_eq!(
        TaintEffect::try_from("NoExec".to_string()),
        Err(r#"Unsupported value: "NoExec": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#.to_string())
    );
    for (s, o) in [
        ("Equal", Operator::Equal),
        ("Exists", Operator::Exists),
        ("Lt", Operator::Lt),
        ("Gt", Operator::Gt),
    ] {
        assert_eq!(Operator::parse(s), o);
        assert_eq!(o.as_str(), s);
        assert_eq!(String::from(o.clone()), s);
        assert_eq!(Operator::try_from(s.to_string()), Ok(o));
    }
    assert_eq!(Operator::parse(""), Operator::Equal);
    assert_eq!(
        Operator::try_from("Foo".to_string()),
        Err(
            r#"Unsupported value: "Foo": supported values: "Equal", "Exists", "Lt", "Gt""#
                .to_string()
        )
    );
}

/// Upstream `Taint.ToString` (TAINT-4): the four forms.
#[test]
fn a_taint_prints_as_upstream_to_string() {
    let other = TaintEffect::Other("".into());
    assert_eq!(
        Taint::new("k", "v", TaintEffect::NoExecute).to_string(),
        "k=v:NoExecute"
    );
    assert_eq!(
        Taint::new("k", "", TaintEffect::NoExecute).to_string(),
        "k:NoExecute"
    );
    assert_eq!(Taint::new("k", "v", other.clone()).to_string(), "k=v:");
    assert_eq!(Taint::new("k", "", other).to_string(), "k");
}

/// `==` compares every field, with or without shared names, and equal taints hash equal.
#[test]
fn taints_are_equal_field_by_field() {
    let t = taint("k", "v", TaintEffect::NoExecute, Some(5));
    let same = taint("k", "v", TaintEffect::NoExecute, Some(5));
    assert_eq!(t, t.clone(), "shared names");
    assert_eq!(t, same, "names read");
    assert_eq!(hash_of(&t), hash_of(&same));
    for other in [
        taint("x", "v", TaintEffect::NoExecute, Some(5)),
        taint("k", "x", TaintEffect::NoExecute, Some(5)),
        taint("k", "v", TaintEffect::NoSchedule, Some(5)),
        taint("k", "v", TaintEffect::NoExecute, None),
    ] {
        assert_ne!(t, other, "{other:?}");
        assert_ne!(hash_of(&t), hash_of(&other), "{other:?}");
    }
}

/// Upstream `MatchTaint` (key and effect) and `MatchToleration` (key, operator, value and
/// effect; never the seconds).
#[test]
fn identities_of_taints_and_tolerations() {
    let t = Taint::new("k", "v", TaintEffect::NoExecute);
    assert!(t.same_identity(&taint("k", "other", TaintEffect::NoExecute, Some(1))));
    assert!(!t.same_identity(&Taint::new("x", "v", TaintEffect::NoExecute)));
    assert!(!t.same_identity(&Taint::new("k", "v", TaintEffect::NoSchedule)));

    let tol = Toleration::equal("k", "v", Some(TaintEffect::NoExecute), Some(10));
    assert_eq!(
        (
            &*tol.key,
            &tol.operator,
            &*tol.value,
            &tol.effect,
            tol.seconds
        ),
        (
            "k",
            &Operator::Equal,
            "v",
            &Some(TaintEffect::NoExecute),
            Some(10)
        )
    );
    assert!(tol.same_identity(&Toleration {
        seconds: None,
        ..tol.clone()
    }));
    for other in [
        Toleration {
            key: "x".into(),
            ..tol.clone()
        },
        Toleration {
            operator: Operator::Exists,
            ..tol.clone()
        },
        Toleration {
            value: "x".into(),
            ..tol.clone()
        },
        Toleration {
            effect: None,
            ..tol.clone()
        },
    ] {
        assert!(!tol.same_identity(&other), "{other:?}");
    }
    let exists = Toleration::exists("k", None, Some(3));
    assert_eq!(
        (
            &*exists.key,
            &exists.operator,
            &*exists.value,
            &exists.effect,
            exists.seconds
        ),
        ("k", &Operator::Exists, "", &None, Some(3))
    );
}

/// Upstream `getNoExecuteTaints`: the NoExecute taints, in API order.
#[test]
fn no_execute_taints_keep_api_order() {
    let node = Node {
        name: "n".into(),
        taints: vec![
            Taint::new("b", "", TaintEffect::NoExecute),
            Taint::new("s", "", TaintEffect::NoSchedule),
            Taint::new("a", "", TaintEffect::NoExecute),
        ],
    };
    let keys: Vec<_> = node.no_execute_taints().map(|t| &*t.key).collect();
    assert_eq!(keys, ["b", "a"]);
}

/// A DELETE at `now` of a pod with grace `g` ends its grace at `now + g` (API-2).
#[test]
fn a_graceful_deletion_ends_after_its_grace() {
    let d = Deletion::starting(Time(1000), Duration::from_secs(30));
    assert_eq!((d.timestamp, d.grace), (Time(31_000), Duration(30_000)));
}
