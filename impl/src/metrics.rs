//! The controller's Prometheus metrics, counted from the records it makes (the trace's
//! requests, responses and Events), so that they count exactly what the trace shows. Upstream's
//! `taint_eviction_controller_pod_deletions_total` is the DELETEs answered with success; the
//! rest are ours, prefixed `taintcheck_controller_`. Spec: RT-WORLD-6.

use crate::sync::{lock, Mutex};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use taintcheck_formats::trace::{RequestVerb, ResponseResult, TraceEvent};

/// Counters, fed one record at a time.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    requests: BTreeMap<&'static str, u64>,
    responses: BTreeMap<(&'static str, &'static str), u64>,
    events: BTreeMap<String, u64>,
    deletions: u64,
    /// The verb of each request not yet answered (bounded by the requests in flight).
    pending: HashMap<u64, &'static str>,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Counts `event` if it is a request, a response or an Event.
    pub fn take(&self, event: &TraceEvent) {
        let mut c = lock(&self.inner);
        match event {
            TraceEvent::Request { id, verb, .. } => {
                let verb = verb_name(*verb);
                *c.requests.entry(verb).or_default() += 1;
                c.pending.insert(*id, verb);
            }
            TraceEvent::Response { id, result, .. } => {
                let verb = c.pending.remove(id).unwrap_or("unknown");
                let result = result_name(*result);
                *c.responses.entry((verb, result)).or_default() += 1;
                if verb == "delete" && result == "ok" {
                    c.deletions += 1;
                }
            }
            TraceEvent::Event { reason, .. } => {
                *c.events.entry(reason.clone()).or_default() += 1;
            }
            _ => {}
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let c = lock(&self.inner);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP taint_eviction_controller_pod_deletions_total Number of Pods deleted by \
             the taint eviction controller since its start.\n\
             # TYPE taint_eviction_controller_pod_deletions_total counter\n\
             taint_eviction_controller_pod_deletions_total {}",
            c.deletions
        );
        let _ = writeln!(
            out,
            "# HELP taintcheck_controller_requests_total Requests sent, by verb.\n\
             # TYPE taintcheck_controller_requests_total counter"
        );
        for (verb, n) in &c.requests {
            let _ = writeln!(
                out,
                "taintcheck_controller_requests_total{{verb=\"{verb}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP taintcheck_controller_responses_total Answers received, by verb and result.\n\
             # TYPE taintcheck_controller_responses_total counter"
        );
        for ((verb, result), n) in &c.responses {
            let _ = writeln!(
                out,
                "taintcheck_controller_responses_total{{verb=\"{verb}\",result=\"{result}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP taintcheck_controller_events_total Events written, by reason.\n\
             # TYPE taintcheck_controller_events_total counter"
        );
        for (reason, n) in &c.events {
            let reason = reason.replace(['\\', '"', '\n'], "_");
            let _ = writeln!(
                out,
                "taintcheck_controller_events_total{{reason=\"{reason}\"}} {n}"
            );
        }
        out
    }
}

fn verb_name(verb: RequestVerb) -> &'static str {
    match verb {
        RequestVerb::Get => "get",
        RequestVerb::GetNode => "get_node",
        RequestVerb::Patch => "patch",
        RequestVerb::Delete => "delete",
    }
}

fn result_name(result: ResponseResult) -> &'static str {
    match result {
        ResponseResult::Ok => "ok",
        ResponseResult::NotFound => "not_found",
        ResponseResult::PreconditionFailed => "precondition_failed",
        ResponseResult::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: u64, verb: RequestVerb) -> TraceEvent {
        TraceEvent::Request {
            id,
            verb,
            namespace: "ns".into(),
            name: "p".into(),
            uid: None,
            node: None,
            resource_version: None,
        }
    }

    fn response(id: u64, result: ResponseResult) -> TraceEvent {
        TraceEvent::Response {
            id,
            result,
            uid: None,
            resource_version: None,
        }
    }

    #[test]
    fn a_deletion_is_a_delete_answered_with_success() {
        let m = Metrics::new();
        m.take(&request(1, RequestVerb::Delete));
        m.take(&request(2, RequestVerb::Delete));
        m.take(&request(3, RequestVerb::Patch));
        m.take(&response(1, ResponseResult::Ok));
        m.take(&response(2, ResponseResult::NotFound));
        m.take(&response(3, ResponseResult::Ok));
        let text = m.render();
        assert!(
            text.contains("taint_eviction_controller_pod_deletions_total 1\n"),
            "{text}"
        );
        assert!(text.contains("taintcheck_controller_requests_total{verb=\"delete\"} 2\n"));
        assert!(text.contains(
            "taintcheck_controller_responses_total{verb=\"delete\",result=\"not_found\"} 1\n"
        ));
        assert!(text
            .contains("taintcheck_controller_responses_total{verb=\"patch\",result=\"ok\"} 1\n"));
    }
}
