//! Event objects (core `v1` and `events.k8s.io/v1`, from kubectl or from the audit log) into
//! `event` lines: only the taint eviction controller's `TaintManagerEviction` on pods, one line
//! per occurrence its count adds (at most [`MAX_EVENT_OCCURRENCES`] per observation), dated by
//! its latest occurrence (IMPORT-2, IMPORT-3).

use super::{timestamp, Collected, Rank, Skip, Stamp, MAX_EVENT_OCCURRENCES};
use crate::trace::TraceEvent;
use serde_json::Value;
use std::collections::BTreeMap;
use taintcheck_core::time::Time;
use taintcheck_core::EVENT_REASON;

/// Per Event (namespace, name): the count already turned into lines.
pub type Counts = BTreeMap<(String, String), i64>;

/// Per Event (namespace, name): each write of it the audit log shows, with the count it wrote
/// and when the API server received it.
pub type Writes = BTreeMap<(String, String), Vec<(i64, Stamp)>>;

/// Notes an audit entry that writes an Event (`verb` create, patch or update, whatever its
/// answer): the occurrences up to the count it writes happened before it was received. The
/// entry is read from its request body, so the Request level suffices: a create carries the
/// Event (count 1 if it says none), a patch of a repeated occurrence the new count (client-go's
/// event correlator patches `count` and `lastTimestamp`). A write whose count is unknown bounds
/// nothing.
pub fn write(c: &mut Collected, entry: &Value, verb: &str, received: Stamp) {
    let s = |path: &str| entry.pointer(path).and_then(Value::as_str);
    let (Some(namespace), Some(name)) = (s("/objectRef/namespace"), s("/objectRef/name")) else {
        return;
    };
    let count = ["/count", "/series/count", "/deprecatedCount"]
        .iter()
        .filter_map(|p| entry.pointer("/requestObject").and_then(|o| o.pointer(p)))
        .find_map(Value::as_i64);
    let count = match (verb, count) {
        (_, Some(n)) => n,
        ("create", None) => 1,
        _ => return,
    };
    c.event_writes
        .entry((namespace.to_string(), name.to_string()))
        .or_default()
        .push((count, received));
}

/// Dates each occurrence line no later than the first write of its count the audit log
/// received: a second-precision timestamp reads as the end of its second, and an Event whose
/// write was answered with an error (a 504 to a client that was stopped) has no stored object to
/// date it by, but either was emitted before the write that carried it arrived (IMPORT-3).
pub fn bound_by_writes(c: &mut Collected) {
    for (id, lines) in &c.event_lines {
        let Some(writes) = c.event_writes.get(id) else {
            continue;
        };
        for (n, &i) in (1..).zip(lines) {
            let bound = writes
                .iter()
                .filter(|(count, _)| *count >= n)
                .map(|(_, at)| *at)
                .min();
            if let (Some(bound), Some(line)) = (bound, c.outputs.get_mut(i)) {
                line.0 = line.0.min(bound);
            }
        }
    }
}

/// The Event API versions read.
const VERSIONS: [&str; 2] = ["v1", "events.k8s.io/v1"];

/// Reads one Event object; `written` is when the API server stored it, where known (an audit
/// entry's `stageTimestamp`): the latest occurrence happened no later than that, which bounds a
/// second-precision timestamp's estimate (IMPORT-3).
pub fn event(c: &mut Collected, v: &Value, written: Option<Time>) -> Result<(), String> {
    let s = |path: &str| v.pointer(path).and_then(Value::as_str);
    match s("/apiVersion") {
        Some(version) if VERSIONS.contains(&version) => {}
        other => {
            return Err(format!(
                "apiVersion: Unsupported value: {:?}: supported values: \"v1\", \
                 \"events.k8s.io/v1\"",
                other.unwrap_or("")
            ))
        }
    }
    c.events_given = true;
    let precise = |path: &str| s(path).and_then(timestamp);
    // The end of a second-precision timestamp's second: never earlier than the occurrence.
    let second = |path: &str| s(path).and_then(timestamp).map(|t| Time(t.millis() + 999));
    let t = precise("/series/lastObservedTime")
        .or_else(|| second("/lastTimestamp"))
        .or_else(|| second("/deprecatedLastTimestamp"))
        .or_else(|| precise("/eventTime"))
        .or_else(|| second("/firstTimestamp"))
        .or_else(|| second("/deprecatedFirstTimestamp"));
    let t = match (t, written) {
        (Some(t), Some(w)) => Some(t.min(w)),
        (t, w) => t.or(w),
    };
    if let Some(t) = t {
        c.saw(t);
    }
    if s("/reason") != Some(EVENT_REASON) {
        c.skip(Skip::OtherEvent);
        return Ok(());
    }
    let object = if v.get("involvedObject").is_some() {
        "/involvedObject"
    } else {
        "/regarding"
    };
    let field = |f: &str| s(&format!("{object}/{f}"));
    let (Some("Pod"), Some(namespace), Some(name)) =
        (field("kind"), field("namespace"), field("name"))
    else {
        c.skip(Skip::OtherEvent);
        return Ok(());
    };
    let Some(t) = t else {
        c.skip(Skip::EventWithoutTime);
        return Ok(());
    };
    let message = s("/message").or_else(|| s("/note")).unwrap_or("");
    let id = (
        s("/metadata/namespace").unwrap_or("").to_string(),
        s("/metadata/name").unwrap_or("").to_string(),
    );
    let count = ["/count", "/deprecatedCount", "/series/count"]
        .iter()
        .filter_map(|p| v.pointer(p))
        .filter_map(|n| n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)))
        .max()
        .unwrap_or(1)
        .max(1);
    let seen = c.events.get(&id).copied().unwrap_or(0);
    if seen >= count {
        // Another reading of occurrences already taken (kubectl's and the audit log's copy of
        // one Event): none of them happened after this reading's date, which may be the more
        // precise one.
        for &i in c.event_lines.get(&id).into_iter().flatten() {
            if let Some(line) = c.outputs.get_mut(i) {
                line.0 = line.0.min(t.into());
            }
        }
        c.skip(Skip::EventRepeated);
        return Ok(());
    }
    c.events.insert(id.clone(), count);
    let added = count - seen;
    let lines = added.min(MAX_EVENT_OCCURRENCES);
    if added > lines {
        let capped = usize::try_from(added - lines).unwrap_or(usize::MAX);
        let entry = c.skipped.entry(Skip::EventOccurrencesCapped).or_default();
        *entry = entry.saturating_add(capped);
    }
    for _ in 0..lines {
        let line = TraceEvent::Event {
            namespace: namespace.to_string(),
            name: name.to_string(),
            reason: EVENT_REASON.to_string(),
            message: message.to_string(),
        };
        c.event_lines
            .entry(id.clone())
            .or_default()
            .push(c.outputs.len());
        c.outputs.push((t.into(), Rank::Event, line));
    }
    Ok(())
}
