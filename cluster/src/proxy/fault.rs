//! Failing requests (PROXY-10): a scenario's `failRequests` on a real API server. The proxy
//! answers the next N matching requests of the controller itself, as a failing API server (a
//! webhook's refusal, a 5xx) or a missing pod would, and never forwards them: the model's
//! failing requests (ENV `fail_next_call`), made to happen where nothing in the API server can.

use super::route::ObjectRef;
use std::sync::Mutex;
use taintcheck_core::api::PodKey;
use taintcheck_formats::trace::{RequestVerb, ResponseResult};

/// Failures armed and not yet used.
#[derive(Default)]
pub struct Faults(Mutex<Vec<Armed>>);

struct Armed {
    verb: RequestVerb,
    /// Only this pod's requests (in the run's names); `None`: any pod's.
    pod: Option<PodKey>,
    left: u32,
    result: ResponseResult,
}

impl Faults {
    /// The next `times` requests `verb` (of `pod`, or of any pod) fail with `result`.
    pub fn arm(&self, verb: RequestVerb, pod: Option<PodKey>, times: u32, result: ResponseResult) {
        let mut armed = self.0.lock().unwrap_or_else(|e| e.into_inner());
        armed.push(Armed {
            verb,
            pod,
            left: times,
            result,
        });
    }

    /// The answer a request gets instead of the API server's, if a failure is armed for it:
    /// its status code and body (a Kubernetes `Status`, as client-go reads errors).
    pub fn take(&self, verb: &str, object: Option<&ObjectRef>) -> Option<(u16, serde_json::Value)> {
        let object = object?;
        let request = match (verb, object.resource.as_str(), object.subresource.as_str()) {
            ("get", "pods", "") => RequestVerb::Get,
            ("get", "nodes", "") => RequestVerb::GetNode,
            ("patch", "pods", "" | "status") => RequestVerb::Patch,
            ("delete", "pods", "") => RequestVerb::Delete,
            _ => return None,
        };
        let mut armed = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = armed.iter().position(|a| {
            a.left > 0
                && a.verb == request
                && a.pod
                    .as_ref()
                    .is_none_or(|p| *p.namespace == object.namespace && *p.name == object.name)
        })?;
        armed[i].left -= 1;
        let result = armed[i].result;
        armed.retain(|a| a.left > 0);
        Some(answer(result, object))
    }
}

fn answer(result: ResponseResult, object: &ObjectRef) -> (u16, serde_json::Value) {
    let (code, reason, message) = match result {
        ResponseResult::NotFound => (
            404,
            "NotFound",
            format!("{} \"{}\" not found", object.resource, object.name),
        ),
        _ => (
            500,
            "InternalError",
            "Internal error occurred: failed by the scenario (taintcheck proxy)".to_string(),
        ),
    };
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {"name": object.name, "kind": object.resource},
        "code": code,
    });
    (code, status)
}
