//! Checking a run against a scenario's expectations (SCN-5).

use super::expect_properties::PropertyCheck;
use super::{Expectations, PodRef};
use crate::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use std::collections::BTreeMap;
use std::fmt;
use taintcheck_core::api::{PodKey, Uid};
use taintcheck_core::time::Time;

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
    let mut seen = Deletions::default();
    for r in trace {
        seen.record(r);
    }
    seen.done
}

/// The controller's successful DELETEs, read one record at a time.
#[derive(Default)]
struct Deletions {
    /// DELETE requests not answered yet, by id.
    pending: BTreeMap<u64, PodKey>,
    /// The successful ones, in order.
    done: Vec<Deletion>,
}

impl Deletions {
    fn record(&mut self, r: &TraceRecord) {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                namespace,
                name,
                ..
            } => {
                self.pending.insert(*id, PodKey::new(namespace, name));
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid,
                ..
            } => {
                if let Some(pod) = self.pending.remove(id) {
                    self.done.push(Deletion {
                        at: r.t,
                        pod,
                        uid: uid.clone(),
                    });
                }
            }
            _ => {}
        }
    }
}

/// Checks a run's trace against the expectations. Spec: SCN-5.
pub fn check(expect: &Expectations, trace: &[TraceRecord]) -> Vec<Failure> {
    let mut run = RunCheck::new(expect.clone());
    for r in trace {
        run.record(r);
    }
    run.failures()
}

/// A run's trace checked against the expectations one record at a time, as the run makes them
/// (SCN-5): it keeps what the expectations read (deletions, event counts, the properties'
/// view of the API), not the records, so that a run need not keep its trace to be checked.
pub struct RunCheck {
    expect: Expectations,
    deletions: Deletions,
    /// For each of `expect.events`, the matching events seen.
    events: Vec<usize>,
    properties: PropertyCheck,
}

impl RunCheck {
    /// A check of `expect` before the first record.
    pub fn new(expect: Expectations) -> RunCheck {
        RunCheck {
            events: vec![0; expect.events.len()],
            properties: PropertyCheck::new(&expect.properties),
            deletions: Deletions::default(),
            expect,
        }
    }

    /// Reads the next record of the trace.
    pub fn record(&mut self, r: &TraceRecord) {
        self.deletions.record(r);
        if let TraceEvent::Event {
            namespace,
            name,
            reason,
            message,
        } = &r.event
        {
            for (e, n) in self.expect.events.iter().zip(&mut self.events) {
                if **namespace == *e.pod.namespace
                    && **name == *e.pod.name
                    && *reason == e.reason
                    && *message == e.message
                {
                    *n += 1;
                }
            }
        }
        self.properties.record(r);
    }

    /// The controller's successful DELETEs so far, in order.
    pub fn deletions(&self) -> &[Deletion] {
        &self.deletions.done
    }

    /// How many expectations there are.
    pub fn total(&self) -> usize {
        let e = &self.expect;
        e.deleted.len() + e.not_deleted.len() + e.events.len() + e.properties.len()
    }

    /// The expectations the trace read so far did not meet, the trace taken as ended.
    pub fn failures(self) -> Vec<Failure> {
        let (expect, deleted) = (&self.expect, &self.deletions.done);
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
        for (e, &n) in expect.events.iter().zip(&self.events) {
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
        failures.extend(self.properties.failures());
        failures
    }
}
