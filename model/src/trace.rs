//! The observable trace: what an implementation of the taint manager did, one event per line
//! (NDJSON). The runtime writes it (`taintcheck run --trace`), the oracle reads it.
//!
//! Spec: TRACE-1..TRACE-6 in `specs/trace-format.md`. Objects are the compact types of
//! [`crate::api`], so a trace never depends on k8s-openapi. Times are milliseconds from an origin
//! the writer chooses (scenario start for the runtime, Unix epoch for recordings).

use crate::api::{Node, NodeName, Pod, PodKey, ResourceVersion, Uid};
use crate::core::{ApiResult, Verb};
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::fmt;

mod clock;

pub use clock::{Clock, Shown, Start};

/// The trace format version written in the header line. Spec: TRACE-1.
pub const TRACE_VERSION: u32 = 1;

/// One line of a trace: an instant and what happened then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Milliseconds; non-decreasing along the trace (TRACE-2).
    pub t: Time,
    #[serde(flatten)]
    pub event: TraceEvent,
}

/// What happened. Spec: TRACE-3 (API-visible changes), TRACE-4 (controller outputs),
/// TRACE-5 (optional controller-internal observations).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// First line of every trace.
    Header {
        version: u32,
        /// Who wrote it (`taintcheck-runtime`, `import`, another implementation's name).
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scenario: Option<String>,
        /// Which controller outputs the trace records (TRACE-7); absent: requests and events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observed: Option<Vec<Observed>>,
        /// The wall-clock instant `t = 0` stands for (TRACE-8); messages then speak RFC 3339.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<Start>,
        /// The trace claims nothing happened after its last line up to this `t` (TRACE-8): the
        /// end of a recording, the horizon `conform` checks deadlines up to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<Time>,
    },
    /// The API server stored a new node (`rv`: its resourceVersion).
    NodeAdded {
        rv: u64,
        node: Node,
    },
    NodeModified {
        rv: u64,
        node: Node,
    },
    NodeDeleted {
        rv: u64,
        name: NodeName,
    },
    PodAdded {
        rv: u64,
        pod: Pod,
    },
    /// `terminating`: the change set `metadata.deletionTimestamp` (a graceful DELETE).
    /// `disruption_target`: the pod's status has the taint manager's `DisruptionTarget`
    /// condition (set by its PATCH).
    PodModified {
        rv: u64,
        pod: Pod,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        terminating: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disruption_target: bool,
    },
    /// The pod object is gone from the API server (not merely terminating).
    PodDeleted {
        rv: u64,
        namespace: String,
        name: String,
        uid: Uid,
    },
    /// The controller sent a request (TRACE-4). `uid`: the UID the request carries as a
    /// precondition or, for a PATCH built from a GET, the UID it was built from; absent when the
    /// implementation does not know it.
    /// `namespace`/`name` is the pod the work is for; `node` names the node a `get_node` reads;
    /// `resource_version` is the pod's resourceVersion the request carries as a precondition.
    Request {
        id: u64,
        verb: RequestVerb,
        namespace: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<Uid>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeName>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_version: Option<ResourceVersion>,
    },
    /// The API server's answer to request `id`.
    Response {
        id: u64,
        result: ResponseResult,
        /// The UID of the pod the request found or acted on, when the server reports one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<Uid>,
        /// The pod's resourceVersion a `get` returned or a `patch` produced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_version: Option<ResourceVersion>,
    },
    /// An Event the controller recorded on a pod (TRACE-4).
    Event {
        namespace: String,
        name: String,
        reason: String,
        message: String,
    },
    /// The controller process restarted: every in-memory state is gone (TRACE-5).
    ControllerRestarted,
    /// A controller-internal note (a decision upstream logs). Optional; readers may ignore it.
    Note {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        text: String,
    },
}

/// A kind of controller output a trace records (TRACE-7). What a trace does not record, the
/// oracle treats as silent: it may have happened or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Observed {
    /// Every `request` the controller sends, with its `response`.
    Requests,
    /// Every `TaintManagerEviction` event the controller records.
    Events,
    /// Every pod deletion in the trace is the controller's (nobody else deletes pods): the first
    /// `pod_modified` with `terminating` or `pod_deleted` of a pod is its successful DELETE.
    Deletions,
}

/// The verbs the taint manager sends. `patch` is the `DisruptionTarget` status patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestVerb {
    Get,
    /// The fixed design's live read of the pod's node (`node` names it).
    GetNode,
    Patch,
    Delete,
}

impl From<&Verb> for RequestVerb {
    fn from(verb: &Verb) -> RequestVerb {
        match verb {
            Verb::Get => RequestVerb::Get,
            Verb::GetNode(_) => RequestVerb::GetNode,
            Verb::PatchDisruptionTarget => RequestVerb::Patch,
            Verb::Delete => RequestVerb::Delete,
        }
    }
}

impl fmt::Display for RequestVerb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RequestVerb::Get => "GET",
            RequestVerb::GetNode => "GET node",
            RequestVerb::Patch => "PATCH",
            RequestVerb::Delete => "DELETE",
        })
    }
}

/// How the API server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseResult {
    Ok,
    NotFound,
    /// A UID precondition did not hold (409 Conflict).
    PreconditionFailed,
    /// Any other error (webhook denial, 5xx, timeout).
    Failed,
}

impl From<&ApiResult> for ResponseResult {
    fn from(result: &ApiResult) -> ResponseResult {
        match result {
            ApiResult::Pod(_) | ApiResult::Node(_) | ApiResult::Patched(_) | ApiResult::Deleted => {
                ResponseResult::Ok
            }
            ApiResult::NotFound => ResponseResult::NotFound,
            ApiResult::PreconditionFailed => ResponseResult::PreconditionFailed,
            ApiResult::Failed => ResponseResult::Failed,
        }
    }
}

impl fmt::Display for ResponseResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResponseResult::Ok => "ok",
            ResponseResult::NotFound => "not found",
            ResponseResult::PreconditionFailed => "precondition failed",
            ResponseResult::Failed => "failed",
        })
    }
}

impl TraceEvent {
    /// The pod an event is about, if any.
    pub fn pod(&self) -> Option<PodKey> {
        match self {
            TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. } => {
                Some(pod.key.clone())
            }
            TraceEvent::PodDeleted {
                namespace, name, ..
            }
            | TraceEvent::Request {
                namespace, name, ..
            }
            | TraceEvent::Event {
                namespace, name, ..
            } => Some(PodKey::new(namespace, name)),
            _ => None,
        }
    }
}

impl fmt::Display for TraceEvent {
    /// One timeline line (without the time): who acted, then what happened.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Header {
                version, source, ..
            } => write!(f, "trace  v{version} from {source}"),
            TraceEvent::NodeAdded { node, .. } => {
                write!(f, "api    node {} added{}", node.name, taints(node))
            }
            TraceEvent::NodeModified { node, .. } => {
                write!(f, "api    node {} modified{}", node.name, taints(node))
            }
            TraceEvent::NodeDeleted { name, .. } => write!(f, "api    node {name} deleted"),
            TraceEvent::PodAdded { pod, .. } => {
                write!(f, "api    pod {} added{}", pod.key, pod_details(pod))
            }
            TraceEvent::PodModified {
                pod,
                terminating,
                disruption_target,
                ..
            } => {
                if *terminating {
                    write!(f, "api    pod {} terminating (uid {})", pod.key, pod.uid)
                } else if *disruption_target {
                    write!(
                        f,
                        "api    pod {} has DisruptionTarget{}",
                        pod.key,
                        pod_details(pod)
                    )
                } else {
                    write!(f, "api    pod {} modified{}", pod.key, pod_details(pod))
                }
            }
            TraceEvent::PodDeleted {
                namespace,
                name,
                uid,
                ..
            } => write!(f, "api    pod {namespace}/{name} deleted (uid {uid})"),
            TraceEvent::Request {
                id,
                verb,
                namespace,
                name,
                uid,
                node,
                resource_version,
            } => {
                match node {
                    Some(node) => write!(f, "ctrl   {verb} {node} for pod {namespace}/{name}")?,
                    None => write!(f, "ctrl   {verb} pod {namespace}/{name}")?,
                }
                write!(f, " (request #{id}")?;
                if let Some(uid) = uid {
                    write!(f, ", uid {uid}")?;
                }
                if let Some(rv) = resource_version {
                    write!(f, ", resourceVersion {rv}")?;
                }
                f.write_str(")")
            }
            TraceEvent::Response {
                id,
                result,
                uid,
                resource_version,
            } => {
                write!(f, "api    request #{id}: {result}")?;
                match (uid, resource_version) {
                    (Some(uid), Some(rv)) => write!(f, " (uid {uid}, resourceVersion {rv})"),
                    (Some(uid), None) => write!(f, " (uid {uid})"),
                    (None, Some(rv)) => write!(f, " (resourceVersion {rv})"),
                    (None, None) => Ok(()),
                }
            }
            TraceEvent::Event {
                reason, message, ..
            } => write!(f, "ctrl   event {reason}: {message}"),
            TraceEvent::ControllerRestarted => {
                f.write_str("ctrl   controller restarted: in-memory state lost")
            }
            TraceEvent::Note {
                namespace,
                name,
                text,
            } => match (namespace, name) {
                (Some(ns), Some(name)) => write!(f, "note   {ns}/{name}: {text}"),
                _ => write!(f, "note   {text}"),
            },
        }
    }
}

fn taints(node: &Node) -> String {
    let list: Vec<String> = node.taints.iter().map(ToString::to_string).collect();
    format!(" taints=[{}]", list.join(", "))
}

fn pod_details(pod: &Pod) -> String {
    let node = pod.node_name.as_deref().unwrap_or("<pending>");
    let tolerations: Vec<String> = pod
        .tolerations
        .iter()
        .map(|t| {
            let effect = t.effect.as_ref().map_or("", |e| e.as_str());
            let value = if t.value.is_empty() {
                String::new()
            } else {
                format!("={}", t.value)
            };
            let key = if t.key.is_empty() { "*" } else { &t.key };
            match t.seconds {
                Some(s) => format!("{key}{value}:{effect} {}({s}s)", t.operator.as_str()),
                None => format!("{key}{value}:{effect} {}", t.operator.as_str()),
            }
        })
        .collect();
    format!(
        " (uid {}) on {node} tolerations=[{}]",
        pod.uid,
        tolerations.join(", ")
    )
}

/// A trace line that could not be read. Spec: TRACE-6.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TraceError {
    #[error("{file}:{line}: {message}")]
    Unparsable {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}:{line}: t: time {t} is before the previous line's {previous}")]
    OutOfOrder {
        file: String,
        line: usize,
        t: Time,
        previous: Time,
    },
    #[error("{file}:{line}: kind: expected the header line first (\"kind\":\"header\")")]
    MissingHeader { file: String, line: usize },
    #[error(
        "{file}:{line}: version: unsupported trace version {version}: supported: {TRACE_VERSION}"
    )]
    UnsupportedVersion {
        file: String,
        line: usize,
        version: u32,
    },
}

/// Reads a whole NDJSON trace: the header first, then records in non-decreasing time.
/// Blank lines are skipped. `file` only names the source in errors.
pub fn parse_trace(file: &str, text: &str) -> Result<Vec<TraceRecord>, TraceError> {
    let mut reader = TraceReader::new(file);
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| reader.push_line(i + 1, line).transpose())
        .collect()
}

/// Incremental reader, for streams (`conform -`): feed lines one at a time.
#[derive(Clone, Debug)]
pub struct TraceReader {
    file: String,
    previous: Option<Time>,
}

impl TraceReader {
    pub fn new(file: &str) -> TraceReader {
        TraceReader {
            file: file.to_string(),
            previous: None,
        }
    }

    /// Parses line number `line` (1-based); `Ok(None)` for a blank line.
    pub fn push_line(
        &mut self,
        line: usize,
        text: &str,
    ) -> Result<Option<TraceRecord>, TraceError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let record: TraceRecord =
            serde_json::from_str(text).map_err(|e| TraceError::Unparsable {
                file: self.file.clone(),
                line,
                message: e.to_string(),
            })?;
        match (&record.event, self.previous) {
            (TraceEvent::Header { version, .. }, None) if *version != TRACE_VERSION => {
                return Err(TraceError::UnsupportedVersion {
                    file: self.file.clone(),
                    line,
                    version: *version,
                })
            }
            (TraceEvent::Header { .. }, None) => {}
            (_, None) => {
                return Err(TraceError::MissingHeader {
                    file: self.file.clone(),
                    line,
                })
            }
            (_, Some(previous)) if record.t < previous => {
                return Err(TraceError::OutOfOrder {
                    file: self.file.clone(),
                    line,
                    t: record.t,
                    previous,
                })
            }
            _ => {}
        }
        self.previous = Some(record.t);
        Ok(Some(record))
    }
}

/// Writes one record as a single JSON line (with the trailing newline).
pub fn to_line(record: &TraceRecord) -> String {
    let mut line = serde_json::to_string(record).expect("trace records always serialize");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> TraceRecord {
        TraceRecord {
            t: Time(0),
            event: TraceEvent::Header {
                version: TRACE_VERSION,
                source: "test".into(),
                profile: None,
                scenario: None,
                observed: None,
                start: None,
                end: None,
            },
        }
    }

    #[test]
    fn request_line_has_the_documented_shape() {
        let r = TraceRecord {
            t: Time(300_000),
            event: TraceEvent::Request {
                id: 3,
                verb: RequestVerb::Delete,
                namespace: "default".into(),
                name: "web-0".into(),
                uid: None,
                node: None,
                resource_version: None,
            },
        };
        assert_eq!(
            to_line(&r),
            "{\"t\":300000,\"kind\":\"request\",\"id\":3,\"verb\":\"delete\",\"namespace\":\"default\",\"name\":\"web-0\"}\n"
        );
    }

    #[test]
    fn round_trip_and_order_check() {
        let lines = [
            header(),
            TraceRecord {
                t: Time(5),
                event: TraceEvent::ControllerRestarted,
            },
        ]
        .iter()
        .map(to_line)
        .collect::<String>();
        let parsed = parse_trace("t.ndjson", &lines).unwrap();
        assert_eq!(parsed[1].event, TraceEvent::ControllerRestarted);

        let backwards = format!(
            "{}{}",
            lines, "{\"t\":4,\"kind\":\"controller_restarted\"}\n"
        );
        assert_eq!(
            parse_trace("t.ndjson", &backwards).unwrap_err().to_string(),
            "t.ndjson:3: t: time 0.004s is before the previous line's 0.005s"
        );
    }

    #[test]
    fn header_is_required_and_versioned() {
        let err = parse_trace("x", "{\"t\":0,\"kind\":\"controller_restarted\"}").unwrap_err();
        assert!(matches!(err, TraceError::MissingHeader { line: 1, .. }));
        let err = parse_trace(
            "x",
            "{\"t\":0,\"kind\":\"header\",\"version\":9,\"source\":\"s\"}",
        )
        .unwrap_err();
        assert!(matches!(
            err,
            TraceError::UnsupportedVersion { version: 9, .. }
        ));
        let err = parse_trace("x", "not json").unwrap_err();
        assert!(err.to_string().starts_with("x:1: "));
    }
}
