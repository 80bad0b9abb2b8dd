use super::*;
use crate::api::{Node, Pod, PodKey, Taint, TaintEffect as E, Toleration, Uid};

fn node(taints: Vec<Taint>) -> Node {
    Node {
        name: "n".into(),
        taints,
    }
}

fn pod(tolerations: Vec<Toleration>) -> Pod {
    Pod {
        key: PodKey::new("ns", "p"),
        uid: Uid("u".into()),
        node_name: Some("n".into()),
        tolerations,
    }
}

fn ne(key: &str) -> Taint {
    Taint::new(key, "", E::NoExecute)
}

fn json(e: &Explanation) -> String {
    serde_json::to_string(e).unwrap()
}

#[test]
fn no_taints_is_never_evicted_and_schedulable() {
    let e = Explanation::new(&node(vec![]), &pod(vec![]), false);
    assert_eq!(
        json(&e),
        r#"{"taints":[],"all_tolerated":true,"min_toleration_seconds":null,"eviction":"never","eviction_after_seconds":null,"schedulable":true,"unschedulable_reason":null,"prefer_no_schedule_untolerated":0}"#
    );
}

#[test]
fn untolerated_no_execute_taint_means_immediate_eviction() {
    let e = Explanation::new(
        &node(vec![ne("a"), ne("b")]),
        &pod(vec![Toleration::exists("a", None, Some(30))]),
        false,
    );
    assert_eq!(
        json(&e),
        r#"{"taints":[{"taint":"a:NoExecute","effect":"NoExecute","toleration_index":0,"seconds":30},{"taint":"b:NoExecute","effect":"NoExecute","toleration_index":null,"seconds":null}],"all_tolerated":false,"min_toleration_seconds":0,"eviction":"immediate","eviction_after_seconds":null,"schedulable":false,"unschedulable_reason":"node(s) had untolerated taint {b: }","prefer_no_schedule_untolerated":0}"#
    );
}

#[test]
fn first_toleration_in_pod_order_decides_1_3() {
    let short_first = pod(vec![
        Toleration::exists("a", None, Some(10)),
        Toleration::exists("", None, None),
    ]);
    let e = Explanation::new(&node(vec![ne("a")]), &short_first, false);
    assert_eq!(
        (e.eviction, e.eviction_after_seconds),
        (Eviction::After, Some(Seconds(10_000)))
    );
    let forever_first = pod(vec![
        Toleration::exists("", None, None),
        Toleration::exists("a", None, Some(10)),
    ]);
    let e = Explanation::new(&node(vec![ne("a")]), &forever_first, false);
    assert_eq!(
        (e.eviction, e.min_toleration_seconds),
        (Eviction::Never, None)
    );
}

#[test]
fn zero_or_negative_seconds_evict_immediately() {
    for s in [0, -5] {
        let e = Explanation::new(
            &node(vec![ne("a")]),
            &pod(vec![Toleration::exists("a", None, Some(s))]),
            false,
        );
        assert_eq!(
            (e.all_tolerated, e.eviction, e.min_toleration_seconds),
            (true, Eviction::Immediate, Some(Seconds(0)))
        );
    }
}

#[test]
fn overflowing_seconds_wrap_like_go_durations_t6() {
    let e = Explanation::new(
        &node(vec![ne("a")]),
        &pod(vec![Toleration::exists("a", None, Some(9_223_372_037))]),
        false,
    );
    assert_eq!(e.eviction, Eviction::Never, "negative product: forever");
    let e = Explanation::new(
        &node(vec![ne("a")]),
        &pod(vec![Toleration::exists("a", None, Some(18_446_744_074))]),
        false,
    );
    assert_eq!(e.eviction, Eviction::After);
    assert_eq!(
        serde_json::to_value(e.eviction_after_seconds).unwrap(),
        serde_json::json!(0.290),
        "wrapped to 290 ms"
    );
}

#[test]
fn prefer_no_schedule_counts_and_filter_reason() {
    let taints = vec![
        Taint::new("p", "1", E::PreferNoSchedule),
        Taint::new("s", "2", E::NoSchedule),
    ];
    let e = Explanation::new(&node(taints), &pod(vec![]), false);
    assert_eq!(e.prefer_no_schedule_untolerated, 1);
    assert_eq!(
        e.unschedulable_reason.as_deref(),
        Some("node(s) had untolerated taint {s: 2}")
    );
    assert_eq!((e.eviction, e.all_tolerated), (Eviction::Never, true));
}
