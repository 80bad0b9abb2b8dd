//! Checking a run against a scenario's expectations (SCN-5).

use super::{Expectations, PodRef};
use crate::api::{PodKey, Uid};
use crate::time::Time;
use crate::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use std::collections::BTreeMap;
use std::fmt;

/// An expectation a run did not meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The expectation's line in the scenario file.
    pub line: usize,
    /// What was expected and what the run showed instead.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// A successful DELETE by the controller: when the API server answered, and whom it hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    /// When the API server answered the DELETE.
    pub at: Time,
    /// The deleted pod's namespace and name.
    pub pod: PodKey,
    /// The UID of the removed pod, when the API server's answer reports one.
    pub uid: Option<Uid>,
}

/// The controller's successful DELETEs in a trace, in order.
pub fn deletions(trace: &[TraceRecord]) -> Vec<Deletion> {
    let mut requests: BTreeMap<u64, PodKey> = BTreeMap::new();
    let mut out = Vec::new();
    for r in trace {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                namespace,
                name,
                ..
            } => {
                requests.insert(*id, PodKey::new(namespace, name));
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid,
                ..
            } => {
                if let Some(pod) = requests.remove(id) {
                    out.push(Deletion {
                        at: r.t,
                        pod,
                        uid: uid.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Checks a run's trace against the expectations. Spec: SCN-5.
pub fn check(expect: &Expectations, trace: &[TraceRecord]) -> Vec<Failure> {
    let deleted = deletions(trace);
    let hits = |p: &PodRef| {
        deleted
            .iter()
            .filter(|d| d.pod == p.key && (p.uid.is_none() || p.uid == d.uid))
            .collect::<Vec<_>>()
    };
    let mut failures = Vec::new();
    for e in &expect.deleted {
        let found = hits(&e.pod);
        let window = if e.from == e.to {
            format!("at {}", e.from)
        } else {
            format!("within [{}, {}]", e.from, e.to)
        };
        if !found.iter().any(|d| e.from <= d.at && d.at <= e.to) {
            let seen = match found.as_slice() {
                [] => "it was not deleted by the controller".to_string(),
                ds => format!(
                    "it was deleted at {}",
                    ds.iter()
                        .map(|d| d.at.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            failures.push(Failure {
                line: e.line,
                message: format!("expected {} to be deleted {window}, but {seen}", e.pod),
            });
        }
    }
    for e in &expect.not_deleted {
        if let Some(d) = hits(&e.pod).first() {
            failures.push(Failure {
                line: e.line,
                message: format!(
                    "expected {} not to be deleted, but the controller deleted it at {}",
                    e.pod, d.at
                ),
            });
        }
    }
    for e in &expect.events {
        let n = trace
            .iter()
            .filter(|r| match &r.event {
                TraceEvent::Event {
                    namespace,
                    name,
                    reason,
                    message,
                } => {
                    **namespace == *e.pod.namespace
                        && **name == *e.pod.name
                        && *reason == e.reason
                        && *message == e.message
                }
                _ => false,
            })
            .count();
        let ok = match e.count {
            Some(c) => n == c,
            None => n > 0,
        };
        if !ok {
            let wanted = e.count.map_or("at least 1".to_string(), |c| c.to_string());
            failures.push(Failure {
                line: e.line,
                message: format!(
                    "expected {wanted} event(s) {} \"{}\" on {}, found {n}",
                    e.reason, e.message, e.pod
                ),
            });
        }
    }
    failures.extend(super::expect_properties::check(&expect.properties, trace));
    failures
}
