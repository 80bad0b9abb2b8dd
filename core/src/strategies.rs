//! proptest strategies for the compact objects, shared by every crate's tests (enable the
//! `proptest` feature of `taintcheck-model` outside this crate).
//!
//! Keys and values are drawn from small pools so that generated tolerations and taints actually
//! meet; `valid_*` strategies produce only what API-server validation accepts (VAL-*), the plain
//! ones also produce what only `--no-validate` lets through (empty-key `Equal`, unknown
//! operators and effects, non-numeric `Lt`/`Gt` values).

use crate::api::{Node, Operator, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use crate::time::Time;
use proptest::prelude::*;

/// Taint and toleration keys: a few plain and prefixed qualified names.
pub fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "b",
        "dedicated",
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "example.com/sla",
    ])
    .prop_map(str::to_owned)
}

/// Label values, including numeric ones so `Lt`/`Gt` have something to compare.
/// (A negative number is no label value, so no valid taint carries one: see [`number`].)
pub fn value() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "x", "y", "gpu", "0", "7", "950", "high"]).prop_map(str::to_owned)
}

/// Canonical integers for `Lt`/`Gt` toleration values.
pub fn number() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["0", "7", "950", "-3", "9223372036854775807"]).prop_map(str::to_owned)
}

/// The three effects the API accepts (never [`TaintEffect::Other`]).
pub fn effect() -> impl Strategy<Value = TaintEffect> {
    prop_oneof![
        Just(TaintEffect::NoSchedule),
        Just(TaintEffect::PreferNoSchedule),
        Just(TaintEffect::NoExecute),
    ]
}

/// `tolerationSeconds`, weighted towards small values, with the sentinel and overflow edges.
pub fn seconds() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        3 => Just(None),
        6 => (-2i64..400).prop_map(Some),
        1 => prop::sample::select(vec![i64::MAX, 9_223_372_036, 9_223_372_037, 18_446_744_074, i64::MIN]).prop_map(Some),
    ]
}

/// A taint as validation accepts it (no `timeAdded`; see [`taint_with_time`]).
pub fn taint() -> impl Strategy<Value = Taint> {
    (key(), value(), effect()).prop_map(|(k, v, e)| Taint::new(&k, &v, e))
}

/// A taint with a whole-second `timeAdded` (the API server's resolution) or none.
pub fn taint_with_time() -> impl Strategy<Value = Taint> {
    (taint(), prop::option::of(0i64..4_000_000_000)).prop_map(|(mut t, secs)| {
        t.time_added = secs.map(|s| Time(s * 1000));
        t
    })
}

/// A toleration validation accepts with the comparison-operator gate on.
pub fn valid_toleration() -> impl Strategy<Value = Toleration> {
    let op = prop_oneof![
        4 => Just(Operator::Equal),
        4 => Just(Operator::Exists),
        1 => Just(Operator::Lt),
        1 => Just(Operator::Gt),
    ];
    let any_key = prop_oneof![1 => Just(String::new()), 5 => key()];
    let value = (value(), number());
    (any_key, op, value, prop::option::of(effect()), seconds()).prop_map(|(k, op, (v, n), e, s)| {
        let key = if op == Operator::Exists || !k.is_empty() {
            k
        } else {
            "a".to_owned()
        };
        let value = match op {
            Operator::Exists => String::new(),
            Operator::Lt | Operator::Gt => n,
            _ => v,
        };
        let effect = if s.is_some() {
            Some(TaintEffect::NoExecute)
        } else {
            e
        };
        Toleration {
            key: key.into(),
            operator: op,
            value: value.into(),
            effect,
            seconds: s,
        }
    })
}

/// Any toleration the matcher may meet, valid or not.
pub fn toleration() -> impl Strategy<Value = Toleration> {
    let key = prop_oneof![Just(String::new()), key()];
    let op = prop_oneof![
        3 => Just(Operator::Equal),
        3 => Just(Operator::Exists),
        1 => Just(Operator::Lt),
        1 => Just(Operator::Gt),
        1 => Just(Operator::Other("In".into())),
    ];
    let effect = prop_oneof![
        3 => prop::option::of(effect()),
        1 => Just(Some(TaintEffect::Other("noexecute".into()))),
    ];
    let value = prop_oneof![value(), number()];
    (key, op, value, effect, seconds()).prop_map(|(k, op, v, e, s)| Toleration {
        key: k.into(),
        operator: op,
        value: v.into(),
        effect: e,
        seconds: s,
    })
}

/// A node whose taints are unique per (key, effect), as validation requires.
pub fn node() -> impl Strategy<Value = Node> {
    (
        prop::sample::select(vec!["n1", "n2", "worker-1"]),
        prop::collection::vec(taint_with_time(), 0..6),
    )
        .prop_map(|(name, mut taints)| {
            let mut seen: Vec<(String, TaintEffect)> = Vec::new();
            taints.retain(|t| {
                let id = (t.key.to_string(), t.effect.clone());
                let fresh = !seen.contains(&id);
                seen.push(id);
                fresh
            });
            Node {
                name: name.into(),
                taints,
            }
        })
}

/// A pod with valid tolerations (see [`valid_toleration`]).
pub fn pod() -> impl Strategy<Value = Pod> {
    (
        prop::sample::select(vec!["default", "shop"]),
        prop::sample::select(vec!["p0", "p1", "web-0"]),
        prop::option::of(prop::sample::select(vec!["n1", "n2"])),
        prop::collection::vec(valid_toleration(), 0..6),
    )
        .prop_map(|(ns, name, node, tolerations)| Pod {
            key: PodKey::new(ns, name),
            uid: Uid(format!("{ns}-{name}-uid").into()),
            node_name: node.map(Into::into),
            tolerations,
        })
}
