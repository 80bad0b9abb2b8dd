//! Writing a scenario (specs/scenario-format.md) from objects as they change: the initial
//! nodes and pods, then each change as the scenario operation that makes it (`taint`,
//! `recreatePod`, `setTolerationSeconds`, ...). The oracle's witnesses (ORACLE-9) and the
//! scenarios `check --schedule-out` makes from counterexamples (PROXY-11) are written with it.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Taint, Toleration, Uid};
use taintcheck_core::time::{Duration, Time};

/// A scenario instant: `12.345s`.
pub fn instant(d: Duration) -> String {
    Time(d.millis().max(0)).to_string()
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

/// A pod as a scenario names it: `name` in `default`, else `namespace/name`.
pub fn pod_name(key: &PodKey) -> String {
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
pub struct Writer {
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
    /// Appends the operation `{at, kind: value}`.
    pub fn op(&mut self, at: String, kind: &str, value: Value) {
        let mut m = Map::new();
        m.insert("at".into(), json!(at));
        m.insert(kind.into(), value);
        self.ops.push(Value::Object(m));
    }

    /// Appends the operation `{at, kind: value, extra...}`.
    pub fn op_with(&mut self, at: String, kind: &str, value: Value, extra: &[(&str, Value)]) {
        let mut m = Map::new();
        m.insert("at".into(), json!(at));
        m.insert(kind.into(), value);
        for (k, v) in extra {
            m.insert((*k).into(), v.clone());
        }
        self.ops.push(Value::Object(m));
    }

    /// A node: among the initial ones, or created by an operation at `at`.
    pub fn put_node(&mut self, node: &Node, initial: bool, at: String) {
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
    pub fn taint_diff(&mut self, node: &Node, at: String) {
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

    /// A pod: among the initial ones, created, or (deleted at the same instant) recreated.
    pub fn put_pod(&mut self, pod: &Pod, initial: bool, at: String) {
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

    /// The pod deleted at `at` (by name).
    pub fn delete_pod(&mut self, key: &PodKey, at: String) {
        self.deleted_at.insert(key.clone(), at.clone());
        self.op(at, "deletePod", json!(pod_name(key)));
    }

    /// A pod modification as scenario operations where it can be one: a binding, appended
    /// tolerations, changed `tolerationSeconds`.
    pub fn modify_pod(&mut self, pod: &Pod, at: String) {
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

    /// The node deleted at `at`.
    pub fn delete_node(&mut self, name: &NodeName, at: String) {
        self.nodes.remove(name);
        self.op(at, "deleteNode", json!(&**name));
    }

    /// The pod as the operations so far have left it.
    pub fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key)
    }

    /// The pod is gone (without an operation: the controller deleted it).
    pub fn forget_pod(&mut self, key: &PodKey) {
        self.pods.remove(key);
    }

    /// The UID of the pod last written under this name.
    pub fn last_uid(&self, key: &PodKey) -> Option<&Uid> {
        self.last_uid.get(key)
    }

    /// The scenario's `nodes`, `pods` and `ops`, as YAML lines.
    pub fn write_objects(&self, out: &mut String) {
        list(out, "nodes", &self.initial_nodes);
        list(out, "pods", &self.initial_pods);
        list(out, "ops", &self.ops);
    }
}
