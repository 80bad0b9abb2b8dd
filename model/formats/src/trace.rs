//! The observable trace: what an implementation of the taint manager did, one event per line
//! (NDJSON). The runtime writes it (`taintcheck run --trace`), the oracle reads it.
//!
//! Spec: TRACE-1..TRACE-6 in `specs/trace-format.md`. Objects are the compact types of
//! [`taintcheck_core::api`], so a trace never depends on k8s-openapi. Times are milliseconds from an origin
//! the writer chooses (scenario start for the runtime, Unix epoch for recordings).

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fmt;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, ResourceVersion, Uid};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::Time;
use taintcheck_core::{ApiResult, Verb};

mod clock;
pub mod rate_limit;

pub use clock::{Clock, Shown, Start};

/// The trace format version written in the header line. Spec: TRACE-1.
pub const TRACE_VERSION: u32 = 1;

/// One line of a trace: an instant and what happened then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Milliseconds; non-decreasing along the trace (TRACE-2).
    pub t: Time,
    /// What happened (its `kind` and fields sit beside `t` on the line).
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
        /// The trace format's version ([`TRACE_VERSION`]).
        version: u32,
        /// Who wrote it (`taintcheck-runtime`, `import`, another implementation's name).
        source: String,
        /// The profile the writer ran, if it ran one (the oracle's default profile then).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
        /// The scenario the trace records, if any.
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
        /// The controller client's `--kube-api-qps` (TRACE-THROTTLE): with `burst`, the token
        /// bucket its requests waited on; absent: not rate limited.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        qps: Option<u32>,
        /// The controller client's `--kube-api-burst` (TRACE-THROTTLE), with `qps`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        burst: Option<u32>,
    },
    /// The API server stored a new node (`rv`: its resourceVersion).
    NodeAdded {
        /// The node's resourceVersion.
        rv: u64,
        /// The node as stored.
        node: Node,
    },
    /// The API server stored a change to a node.
    NodeModified {
        /// The node's new resourceVersion.
        rv: u64,
        /// The node as now stored.
        node: Node,
    },
    /// The API server deleted a node.
    NodeDeleted {
        /// The resourceVersion of the deletion.
        rv: u64,
        /// The node deleted.
        name: NodeName,
    },
    /// The API server stored a new pod.
    PodAdded {
        /// The pod's resourceVersion.
        rv: u64,
        /// The pod as stored.
        pod: Pod,
    },
    /// `terminating`: the change set `metadata.deletionTimestamp` (a graceful DELETE).
    /// `disruption_target`: the pod's status has the taint manager's `DisruptionTarget`
    /// condition (set by its PATCH).
    PodModified {
        /// The pod's new resourceVersion.
        rv: u64,
        /// The pod as now stored.
        pod: Pod,
        /// The change set `metadata.deletionTimestamp`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        terminating: bool,
        /// The status has the `DisruptionTarget` condition.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        disruption_target: bool,
    },
    /// The pod object is gone from the API server (not merely terminating).
    PodDeleted {
        /// The resourceVersion of the deletion.
        rv: u64,
        /// The pod's namespace.
        namespace: String,
        /// The pod's name.
        name: String,
        /// The incarnation deleted.
        uid: Uid,
    },
    /// The controller sent a request (TRACE-4). `uid`: the UID the request carries as a
    /// precondition or, for a PATCH built from a GET, the UID it was built from; absent when the
    /// implementation does not know it.
    /// `namespace`/`name` is the pod the work is for; `node` names the node a `get_node` reads;
    /// `resource_version` is the pod's resourceVersion the request carries as a precondition.
    Request {
        /// Numbers the request within the trace; its `response` carries the same id.
        id: u64,
        /// What it asks for.
        verb: RequestVerb,
        /// The pod's namespace.
        namespace: String,
        /// The pod's name.
        name: String,
        /// The UID precondition, or the UID a PATCH was built from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uid: Option<Uid>,
        /// The node a `get_node` reads.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeName>,
        /// The resourceVersion precondition.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource_version: Option<ResourceVersion>,
    },
    /// The API server's answer to request `id`.
    Response {
        /// The request answered.
        id: u64,
        /// How it was answered.
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
        /// The pod's namespace.
        namespace: String,
        /// The pod's name.
        name: String,
        /// The Event's reason (`TaintManagerEviction`).
        reason: String,
        /// The Event's message (`Marking for deletion Pod ns/name`, `Cancelling deletion ...`).
        message: String,
    },
    /// The controller process restarted: every in-memory state is gone (TRACE-5).
    ControllerRestarted,
    /// A controller-internal note (a decision upstream logs). Optional; readers may ignore it.
    Note {
        /// The namespace of the pod it is about, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// The name of the pod it is about, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// What the controller decided, in words.
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
    /// A read of the pod.
    Get,
    /// The fixed design's live read of the pod's node (`node` names it).
    GetNode,
    /// The status patch adding the `DisruptionTarget` condition.
    Patch,
    /// The pod's deletion.
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
    /// Success.
    Ok,
    /// No such pod (or node) (404).
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
    /// A header's client rate limit (TRACE-THROTTLE); `None` for any other line, a header
    /// without one, or one the reader refuses.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        match self {
            TraceEvent::Header { qps, burst, .. } => rate_limit::read(*qps, *burst).ok().flatten(),
            _ => None,
        }
    }

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
    /// The line is not a trace record (bad JSON, an unknown kind, a missing field).
    #[error("{file}:{line}: {message}")]
    Unparsable {
        /// The trace's name.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What the JSON reader said.
        message: String,
    },
    /// Time went backwards (TRACE-2).
    #[error("{file}:{line}: t: time {t} is before the previous line's {previous}")]
    OutOfOrder {
        /// The trace's name.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// The line's time.
        t: Time,
        /// The previous line's time.
        previous: Time,
    },
    /// The first line is not a header.
    #[error("{file}:{line}: kind: expected the header line first (\"kind\":\"header\")")]
    MissingHeader {
        /// The trace's name.
        file: String,
        /// The line number, from 1.
        line: usize,
    },
    /// The header names a format version this reader does not know.
    #[error(
        "{file}:{line}: version: unsupported trace version {version}: supported: {TRACE_VERSION}"
    )]
    UnsupportedVersion {
        /// The trace's name.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// The version the header names.
        version: u32,
    },
    /// A header field that is present but wrong (TRACE-THROTTLE).
    #[error("{file}:{line}: {message}")]
    Header {
        /// The trace's name.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// The field and what is wrong with it.
        message: String,
    },
    #[error(
        "{file}:{line}: id: Duplicate value: {id}: request ids are unique in a trace (TRACE-4)"
    )]
    /// A request id that an earlier request of the trace already has.
    DuplicateRequest {
        /// The trace file as the user named it.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// The id used twice.
        id: u64,
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
    /// Every request id so far (TRACE-4: unique in the trace).
    requests: HashSet<u64, FxBuild>,
}

impl TraceReader {
    /// A reader expecting a header first; `file` names the source in errors.
    pub fn new(file: &str) -> TraceReader {
        TraceReader {
            file: file.to_string(),
            previous: None,
            requests: HashSet::default(),
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
        let record = decode(text).map_err(|e| TraceError::Unparsable {
            file: self.file.clone(),
            line,
            message: json_message(&e),
        })?;
        match (&record.event, self.previous) {
            (TraceEvent::Header { version, .. }, None) if *version != TRACE_VERSION => {
                return Err(TraceError::UnsupportedVersion {
                    file: self.file.clone(),
                    line,
                    version: *version,
                })
            }
            (TraceEvent::Header { qps, burst, .. }, None) => {
                rate_limit::read(*qps, *burst).map_err(|message| TraceError::Header {
                    file: self.file.clone(),
                    line,
                    message,
                })?;
            }
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
            (TraceEvent::Request { id, .. }, _) if !self.requests.insert(*id) => {
                return Err(TraceError::DuplicateRequest {
                    file: self.file.clone(),
                    line,
                    id: *id,
                })
            }
            _ => {}
        }
        self.previous = Some(record.t);
        Ok(Some(record))
    }
}

/// Decodes one line with [`TraceRecord`]'s derived decoder. Writers put `t` first; such a line
/// is decoded in one pass, the event's fields straight from the text, where the derived decoder
/// of the whole record first copies every field but `t` aside (`flatten`) before the event's
/// own decoder copies them again to find `kind`. A line the one pass does not take (another
/// key first, an escaped key) or rejects is decoded by the derived decoder, whose record or
/// message is the answer.
fn decode(text: &str) -> serde_json::Result<TraceRecord> {
    let mut json = serde_json::Deserializer::from_str(text);
    match json
        .deserialize_map(TFirst)
        .and_then(|record| json.end().map(|()| record))
    {
        Ok(record) => Ok(record),
        Err(_) => serde_json::from_str(text),
    }
}

/// Reads `t`, then hands the rest of the object to [`TraceEvent`]'s derived decoder.
struct TFirst;

impl<'de> Visitor<'de> for TFirst {
    type Value = TraceRecord;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TraceRecord, A::Error> {
        if map.next_key::<&str>()? != Some("t") {
            return Err(de::Error::custom("`t` is not the first key"));
        }
        let t = map.next_value()?;
        let event = TraceEvent::deserialize(MapAccessDeserializer::new(NoSecondT(map)))?;
        Ok(TraceRecord { t, event })
    }
}

/// The keys after `t`, refusing another `t`: the derived decoder's duplicate-field error,
/// which the event's decoder, ignoring unknown keys, would not give. Keys are read unescaped
/// (borrowed from the line), so an escaped key is refused too.
struct NoSecondT<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for NoSecondT<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.0.next_key::<&str>()? {
            None => Ok(None),
            Some("t") => Err(de::Error::custom("a second `t`")),
            Some(key) => seed
                .deserialize(BorrowedStrDeserializer::new(key))
                .map(Some),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }
}

/// serde's message without its own "at line 1 column N" (the line is the trace's, given
/// before): the column instead, and a value it quotes shortened.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text);
    format!(
        "{} (column {})",
        crate::limits::shorten_message(message),
        e.column()
    )
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
                qps: None,
                burst: None,
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

    /// TRACE-THROTTLE: the header's `qps`/`burst` round-trip and give the rate limit; half a
    /// limit is refused at the header's line; a header without them has none.
    #[test]
    fn the_header_carries_the_clients_rate_limit() {
        let mut limited = header();
        if let TraceEvent::Header { qps, burst, .. } = &mut limited.event {
            (*qps, *burst) = (Some(5), Some(3));
        }
        let line = to_line(&limited);
        assert!(line.contains(r#""qps":5,"burst":3"#), "{line}");
        let parsed = parse_trace("t", &line).unwrap();
        assert_eq!(parsed[0].event.rate_limit(), RateLimit::qps(5, 3));
        assert_eq!(header().event.rate_limit(), None);
        assert!(!to_line(&header()).contains("qps"));
        let half = line.replace(r#","burst":3"#, "");
        assert_eq!(
            parse_trace("t", &half).unwrap_err().to_string(),
            "t:1: burst: Required value: a header with qps has burst too"
        );
    }

    #[test]
    fn a_line_decodes_as_the_derived_decoder_decodes_it() {
        let written = [
            to_line(&header()),
            r#"{"t":3,"kind":"node_added","rv":1,"node":{"name":"n","taints":[]}}"#.into(),
            r#"{"t":3,"kind":"request","id":4,"verb":"get","namespace":"d","name":"p"}"#.into(),
            r#"{"t":3,"kind":"response","id":4,"result":"ok","uid":"u","resource_version":7}"#
                .into(),
            r#"{"t":3,"kind":"controller_restarted"}"#.into(),
            r#"{"t":3,"text":"kind after the fields","kind":"note"}"#.into(),
        ];
        for line in &written {
            let line = line.trim_end();
            let mut json = serde_json::Deserializer::from_str(line);
            let one_pass = json.deserialize_map(TFirst).expect("decoded in one pass");
            assert_eq!(one_pass, serde_json::from_str::<TraceRecord>(line).unwrap());
        }
        // Lines the one pass leaves to the derived decoder or rejects: the same answer.
        let odd = [
            r#"{"t":1,"kind":"note","text":"a","t":2}"#,
            r#"{"t":1,"kind":"note","text":"a","\u0074":2}"#,
            r#"{"kind":"note","t":1,"text":"a"}"#,
            r#"{"t":1,"kind":"note","kind":"note","text":"a"}"#,
            r#"{"t":1,"kind":"pod_added","rv":"x"}"#,
            r#"{"t":1,"kind":"bogus"}"#,
            r#"{"t":1,"kind":"note","text":"a"} x"#,
            r#"{"t":"1","kind":"note","text":"a"}"#,
            r#"{"t":1}"#,
        ];
        for line in odd {
            let shown = |r: serde_json::Result<TraceRecord>| r.map_err(|e| e.to_string());
            let derived = shown(serde_json::from_str::<TraceRecord>(line));
            assert!(derived.is_err() || line.starts_with(r#"{"kind""#), "{line}");
            assert_eq!(shown(decode(line)), derived, "{line}");
        }
    }
}
