//! Real-cluster recordings into traces (`taintcheck import`). Spec: IMPORT-1..9 in
//! `specs/import.md`.
//!
//! Two sources, given in any mix: kubectl watch recordings (`kubectl get pods -A --watch
//! --output-watch-events -o json`, likewise nodes and events) and the API server's audit log
//! (`audit.k8s.io/v1` events, one per line). Both become *changes* (an object as stored at a
//! resourceVersion) and *controller outputs* (events, and from the audit log the controller's own
//! requests). Changes seen by both sources are merged by resourceVersion, ordered by it (the
//! order the API server stored them, the order a watch delivers them), and dated by the most
//! precise source: the audit log's microsecond `stageTimestamp`, else the object's own
//! second-precision times. The trace's `t` counts milliseconds from the header's `start`
//! (TRACE-8), so every message about it can speak wall-clock time.

mod audit;
mod changes;
mod events;
mod input;
mod kubectl;
mod node_reads;
mod proxy;

use crate::trace::{Observed, Start, TraceEvent, TraceRecord, TRACE_VERSION};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::jiff::Timestamp;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use taintcheck_core::time::Time;

pub use input::HOW_TO_RECORD;
pub use proxy::VERSION as PROXY_VERSION;

/// The taint eviction controller's audit user names: the node lifecycle controller's service
/// account, whose client kube-controller-manager gives it in every release, and its own
/// controller's name since 1.29, which a fork may use. Spec: IMPORT-5.
pub const CONTROLLER_USERS: [&str; 2] = [
    "system:serviceaccount:kube-system:taint-eviction-controller",
    "system:serviceaccount:kube-system:node-controller",
];

/// At most this many `event` lines for one observation of an Event, however much its `count`
/// grew: a hostile or corrupt `count` must not cost unbounded memory. Spec: IMPORT-3.
pub const MAX_EVENT_OCCURRENCES: i64 = 100;

/// A recording that could not be read: `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RecordingError {
    /// The file as the user named it.
    pub file: String,
    /// The 1-based line the offending value starts on.
    pub line: usize,
    /// `field.path: what is wrong`.
    pub message: String,
}

/// Why a recorded value made no trace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// A watch event other than ADDED, MODIFIED or DELETED (BOOKMARK, ERROR).
    WatchEventType,
    /// An object or an audit entry about something other than pods, nodes and events.
    OtherKind,
    /// A change to nothing taint eviction reads.
    Unchanged,
    /// The same change (kind, name, resourceVersion) from a second source or a second time.
    Duplicate,
    /// An event other than `TaintManagerEviction` on a pod.
    OtherEvent,
    /// A `TaintManagerEviction` event without a timestamp.
    EventWithoutTime,
    /// An event whose count adds no occurrence already turned into lines.
    EventRepeated,
    /// Occurrences beyond [`MAX_EVENT_OCCURRENCES`] in one observation of an event.
    EventOccurrencesCapped,
    /// An audit entry of another stage than `ResponseComplete`.
    AuditStage,
    /// An audit entry of a read (get, list, watch) by someone other than the controller: no
    /// change (its response may still show an object first, IMPORT-9).
    Read,
    /// An audit entry of a write whose object it does not carry (level Metadata or Request, or
    /// a response that is a Status): what changed cannot be known from it.
    NoObject,
    /// A write that failed (the API server stored nothing).
    FailedWrite,
    /// A request of the controller that is not one of its GET, PATCH (status) or DELETE of a
    /// pod, nor a write (its informers' list and watch; a list may still show a pod first).
    OtherRequest,
    /// A line of the proxy's log saying it met bad input or a failure and closed a
    /// connection (PROXY-4): what the stream would have shown after it is not known.
    ProxyError,
    /// A line of the proxy's log saying it held a watch event back (PROXY-8): the event itself
    /// is in the log, at the instant the controller received it.
    Steered,
}

impl Skip {
    /// Whether skipping loses something the trace should have had (`--strict` fails on these);
    /// the others are what a whole-cluster recording is expected to contain.
    pub fn loses_information(self) -> bool {
        matches!(
            self,
            Skip::EventWithoutTime
                | Skip::EventOccurrencesCapped
                | Skip::NoObject
                | Skip::ProxyError
        )
    }
}

/// How to import.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Audit user names whose pod requests are the controller's (default [`CONTROLLER_USERS`]).
    pub controller_users: BTreeSet<String>,
    /// The end of the recording, when the user knows it better than its last entry.
    pub end: Option<Timestamp>,
    /// What the trace claims to observe, instead of what was given (TRACE-7).
    pub observed: Option<Vec<Observed>>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            controller_users: CONTROLLER_USERS.iter().map(|u| u.to_string()).collect(),
            end: None,
            observed: None,
        }
    }
}

/// A trace and what was left out of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The header, then the lines in trace order.
    pub trace: Vec<TraceRecord>,
    /// Values skipped, per reason.
    pub skipped: BTreeMap<Skip, usize>,
}

/// Converts recordings (`(file name, text)`) into one trace with the default [`Settings`].
pub fn import(files: &[(&str, &str)]) -> Result<Vec<TraceRecord>, RecordingError> {
    let readers = files.iter().map(|(file, text)| (*file, text.as_bytes()));
    import_with(readers, &Settings::default()).map(|i| i.trace)
}

/// Converts recordings (`(file name, reader)`; each a kubectl watch recording or an audit log,
/// told apart per value, read line by line) into one trace, counting what was skipped.
pub fn import_with<'a, R: BufRead>(
    files: impl IntoIterator<Item = (&'a str, R)>,
    settings: &Settings,
) -> Result<Import, RecordingError> {
    let mut c = Collected::default();
    for (file, reader) in files {
        let mut watch = kubectl::Watch::default();
        for value in input::values(file, reader) {
            let (line, value) = value?;
            let err = |message: String| RecordingError {
                file: file.to_string(),
                line,
                message,
            };
            if proxy::is_proxy(&value) {
                proxy::line(&mut c, &value).map_err(err)?;
            } else if audit::is_audit(&value) {
                audit::entry(&mut c, settings, &value).map_err(err)?;
            } else {
                c.kubectl_given = true;
                watch.value(&mut c, &value).map_err(err)?;
            }
        }
    }
    Ok(c.finish(settings))
}

/// An object as the API server stored it at one resourceVersion.
pub(crate) enum Object {
    Node(Box<k8s::Node>),
    Pod(Box<k8s::Pod>),
}

impl Object {
    /// Kind, namespace and name: which object this is.
    fn key(&self) -> (char, &str, &str) {
        let (kind, meta) = match self {
            Object::Node(n) => ('n', &n.metadata),
            Object::Pod(p) => ('p', &p.metadata),
        };
        (
            kind,
            meta.namespace.as_deref().unwrap_or(""),
            meta.name.as_deref().unwrap_or(""),
        )
    }

    fn resource_version(&self) -> u64 {
        let meta = match self {
            Object::Node(n) => &n.metadata,
            Object::Pod(p) => &p.metadata,
        };
        meta.resource_version
            .as_deref()
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0)
    }
}

/// One source's view of a change.
pub(crate) struct Change {
    pub object: Object,
    /// The object is gone (a watch DELETED, a DELETE that removed it).
    pub gone: bool,
    /// How the source came to show the object: what its first sighting says (IMPORT-9).
    pub seen: Seen,
    /// The API server's own instant of the change (audit `stageTimestamp`), when known.
    pub at: Option<Stamp>,
}

/// How a source showed an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Its creation: an audit `create`, a watch's ADDED, an object of `kubectl get -o json`.
    Created,
    /// A change to an object that existed before: an update, patch (of the object or its
    /// status) or DELETE in the audit log, a watch's MODIFIED or DELETED.
    Changed,
    /// A read (an audit `get` or `list` response): no change, only the object as stored.
    Read,
}

/// An instant as precise as its source gave it: Unix milliseconds (a trace's unit) and the
/// microseconds within that millisecond (0 when the source is coarser). Audit logs date to the
/// microsecond, so lines inside one millisecond keep the order they happened in: the answer to
/// a PATCH before the DELETE the controller sent after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Stamp {
    pub t: Time,
    pub micros: u16,
}

impl From<Time> for Stamp {
    fn from(t: Time) -> Stamp {
        Stamp { t, micros: 0 }
    }
}

/// Where a line goes among lines of the same instant: a request before the change it causes,
/// the response after it, events last (they are recorded asynchronously).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    Request,
    Change,
    Response,
    Event,
}

/// What the readers collect from every file, before it is ordered into a trace.
#[derive(Default)]
pub(crate) struct Collected {
    pub changes: Vec<Change>,
    /// The highest resourceVersion an audit entry has shown so far (a deletion logged without
    /// one comes after it).
    pub max_version: u64,
    /// Controller outputs, with their instants (Unix milliseconds).
    pub outputs: Vec<(Stamp, Rank, TraceEvent)>,
    pub skipped: BTreeMap<Skip, usize>,
    /// The latest instant any entry showed (the end of the recording).
    pub latest: Option<Time>,
    /// An Event object was read: the recording shows events.
    pub events_given: bool,
    /// An audit entry of the controller's was read: the recording shows its requests.
    pub requests_given: bool,
    /// A kubectl recording (not an audit entry) was read.
    pub kubectl_given: bool,
    /// A line of the proxy's log was read.
    pub proxy_given: bool,
    pub events: events::Counts,
    /// Per Event object, the indices in `outputs` of the lines made from it.
    pub event_lines: BTreeMap<(String, String), Vec<usize>>,
    /// Per Event object, the audit log's writes of it (create, patch, update, answered or not):
    /// the count each wrote and when it was received (IMPORT-3).
    pub event_writes: events::Writes,
    /// Audit IDs seen (an entry given twice is one request).
    pub audit_ids: BTreeSet<String>,
    /// Per pod (namespace, name), the instants of its successful `pods/binding` creates, oldest
    /// first: they date the change that first shows the pod on its node (IMPORT-2).
    pub binds: BTreeMap<(String, String), Vec<Stamp>>,
    /// Per node, the controller's GETs of pods answered with the pod on it (when answered, the
    /// pod's namespace and name) (IMPORT-5).
    pub node_reads: BTreeMap<String, Vec<(Stamp, String, String)>>,
    /// The controller's GETs of nodes, their pod not named yet (IMPORT-5).
    pub node_gets: Vec<node_reads::NodeGet>,
    pub next_request: u64,
}

impl Collected {
    pub fn skip(&mut self, why: Skip) {
        *self.skipped.entry(why).or_default() += 1;
    }

    pub fn saw(&mut self, t: Time) {
        self.latest = Some(self.latest.map_or(t, |l| l.max(t)));
    }

    /// Merges, orders and dates everything into the trace.
    fn finish(mut self, settings: &Settings) -> Import {
        events::bound_by_writes(&mut self);
        // After the events: it drops lines, and `event_lines` indexes them.
        node_reads::attribute(&mut self);
        let changes = self.merged_changes();
        let mut objects = changes::Objects::default();
        for change in changes {
            objects.apply(&mut self, change);
        }
        let mut lines: Vec<(Stamp, Rank, usize, TraceEvent)> = objects
            .lines
            .into_iter()
            .chain(self.outputs.drain(..))
            .enumerate()
            .map(|(seq, (t, rank, e))| (t, rank, seq, e))
            .collect();
        lines.sort_by_key(|(t, rank, seq, _)| (*t, *rank, *seq));
        let first = lines.first().map(|l| l.0.t).or(self.latest);
        // `t = 0` is the first line's second, so offsets read as elapsed recording time.
        let origin = Time(first.map_or(0, |t| t.millis().div_euclid(1000) * 1000));
        let end = settings
            .end
            .map(|e| Time(e.as_millisecond()))
            .or(self.latest)
            .map(|e| Time(e.millis() - origin.millis()).max(Time::ZERO));
        let start = Timestamp::from_millisecond(origin.millis()).ok().map(Start);
        let observed = settings.observed.clone().unwrap_or_else(|| {
            let mut o = Vec::new();
            if self.requests_given {
                o.push(Observed::Requests);
            }
            if self.events_given {
                o.push(Observed::Events);
            }
            o
        });
        let source = [
            ("proxy", self.proxy_given),
            ("audit", !self.audit_ids.is_empty()),
            ("kubectl", self.kubectl_given),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join("+");
        let source = if source.is_empty() {
            "kubectl".to_string()
        } else {
            source
        };
        let mut trace = vec![TraceRecord {
            t: Time::ZERO,
            event: TraceEvent::Header {
                version: TRACE_VERSION,
                source,
                profile: None,
                scenario: None,
                observed: Some(observed),
                start,
                end,
                qps: None,
                burst: None,
            },
        }];
        trace.extend(lines.into_iter().map(|(at, _, _, event)| TraceRecord {
            t: Time(at.t.millis() - origin.millis()),
            event,
        }));
        Import {
            trace,
            skipped: self.skipped,
        }
    }

    /// The changes in resourceVersion order, one per (object, resourceVersion, gone), dated by
    /// the most precise source that showed it.
    fn merged_changes(&mut self) -> Vec<Change> {
        let mut changes = std::mem::take(&mut self.changes);
        changes.sort_by(|a, b| {
            (a.object.resource_version(), a.object.key(), a.gone).cmp(&(
                b.object.resource_version(),
                b.object.key(),
                b.gone,
            ))
        });
        let mut merged: Vec<Change> = Vec::with_capacity(changes.len());
        for change in changes {
            match merged.last_mut() {
                Some(last)
                    if last.object.resource_version() == change.object.resource_version()
                        && last.object.key() == change.object.key()
                        && last.gone == change.gone =>
                {
                    // The write that stored this version dates it, not a later read of it;
                    // but a read that answered before the change's own date bounds it (the
                    // proxy's: the controller read the object live before its watch
                    // delivered the change, IMPORT-11). An audit log's write was received
                    // before any read of what it stored, so there the write's date stands.
                    let earliest = match (last.at, change.at) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        _ => None,
                    };
                    if change.seen == Seen::Read {
                        if last.at.is_some() {
                            last.at = earliest;
                        }
                        continue;
                    }
                    if last.seen == Seen::Read {
                        let read_at = last.at;
                        *last = change;
                        if read_at.is_some() && last.at.is_some() {
                            last.at = earliest;
                        }
                        continue;
                    }
                    last.at = last.at.or(change.at);
                    self.skip(Skip::Duplicate);
                }
                _ => merged.push(change),
            }
        }
        merged
    }
}

/// Unix milliseconds of an RFC 3339 instant (truncated: an API change is never dated later
/// than it happened by this).
pub(crate) fn timestamp(s: &str) -> Option<Time> {
    stamp(s).map(|s| s.t)
}

/// [`timestamp`] with the microseconds within its millisecond.
pub(crate) fn stamp(s: &str) -> Option<Stamp> {
    let t = s.parse::<Timestamp>().ok()?;
    let micros = t.as_microsecond().rem_euclid(1000);
    Some(Stamp {
        t: Time(t.as_millisecond()),
        micros: u16::try_from(micros).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests;
