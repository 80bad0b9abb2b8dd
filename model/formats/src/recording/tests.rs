use super::*;
use taintcheck_core::time::Time;

/// The corpus's node going unreachable, its pod evicted after its 300 s (IMPORT-*), as kubectl
/// prints each kind.
const PODS: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/pods.json");
const NODES: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/nodes.json");
const EVENTS: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/events.json");

fn kinds(trace: &[TraceRecord]) -> Vec<(i64, String)> {
    trace
        .iter()
        .map(|r| {
            let line = serde_json::to_value(r).unwrap();
            (r.t.millis(), line["kind"].as_str().unwrap().to_string())
        })
        .collect()
}

fn recording(pods: &'static str, events: &'static str) -> [(&'static str, &'static str); 3] {
    [
        ("pods.json", pods),
        ("nodes.json", NODES),
        ("events.json", events),
    ]
}

#[test]
fn watch_output_becomes_a_trace_dated_by_the_objects() {
    let trace = import(&recording(PODS, EVENTS)).unwrap();
    // Offsets from the first line's second, 07:59:55.
    assert_eq!(
        kinds(&trace),
        [
            (0, "header".to_string()),
            (0, "node_added".to_string()),
            (0, "node_added".to_string()),
            (0, "pod_added".to_string()),
            // 08:00:40, the unreachable taints' timeAdded.
            (45_000, "node_modified".to_string()),
            // 08:05:40: the DisruptionTarget condition, dated by its own status write.
            (345_000, "pod_modified".to_string()),
            // deletionTimestamp 08:06:10 minus the 30 s grace period.
            (345_000, "pod_modified".to_string()),
            // The event's second, rounded up to its end; the node's event is not the taint
            // manager's.
            (345_999, "event".to_string()),
        ]
    );
    let TraceEvent::Header {
        observed,
        start,
        end,
        ..
    } = &trace[0].event
    else {
        panic!("header first")
    };
    assert_eq!(observed.as_deref(), Some(&[Observed::Events][..]));
    assert_eq!(
        start.as_ref().map(|s| s.0.to_string()).as_deref(),
        Some("2025-11-25T07:59:55Z")
    );
    assert_eq!(*end, Some(Time(345_999)));
    let TraceEvent::PodModified {
        terminating,
        disruption_target,
        ..
    } = &trace[6].event
    else {
        panic!("{:?}", trace[6])
    };
    assert!(*terminating && *disruption_target);
}

#[test]
fn bad_json_names_the_file_and_line() {
    let err = import(&[("objects.json", "{\"type\": \"ADDED\",\n \"object\": }")]).unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("objects.json", 2));
    let err = import(&[(
        "objects.json",
        "\n{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":5}}",
    )])
    .unwrap_err();
    assert_eq!(err.line, 2);
    assert!(
        err.message.starts_with("object.metadata: "),
        "{}",
        err.message
    );
}
