//! The property vocabulary (`taintcheck-formats`, `properties`) read through a configuration.

use crate::check::config::CheckConfig;
use crate::check::properties::vocabulary::{Claim, Pattern, TaintFilter, Timing};
use taintcheck_core::time::Duration;

const BASE: &str = "nodes: [{name: n1}]\npods: [{name: db-0, node: n1}]\nproperties:\n";

fn parse(properties: &str) -> Result<CheckConfig, String> {
    CheckConfig::parse("x.yaml", "x", &format!("{BASE}{properties}")).map_err(|e| e.to_string())
}

#[test]
fn every_claim_reads() {
    let cfg = parse(
        "  - name: a\n    always: {never_deleted: {pods: \"db-*\"}}\n\
         \x20 - name: b\n    always:\n      not_deleted_before: {pods: db-0, taint: node.kubernetes.io/unreachable, after: 10m}\n\
         \x20 - name: c\n    always: {deleted_within: {taint: k=v, from: 1s, to: 310s}}\n\
         \x20 - name: d\n    always: {at_most_deletions: {count: 1, window: 5s}}\n\
         \x20 - name: e\n    always: {marked_at_most_once: {}}\n\
         \x20 - name: f\n    sometimes: {deleted: {pods: web}}\n\
         \x20 - name: g\n    sometimes: {event: {event: CancellingDeletion}}\n\
         \x20 - name: h\n    always: {deleted_only_if_exposed: {}}\n\
         \x20 - name: i\n    always: {evicted_in_time: {pods: db-0, slack: 100ms, across_restarts: true}}\n\
         \x20 - name: j\n    sometimes: {deleted: {when: after_toleration, after_restart: true}}\n",
    )
    .unwrap();
    let claims: Vec<&Claim> = cfg.properties.iter().map(|d| &d.claim).collect();
    assert_eq!(
        claims[1],
        &Claim::NotDeletedBefore {
            pods: Pattern("db-0".into()),
            taint: Some(TaintFilter {
                key: "node.kubernetes.io/unreachable".into(),
                value: None
            }),
            after: Duration(600_000),
        }
    );
    assert_eq!(
        claims[2],
        &Claim::DeletedWithin {
            pods: Pattern("*".into()),
            taint: Some(TaintFilter {
                key: "k".into(),
                value: Some("v".into())
            }),
            from: Duration(1000),
            to: Duration(310_000),
        }
    );
    assert_eq!(cfg.properties.len(), 10);
    assert_eq!(cfg.properties[6].name, "g");
    assert_eq!(
        claims[8],
        &Claim::EvictedInTime {
            pods: Pattern("db-0".into()),
            slack: Duration(100),
            across_restarts: true,
        }
    );
    assert_eq!(
        claims[9],
        &Claim::Deleted {
            pods: Pattern("*".into()),
            when: Some(Timing::AfterToleration),
            after_restart: true,
        }
    );
}

#[test]
fn mistakes_are_located() {
    let e = parse("  - name: a\n    sometimes: {never_deleted: {}}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:5: properties[0].sometimes: Invalid value: a safety claim is checked with \"always\"; \"sometimes\" takes deleted or event"
    );
    let e =
        parse("  - name: a\n    always:\n      deleted_within: {from: 5s, to: 1s}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:6: properties[0].always.deleted_within.to: Invalid value: \"1s\": expected a duration no shorter than \"from\""
    );
    let e = parse("  - name: EVICT-1\n    always: {never_deleted: {}}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:4: properties[0].name: Invalid value: \"EVICT-1\": a built-in property has this name"
    );
    let e = parse(
        "  - name: a\n    always: {never_deleted: {pods: \"DB_*\"}}\n  - name: a\n    always: {evicted: {}}\n",
    )
    .unwrap_err();
    assert!(
        e.starts_with("x.yaml:5: properties[0].always.never_deleted.pods: Invalid value: \"DB_*\""),
        "{e}"
    );
    assert!(
        e.contains("x.yaml:7: properties[1].always.evicted: unknown field: supported fields: \"never_deleted\""),
        "{e}"
    );
    let e = parse("  - name: a\n    always: {at_most_deletions: {window: 5s}}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:5: properties[0].always.at_most_deletions.count: Required value"
    );
    let e = parse("  - name: a\n    sometimes: {deleted: {when: later}}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:5: properties[0].sometimes.deleted.when: Unsupported value: \"later\": supported values: \"at_once\", \"after_toleration\""
    );
    let e = parse("  - name: a\n    always: {evicted_in_time: {}}\n").unwrap_err();
    assert_eq!(
        e,
        "x.yaml:5: properties[0].always.evicted_in_time.slack: Required value"
    );
}
