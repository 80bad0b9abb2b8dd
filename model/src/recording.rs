//! Real-cluster recordings into traces (`taintcheck import`): what `kubectl get pods,nodes -A
//! --watch --output-watch-events -o json` and `kubectl get events -A --watch -o json` print,
//! turned into the trace format (TRACE-*), with times taken from the objects. Spec: IMPORT-1..4
//! in `specs/oracle.md`.
//!
//! A cluster shows the controller's events, not its requests, so the trace header says
//! `"observed":["events"]` (TRACE-7). Object times have one-second precision at best; an API
//! change is dated to the start of its second and an event to the end of its second, so a
//! recorded output is never earlier than it happened and `--latency-bound-ms` should allow one
//! second more than the controller's real latency (IMPORT-3).

use crate::api::{Node, NodeName, Pod, PodKey};
use crate::core::EVENT_REASON;
use crate::manifest::convert::{node_from_k8s, pod_from_k8s};
use crate::time::Time;
use crate::trace::{Observed, TraceEvent, TraceRecord, TRACE_VERSION};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeMap;

/// A recording that could not be read: `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RecordingError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Why a recorded value made no trace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// A watch event other than ADDED, MODIFIED or DELETED (BOOKMARK, ERROR).
    WatchEventType,
    /// An object neither Pod, Node nor Event.
    OtherKind,
    /// The deletion of an object the recording never showed.
    UnseenDeletion,
    /// A change to nothing taint eviction reads.
    Unchanged,
    /// An event other than `TaintManagerEviction` on a pod.
    OtherEvent,
    /// A `TaintManagerEviction` event without a timestamp.
    EventWithoutTime,
    /// An event whose count adds no occurrence already turned into lines.
    EventRepeated,
}

/// A trace and what was left out of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub trace: Vec<TraceRecord>,
    pub skipped: BTreeMap<Skip, usize>,
}

/// Converts recordings (each a stream of JSON values: watch events `{"type","object"}`, bare
/// objects, or `List`s) into one trace, sorted by time. Objects of other kinds, bookmarks and
/// watch errors are skipped; so are changes that do not alter what taint eviction reads.
pub fn import(files: &[(&str, &str)]) -> Result<Vec<TraceRecord>, RecordingError> {
    import_counting(files).map(|i| i.trace)
}

/// [`import`], counting the values skipped per reason.
pub fn import_counting(files: &[(&str, &str)]) -> Result<Import, RecordingError> {
    let mut r = Importer::default();
    for (file, text) in files {
        let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        let mut offset = 0;
        for value in stream.into_offsets() {
            let (value, end) = value.map_err(|e| RecordingError {
                file: file.to_string(),
                line: e.line(),
                message: format!("invalid JSON: {e}"),
            })?;
            let line = 1 + text[..offset.min(text.len())]
                .bytes()
                .filter(|b| *b == b'\n')
                .count();
            let start = text[offset..end]
                .find(|c: char| !c.is_whitespace())
                .map_or(line, |skip| {
                    line + text[offset..offset + skip]
                        .bytes()
                        .filter(|b| *b == b'\n')
                        .count()
                });
            offset = end;
            r.value(file, start, &value)?;
        }
    }
    let mut out = vec![TraceRecord {
        t: r.lines.first().map_or(Time::ZERO, |l| l.0),
        event: TraceEvent::Header {
            version: TRACE_VERSION,
            source: "kubectl".into(),
            profile: None,
            scenario: None,
            observed: Some(vec![Observed::Events]),
        },
    }];
    r.lines.sort_by_key(|(t, seq, _)| (*t, *seq));
    if let Some(first) = r.lines.first() {
        out[0].t = first.0;
    }
    out.extend(
        r.lines
            .into_iter()
            .map(|(t, _, event)| TraceRecord { t, event }),
    );
    Ok(Import {
        trace: out,
        skipped: r.skipped,
    })
}

/// Offsets of each value's end in the stream (serde_json's iterator only says where it is).
trait IntoOffsets: Sized {
    fn into_offsets(self) -> Offsets<Self>;
}

struct Offsets<I>(I);

impl<'de, R: serde_json::de::Read<'de>> IntoOffsets
    for serde_json::StreamDeserializer<'de, R, Value>
{
    fn into_offsets(self) -> Offsets<Self> {
        Offsets(self)
    }
}

impl<'de, R: serde_json::de::Read<'de>> Iterator
    for Offsets<serde_json::StreamDeserializer<'de, R, Value>>
{
    type Item = Result<(Value, usize), serde_json::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let value = self.0.next()?;
        Some(value.map(|v| (v, self.0.byte_offset())))
    }
}

#[derive(Default)]
struct Importer {
    lines: Vec<(Time, usize, TraceEvent)>,
    nodes: BTreeMap<NodeName, Node>,
    /// Per pod: the object, whether it is terminating, whether it has `DisruptionTarget`.
    pods: BTreeMap<PodKey, (Pod, bool, bool)>,
    /// Events seen, by namespace/name, with the count already turned into lines.
    events: BTreeMap<(String, String), i32>,
    /// The last time of an object line (a fallback when an object carries no time).
    last: Time,
    skipped: BTreeMap<Skip, usize>,
}

impl Importer {
    fn skip(&mut self, why: Skip) {
        *self.skipped.entry(why).or_default() += 1;
    }

    fn push(&mut self, t: Time, event: TraceEvent) {
        let seq = self.lines.len();
        self.lines.push((t, seq, event));
    }

    fn value(&mut self, file: &str, line: usize, v: &Value) -> Result<(), RecordingError> {
        let err = |message: String| RecordingError {
            file: file.to_string(),
            line,
            message,
        };
        if let (Some(kind), Some(object)) = (v.get("type").and_then(Value::as_str), v.get("object"))
        {
            return match kind {
                "ADDED" | "MODIFIED" | "DELETED" => self.object(kind, object).map_err(err),
                _ => {
                    self.skip(Skip::WatchEventType);
                    Ok(())
                }
            };
        }
        match v.get("kind").and_then(Value::as_str) {
            Some("List") | Some("PodList") | Some("NodeList") | Some("EventList") => {
                for item in v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.object("ADDED", item).map_err(err)?;
                }
                Ok(())
            }
            _ => self.object("ADDED", v).map_err(err),
        }
    }

    fn object(&mut self, change: &str, v: &Value) -> Result<(), String> {
        match v.get("kind").and_then(Value::as_str) {
            Some("Node") => {
                let node: k8s::Node = parse(v, "Node")?;
                self.node(change, &node);
            }
            Some("Pod") => {
                let pod: k8s::Pod = parse(v, "Pod")?;
                self.pod(change, &pod);
            }
            Some("Event") => self.event(v),
            _ => self.skip(Skip::OtherKind),
        }
        Ok(())
    }

    fn node(&mut self, change: &str, n: &k8s::Node) {
        let node = node_from_k8s(n);
        let rv = resource_version(&n.metadata);
        if change == "DELETED" {
            if self.nodes.remove(&node.name).is_some() {
                let t = deletion_time(&n.metadata)
                    .unwrap_or(self.last)
                    .max(self.last);
                self.push(
                    t,
                    TraceEvent::NodeDeleted {
                        rv,
                        name: node.name,
                    },
                );
            } else {
                self.skip(Skip::UnseenDeletion);
            }
            return;
        }
        let old = self.nodes.insert(node.name.clone(), node.clone());
        if old.as_ref() == Some(&node) {
            self.skip(Skip::Unchanged);
            return;
        }
        // The taints' writers date the change; a new taint's timeAdded is the best evidence.
        let added = node
            .taints
            .iter()
            .filter(|t| !old.as_ref().is_some_and(|o| o.taints.contains(t)))
            .filter_map(|t| t.time_added)
            .max();
        let t = added
            .or_else(|| write_time(&n.metadata, Some("f:taints")))
            .or_else(|| write_time(&n.metadata, None))
            .unwrap_or(self.last);
        self.last = self.last.max(t);
        let event = match old {
            None => TraceEvent::NodeAdded { rv, node },
            Some(_) => TraceEvent::NodeModified { rv, node },
        };
        self.push(t, event);
    }

    fn pod(&mut self, change: &str, p: &k8s::Pod) {
        let pod = pod_from_k8s(p);
        let rv = resource_version(&p.metadata);
        let key = pod.key.clone();
        if change == "DELETED" {
            if self.pods.remove(&key).is_some() {
                let t = deletion_time(&p.metadata)
                    .unwrap_or(self.last)
                    .max(self.last);
                self.push(
                    t,
                    TraceEvent::PodDeleted {
                        rv,
                        namespace: key.namespace.to_string(),
                        name: key.name.to_string(),
                        uid: pod.uid,
                    },
                );
            } else {
                self.skip(Skip::UnseenDeletion);
            }
            return;
        }
        let terminating = p.metadata.deletion_timestamp.is_some();
        let disruption_target = has_disruption_target(p);
        let old = self
            .pods
            .insert(key.clone(), (pod.clone(), terminating, disruption_target));
        let event = match &old {
            None => TraceEvent::PodAdded { rv, pod },
            Some((o, _, _)) if o.uid != pod.uid => {
                // A same-name successor whose predecessor's deletion the watch did not show.
                let t = self.last;
                self.push(
                    t,
                    TraceEvent::PodDeleted {
                        rv,
                        namespace: key.namespace.to_string(),
                        name: key.name.to_string(),
                        uid: o.uid.clone(),
                    },
                );
                TraceEvent::PodAdded { rv, pod }
            }
            Some((o, was, had))
                if *o == pod && *was == terminating && *had == disruption_target =>
            {
                self.skip(Skip::Unchanged);
                return;
            }
            Some((_, was, _)) => TraceEvent::PodModified {
                rv,
                pod,
                terminating: terminating && !was,
                disruption_target,
            },
        };
        let t = match &event {
            // A graceful DELETE sets deletionTimestamp to its own instant plus the grace period.
            TraceEvent::PodModified {
                terminating: true, ..
            } => delete_request_time(&p.metadata),
            _ => None,
        };
        let t = t
            .or_else(|| write_time(&p.metadata, Some("f:spec")))
            .or_else(|| write_time(&p.metadata, None))
            .or_else(|| meta_time(p.metadata.creation_timestamp.as_ref()))
            .unwrap_or(self.last);
        self.last = self.last.max(t);
        self.push(t, event);
    }

    /// A `TaintManagerEviction` event on a pod: one trace line per occurrence the count adds,
    /// dated to the end of its (second-precision) timestamp.
    fn event(&mut self, v: &Value) {
        let s = |path: &[&str]| -> Option<&str> {
            path.iter()
                .try_fold(v, |v, k| v.get(*k))
                .and_then(Value::as_str)
        };
        if s(&["reason"]) != Some(EVENT_REASON) {
            self.skip(Skip::OtherEvent);
            return;
        }
        let object = if v.get("involvedObject").is_some() {
            "involvedObject"
        } else {
            "regarding"
        };
        let (Some("Pod"), Some(namespace), Some(name)) = (
            s(&[object, "kind"]),
            s(&[object, "namespace"]),
            s(&[object, "name"]),
        ) else {
            self.skip(Skip::OtherEvent);
            return;
        };
        let message = s(&["message"]).or_else(|| s(&["note"])).unwrap_or("");
        let id = (
            s(&["metadata", "namespace"]).unwrap_or("").to_string(),
            s(&["metadata", "name"]).unwrap_or("").to_string(),
        );
        let count = v
            .get("count")
            .and_then(Value::as_i64)
            .or_else(|| v.pointer("/series/count").and_then(Value::as_i64))
            .unwrap_or(1)
            .max(1) as i32;
        let seen = self.events.insert(id, count).unwrap_or(0);
        let precise = s(&["eventTime"]).and_then(timestamp);
        let t = precise.or_else(|| {
            s(&["lastTimestamp"])
                .or_else(|| s(&["deprecatedLastTimestamp"]))
                .or_else(|| s(&["firstTimestamp"]))
                .and_then(timestamp)
                .map(|t| Time(t.millis() + 999))
        });
        let Some(t) = t else {
            self.skip(Skip::EventWithoutTime);
            return;
        };
        if seen >= count {
            self.skip(Skip::EventRepeated);
        }
        for _ in seen..count {
            self.push(
                t,
                TraceEvent::Event {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    reason: EVENT_REASON.to_string(),
                    message: message.to_string(),
                },
            );
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value, kind: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        format!("{kind}: {path}: {}", e.into_inner())
    })
}

fn timestamp(s: &str) -> Option<Time> {
    s.parse::<Timestamp>()
        .ok()
        .map(|t| Time(t.as_millisecond()))
}

fn meta_time(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Time> {
    t.map(|t| Time(t.0.as_millisecond()))
}

fn resource_version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// The latest write by a field manager, optionally only managers whose fields mention `field`.
fn write_time(meta: &ObjectMeta, field: Option<&str>) -> Option<Time> {
    meta.managed_fields
        .as_deref()?
        .iter()
        .filter(|m| {
            field.is_none_or(|f| {
                m.fields_v1
                    .as_ref()
                    .is_some_and(|v| v.0.to_string().contains(f))
            })
        })
        .filter_map(|m| meta_time(m.time.as_ref()))
        .max()
}

fn deletion_time(meta: &ObjectMeta) -> Option<Time> {
    meta_time(meta.deletion_timestamp.as_ref())
}

/// When the DELETE that made a pod terminate was served: `deletionTimestamp` minus the grace.
fn delete_request_time(meta: &ObjectMeta) -> Option<Time> {
    let at = deletion_time(meta)?;
    let grace = meta.deletion_grace_period_seconds.unwrap_or(0);
    Some(Time(at.millis() - grace * 1000))
}

/// The pod's status has `DisruptionTarget=True` (the taint manager's PATCH, or another
/// disruption's: the controller's GET sees either the same way).
fn has_disruption_target(p: &k8s::Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "DisruptionTarget" && c.status == "True")
        })
}

#[cfg(test)]
mod tests;
