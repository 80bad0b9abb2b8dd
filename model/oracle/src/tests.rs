//! Hand-written traces: the oracle accepts what a profile allows and rejects the rest with a
//! readable reason.

use super::*;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::time::Time;
use taintcheck_formats::trace::{
    Observed, RequestVerb, ResponseResult, TraceEvent, TraceRecord, TRACE_VERSION,
};

mod recordings;

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// A trace under construction.
#[derive(Clone)]
struct T {
    records: Vec<TraceRecord>,
    next_id: u64,
}

impl T {
    fn new(observed: Option<Vec<Observed>>) -> T {
        T {
            records: vec![TraceRecord {
                t: Time(0),
                event: TraceEvent::Header {
                    version: TRACE_VERSION,
                    source: "test".into(),
                    profile: None,
                    scenario: None,
                    observed,
                    start: None,
                    end: None,
                    qps: None,
                    burst: None,
                },
            }],
            next_id: 1,
        }
    }

    fn at(mut self, ms: i64, event: TraceEvent) -> T {
        self.records.push(TraceRecord { t: Time(ms), event });
        self
    }

    fn node(self, ms: i64, taints: &[&str], added: bool) -> T {
        let node = Node {
            name: "n1".into(),
            taints: taints
                .iter()
                .map(|k| Taint::new(k, "", TaintEffect::NoExecute))
                .collect(),
        };
        let event = if added {
            TraceEvent::NodeAdded { rv: 1, node }
        } else {
            TraceEvent::NodeModified { rv: 1, node }
        };
        self.at(ms, event)
    }

    fn pod(self, ms: i64, seconds: Option<i64>) -> T {
        let tolerations = vec![Toleration::exists(
            UNREACHABLE,
            Some(TaintEffect::NoExecute),
            seconds,
        )];
        self.at(
            ms,
            TraceEvent::PodAdded {
                rv: 2,
                pod: web0(tolerations),
            },
        )
    }

    fn event(self, ms: i64, message: &str) -> T {
        self.at(
            ms,
            TraceEvent::Event {
                namespace: "default".into(),
                name: "web-0".into(),
                reason: "TaintManagerEviction".into(),
                message: message.into(),
            },
        )
    }

    /// A request and its successful response, at `ms`.
    fn call(mut self, ms: i64, verb: RequestVerb) -> T {
        let id = self.next_id;
        self.next_id += 1;
        let uid = (verb != RequestVerb::Delete).then(|| Uid("u1".into()));
        let uid = if verb == RequestVerb::Patch {
            uid
        } else {
            None
        };
        self = self.at(
            ms,
            TraceEvent::Request {
                id,
                verb,
                namespace: "default".into(),
                name: "web-0".into(),
                uid,
                node: None,
                resource_version: None,
            },
        );
        if verb == RequestVerb::Delete {
            self = self.at(
                ms,
                TraceEvent::PodDeleted {
                    rv: 9,
                    namespace: "default".into(),
                    name: "web-0".into(),
                    uid: Uid("u1".into()),
                },
            );
        }
        self.at(
            ms,
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid: Some(Uid("u1".into())),
                resource_version: None,
            },
        )
    }

    /// The latest profile's whole eviction at `ms`.
    fn evict(self, ms: i64) -> T {
        self.event(ms, "Marking for deletion Pod default/web-0")
            .call(ms, RequestVerb::Get)
            .call(ms, RequestVerb::Patch)
            .call(ms, RequestVerb::Delete)
    }

    fn check(&self, profile: Profile, bound_ms: i64, until: Option<i64>) -> Result<Summary> {
        let options = Options::new(profile, Duration(bound_ms));
        Oracle::check(options, &self.records, until.map(Time))
    }
}

fn web0(tolerations: Vec<Toleration>) -> Pod {
    Pod {
        key: PodKey::new("default", "web-0"),
        uid: Uid("u1".into()),
        node_name: Some("n1".into()),
        tolerations,
    }
}

fn violation(r: Result<Summary>) -> Violation {
    match r {
        Err(Error::Violation(v)) => *v,
        other => panic!("expected a violation, got {other:?}"),
    }
}

fn tainted_at_2s() -> T {
    T::new(None)
        .node(0, &[], true)
        .pod(0, Some(300))
        .node(2_000, &[UNREACHABLE], false)
}

#[test]
fn eviction_at_the_deadline_conforms() {
    let trace = tainted_at_2s().evict(302_000);
    let summary = trace.check(Profile::latest(), 0, Some(400_000)).unwrap();
    assert_eq!(summary.pods, 1);
    assert_eq!(summary.live_components, 0, "the evicted pod is forgotten");
}

#[test]
fn eviction_anywhere_inside_the_window_conforms_and_outside_does_not() {
    // Delivered within 1 s of 2 s, the timer fires at 302-303 s and within 1 s of that; the
    // work's steps each take up to the step slack (100 ms, ORACLE-11).
    for (at, ok) in [
        (302_000, true),
        (303_700, true),
        (304_200, true),
        (304_201, false),
    ] {
        let trace = tainted_at_2s().evict(at);
        let r = trace.check(Profile::latest(), 1_000, None);
        assert_eq!(r.is_ok(), ok, "evicted at {at}: {r:?}");
    }
    let v = violation(
        tainted_at_2s()
            .evict(301_999)
            .check(Profile::latest(), 1_000, None),
    );
    assert_eq!(v.line, Some(5));
    assert_eq!(
        v.message,
        "default/web-0 marked for deletion at 301.999s, but it tolerates \
         node.kubernetes.io/unreachable for 300 s from 2.000s, when the taint was first observable"
    );
}

#[test]
fn early_deletion_is_explained_in_plain_words() {
    let trace = T::new(Some(vec![Observed::Deletions]))
        .node(0, &[], true)
        .pod(0, Some(300))
        .node(2_000, &[UNREACHABLE], false)
        .at(
            12_000,
            TraceEvent::PodModified {
                rv: 5,
                pod: web0(vec![Toleration::exists(
                    UNREACHABLE,
                    Some(TaintEffect::NoExecute),
                    Some(300),
                )]),
                terminating: true,
                disruption_target: false,
            },
        );
    let v = violation(trace.check(Profile::latest(), 1_000, None));
    assert_eq!(
        v.message,
        "default/web-0 deleted at 12.000s, but it tolerates node.kubernetes.io/unreachable for \
         300 s from 2.000s, when the taint was first observable"
    );
    assert_eq!(v.expected, Expected::NotDeletedBy(Time(12_000)));
}

#[test]
fn a_missed_deadline_is_reported_at_the_next_line() {
    let trace = tainted_at_2s().node(400_000, &[], false);
    let v = violation(trace.check(Profile::latest(), 1_000, None));
    assert_eq!(v.line, Some(5));
    assert_eq!(
        v.message,
        "default/web-0 should have been marked for deletion by 304.200s (it tolerates \
         node.kubernetes.io/unreachable for 300 s from 2.000s, when the taint was first \
         observable; latency bound 1 s; emitted at 304.100s at the latest, an event reaches \
         the trace within the step slack 0.1 s), but the trace shows nothing of it before \
         400.000s"
    );
    assert_eq!(
        v.expected,
        Expected::DeletedWithin(Time(302_000), Time(304_200))
    );
    let at_end = violation(tainted_at_2s().check(Profile::latest(), 1_000, Some(500_000)));
    assert_eq!(at_end.line, None);
}

#[test]
fn a_taint_removed_in_time_cancels_and_a_late_deletion_is_rejected() {
    let removed = tainted_at_2s()
        .node(200_000, &[], false)
        .event(200_000, "Cancelling deletion of Pod default/web-0");
    removed.check(Profile::latest(), 0, Some(500_000)).unwrap();
    let v = violation(removed.evict(302_000).check(Profile::latest(), 0, None));
    assert!(
        v.message
            .contains("but node n1 has no NoExecute taint since 200.000s"),
        "{}",
        v.message
    );
}

#[test]
fn n1_a_removal_racing_the_timer_may_lose_within_the_bound() {
    let trace = tainted_at_2s().node(301_500, &[], false).evict(302_000);
    trace.check(Profile::latest(), 1_000, None).unwrap();
    let v = violation(trace.check(Profile::latest(), 0, None));
    assert_eq!(v.line, Some(6));
}

#[test]
fn v1_18_forever_does_not_cancel_but_latest_does() {
    let forever = Toleration::exists(UNREACHABLE, Some(TaintEffect::NoExecute), None);
    let trace = tainted_at_2s().at(
        100_000,
        TraceEvent::PodModified {
            rv: 3,
            pod: web0(vec![forever]),
            terminating: false,
            disruption_target: false,
        },
    );
    // 1.18: the timer survives (T1) and must fire.
    let v = violation(trace.check(Profile::v1_18(), 0, Some(400_000)));
    assert!(v.message.contains("should have been"), "{}", v.message);
    // latest: cancelled, with the event.
    let cancelled = trace.event(100_000, "Cancelling deletion of Pod default/web-0");
    cancelled
        .check(Profile::latest(), 0, Some(400_000))
        .unwrap();
}

#[test]
fn bad_input_names_the_line() {
    let trace = T::new(None).node(5, &[], false);
    match trace.check(Profile::latest(), 0, None) {
        Err(Error::BadInput(b)) => {
            assert_eq!(b.line, 2);
            assert_eq!(b.message, "node n1 modified, but the trace never added it");
        }
        other => panic!("{other:?}"),
    }
    let backwards = T::new(None).node(5, &[], true).node(4, &[], false);
    match backwards.check(Profile::latest(), 0, None) {
        Err(Error::BadInput(b)) => assert_eq!(b.line, 3),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_get_answered_late_may_show_the_pod_as_it_was_when_sent() {
    let request = TraceEvent::Request {
        id: 1,
        verb: RequestVerb::Get,
        namespace: "default".into(),
        name: "web-0".into(),
        uid: None,
        node: None,
        resource_version: None,
    };
    let gone = TraceEvent::PodDeleted {
        rv: 9,
        namespace: "default".into(),
        name: "web-0".into(),
        uid: Uid("u1".into()),
    };
    let answer = TraceEvent::Response {
        id: 1,
        result: ResponseResult::Ok,
        uid: Some(Uid("u1".into())),
        resource_version: Some(taintcheck_core::api::ResourceVersion(2)),
    };
    let marked = tainted_at_2s().event(302_000, "Marking for deletion Pod default/web-0");
    // Sent before the pod went: the API server may have read it then (a proxy held the
    // answer back, PROXY-8).
    marked
        .clone()
        .at(302_000, request.clone())
        .at(302_100, gone.clone())
        .at(302_150, answer.clone())
        .check(Profile::latest(), 500, Some(302_150))
        .unwrap();
    // Sent after: no instant of the exchange shows the pod.
    let late = marked
        .at(302_100, gone)
        .at(302_120, request)
        .at(302_150, answer);
    match late.check(Profile::latest(), 500, Some(302_150)) {
        Err(Error::BadInput(b)) => assert!(b.message.contains("fetched"), "{}", b.message),
        other => panic!("{other:?}"),
    }
}
