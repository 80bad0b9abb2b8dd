//! What a model run explores: the objects, the environment's repertoire and budget, the clock's
//! grid and horizon, and the controller's sizes. Configurations are data (`specs/configs/*.yaml`,
//! compiled in so the binary works from any directory) plus command-line overrides.
//!
//! Spec: MODEL-CFG (specs/spec.md, "Configurations").

#[cfg(test)]
mod declared;
mod read;

use std::collections::BTreeSet;
use taintcheck_core::api::{PodKey, Taint, Toleration};
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::Duration;
use taintcheck_formats::field::FieldPath;
use taintcheck_formats::properties::vocabulary::Declared;
use taintcheck_formats::yaml::Error;

/// A configuration's problems, each printed `file:line: field.path: message` (a command-line
/// value's without a line).
pub use taintcheck_formats::yaml::Errors as ConfigErrors;

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
    (
        "terminating-retaint",
        include_str!("../../../specs/configs/terminating-retaint.yaml"),
    ),
    (
        "relist-successor",
        include_str!("../../../specs/configs/relist-successor.yaml"),
    ),
    (
        "rate-limited-storm",
        include_str!("../../../specs/configs/rate-limited-storm.yaml"),
    ),
    (
        "rate-limited-cancel",
        include_str!("../../../specs/configs/rate-limited-cancel.yaml"),
    ),
];

/// The environment's operations (spec ENV-*). Each consumes one unit of the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    /// ENV-1: add a configured NoExecute taint to a node.
    AddTaint,
    /// ENV-2: remove a NoExecute taint.
    RemoveTaint,
    /// ENV-3: append a configured toleration to a pod.
    AppendToleration,
    /// ENV-4: change an existing toleration's `tolerationSeconds` to a configured value.
    SetSeconds,
    /// ENV-5: delete a pod.
    DeletePod,
    /// ENV-6: recreate a pod under its name with a new UID.
    RecreatePod,
    /// ENV-7: bind a pending pod to a node.
    BindPod,
    /// ENV-8: delete a node (its pods stay bound).
    DeleteNode,
    /// ENV-9: restart the controller.
    Restart,
    /// ENV-10: the next request the API server answers fails.
    FailNextCall,
    /// ENV-11: a Terminating pod's kubelet confirms its termination.
    KubeletConfirms,
    /// ENV-12: a force delete or PodGC removes a Terminating pod.
    ForceDelete,
    /// ENV-13: an informer's watch expires and it relists.
    DropWatch,
}

impl OpKind {
    /// Every operation, in spec order.
    pub const ALL: [OpKind; 13] = [
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
        OpKind::KubeletConfirms,
        OpKind::ForceDelete,
        OpKind::DropWatch,
    ];

    /// The name configurations and `--operations` use.
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
            OpKind::KubeletConfirms => "kubelet_confirms",
            OpKind::ForceDelete => "force_delete",
            OpKind::DropWatch => "drop_watch",
        }
    }

    /// The operation named `s` ([`OpKind::name`]).
    pub fn parse(s: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// A node at the start of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// The node's name.
    pub name: String,
    /// Initial NoExecute taints.
    pub taints: Vec<Taint>,
}

/// A pod at the start of the run. Recreations reuse its name and tolerations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpec {
    /// The pod's name (in [`NAMESPACE`]).
    pub name: String,
    /// `None`: pending (unbound).
    pub node: Option<String>,
    /// Its tolerations at creation.
    pub tolerations: Vec<Toleration>,
}

impl PodSpec {
    /// `default/name`.
    pub fn key(&self) -> PodKey {
        PodKey::new(NAMESPACE, &self.name)
    }
}

/// Every modelled pod lives here.
pub const NAMESPACE: &str = "default";

/// A complete run configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckConfig {
    /// The configuration's name (`default`, `three-pods`, ... or the file's).
    pub name: String,
    /// What it explores, in a sentence or two.
    pub description: String,
    /// The nodes at the start.
    pub nodes: Vec<NodeSpec>,
    /// The pods at the start.
    pub pods: Vec<PodSpec>,
    /// The NoExecute taints the environment may add (and remove).
    pub taints: Vec<Taint>,
    /// Tolerations the environment may append to a pod.
    pub append_tolerations: Vec<Toleration>,
    /// Values the environment may give an existing toleration's `tolerationSeconds`
    /// (`None`: forever).
    pub seconds_choices: Vec<Option<i64>>,
    /// The operations the environment may perform.
    pub operations: BTreeSet<OpKind>,
    /// How many environment operations one behaviour may perform.
    pub budget: u8,
    /// Environment operations happen at multiples of this many ms.
    pub step_ms: i64,
    /// The clock never passes this instant.
    pub horizon_ms: i64,
    /// The controller's workers (and shards).
    pub workers: usize,
    /// Each shard's node channel's capacity.
    pub node_channel_capacity: usize,
    /// Each shard's pod channel's capacity.
    pub pod_channel_capacity: usize,
    /// Slack of the bounded-eviction deadline (spec LIVE-1): retries and backoff timers.
    pub processing_bound_ms: i64,
    /// The user-defined properties it declares (spec PROP-1).
    pub properties: Vec<Declared>,
    /// The pods' `terminationGracePeriodSeconds`: a DELETE leaves a bound pod Terminating
    /// (API-2). `None`: the API server removes a deleted pod at once.
    pub termination_grace_seconds: Option<i64>,
    /// `qps` and `burst`: the controller's client waits for a token of this bucket before each
    /// request, `qps` tokens per 1,000 ms of model time (CORE-THROTTLE). `None`: never.
    pub rate_limit: Option<RateLimit>,
}

impl CheckConfig {
    /// The grace period a DELETE gives a bound pod (API-2): `termination_grace_seconds` as a
    /// duration; `None`: removed at once.
    pub fn termination_grace(&self) -> Option<Duration> {
        self.termination_grace_seconds.map(Duration::from_secs)
    }

    /// A built-in configuration by name.
    pub fn builtin(name: &str) -> Result<CheckConfig, ConfigErrors> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<_> = BUILTIN.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            unlocated(
                "--config",
                FieldPath::root(),
                format!(
                    "Unsupported value: \"{name}\": supported values: {}",
                    names.join(", ")
                ),
            )
        })?;
        CheckConfig::parse(&format!("{name}.yaml"), name, text)
    }

    /// A configuration by built-in name or by path to a YAML file.
    pub fn load(name_or_path: &str) -> Result<CheckConfig, ConfigErrors> {
        if name_or_path.ends_with(".yaml") || name_or_path.contains('/') {
            let text = taintcheck_formats::limits::read_file(std::path::Path::new(name_or_path))
                .map_err(|e| {
                    ConfigErrors(vec![Error {
                        file: e.file,
                        line: e.line,
                        field: FieldPath::root(),
                        message: e.message,
                    }])
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
    pub fn parse(file: &str, name: &str, text: &str) -> Result<CheckConfig, ConfigErrors> {
        read::parse(file, name, text)
    }

    /// The first problem between fields (references between nodes and pods, sizes a run
    /// needs), as the field at fault and a message.
    fn check(&self) -> Result<(), (FieldPath, String)> {
        let err = |path: FieldPath, msg: String| Err((path, msg));
        if self.nodes.is_empty() {
            return err(
                FieldPath::new("nodes"),
                "Required value: at least one node".into(),
            );
        }
        if self.pods.is_empty() {
            return err(
                FieldPath::new("pods"),
                "Required value: at least one pod".into(),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !seen.insert(n.name.as_str()) {
                return err(
                    FieldPath::new("nodes").index(i).child("name"),
                    format!("Duplicate value: \"{}\"", n.name),
                );
            }
        }
        let mut pods = BTreeSet::new();
        for (i, p) in self.pods.iter().enumerate() {
            let path = FieldPath::new("pods").index(i);
            if !pods.insert(p.name.as_str()) {
                return err(
                    path.child("name"),
                    format!("Duplicate value: \"{}\"", p.name),
                );
            }
            if let Some(node) = &p.node {
                if !seen.contains(node.as_str()) {
                    return err(path.child("node"), format!("Not found: \"{node}\""));
                }
            }
        }
        if self.step_ms <= 0 {
            return err(
                FieldPath::new("step_ms"),
                format!("Invalid value: {}: must be positive", self.step_ms),
            );
        }
        if self.horizon_ms < 0 {
            return err(
                FieldPath::new("horizon_ms"),
                format!("Invalid value: {}: must be non-negative", self.horizon_ms),
            );
        }
        if self.workers == 0 {
            return err(
                FieldPath::new("workers"),
                "Invalid value: 0: must be positive".into(),
            );
        }
        for (field, capacity) in [
            ("node_channel_capacity", self.node_channel_capacity),
            ("pod_channel_capacity", self.pod_channel_capacity),
        ] {
            if capacity == 0 {
                return err(
                    FieldPath::new(field),
                    "Invalid value: 0: channel capacities must be positive".into(),
                );
            }
        }
        Ok(())
    }

    /// Applies command-line overrides; each is validated like the file itself.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), ConfigErrors> {
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
                let mut p = template.clone().ok_or_else(|| {
                    unlocated("--pods", FieldPath::root(), "no pod to copy".into())
                })?;
                p.name = format!("p{}", self.pods.len() + 1);
                self.pods.push(p);
            }
        }
        if let Some(keys) = &o.taint_keys {
            self.taints = keys
                .iter()
                .map(|k| taintcheck_formats::taint_syntax::no_execute(k))
                .collect();
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
        self.check()
            .map_err(|(path, message)| unlocated("overrides", path, message))
    }

    /// Whether the environment may perform `op`.
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
    /// [`CheckConfig::seconds_choices`].
    pub seconds_choices: Option<Vec<Option<i64>>>,
    /// [`CheckConfig::operations`].
    pub operations: Option<BTreeSet<OpKind>>,
    /// [`CheckConfig::budget`].
    pub budget: Option<u8>,
    /// [`CheckConfig::step_ms`].
    pub step_ms: Option<i64>,
    /// [`CheckConfig::horizon_ms`].
    pub horizon_ms: Option<i64>,
    /// [`CheckConfig::workers`].
    pub workers: Option<usize>,
    /// [`CheckConfig::node_channel_capacity`].
    pub node_channel_capacity: Option<usize>,
    /// [`CheckConfig::pod_channel_capacity`].
    pub pod_channel_capacity: Option<usize>,
    /// [`CheckConfig::processing_bound_ms`].
    pub processing_bound_ms: Option<i64>,
}

/// A problem with a command-line value, which has no line.
fn unlocated(file: &str, field: FieldPath, message: String) -> ConfigErrors {
    ConfigErrors(vec![Error {
        file: file.to_owned(),
        line: None,
        field,
        message,
    }])
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
    fn unknown_fields_and_dangling_nodes_are_rejected_at_their_line() {
        let e = CheckConfig::parse("x.yaml", "x", "nodes: []\nbogus: 1\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x.yaml:2: bogus: unknown field: supported fields: "),
            "{e}"
        );
        let e = CheckConfig::parse(
            "x.yaml",
            "x",
            "nodes: [{name: n1}]\npods:\n  - name: p1\n    node: n9\n",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "x.yaml:4: pods[0].node: Not found: \"n9\"");
        let e = CheckConfig::parse("x.yaml", "x", "nodes:\n  - name: n1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.yaml:1: pods: Required value: at least one pod"
        );
    }

    /// Configurations spell the field as Kubernetes and scenarios do; the old spelling is an
    /// error that names the new one, never silently accepted.
    #[test]
    fn tolerations_say_toleration_seconds() {
        let text = "nodes: [{name: n1}]\npods:\n  - name: p1\n    tolerations:\n      - {key: k, tolerationSeconds: forever}\n      - {key: k, tolerationSeconds: 5}\n";
        let cfg = CheckConfig::parse("x.yaml", "x", text).unwrap();
        let seconds: Vec<_> = cfg.pods[0].tolerations.iter().map(|t| t.seconds).collect();
        assert_eq!(seconds, [None, Some(5)]);
        let old = text.replace("tolerationSeconds: 5", "seconds: 5");
        let e = CheckConfig::parse("x.yaml", "x", &old).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.yaml:6: pods[0].tolerations[1].seconds: unknown field: a toleration's time is \"tolerationSeconds\", as in Kubernetes"
        );
    }

    #[test]
    fn every_error_of_a_file_is_reported() {
        let text = "budget: 17\nworkers: many\nnodes: [{taints: [k]}]\n";
        let e = CheckConfig::parse("x.yaml", "x", text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.yaml:1: budget: Invalid value: \"17\": expected an integer from 0 to 16\n\
             x.yaml:2: workers: Invalid value: \"many\": expected an integer\n\
             x.yaml:3: nodes[0].name: Required value"
        );
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
