//! The witness of a violation: a minimal scenario (specs/scenario-format.md) that reproduces the
//! situation, runnable with `taintcheck run`. Minimal here means: only the violating pod and the
//! nodes it was bound to, only the API changes up to the violation, times shifted to start at 0,
//! and the expectation a legal behaviour meets where the trace's controller did not.
//! Spec: ORACLE-9.

use super::verdict::{Expected, Violation};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Taint, Toleration, Uid};
use taintcheck_core::time::{Duration, Time};
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
                w.nodes.remove(name);
                w.op(at(r.t), "deleteNode", json!(&**name));
            }
            TraceEvent::PodAdded { pod, .. } => w.put_pod(pod, initial, at(r.t)),
            TraceEvent::PodModified {
                pod, terminating, ..
            } => {
                if *terminating {
                    if !controller_deletes && !deleted_by_controller.contains(&pod.uid) {
                        w.delete_pod(&pod.key, at(r.t));
                    }
                    w.pods.remove(&pod.key);
                } else {
                    w.modify_pod(pod, at(r.t));
                }
            }
            TraceEvent::PodDeleted { uid, .. } => {
                let ours = controller_deletes || deleted_by_controller.contains(uid);
                if !ours && w.pods.contains_key(&v.pod) {
                    w.delete_pod(&v.pod, at(r.t));
                }
                w.pods.remove(&v.pod);
            }
            TraceEvent::Request {
                verb: RequestVerb::Delete,
                ..
            } => {
                if let Some(uid) = w.pods.get(&v.pod).map(|p| p.uid.clone()) {
                    deleted_by_controller.insert(uid);
                }
            }
            TraceEvent::Event { message, .. } if message.starts_with("Marking") => {
                if let Some(uid) = w.pods.get(&v.pod).map(|p| p.uid.clone()) {
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
    let uid = w.last_uid.get(&v.pod).cloned();
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
    list(&mut out, "nodes", &w.initial_nodes);
    list(&mut out, "pods", &w.initial_pods);
    list(&mut out, "ops", &w.ops);
    let _ = writeln!(out, "until: {}", json!(instant(until)));
    if let Some(expect) = expect {
        let _ = writeln!(out, "expect:\n  {}: {}", json!(profile), expect);
    }
    out
}

/// A scenario instant: `12.345s`.
fn instant(d: Duration) -> String {
    Time(d.millis().max(0)).to_string()
}

trait PlusMs {
    fn plus_ms(self, ms: i64) -> Duration;
}

impl PlusMs for Duration {
    fn plus_ms(self, ms: i64) -> Duration {
        Duration(self.millis() + ms)
    }
}

fn list(out: &mut String, key: &str, items: &[Value]) {
    if items.is_empty() {
        let _ = writeln!(out, "{key}: []");
        return;
    }
    let _ = writeln!(out, "{key}:");
    for item in items {
        let _ = writeln!(out, "  - {item}");
    }
}

fn pod_name(key: &PodKey) -> String {
    if &*key.namespace == "default" {
        key.name.to_string()
    } else {
        key.to_string()
    }
}

/// `key=value:Effect` or `key:Effect` (kubectl syntax).
fn taint_text(t: &Taint) -> String {
    if t.value.is_empty() {
        format!("{}:{}", t.key, t.effect)
    } else {
        format!("{}={}:{}", t.key, t.value, t.effect)
    }
}

fn toleration_json(t: &Toleration) -> Value {
    let mut m = Map::new();
    if !t.key.is_empty() {
        m.insert("key".into(), json!(&*t.key));
    }
    m.insert("operator".into(), json!(t.operator.as_str()));
    if !t.value.is_empty() {
        m.insert("value".into(), json!(&*t.value));
    }
    if let Some(e) = &t.effect {
        m.insert("effect".into(), json!(e.as_str()));
    }
    if let Some(s) = t.seconds {
        m.insert("tolerationSeconds".into(), json!(s));
    }
    Value::Object(m)
}

fn pod_json(p: &Pod) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(&*p.key.name));
    m.insert("namespace".into(), json!(&*p.key.namespace));
    m.insert("uid".into(), json!(&*p.uid.0));
    if let Some(n) = &p.node_name {
        m.insert("node".into(), json!(&**n));
    }
    m.insert(
        "tolerations".into(),
        Value::Array(p.tolerations.iter().map(toleration_json).collect()),
    );
    Value::Object(m)
}

/// The scenario being written, with the objects as the ops have left them.
#[derive(Default)]
struct Writer {
    initial_nodes: Vec<Value>,
    initial_pods: Vec<Value>,
    ops: Vec<Value>,
    nodes: BTreeMap<NodeName, Node>,
    pods: BTreeMap<PodKey, Pod>,
    last_uid: BTreeMap<PodKey, Uid>,
    /// The instant of the last deletion per pod (a delete and an add at once is a recreate).
    deleted_at: BTreeMap<PodKey, String>,
}

impl Writer {
    fn op(&mut self, at: String, kind: &str, value: Value) {
        let mut m = Map::new();
        m.insert("at".into(), json!(at));
        m.insert(kind.into(), value);
        self.ops.push(Value::Object(m));
    }

    fn op_with(&mut self, at: String, kind: &str, value: Value, extra: &[(&str, Value)]) {
        let mut m = Map::new();
        m.insert("at".into(), json!(at));
        m.insert(kind.into(), value);
        for (k, v) in extra {
            m.insert((*k).into(), v.clone());
        }
        self.ops.push(Value::Object(m));
    }

    fn put_node(&mut self, node: &Node, initial: bool, at: String) {
        let value = json!({
            "name": &*node.name,
            "taints": node.taints.iter().map(taint_text).collect::<Vec<_>>(),
        });
        if initial {
            self.initial_nodes.push(value);
        } else {
            self.op(at, "createNode", value);
        }
        self.nodes.insert(node.name.clone(), node.clone());
    }

    /// A node modification as `kubectl taint` operations: removals, then additions/changes.
    fn taint_diff(&mut self, node: &Node, at: String) {
        let old = self.nodes.get(&node.name).cloned().unwrap_or(Node {
            name: node.name.clone(),
            taints: vec![],
        });
        for t in &old.taints {
            if !node.taints.iter().any(|n| n.same_identity(t)) {
                let spec = format!("{} {}:{}-", node.name, t.key, t.effect);
                self.op(at.clone(), "taint", json!(spec));
            }
        }
        for t in &node.taints {
            let unchanged = old
                .taints
                .iter()
                .any(|o| o.same_identity(t) && o.value == t.value);
            if !unchanged {
                let spec = format!("{} {}", node.name, taint_text(t));
                self.op(at.clone(), "taint", json!(spec));
            }
        }
        self.nodes.insert(node.name.clone(), node.clone());
    }

    fn put_pod(&mut self, pod: &Pod, initial: bool, at: String) {
        let recreated = self.deleted_at.get(&pod.key) == Some(&at);
        if initial && !recreated {
            self.initial_pods.push(pod_json(pod));
        } else if recreated {
            // The delete op just written and this add are one `recreatePod`.
            self.ops.pop();
            let mut extra = vec![("uid", json!(&*pod.uid.0))];
            if let Some(n) = &pod.node_name {
                extra.push(("node", json!(&**n)));
            }
            extra.push((
                "tolerations",
                Value::Array(pod.tolerations.iter().map(toleration_json).collect()),
            ));
            self.op_with(at, "recreatePod", json!(pod_name(&pod.key)), &extra);
        } else {
            self.op(at, "createPod", pod_json(pod));
        }
        self.last_uid.insert(pod.key.clone(), pod.uid.clone());
        self.pods.insert(pod.key.clone(), pod.clone());
    }

    fn delete_pod(&mut self, key: &PodKey, at: String) {
        self.deleted_at.insert(key.clone(), at.clone());
        self.op(at, "deletePod", json!(pod_name(key)));
    }

    /// A pod modification as scenario operations where it can be one: a binding, appended
    /// tolerations, changed `tolerationSeconds`.
    fn modify_pod(&mut self, pod: &Pod, at: String) {
        let Some(old) = self.pods.get(&pod.key).cloned() else {
            return;
        };
        let name = json!(pod_name(&pod.key));
        if old.node_name.is_none() {
            if let Some(n) = &pod.node_name {
                self.op_with(
                    at.clone(),
                    "bindPod",
                    name.clone(),
                    &[("node", json!(&**n))],
                );
            }
        }
        for (i, (o, n)) in old.tolerations.iter().zip(&pod.tolerations).enumerate() {
            if o.same_identity(n) && o.seconds != n.seconds {
                self.op_with(
                    at.clone(),
                    "setTolerationSeconds",
                    name.clone(),
                    &[("index", json!(i)), ("seconds", json!(n.seconds))],
                );
            }
        }
        for t in pod.tolerations.iter().skip(old.tolerations.len()) {
            self.op_with(
                at.clone(),
                "addToleration",
                name.clone(),
                &[("toleration", toleration_json(t))],
            );
        }
        self.pods.insert(pod.key.clone(), pod.clone());
    }
}
