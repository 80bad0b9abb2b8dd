use super::*;
use crate::oracle::{Error, Options, Oracle};
use crate::profile::Profile;
use crate::time::Duration;

const OBJECTS: &str = include_str!("../../../tests/fixtures/recording/objects.json");
const EVENTS: &str = include_str!("../../../tests/fixtures/recording/events.json");

/// 2026-03-01T10:00:00Z, in ms from the trace's start (09:00:00, the node's first write).
const TEN: i64 = 3_600_000;

fn kinds(trace: &[TraceRecord]) -> Vec<(i64, String)> {
    trace
        .iter()
        .map(|r| {
            let line = serde_json::to_value(r).unwrap();
            (
                r.t.millis() - TEN,
                line["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn watch_output_becomes_a_trace_dated_by_the_objects() {
    let trace = import(&[("objects.json", OBJECTS), ("events.json", EVENTS)]).unwrap();
    assert_eq!(
        kinds(&trace),
        [
            (-3_600_000, "header".to_string()),
            (-3_600_000, "node_added".to_string()),
            (-1_800_000, "pod_added".to_string()),
            // The taint's timeAdded; the kubelet's heartbeat before it changed nothing.
            (2_000, "node_modified".to_string()),
            // deletionTimestamp 10:05:32 minus the 30 s grace period.
            (302_000, "pod_modified".to_string()),
            // The event's second, rounded up to its end; the node event is not the taint
            // manager's.
            (302_999, "event".to_string()),
        ]
    );
    let TraceEvent::Header { observed, .. } = &trace[0].event else {
        panic!("header first")
    };
    assert_eq!(observed.as_deref(), Some(&[Observed::Events][..]));
    let TraceEvent::PodModified { terminating, .. } = &trace[4].event else {
        panic!("{:?}", trace[4])
    };
    assert!(terminating);
}

#[test]
fn an_imported_recording_is_checked_by_the_oracle() {
    let options = Options::new(Profile::latest(), Duration(2_000));
    let trace = import(&[("objects.json", OBJECTS), ("events.json", EVENTS)]).unwrap();
    Oracle::check(options, &trace, None).unwrap();

    let early = EVENTS.replace("10:05:02Z", "10:00:12Z");
    let trace = import(&[("objects.json", OBJECTS), ("events.json", &early)]).unwrap();
    match Oracle::check(options, &trace, None) {
        Err(Error::Violation(v)) => assert_eq!(
            v.message,
            "default/web-0 marked for deletion at 2026-03-01T10:00:12.999Z, 10.999 s after \
             node.kubernetes.io/unreachable appeared, but it tolerates \
             node.kubernetes.io/unreachable for 300 s from 2026-03-01T10:00:02Z, when the taint \
             was first observable"
        ),
        other => panic!("{other:?}"),
    }
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
