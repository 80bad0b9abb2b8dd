//! What a model run explores: the objects, the environment's repertoire and budget, the clock's
//! grid and horizon, and the controller's sizes. Configurations are data (`specs/configs/*.yaml`,
//! compiled in so the binary works from any directory) plus command-line overrides.
//!
//! Spec: MODEL-CFG (specs/spec.md, "Configurations").

use crate::api::{Operator, PodKey, Taint, TaintEffect, Toleration};
use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use std::collections::BTreeSet;
use std::fmt;

/// The named configurations shipped in `specs/configs/`, in the order `check --help` lists them.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "default",
        include_str!("../../../specs/configs/default.yaml"),
    ),
    (
        "timer-vs-cancel",
        include_str!("../../../specs/configs/timer-vs-cancel.yaml"),
    ),
    (
        "same-name-successor",
        include_str!("../../../specs/configs/same-name-successor.yaml"),
    ),
    (
        "toleration-change",
        include_str!("../../../specs/configs/toleration-change.yaml"),
    ),
    (
        "stale-cache",
        include_str!("../../../specs/configs/stale-cache.yaml"),
    ),
    (
        "failing-delete",
        include_str!("../../../specs/configs/failing-delete.yaml"),
    ),
    (
        "restart",
        include_str!("../../../specs/configs/restart.yaml"),
    ),
    (
        "forever-toleration",
        include_str!("../../../specs/configs/forever-toleration.yaml"),
    ),
    (
        "orphaned-timer",
        include_str!("../../../specs/configs/orphaned-timer.yaml"),
    ),
    (
        "live-read",
        include_str!("../../../specs/configs/live-read.yaml"),
    ),
    (
        "successor-stale-listing",
        include_str!("../../../specs/configs/successor-stale-listing.yaml"),
    ),
    (
        "successor-while-deleting",
        include_str!("../../../specs/configs/successor-while-deleting.yaml"),
    ),
    (
        "toleration-flip-while-deleting",
        include_str!("../../../specs/configs/toleration-flip-while-deleting.yaml"),
    ),
    (
        "three-pods",
        include_str!("../../../specs/configs/three-pods.yaml"),
    ),
    (
        "pods-and-nodes",
        include_str!("../../../specs/configs/pods-and-nodes.yaml"),
    ),
];

/// The environment's operations (spec ENV-*). Each consumes one unit of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    AddTaint,
    RemoveTaint,
    AppendToleration,
    SetSeconds,
    DeletePod,
    RecreatePod,
    BindPod,
    DeleteNode,
    Restart,
    FailNextCall,
}

impl OpKind {
    pub const ALL: [OpKind; 10] = [
        OpKind::AddTaint,
        OpKind::RemoveTaint,
        OpKind::AppendToleration,
        OpKind::SetSeconds,
        OpKind::DeletePod,
        OpKind::RecreatePod,
        OpKind::BindPod,
        OpKind::DeleteNode,
        OpKind::Restart,
        OpKind::FailNextCall,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::AddTaint => "add_taint",
            OpKind::RemoveTaint => "remove_taint",
            OpKind::AppendToleration => "append_toleration",
            OpKind::SetSeconds => "set_seconds",
            OpKind::DeletePod => "delete_pod",
            OpKind::RecreatePod => "recreate_pod",
            OpKind::BindPod => "bind_pod",
            OpKind::DeleteNode => "delete_node",
            OpKind::Restart => "restart",
            OpKind::FailNextCall => "fail_next_call",
        }
    }

    pub fn parse(s: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// A node at the start of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    pub name: String,
    /// Initial NoExecute taints.
    pub taints: Vec<Taint>,
}

/// A pod at the start of the run. Recreations reuse its name and tolerations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpec {
    pub name: String,
    /// `None`: pending (unbound).
    pub node: Option<String>,
    pub tolerations: Vec<Toleration>,
}

impl PodSpec {
    pub fn key(&self) -> PodKey {
        PodKey::new(NAMESPACE, &self.name)
    }
}

/// Every modelled pod lives here.
pub const NAMESPACE: &str = "default";

/// A complete run configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckConfig {
    pub name: String,
    pub description: String,
    pub nodes: Vec<NodeSpec>,
    pub pods: Vec<PodSpec>,
    /// The NoExecute taints the environment may add (and remove).
    pub taints: Vec<Taint>,
    /// Tolerations the environment may append to a pod.
    pub append_tolerations: Vec<Toleration>,
    /// Values the environment may give an existing toleration's `tolerationSeconds`
    /// (`None`: forever).
    pub seconds_choices: Vec<Option<i64>>,
    pub operations: BTreeSet<OpKind>,
    /// How many environment operations one behaviour may perform.
    pub budget: u8,
    /// Environment operations happen at multiples of this many ms.
    pub step_ms: i64,
    /// The clock never passes this instant.
    pub horizon_ms: i64,
    pub workers: usize,
    pub node_channel_capacity: usize,
    pub pod_channel_capacity: usize,
    /// Slack of the bounded-eviction deadline (spec LIVE-1): retries and backoff timers.
    pub processing_bound_ms: i64,
}

impl CheckConfig {
    /// A built-in configuration by name.
    pub fn builtin(name: &str) -> Result<CheckConfig, ConfigError> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<_> = BUILTIN.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            ConfigError::new(
                "--config",
                0,
                "",
                format!(
                    "Unsupported value: \"{name}\": supported values: {}",
                    names.join(", ")
                ),
            )
        })?;
        CheckConfig::parse(&format!("{name}.yaml"), name, text)
    }

    /// A configuration by built-in name or by path to a YAML file.
    pub fn load(name_or_path: &str) -> Result<CheckConfig, ConfigError> {
        if name_or_path.ends_with(".yaml") || name_or_path.contains('/') {
            let text = std::fs::read_to_string(name_or_path).map_err(|e| {
                ConfigError::new(name_or_path, 0, "", format!("cannot read file: {e}"))
            })?;
            let stem = std::path::Path::new(name_or_path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            CheckConfig::parse(name_or_path, &stem, &text)
        } else {
            CheckConfig::builtin(name_or_path)
        }
    }

    /// Parses a configuration document; `file` names it in error messages.
    pub fn parse(file: &str, name: &str, text: &str) -> Result<CheckConfig, ConfigError> {
        let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| {
            ConfigError::new(
                file,
                e.marker().line(),
                "",
                format!("invalid YAML: {}", e.info()),
            )
        })?;
        let root = docs
            .into_iter()
            .next()
            .ok_or_else(|| ConfigError::new(file, 0, "", "empty document".into()))?;
        let mut r = Reader {
            file,
            errors: Vec::new(),
        };
        let cfg = r.config(name, &root);
        match r.errors.into_iter().next() {
            Some(e) => Err(e),
            None => {
                cfg.validate(file)?;
                Ok(cfg)
            }
        }
    }

    /// Semantic checks that span fields (references between nodes and pods).
    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let err = |path: &str, msg: String| Err(ConfigError::new(file, 0, path, msg));
        if self.nodes.is_empty() {
            return err("nodes", "Required value: at least one node".into());
        }
        if self.pods.is_empty() {
            return err("pods", "Required value: at least one pod".into());
        }
        let mut seen = BTreeSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !seen.insert(n.name.as_str()) {
                return err(
                    &format!("nodes[{i}].name"),
                    format!("Duplicate value: \"{}\"", n.name),
                );
            }
        }
        let mut pods = BTreeSet::new();
        for (i, p) in self.pods.iter().enumerate() {
            if !pods.insert(p.name.as_str()) {
                return err(
                    &format!("pods[{i}].name"),
                    format!("Duplicate value: \"{}\"", p.name),
                );
            }
            if let Some(node) = &p.node {
                if !seen.contains(node.as_str()) {
                    return err(&format!("pods[{i}].node"), format!("Not found: \"{node}\""));
                }
            }
        }
        if self.step_ms <= 0 {
            return err(
                "step_ms",
                format!("Invalid value: {}: must be positive", self.step_ms),
            );
        }
        if self.horizon_ms < 0 {
            return err(
                "horizon_ms",
                format!("Invalid value: {}: must be non-negative", self.horizon_ms),
            );
        }
        if self.workers == 0 {
            return err("workers", "Invalid value: 0: must be positive".into());
        }
        if self.node_channel_capacity == 0 || self.pod_channel_capacity == 0 {
            return err(
                "node_channel_capacity",
                "Invalid value: 0: channel capacities must be positive".into(),
            );
        }
        Ok(())
    }

    /// Applies command-line overrides; each is validated like the file itself.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), ConfigError> {
        if let Some(n) = o.nodes {
            self.nodes.truncate(n);
            while self.nodes.len() < n {
                let name = format!("n{}", self.nodes.len() + 1);
                self.nodes.push(NodeSpec {
                    name,
                    taints: Vec::new(),
                });
            }
            let names: BTreeSet<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
            for p in &mut self.pods {
                if p.node.as_ref().is_some_and(|n| !names.contains(n)) {
                    p.node = None;
                }
            }
        }
        if let Some(n) = o.pods {
            let template = self.pods.last().cloned();
            self.pods.truncate(n);
            while self.pods.len() < n {
                let mut p = template
                    .clone()
                    .ok_or_else(|| ConfigError::new("--pods", 0, "", "no pod to copy".into()))?;
                p.name = format!("p{}", self.pods.len() + 1);
                self.pods.push(p);
            }
        }
        if let Some(keys) = &o.taint_keys {
            self.taints = keys.iter().map(|k| parse_taint(k)).collect();
        }
        if let Some(s) = &o.seconds_choices {
            self.seconds_choices = s.clone();
        }
        if let Some(ops) = &o.operations {
            self.operations = ops.clone();
        }
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = o.$f { self.$f = v; } )* };
        }
        set!(
            budget,
            step_ms,
            horizon_ms,
            workers,
            node_channel_capacity,
            pod_channel_capacity,
            processing_bound_ms
        );
        self.validate("overrides")
    }

    pub fn allows(&self, op: OpKind) -> bool {
        self.operations.contains(&op)
    }

    /// The spec of the pod named `name` (recreations reuse it).
    pub fn pod_spec(&self, key: &PodKey) -> Option<&PodSpec> {
        self.pods.iter().find(|p| *p.name == *key.name)
    }
}

/// Command-line overrides of a configuration's fields.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Keep the first N nodes, or add untainted nodes `n{i}`.
    pub nodes: Option<usize>,
    /// Keep the first N pods, or add copies of the last pod named `p{i}`.
    pub pods: Option<usize>,
    /// `key` or `key=value`: the NoExecute taints the environment may add.
    pub taint_keys: Option<Vec<String>>,
    pub seconds_choices: Option<Vec<Option<i64>>>,
    pub operations: Option<BTreeSet<OpKind>>,
    pub budget: Option<u8>,
    pub step_ms: Option<i64>,
    pub horizon_ms: Option<i64>,
    pub workers: Option<usize>,
    pub node_channel_capacity: Option<usize>,
    pub pod_channel_capacity: Option<usize>,
    pub processing_bound_ms: Option<i64>,
}

/// `key` or `key=value`, always NoExecute.
pub fn parse_taint(s: &str) -> Taint {
    let (key, value) = s.split_once('=').unwrap_or((s, ""));
    Taint::new(key, value, TaintEffect::NoExecute)
}

/// A configuration error, printed Kubernetes-style: `file:line: field.path: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: String,
    /// 1-based; 0 when the error is not tied to a line.
    pub line: usize,
    pub path: String,
    pub message: String,
}

impl ConfigError {
    fn new(file: &str, line: usize, path: &str, message: String) -> ConfigError {
        ConfigError {
            file: file.into(),
            line,
            path: path.into(),
            message,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if self.path.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": {}: {}", self.path, self.message)
        }
    }
}

/// Walks the YAML tree, collecting the first error with its line and field path.
struct Reader<'a> {
    file: &'a str,
    errors: Vec<ConfigError>,
}

type Node = MarkedYamlOwned;

fn line(n: &Node) -> usize {
    n.span.start.line()
}

fn scalar(n: &Node) -> Option<&ScalarOwned> {
    match &n.data {
        YamlDataOwned::Value(s) => Some(s),
        _ => None,
    }
}

impl Reader<'_> {
    fn fail(&mut self, n: &Node, path: &str, message: String) {
        self.errors
            .push(ConfigError::new(self.file, line(n), path, message));
    }

    fn fields<'n>(
        &mut self,
        n: &'n Node,
        path: &str,
        allowed: &[&str],
    ) -> Vec<(&'n str, &'n Node)> {
        let YamlDataOwned::Mapping(map) = &n.data else {
            self.fail(n, path, "Invalid value: expected a mapping".into());
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in map {
            let Some(ScalarOwned::String(key)) = scalar(k) else {
                self.fail(k, path, "Invalid value: keys must be strings".into());
                continue;
            };
            if !allowed.contains(&key.as_str()) {
                let sup: Vec<_> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                self.fail(
                    k,
                    &join(path, key),
                    format!("Unsupported field: supported fields: {}", sup.join(", ")),
                );
                continue;
            }
            out.push((key.as_str(), v));
        }
        out
    }

    fn seq<'n>(&mut self, n: &'n Node, path: &str) -> Vec<&'n Node> {
        match &n.data {
            YamlDataOwned::Sequence(s) => s.iter().collect(),
            YamlDataOwned::Value(ScalarOwned::Null) => Vec::new(),
            _ => {
                self.fail(n, path, "Invalid value: expected a list".into());
                Vec::new()
            }
        }
    }

    fn string(&mut self, n: &Node, path: &str) -> String {
        match scalar(n) {
            Some(ScalarOwned::String(s)) => s.clone(),
            Some(ScalarOwned::Integer(i)) => i.to_string(),
            Some(ScalarOwned::Boolean(b)) => b.to_string(),
            _ => {
                self.fail(n, path, "Invalid value: expected a string".into());
                String::new()
            }
        }
    }

    fn int(&mut self, n: &Node, path: &str) -> i64 {
        match scalar(n) {
            Some(ScalarOwned::Integer(i)) => *i,
            _ => {
                self.fail(n, path, "Invalid value: expected an integer".into());
                0
            }
        }
    }

    fn unsigned(&mut self, n: &Node, path: &str, max: u64) -> u64 {
        let v = self.int(n, path);
        if v < 0 || v as u64 > max {
            self.fail(n, path, format!("Invalid value: {v}: must be in 0..={max}"));
            return 0;
        }
        v as u64
    }

    /// An integer, or `null`/`forever` for "no tolerationSeconds".
    fn seconds(&mut self, n: &Node, path: &str) -> Option<i64> {
        match scalar(n) {
            Some(ScalarOwned::Null) => None,
            Some(ScalarOwned::String(s)) if s == "forever" => None,
            _ => Some(self.int(n, path)),
        }
    }

    fn config(&mut self, name: &str, root: &Node) -> CheckConfig {
        let mut cfg = CheckConfig {
            name: name.into(),
            description: String::new(),
            nodes: Vec::new(),
            pods: Vec::new(),
            taints: Vec::new(),
            append_tolerations: Vec::new(),
            seconds_choices: Vec::new(),
            operations: BTreeSet::new(),
            budget: 0,
            step_ms: 1000,
            horizon_ms: 3000,
            workers: 2,
            node_channel_capacity: 10,
            pod_channel_capacity: 1,
            processing_bound_ms: 100,
        };
        const FIELDS: &[&str] = &[
            "description",
            "nodes",
            "pods",
            "taints",
            "append_tolerations",
            "seconds_choices",
            "operations",
            "budget",
            "step_ms",
            "horizon_ms",
            "workers",
            "node_channel_capacity",
            "pod_channel_capacity",
            "processing_bound_ms",
        ];
        for (key, v) in self.fields(root, "", FIELDS) {
            match key {
                "description" => cfg.description = self.string(v, key).trim().to_string(),
                "nodes" => {
                    for (i, n) in self.seq(v, key).into_iter().enumerate() {
                        let node = self.node(n, &format!("nodes[{i}]"));
                        cfg.nodes.push(node);
                    }
                }
                "pods" => {
                    for (i, n) in self.seq(v, key).into_iter().enumerate() {
                        let pod = self.pod(n, &format!("pods[{i}]"));
                        cfg.pods.push(pod);
                    }
                }
                "taints" => {
                    for (i, t) in self.seq(v, key).into_iter().enumerate() {
                        let s = self.string(t, &format!("taints[{i}]"));
                        cfg.taints.push(parse_taint(&s));
                    }
                }
                "append_tolerations" => {
                    for (i, t) in self.seq(v, key).into_iter().enumerate() {
                        let tol = self.toleration(t, &format!("append_tolerations[{i}]"));
                        cfg.append_tolerations.push(tol);
                    }
                }
                "seconds_choices" => {
                    for (i, s) in self.seq(v, key).into_iter().enumerate() {
                        let s = self.seconds(s, &format!("seconds_choices[{i}]"));
                        cfg.seconds_choices.push(s);
                    }
                }
                "operations" => {
                    for (i, o) in self.seq(v, key).into_iter().enumerate() {
                        let path = format!("operations[{i}]");
                        let s = self.string(o, &path);
                        match OpKind::parse(&s) {
                            Some(k) => {
                                cfg.operations.insert(k);
                            }
                            None => {
                                let sup: Vec<_> = OpKind::ALL
                                    .iter()
                                    .map(|k| format!("\"{}\"", k.name()))
                                    .collect();
                                self.fail(
                                    o,
                                    &path,
                                    format!(
                                        "Unsupported value: \"{s}\": supported values: {}",
                                        sup.join(", ")
                                    ),
                                );
                            }
                        }
                    }
                }
                "budget" => cfg.budget = self.unsigned(v, key, 16) as u8,
                "step_ms" => cfg.step_ms = self.unsigned(v, key, 3_600_000) as i64,
                "horizon_ms" => cfg.horizon_ms = self.unsigned(v, key, 86_400_000) as i64,
                "workers" => cfg.workers = self.unsigned(v, key, 64) as usize,
                "node_channel_capacity" => {
                    cfg.node_channel_capacity = self.unsigned(v, key, 100) as usize
                }
                "pod_channel_capacity" => {
                    cfg.pod_channel_capacity = self.unsigned(v, key, 100) as usize
                }
                "processing_bound_ms" => {
                    cfg.processing_bound_ms = self.unsigned(v, key, 3_600_000) as i64
                }
                _ => unreachable!("fields() only returns allowed keys"),
            }
        }
        cfg
    }

    fn node(&mut self, n: &Node, path: &str) -> NodeSpec {
        let mut spec = NodeSpec {
            name: String::new(),
            taints: Vec::new(),
        };
        for (key, v) in self.fields(n, path, &["name", "taints"]) {
            let p = join(path, key);
            match key {
                "name" => spec.name = self.string(v, &p),
                _ => {
                    for (i, t) in self.seq(v, &p).into_iter().enumerate() {
                        let s = self.string(t, &format!("{p}[{i}]"));
                        spec.taints.push(parse_taint(&s));
                    }
                }
            }
        }
        if spec.name.is_empty() {
            self.fail(n, &join(path, "name"), "Required value".into());
        }
        spec
    }

    fn pod(&mut self, n: &Node, path: &str) -> PodSpec {
        let mut spec = PodSpec {
            name: String::new(),
            node: None,
            tolerations: Vec::new(),
        };
        for (key, v) in self.fields(n, path, &["name", "node", "tolerations"]) {
            let p = join(path, key);
            match key {
                "name" => spec.name = self.string(v, &p),
                "node" => {
                    if !matches!(scalar(v), Some(ScalarOwned::Null)) {
                        spec.node = Some(self.string(v, &p));
                    }
                }
                _ => {
                    for (i, t) in self.seq(v, &p).into_iter().enumerate() {
                        let tol = self.toleration(t, &format!("{p}[{i}]"));
                        spec.tolerations.push(tol);
                    }
                }
            }
        }
        if spec.name.is_empty() {
            self.fail(n, &join(path, "name"), "Required value".into());
        }
        spec
    }

    /// `{key, operator, value, effect, seconds}`; effect defaults to NoExecute (`""`: every effect).
    fn toleration(&mut self, n: &Node, path: &str) -> Toleration {
        let mut tol = Toleration::exists("", Some(TaintEffect::NoExecute), None);
        let mut operator = None;
        for (key, v) in self.fields(n, path, &["key", "operator", "value", "effect", "seconds"]) {
            let p = join(path, key);
            match key {
                "key" => tol.key = self.string(v, &p).into(),
                "value" => tol.value = self.string(v, &p).into(),
                "operator" => {
                    let s = self.string(v, &p);
                    match s.as_str() {
                        "Equal" | "Exists" => operator = Some(Operator::parse(&s)),
                        _ => self.fail(
                            v,
                            &p,
                            format!(
                                "Unsupported value: \"{s}\": supported values: \"Equal\", \"Exists\""
                            ),
                        ),
                    }
                }
                "effect" => {
                    let s = self.string(v, &p);
                    tol.effect = match s.as_str() {
                        "" => None,
                        "NoExecute" => Some(TaintEffect::NoExecute),
                        _ => {
                            self.fail(
                                v,
                                &p,
                                format!(
                                    "Unsupported value: \"{s}\": supported values: \"\", \"NoExecute\""
                                ),
                            );
                            None
                        }
                    }
                }
                _ => tol.seconds = self.seconds(v, &p),
            }
        }
        tol.operator = operator.unwrap_or(if tol.value.is_empty() {
            Operator::Exists
        } else {
            Operator::Equal
        });
        tol
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.into()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_config_parses() {
        for (name, _) in BUILTIN {
            let cfg = CheckConfig::builtin(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(cfg.name, *name);
            assert!(!cfg.description.is_empty(), "{name} needs a description");
        }
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let text = "nodes:\n  - name: n1\npods:\n  - name: p1\n    tolerations:\n      - key: k\n        operator: Foo\n";
        let e = CheckConfig::parse("x.yaml", "x", text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.yaml:7: pods[0].tolerations[0].operator: Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\""
        );
    }

    #[test]
    fn unknown_fields_and_dangling_nodes_are_rejected() {
        let e = CheckConfig::parse("x.yaml", "x", "nodes: []\nbogus: 1\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x.yaml:2: bogus: Unsupported field"),
            "{e}"
        );
        let e = CheckConfig::parse(
            "x.yaml",
            "x",
            "nodes: [{name: n1}]\npods: [{name: p1, node: n9}]\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "x.yaml: pods[0].node: Not found: \"n9\"");
    }

    #[test]
    fn overrides_extend_nodes_and_pods() {
        let mut cfg = CheckConfig::builtin("default").unwrap();
        cfg.apply(&Overrides {
            nodes: Some(3),
            pods: Some(3),
            budget: Some(1),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(cfg.nodes.len(), 3);
        assert_eq!(cfg.nodes[2].name, "n3");
        assert_eq!(cfg.pods.len(), 3);
        assert_eq!(cfg.pods[2].name, "p3");
        assert_eq!(cfg.budget, 1);
    }
}
