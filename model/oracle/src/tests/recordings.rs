//! Recordings as kubectl prints them (`taintcheck-formats`, `recording`), imported and judged.

use crate::{Error, Options, Oracle};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::recording::import;

/// The corpus's node going unreachable, its pod evicted after its 300 s (IMPORT-*).
const NODES: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/nodes.json");
const PODS: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/pods.json");
const EVENTS: &str =
    include_str!("../../../../tests/fixtures/recordings/evicted-after-300s/events.json");
/// The same cluster with the eviction 129 s after the taint.
const PREMATURE_EVENTS: &str =
    include_str!("../../../../tests/fixtures/recordings/premature-eviction/events.json");
const PREMATURE_PODS: &str =
    include_str!("../../../../tests/fixtures/recordings/premature-eviction/pods.json");

fn recording(pods: &'static str, events: &'static str) -> [(&'static str, &'static str); 3] {
    [
        ("pods.json", pods),
        ("nodes.json", NODES),
        ("events.json", events),
    ]
}

#[test]
fn an_imported_recording_is_checked_by_the_oracle() {
    let options = Options::new(Profile::latest(), Duration(2_000));
    let trace = import(&recording(PODS, EVENTS)).unwrap();
    Oracle::check(options, &trace, None).unwrap();

    let trace = import(&recording(PREMATURE_PODS, PREMATURE_EVENTS)).unwrap();
    match Oracle::check(options, &trace, None) {
        Err(Error::Violation(v)) => assert_eq!(
            v.message,
            "default/web-0 marked for deletion at 2025-11-25T08:02:48.999Z, 128.999 s after \
             node.kubernetes.io/unreachable appeared, but it tolerates \
             node.kubernetes.io/unreachable for 300 s from 2025-11-25T08:00:40Z, when the taint \
             was first observable"
        ),
        other => panic!("{other:?}"),
    }
}
