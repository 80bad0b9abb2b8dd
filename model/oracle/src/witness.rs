//! The witness of a violation: a minimal scenario (specs/scenario-format.md) that reproduces the
//! situation, runnable with `taintcheck run`. Minimal here means: only the violating pod and the
//! nodes it was bound to, only the API changes up to the violation, times shifted to start at 0,
//! and the expectation a legal behaviour meets where the trace's controller did not.
//! Spec: ORACLE-9.

use super::verdict::{Expected, Violation};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use taintcheck_core::api::Uid;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::scenario::write::{instant, pod_name, Writer};
use taintcheck_formats::trace::{Clock, RequestVerb, TraceEvent, TraceRecord};

/// The trace a witness is cut from and how to read it.
pub struct Source<'a> {
    /// The trace's records with their line numbers.
    pub records: &'a [(usize, TraceRecord)],
    /// The profile the trace was checked against.
    pub profile: &'a str,
    /// Only the controller deletes pods (TRACE-7 `deletions`).
    pub controller_deletes: bool,
    /// The trace's clock: on a wall clock, the scenario notes which instant its zero is.
    pub clock: Clock,
}

/// The witness scenario for `v`. The controller's own deletions (after its DELETE of an
/// incarnation, or every deletion when the trace says only the controller deletes) are not
/// operations of the scenario.
pub fn scenario(source: &Source, v: &Violation) -> String {
    let Source {
        records,
        profile,
        controller_deletes,
        clock,
    } = *source;
    let nodes: BTreeSet<&str> = v.nodes.iter().map(|n| &**n).collect();
    let relevant = |e: &TraceEvent| match e {
        TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
            nodes.contains(&*node.name)
        }
        TraceEvent::NodeDeleted { name, .. } => nodes.contains(&**name),
        TraceEvent::ControllerRestarted => true,
        other => other.pod().as_ref() == Some(&v.pod),
    };
    let upto = |line: usize, r: &TraceRecord| match v.line {
        Some(l) => line < l,
        None => r.t <= v.t,
    };
    let lines: Vec<&TraceRecord> = records
        .iter()
        .filter(|(line, r)| upto(*line, r) && relevant(&r.event))
        .map(|(_, r)| r)
        .collect();
    let origin = lines.first().map_or(v.t, |r| r.t);
    let at = |t: Time| instant(Duration(t.millis() - origin.millis()));

    let mut w = Writer::default();
    let mut deleted_by_controller: BTreeSet<Uid> = BTreeSet::new();
    for r in &lines {
        let initial = r.t == origin;
        match &r.event {
            TraceEvent::NodeAdded { node, .. } => {
                w.put_node(node, initial, at(r.t));
            }
            TraceEvent::NodeModified { node, .. } => w.taint_diff(node, at(r.t)),
            TraceEvent::NodeDeleted { name, .. } => {
                w.delete_node(name, at(r.t));
            }
            TraceEvent::PodAdded { pod, .. } => w.put_pod(pod, initial, at(r.t)),
            TraceEvent::PodModified {
                pod, terminating, ..
            } => {
                if *terminating {
                    if !controller_deletes && !deleted_by_controller.contains(&pod.uid) {
                        w.delete_pod(&pod.key, at(r.t));
                    }
                    w.forget_pod(&pod.key);
                } else {
                    w.modify_pod(pod, at(r.t));
                }
            }
            TraceEvent::PodDeleted { uid, .. } => {
                let ours = controller_deletes || deleted_by_controller.contains(uid);
                if !ours && w.pod(&v.pod).is_some() {
                    w.delete_pod(&v.pod, at(r.t));
                }
                w.forget_pod(&v.pod);
            }
            TraceEvent::Request {
                verb: RequestVerb::Delete,
                ..
            } => {
                if let Some(uid) = w.pod(&v.pod).map(|p| p.uid.clone()) {
                    deleted_by_controller.insert(uid);
                }
            }
            TraceEvent::Event { message, .. } if message.starts_with("Marking") => {
                if let Some(uid) = w.pod(&v.pod).map(|p| p.uid.clone()) {
                    deleted_by_controller.insert(uid);
                }
            }
            TraceEvent::ControllerRestarted => w.op(at(r.t), "restartController", json!({})),
            _ => {}
        }
    }

    let shift = |t: Time| Duration(t.millis() - origin.millis());
    let pod_ref = |uid: Option<&Uid>| {
        let mut m = Map::new();
        m.insert("pod".into(), json!(pod_name(&v.pod)));
        if let Some(uid) = uid {
            m.insert("uid".into(), json!(&*uid.0));
        }
        Value::Object(m)
    };
    let uid = w.last_uid(&v.pod).cloned();
    let (until, expect) = match v.expected {
        Expected::NotDeletedBy(t) => (
            shift(t),
            Some(json!({ "notDeleted": [pod_ref(uid.as_ref())] })),
        ),
        Expected::DeletedWithin(from, to) => (
            shift(to).plus_ms(1_000),
            Some(json!({ "deleted": [ {
                "pod": pod_name(&v.pod),
                "within": [instant(shift(from)), instant(shift(to))],
            } ] })),
        ),
        Expected::Nothing => (shift(v.t).plus_ms(1_000), None),
    };

    let mut out = String::new();
    let name = format!("witness-{}", v.pod.name);
    let _ = writeln!(
        out,
        "# Witness written by `taintcheck conform` (spec ORACLE-9)."
    );
    if clock.is_wall() {
        let _ = writeln!(
            out,
            "# Time 0 is {} on the recording's clock.",
            clock.at(origin)
        );
    }
    let _ = writeln!(out, "name: {}", json!(name));
    let _ = writeln!(out, "description: {}", json!(v.message));
    let _ = writeln!(
        out,
        "admission: {}",
        json!({"defaultTolerationSeconds": false})
    );
    w.write_objects(&mut out);
    let _ = writeln!(out, "until: {}", json!(instant(until)));
    if let Some(expect) = expect {
        let _ = writeln!(out, "expect:\n  {}: {}", json!(profile), expect);
    }
    out
}

trait PlusMs {
    fn plus_ms(self, ms: i64) -> Duration;
}

impl PlusMs for Duration {
    fn plus_ms(self, ms: i64) -> Duration {
        Duration(self.millis() + ms)
    }
}
