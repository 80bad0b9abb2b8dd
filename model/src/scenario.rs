//! Scenarios: a starting cluster, timed operations on it, and the outcomes each profile must
//! show. Shared by the runtime (`taintcheck run`), the model and the oracle (`expect`); the
//! corpus lives in `specs/scenarios/`, the format in `specs/scenario-format.md` (Spec: SCN-*).
//!
//! Read from YAML through saphyr so that every error names the file, the line and the field
//! (`n1.yaml:12: ops[3].at: Invalid value: "soon": expected a duration such as 300s or 250ms`).

use crate::api::{Node, NodeName, Operator, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use crate::field::{BadValue, FieldError, FieldPath, Segment};
use crate::manifest::{self, convert, Diagnostic, Located, Object};
use crate::taint_syntax::{parse_spec, TaintSpec};
use crate::time::{Duration, Time};
use crate::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use crate::validate;
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// A parsed scenario. Spec: SCN-1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// Upstream issue, interleaving and spec ids the scenario shows (`N1`, `#90794`, `I1`).
    pub refs: Vec<String>,
    pub admission: Admission,
    pub runtime: RuntimeKnobs,
    /// When the run stops (virtual time).
    pub until: Time,
    pub nodes: Vec<Node>,
    /// Pods as submitted, before admission; [`PodSpec::daemon_set`] marks DaemonSet pods.
    pub pods: Vec<PodSpec>,
    /// Sorted by time; equal times keep file order.
    pub ops: Vec<TimedOp>,
    /// Keyed by profile name, or [`ALL_PROFILES`] for expectations every profile must meet.
    pub expect: BTreeMap<String, Expectations>,
}

/// The `expect` key whose entries apply to every profile.
pub const ALL_PROFILES: &str = "all";

/// Admission plugins the in-memory API server applies on pod create and update. Spec: SCN-2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    /// `DefaultTolerationSeconds`: on in every real cluster, so on by default.
    pub default_toleration_seconds: bool,
    pub not_ready_seconds: i64,
    pub unreachable_seconds: i64,
}

impl Default for Admission {
    fn default() -> Self {
        Admission {
            default_toleration_seconds: true,
            not_ready_seconds: 300,
            unreachable_seconds: 300,
        }
    }
}

/// The controllable parts of the environment (SCN-3): how late informers deliver, how slow the
/// API server answers, how long a deleted pod stays terminating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeKnobs {
    pub workers: usize,
    pub node_informer_lag: Duration,
    pub pod_informer_lag: Duration,
    pub api_latency: Duration,
    /// `None`: a deleted pod's object is removed at once (grace period 0).
    pub deletion_grace: Option<Duration>,
}

impl Default for RuntimeKnobs {
    fn default() -> Self {
        RuntimeKnobs {
            workers: 8,
            node_informer_lag: Duration::ZERO,
            pod_informer_lag: Duration::ZERO,
            api_latency: Duration::ZERO,
            deletion_grace: None,
        }
    }
}

/// A pod of the scenario, before admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpec {
    pub pod: Pod,
    /// Created by a DaemonSet: its not-ready/unreachable tolerations are made infinite (§8.5).
    pub daemon_set: bool,
}

/// An operation at an instant; `line` is where it was written, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOp {
    pub at: Time,
    pub line: usize,
    pub op: Op,
}

/// What a scenario can do to the cluster, the controller and the environment. Spec: SCN-4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `kubectl taint nodes NODE SPEC --overwrite`: `key=value:Effect` adds (replacing a taint
    /// with the same key and effect), `key:Effect-` or `key-` removes.
    Taint {
        node: NodeName,
        spec: TaintSpec,
    },
    CreateNode(Node),
    DeleteNode(NodeName),
    CreatePod(PodSpec),
    /// Delete the pod object (grace per [`RuntimeKnobs::deletion_grace`]).
    DeletePod(PodKey),
    /// Delete and at once create a pod with the same name and a new UID (a StatefulSet).
    RecreatePod {
        key: PodKey,
        uid: Uid,
        node: Option<NodeName>,
        /// Replaces the predecessor's tolerations when given.
        tolerations: Option<Vec<Toleration>>,
    },
    /// The scheduler binds a pending pod.
    BindPod {
        key: PodKey,
        node: NodeName,
    },
    /// Append a toleration (allowed by pod-update validation, §8.2).
    AddToleration {
        key: PodKey,
        toleration: Toleration,
    },
    /// Change `tolerationSeconds` of the toleration at `index` (`None`: forever).
    SetTolerationSeconds {
        key: PodKey,
        index: usize,
        seconds: Option<i64>,
    },
    /// kube-controller-manager restarts: all in-memory state is lost, informers relist.
    RestartController,
    /// The next `times` requests of `verb` (for `pod`, or any pod) fail with `result`.
    FailRequests {
        verb: RequestVerb,
        pod: Option<PodKey>,
        times: u32,
        result: ResponseResult,
    },
    SetApiLatency(Duration),
    SetInformerLag {
        nodes: Option<Duration>,
        pods: Option<Duration>,
    },
    /// The informer's watch of `kind` breaks for `duration`; events in between are lost and
    /// the informer relists when it reconnects.
    DropWatch {
        kind: ObjectKind,
        duration: Duration,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    Nodes,
    Pods,
}

/// What a run must show under one profile. Spec: SCN-5.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations {
    pub deleted: Vec<ExpectDeleted>,
    pub not_deleted: Vec<ExpectNotDeleted>,
    pub events: Vec<ExpectEvent>,
}

/// A pod by name, optionally one incarnation of it (by UID).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodRef {
    pub key: PodKey,
    pub uid: Option<Uid>,
}

impl fmt::Display for PodRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.uid {
            Some(uid) => write!(f, "{} (uid {uid})", self.key),
            None => write!(f, "{}", self.key),
        }
    }
}

/// The controller never deleted the pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectNotDeleted {
    pub pod: PodRef,
    pub line: usize,
}

/// The controller's DELETE removed the pod at a time in `[from, to]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectDeleted {
    pub pod: PodRef,
    pub from: Time,
    pub to: Time,
    pub line: usize,
}

/// Events with this reason and message on the pod: exactly `count`, or at least one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectEvent {
    pub pod: PodKey,
    pub reason: String,
    pub message: String,
    pub count: Option<usize>,
    pub line: usize,
}

/// A scenario file that could not be read; displays as `file:line: field: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {}{message}", field_prefix(.field))]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

/// All errors of one file, in file order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

/// Reads a scenario from YAML text; `file` names it in errors, and the manifest files it
/// points at are read relative to `file`'s directory (SCN-4).
pub fn parse_scenario(file: &str, text: &str) -> Result<Scenario, ScenarioErrors> {
    let docs = MarkedYaml::load_from_str(text).map_err(|e| {
        ScenarioErrors(vec![ScenarioError {
            file: file.to_string(),
            line: e.marker().line(),
            field: String::new(),
            message: format!("invalid YAML: {}", e.info()),
        }])
    })?;
    let mut r = Reader {
        file: file.to_string(),
        dir: std::path::Path::new(file)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
        errors: Vec::new(),
    };
    let scenario = match docs.as_slice() {
        [doc] => r.scenario(&Field::root(doc)),
        _ => {
            r.error_at(1, "", "expected exactly one YAML document");
            None
        }
    };
    // The scenario's own errors first, then those of each manifest file it points at.
    r.errors
        .sort_by(|a, b| (a.file != file, &a.file, a.line).cmp(&(b.file != file, &b.file, b.line)));
    // A manifest file two entries point at is reported once.
    r.errors.dedup();
    match scenario {
        Some(s) if r.errors.is_empty() => Ok(s),
        _ => Err(ScenarioErrors(r.errors)),
    }
}

/// A YAML node and the field path that leads to it.
#[derive(Clone, Copy)]
struct Field<'a, 'y> {
    node: &'a MarkedYaml<'y>,
    path: &'a Path<'a>,
}

/// A field path as a linked list, so sub-fields borrow instead of allocating.
enum Path<'a> {
    Root,
    Child(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Child(Path::Root, name) => f.write_str(name),
            Path::Child(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

static ROOT: Path<'static> = Path::Root;

impl<'a, 'y> Field<'a, 'y> {
    fn root(node: &'a MarkedYaml<'y>) -> Field<'a, 'y> {
        Field { node, path: &ROOT }
    }

    fn line(&self) -> usize {
        self.node.span.start.line()
    }

    fn mapping(&self) -> Option<&'a saphyr::AnnotatedMapping<'y, MarkedYaml<'y>>> {
        match &self.node.data {
            YamlData::Mapping(m) => Some(m),
            _ => None,
        }
    }

    fn sequence(&self) -> Option<&'a Vec<MarkedYaml<'y>>> {
        match &self.node.data {
            YamlData::Sequence(s) => Some(s),
            _ => None,
        }
    }

    fn scalar(&self) -> Option<&'a Scalar<'y>> {
        match &self.node.data {
            YamlData::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The scalar as text (strings, numbers and booleans alike).
    fn text(&self) -> Option<String> {
        Some(match self.scalar()? {
            Scalar::String(s) => s.to_string(),
            Scalar::Integer(i) => i.to_string(),
            Scalar::FloatingPoint(f) => f.to_string(),
            Scalar::Boolean(b) => b.to_string(),
            Scalar::Null => return None,
        })
    }

    fn is_null(&self) -> bool {
        matches!(self.scalar(), Some(Scalar::Null))
    }
}

struct Reader {
    file: String,
    /// Where manifest paths are relative to: the scenario file's directory.
    dir: PathBuf,
    errors: Vec<ScenarioError>,
}

/// Expands to a child path and a field for `key` of the mapping `$f` (if present).
macro_rules! with_child {
    ($f:expr, $key:expr, |$child:ident| $body:expr) => {{
        let path = Path::Child($f.path, $key);
        match $f
            .mapping()
            .and_then(|m| m.get(&MarkedYaml::value_from_str($key)))
        {
            Some(node) => {
                let $child = Field { node, path: &path };
                Some($body)
            }
            None => None,
        }
    }};
}

impl Reader {
    fn error_at(&mut self, line: usize, field: &str, message: &str) {
        self.errors.push(ScenarioError {
            file: self.file.clone(),
            line,
            field: field.to_string(),
            message: message.to_string(),
        });
    }

    fn error(&mut self, f: &Field, message: &str) {
        self.error_at(f.line(), &f.path.to_string(), message);
    }

    fn invalid(&mut self, f: &Field, expected: &str) {
        let shown = f.text().unwrap_or_else(|| match &f.node.data {
            YamlData::Mapping(_) => "a mapping".into(),
            YamlData::Sequence(_) => "a list".into(),
            _ => "null".into(),
        });
        self.error(f, &format!("Invalid value: {shown:?}: expected {expected}"));
    }

    /// Reports keys of mapping `f` that are not in `known`; false if `f` is not a mapping.
    fn mapping_keys(&mut self, f: &Field, known: &[&str]) -> bool {
        let Some(m) = f.mapping() else {
            self.invalid(f, "a mapping");
            return false;
        };
        for key in m.keys() {
            let name = Field {
                node: key,
                path: f.path,
            }
            .text()
            .unwrap_or_default();
            if !known.contains(&name.as_str()) {
                let path = Path::Child(f.path, &name);
                let supported: Vec<String> = known.iter().map(|k| format!("{k:?}")).collect();
                self.error_at(
                    key.span.start.line(),
                    &path.to_string(),
                    &format!("unknown field: supported fields: {}", supported.join(", ")),
                );
            }
        }
        true
    }

    fn required<T>(&mut self, f: &Field, key: &str, v: Option<Option<T>>) -> Option<T> {
        match v {
            Some(v) => v,
            None => {
                let path = Path::Child(f.path, key);
                self.error_at(f.line(), &path.to_string(), "Required value");
                None
            }
        }
    }

    fn string(&mut self, f: &Field) -> Option<String> {
        let s = f.text();
        if s.is_none() {
            self.invalid(f, "a string");
        }
        s
    }

    fn boolean(&mut self, f: &Field) -> Option<bool> {
        match f.scalar() {
            Some(Scalar::Boolean(b)) => Some(*b),
            _ => {
                self.invalid(f, "true or false");
                None
            }
        }
    }

    fn integer(&mut self, f: &Field) -> Option<i64> {
        match f.scalar() {
            Some(Scalar::Integer(i)) => Some(*i),
            _ => {
                self.invalid(f, "an integer");
                None
            }
        }
    }

    fn count(&mut self, f: &Field) -> Option<usize> {
        let i = self.integer(f)?;
        let n = usize::try_from(i).ok();
        if n.is_none() {
            self.invalid(f, "a non-negative integer");
        }
        n
    }

    /// `300s`, `1.5s`, `250ms`, `5m`, `1h`, or a bare number of seconds.
    fn duration(&mut self, f: &Field) -> Option<Duration> {
        let d = f.text().and_then(|s| parse_duration(&s));
        if d.is_none() {
            self.invalid(f, "a duration such as 300s, 1.5s or 250ms");
        }
        d
    }

    fn list<'a, 'y, T>(
        &mut self,
        f: &Field<'a, 'y>,
        mut item: impl FnMut(&mut Self, &Field<'_, 'y>) -> Option<T>,
    ) -> Vec<T> {
        let Some(seq) = f.sequence() else {
            if !f.is_null() {
                self.invalid(f, "a list");
            }
            return Vec::new();
        };
        seq.iter()
            .enumerate()
            .filter_map(|(i, node)| {
                let path = Path::Index(f.path, i);
                item(self, &Field { node, path: &path })
            })
            .collect()
    }

    fn scenario(&mut self, f: &Field) -> Option<Scenario> {
        const KEYS: &[&str] = &[
            "name",
            "description",
            "refs",
            "admission",
            "runtime",
            "until",
            "nodes",
            "pods",
            "ops",
            "expect",
        ];
        if !self.mapping_keys(f, KEYS) {
            return None;
        }
        let name = with_child!(f, "name", |c| self.string(&c));
        let name = self.required(f, "name", name);
        let description = with_child!(f, "description", |c| self.string(&c))
            .flatten()
            .unwrap_or_default();
        let refs =
            with_child!(f, "refs", |c| self.list(&c, |r, i| r.string(i))).unwrap_or_default();
        let admission = with_child!(f, "admission", |c| self.admission(&c))
            .flatten()
            .unwrap_or_default();
        let runtime = with_child!(f, "runtime", |c| self.runtime(&c))
            .flatten()
            .unwrap_or_default();
        let nodes = with_child!(f, "nodes", |c| self.list(&c, |r, n| r.node_entry(n)))
            .unwrap_or_default()
            .concat();
        let pods = with_child!(f, "pods", |c| self.list(&c, |r, p| r.pod_entry(p)))
            .unwrap_or_default()
            .concat();
        let mut ops =
            with_child!(f, "ops", |c| self.list(&c, |r, o| r.timed_op(o))).unwrap_or_default();
        ops.sort_by_key(|o| o.at);
        let last = ops.last().map_or(Time::ZERO, |o| o.at);
        let until = with_child!(f, "until", |c| self.duration(&c))
            .flatten()
            .map(|d| Time::ZERO.plus(d))
            .unwrap_or(last.plus(Duration::from_secs(600)));
        let expect = with_child!(f, "expect", |c| self.expectations(&c))
            .flatten()
            .unwrap_or_default();
        Some(Scenario {
            name: name?,
            description,
            refs,
            admission,
            runtime,
            until,
            nodes,
            pods,
            ops,
            expect,
        })
    }

    fn admission(&mut self, f: &Field) -> Option<Admission> {
        const KEYS: &[&str] = &[
            "defaultTolerationSeconds",
            "notReadySeconds",
            "unreachableSeconds",
        ];
        if !self.mapping_keys(f, KEYS) {
            return None;
        }
        let d = Admission::default();
        Some(Admission {
            default_toleration_seconds: with_child!(f, "defaultTolerationSeconds", |c| self
                .boolean(&c))
            .flatten()
            .unwrap_or(d.default_toleration_seconds),
            not_ready_seconds: with_child!(f, "notReadySeconds", |c| self.integer(&c))
                .flatten()
                .unwrap_or(d.not_ready_seconds),
            unreachable_seconds: with_child!(f, "unreachableSeconds", |c| self.integer(&c))
                .flatten()
                .unwrap_or(d.unreachable_seconds),
        })
    }

    fn runtime(&mut self, f: &Field) -> Option<RuntimeKnobs> {
        const KEYS: &[&str] = &[
            "workers",
            "nodeInformerLag",
            "podInformerLag",
            "apiLatency",
            "deletionGrace",
        ];
        if !self.mapping_keys(f, KEYS) {
            return None;
        }
        let d = RuntimeKnobs::default();
        let workers = with_child!(f, "workers", |c| {
            let n = self.count(&c);
            if n == Some(0) {
                self.invalid(&c, "at least 1 worker");
                None
            } else {
                n
            }
        })
        .flatten();
        Some(RuntimeKnobs {
            workers: workers.unwrap_or(d.workers),
            node_informer_lag: with_child!(f, "nodeInformerLag", |c| self.duration(&c))
                .flatten()
                .unwrap_or(d.node_informer_lag),
            pod_informer_lag: with_child!(f, "podInformerLag", |c| self.duration(&c))
                .flatten()
                .unwrap_or(d.pod_informer_lag),
            api_latency: with_child!(f, "apiLatency", |c| self.duration(&c))
                .flatten()
                .unwrap_or(d.api_latency),
            deletion_grace: with_child!(f, "deletionGrace", |c| self.duration(&c)).flatten(),
        })
    }

    /// An entry of `nodes`: the compact form, or `{manifest: …}` (every Node it holds).
    fn node_entry(&mut self, f: &Field) -> Option<Vec<Node>> {
        if with_child!(f, "manifest", |_c| ()).is_none() {
            return self.node(f).map(|n| vec![n]);
        }
        let objects = self.manifest(f, "Node")?;
        Some(objects.iter().filter_map(Located::compact_node).collect())
    }

    /// An entry of `pods`: the compact form, or `{manifest: …}` (every Pod it holds; one
    /// controlled by a DaemonSet is a DaemonSet pod, one without a UID gets `NAME-1`).
    fn pod_entry(&mut self, f: &Field) -> Option<Vec<PodSpec>> {
        if with_child!(f, "manifest", |_c| ()).is_none() {
            return self.pod(f).map(|p| vec![p]);
        }
        let objects = self.manifest(f, "Pod")?;
        let specs = objects.iter().filter_map(|o| match &o.object {
            Object::Pod(k) => {
                let mut pod = convert::pod_from_k8s(k);
                if pod.uid.0.is_empty() {
                    pod.uid = Uid(first_uid(&pod.key.name).as_str().into());
                }
                let daemon_set = k
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.kind == "DaemonSet" && o.controller == Some(true));
                Some(PodSpec { pod, daemon_set })
            }
            Object::Node(_) => None,
        });
        Some(specs.collect())
    }

    /// `{manifest: PATH | OBJECT}`: Kubernetes manifests as `kubectl get -o yaml|json` prints
    /// them, from a file relative to the scenario's directory (one object, a `List`, several
    /// documents) or inline. Each must be a `kind` with a name, valid as the API server with
    /// the comparison operators on accepts it (what `Lt`/`Gt` mean is each profile's matter).
    /// `None` if anything is wrong.
    fn manifest(&mut self, f: &Field, kind: &'static str) -> Option<Vec<Located>> {
        if !self.mapping_keys(f, &["manifest"]) {
            return None;
        }
        let read = with_child!(f, "manifest", |c| self.read_manifest(&c, kind)).flatten()?;
        let before = self.errors.len();
        for d in &read.errors {
            self.diagnostic(d);
        }
        for o in &read.objects {
            let mut errors: Vec<Diagnostic> = o.validate(true);
            if o.kind() != kind {
                let e = FieldError::not_supported(
                    FieldPath::new("kind"),
                    BadValue::Str(o.kind().to_owned()),
                    &[kind],
                );
                errors.push(o.locate(&e));
            }
            let name = match &o.object {
                Object::Pod(p) => p.metadata.name.as_deref(),
                Object::Node(n) => n.metadata.name.as_deref(),
            };
            if name.is_none_or(str::is_empty) {
                let path = FieldPath::new("metadata").child("name");
                let e = FieldError::required(path, "name or generateName is required");
                errors.push(o.locate(&e));
            }
            for d in &errors {
                self.diagnostic(d);
            }
        }
        (self.errors.len() == before).then_some(read.objects)
    }

    /// The manifest field's objects: inline, or read from the file it names.
    fn read_manifest(&mut self, f: &Field, kind: &str) -> Option<manifest::Manifests> {
        if f.mapping().is_some() {
            return Some(manifest::read_yaml(&self.file, f.node));
        }
        let Some(relative) = f.text().filter(|t| !t.is_empty()) else {
            self.invalid(
                f,
                &format!("a path to a {kind} manifest, or the manifest itself"),
            );
            return None;
        };
        let path = self.dir.join(&relative);
        let read = manifest::read_file(&path);
        if read.objects.is_empty() && read.errors.is_empty() {
            self.error(
                f,
                &format!(
                    "Invalid value: {relative:?}: {} holds no object",
                    path.display()
                ),
            );
            return None;
        }
        if let [Diagnostic {
            line: None,
            message,
            ..
        }] = read.errors.as_slice()
        {
            self.error(f, &format!("Invalid value: {relative:?}: {message}"));
            return None;
        }
        Some(read)
    }

    /// A manifest's problem, in its own file.
    fn diagnostic(&mut self, d: &Diagnostic) {
        self.errors.push(ScenarioError {
            file: d.file.clone(),
            line: d.line.unwrap_or(1),
            field: d.path.clone(),
            message: d.message.clone(),
        });
    }

    fn node(&mut self, f: &Field) -> Option<Node> {
        if !self.mapping_keys(f, &["name", "taints"]) {
            return None;
        }
        let name = with_child!(f, "name", |c| self.string(&c));
        let name = self.required(f, "name", name)?;
        let taints =
            with_child!(f, "taints", |c| self.list(&c, |r, t| r.taint(t))).unwrap_or_default();
        Some(Node {
            name: name.as_str().into(),
            taints,
        })
    }

    /// A taint in `kubectl taint` syntax: `key=value:Effect` or `key:Effect`.
    fn taint(&mut self, f: &Field) -> Option<Taint> {
        let text = self.string(f)?;
        match parse_spec(&text) {
            Ok(TaintSpec::Add(t)) => Some(t),
            Ok(TaintSpec::Remove { .. }) => {
                self.invalid(f, "a taint to add, key=value:Effect or key:Effect");
                None
            }
            Err(e) => {
                self.error(f, &format!("Invalid value: {text:?}: {e}"));
                None
            }
        }
    }

    fn pod_key(&mut self, f: &Field) -> Option<PodKey> {
        let text = self.string(f)?;
        let key = match text.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                PodKey::new(ns, name)
            }
            None if !text.is_empty() => PodKey::new("default", &text),
            _ => {
                self.invalid(f, "a pod as NAME or NAMESPACE/NAME");
                return None;
            }
        };
        Some(key)
    }

    fn pod(&mut self, f: &Field) -> Option<PodSpec> {
        const KEYS: &[&str] = &[
            "name",
            "namespace",
            "uid",
            "node",
            "tolerations",
            "daemonSet",
        ];
        if !self.mapping_keys(f, KEYS) {
            return None;
        }
        let name = with_child!(f, "name", |c| self.string(&c));
        let name = self.required(f, "name", name)?;
        let namespace = with_child!(f, "namespace", |c| self.string(&c))
            .flatten()
            .unwrap_or_else(|| "default".into());
        let uid = with_child!(f, "uid", |c| self.string(&c))
            .flatten()
            .unwrap_or_else(|| first_uid(&name));
        let node = with_child!(f, "node", |c| self.string(&c)).flatten();
        let tolerations =
            with_child!(f, "tolerations", |c| self.tolerations(&c)).unwrap_or_default();
        let daemon_set = with_child!(f, "daemonSet", |c| self.boolean(&c))
            .flatten()
            .unwrap_or(false);
        Some(PodSpec {
            pod: Pod {
                key: PodKey::new(&namespace, &name),
                uid: Uid(uid.as_str().into()),
                node_name: node.map(|n| n.as_str().into()),
                tolerations,
            },
            daemon_set,
        })
    }

    fn tolerations(&mut self, f: &Field) -> Vec<Toleration> {
        self.list(f, |r, t| r.toleration(t))
    }

    /// A toleration with Kubernetes' field names (`key`, `operator`, `value`, `effect`,
    /// `tolerationSeconds`); absent fields are empty, as in the API.
    fn toleration(&mut self, f: &Field) -> Option<Toleration> {
        const KEYS: &[&str] = &["key", "operator", "value", "effect", "tolerationSeconds"];
        if !self.mapping_keys(f, KEYS) {
            return None;
        }
        let text = |r: &mut Self, key: &str| {
            with_child!(f, key, |c| if c.is_null() {
                Some(String::new())
            } else {
                r.string(&c)
            })
            .flatten()
            .unwrap_or_default()
        };
        let key = text(self, "key");
        let operator = text(self, "operator");
        let value = text(self, "value");
        let effect = text(self, "effect");
        let seconds = with_child!(f, "tolerationSeconds", |c| if c.is_null() {
            None
        } else {
            self.integer(&c)
        })
        .flatten();
        // As the API server validates it (VAL-TOL), with the comparison operators on as for
        // manifests; errors are reported at the offending field of this toleration.
        let raw = k8s_openapi::api::core::v1::Toleration {
            key: Some(key.clone()),
            operator: Some(operator.clone()),
            value: Some(value.clone()),
            effect: Some(effect.clone()),
            toleration_seconds: seconds,
        };
        let invalid =
            validate::tolerations_at(std::slice::from_ref(&raw), &FieldPath::root(), true);
        for e in &invalid {
            let name = match e.path.segments().last() {
                Some(Segment::Child(name)) => name.as_str(),
                _ => "",
            };
            let line = with_child!(f, name, |c| c.line()).unwrap_or_else(|| f.line());
            self.error_at(line, &format!("{}.{name}", f.path), &e.body());
        }
        if !invalid.is_empty() {
            return None;
        }
        Some(Toleration {
            key: key.as_str().into(),
            operator: Operator::parse(&operator),
            value: value.as_str().into(),
            effect: (!effect.is_empty()).then(|| TaintEffect::parse(&effect)),
            seconds,
        })
    }

    fn timed_op(&mut self, f: &Field) -> Option<TimedOp> {
        const OPS: &[&str] = &[
            "taint",
            "createNode",
            "deleteNode",
            "createPod",
            "deletePod",
            "recreatePod",
            "bindPod",
            "addToleration",
            "setTolerationSeconds",
            "restartController",
            "failRequests",
            "apiLatency",
            "informerLag",
            "dropWatch",
        ];
        let mut keys = vec!["at"];
        keys.extend_from_slice(OPS);
        keys.extend_from_slice(&[
            "node",
            "uid",
            "tolerations",
            "toleration",
            "index",
            "seconds",
            "pod",
            "times",
            "result",
            "for",
        ]);
        if !self.mapping_keys(f, &keys) {
            return None;
        }
        let at = with_child!(f, "at", |c| self.duration(&c));
        let at = Time::ZERO.plus(self.required(f, "at", at)?);
        let present: Vec<&str> = OPS
            .iter()
            .copied()
            .filter(|k| with_child!(f, k, |_c| ()).is_some())
            .collect();
        let [kind] = present.as_slice() else {
            let supported: Vec<String> = OPS.iter().map(|k| format!("{k:?}")).collect();
            self.error(
                f,
                &format!(
                    "expected exactly one operation: supported operations: {}",
                    supported.join(", ")
                ),
            );
            return None;
        };
        let op = self.op(f, kind)?;
        Some(TimedOp {
            at,
            line: f.line(),
            op,
        })
    }

    fn op(&mut self, f: &Field, kind: &str) -> Option<Op> {
        let node_arg = |r: &mut Self| {
            let n = with_child!(f, "node", |c| r.string(&c));
            r.required(f, "node", n).map(|n| NodeName::from(n.as_str()))
        };
        Some(match kind {
            "taint" => with_child!(f, "taint", |c| self.taint_op(&c)).flatten()?,
            "createNode" => Op::CreateNode(with_child!(f, kind, |c| self.node(&c)).flatten()?),
            "deleteNode" => Op::DeleteNode(
                with_child!(f, kind, |c| self.string(&c))
                    .flatten()?
                    .as_str()
                    .into(),
            ),
            "createPod" => Op::CreatePod(with_child!(f, kind, |c| self.pod(&c)).flatten()?),
            "deletePod" => Op::DeletePod(with_child!(f, kind, |c| self.pod_key(&c)).flatten()?),
            "recreatePod" => {
                let key = with_child!(f, kind, |c| self.pod_key(&c)).flatten()?;
                let uid = with_child!(f, "uid", |c| self.string(&c)).flatten();
                let uid = self.required(f, "uid", uid.map(Some))?;
                let node = with_child!(f, "node", |c| self.string(&c))
                    .flatten()
                    .map(|n| n.as_str().into());
                let tolerations = with_child!(f, "tolerations", |c| self.tolerations(&c));
                Op::RecreatePod {
                    key,
                    uid: Uid(uid.as_str().into()),
                    node,
                    tolerations,
                }
            }
            "bindPod" => Op::BindPod {
                key: with_child!(f, kind, |c| self.pod_key(&c)).flatten()?,
                node: node_arg(self)?,
            },
            "addToleration" => {
                let key = with_child!(f, kind, |c| self.pod_key(&c)).flatten()?;
                let t = with_child!(f, "toleration", |c| self.toleration(&c));
                Op::AddToleration {
                    key,
                    toleration: self.required(f, "toleration", t)?,
                }
            }
            "setTolerationSeconds" => {
                let key = with_child!(f, kind, |c| self.pod_key(&c)).flatten()?;
                let index = with_child!(f, "index", |c| self.count(&c));
                let index = self.required(f, "index", index)?;
                let seconds = with_child!(f, "seconds", |c| if c.is_null() {
                    Some(None)
                } else {
                    self.integer(&c).map(Some)
                });
                Op::SetTolerationSeconds {
                    key,
                    index,
                    seconds: self.required(f, "seconds", seconds)?,
                }
            }
            "restartController" => Op::RestartController,
            "failRequests" => self.fail_requests(f)?,
            "apiLatency" => {
                Op::SetApiLatency(with_child!(f, kind, |c| self.duration(&c)).flatten()?)
            }
            "informerLag" => with_child!(f, kind, |c| self.informer_lag(&c)).flatten()?,
            "dropWatch" => {
                let kind = with_child!(f, kind, |c| match c.text().as_deref() {
                    Some("nodes") => Some(ObjectKind::Nodes),
                    Some("pods") => Some(ObjectKind::Pods),
                    _ => {
                        self.invalid(&c, "nodes or pods");
                        None
                    }
                })
                .flatten()?;
                let duration = with_child!(f, "for", |c| self.duration(&c));
                Op::DropWatch {
                    kind,
                    duration: self.required(f, "for", duration)?,
                }
            }
            _ => unreachable!("timed_op only passes names from OPS"),
        })
    }

    /// `taint: NODE key=value:Effect` adds; `taint: NODE key:Effect-` or `NODE key-` removes.
    fn taint_op(&mut self, f: &Field) -> Option<Op> {
        let text = self.string(f)?;
        let Some((node, spec)) = text.trim().split_once(' ') else {
            self.invalid(f, "NODE followed by a taint in kubectl syntax");
            return None;
        };
        let node: NodeName = node.into();
        match parse_spec(spec.trim()) {
            Ok(spec) => Some(Op::Taint { node, spec }),
            Err(e) => {
                self.error(f, &format!("Invalid value: {spec:?}: {e}"));
                None
            }
        }
    }

    /// `informerLag: {nodes: D, pods: D}`: either may be left out (unchanged).
    fn informer_lag(&mut self, f: &Field) -> Option<Op> {
        if !self.mapping_keys(f, &["nodes", "pods"]) {
            return None;
        }
        Some(Op::SetInformerLag {
            nodes: with_child!(f, "nodes", |c| self.duration(&c)).flatten(),
            pods: with_child!(f, "pods", |c| self.duration(&c)).flatten(),
        })
    }

    fn fail_requests(&mut self, f: &Field) -> Option<Op> {
        let verb = with_child!(f, "failRequests", |c| match c.text().as_deref() {
            Some("get") => Some(RequestVerb::Get),
            Some("patch") => Some(RequestVerb::Patch),
            Some("delete") => Some(RequestVerb::Delete),
            _ => {
                self.invalid(&c, "get, patch or delete");
                None
            }
        })
        .flatten()?;
        let pod = with_child!(f, "pod", |c| self.pod_key(&c)).flatten();
        let times = with_child!(f, "times", |c| self.count(&c));
        let times = self.required(f, "times", times)?;
        let result = with_child!(f, "result", |c| match c.text().as_deref() {
            Some("failed") => Some(ResponseResult::Failed),
            Some("notFound") => Some(ResponseResult::NotFound),
            _ => {
                self.invalid(&c, "failed or notFound");
                None
            }
        })
        .flatten()
        .unwrap_or(ResponseResult::Failed);
        Some(Op::FailRequests {
            verb,
            pod,
            times: u32::try_from(times).unwrap_or(u32::MAX),
            result,
        })
    }

    fn expectations(&mut self, f: &Field) -> Option<BTreeMap<String, Expectations>> {
        let m = f.mapping()?;
        let mut out = BTreeMap::new();
        for (k, v) in m.iter() {
            let profile = Field {
                node: k,
                path: f.path,
            }
            .text()
            .unwrap_or_default();
            let path = Path::Child(f.path, &profile);
            let field = Field {
                node: v,
                path: &path,
            };
            if let Some(e) = self.expectation(&field) {
                out.insert(profile, e);
            }
        }
        Some(out)
    }

    fn expectation(&mut self, f: &Field) -> Option<Expectations> {
        if !self.mapping_keys(f, &["deleted", "notDeleted", "events"]) {
            return None;
        }
        Some(Expectations {
            deleted: with_child!(f, "deleted", |c| self.list(&c, |r, d| r.expect_deleted(d)))
                .unwrap_or_default(),
            not_deleted: with_child!(f, "notDeleted", |c| self.list(&c, |r, p| r.pod_ref(p).map(
                |pod| ExpectNotDeleted {
                    pod,
                    line: p.line()
                }
            )))
            .unwrap_or_default(),
            events: with_child!(f, "events", |c| self.list(&c, |r, e| r.expect_event(e)))
                .unwrap_or_default(),
        })
    }

    /// `default/web-0` or `{pod: default/web-0, uid: web-0-2}`.
    fn pod_ref(&mut self, f: &Field) -> Option<PodRef> {
        if f.mapping().is_none() {
            return Some(PodRef {
                key: self.pod_key(f)?,
                uid: None,
            });
        }
        if !self.mapping_keys(f, &["pod", "uid"]) {
            return None;
        }
        let key = with_child!(f, "pod", |c| self.pod_key(&c));
        Some(PodRef {
            key: self.required(f, "pod", key)?,
            uid: with_child!(f, "uid", |c| self.string(&c))
                .flatten()
                .map(|u| Uid(u.as_str().into())),
        })
    }

    /// `{pod, uid?, at}` or `{pod, uid?, within: [from, to]}`.
    fn expect_deleted(&mut self, f: &Field) -> Option<ExpectDeleted> {
        if !self.mapping_keys(f, &["pod", "uid", "at", "within"]) {
            return None;
        }
        let key = with_child!(f, "pod", |c| self.pod_key(&c));
        let key = self.required(f, "pod", key)?;
        let uid = with_child!(f, "uid", |c| self.string(&c))
            .flatten()
            .map(|u| Uid(u.as_str().into()));
        let at = with_child!(f, "at", |c| self.duration(&c)).flatten();
        let within = with_child!(f, "within", |c| {
            let bounds = self.list(&c, |r, d| r.duration(d));
            match bounds.as_slice() {
                [from, to] if from <= to => Some((*from, *to)),
                _ => {
                    self.invalid(&c, "[FROM, TO] with FROM <= TO");
                    None
                }
            }
        })
        .flatten();
        let (from, to) = match (at, within) {
            (Some(at), None) => (at, at),
            (None, Some(w)) => w,
            _ => {
                self.error(f, "expected exactly one of at, within");
                return None;
            }
        };
        Some(ExpectDeleted {
            pod: PodRef { key, uid },
            from: Time::ZERO.plus(from),
            to: Time::ZERO.plus(to),
            line: f.line(),
        })
    }

    fn expect_event(&mut self, f: &Field) -> Option<ExpectEvent> {
        if !self.mapping_keys(f, &["pod", "reason", "message", "count"]) {
            return None;
        }
        let key = with_child!(f, "pod", |c| self.pod_key(&c));
        let key = self.required(f, "pod", key)?;
        let message = with_child!(f, "message", |c| self.string(&c));
        Some(ExpectEvent {
            pod: key,
            reason: with_child!(f, "reason", |c| self.string(&c))
                .flatten()
                .unwrap_or_else(|| "TaintManagerEviction".into()),
            message: self.required(f, "message", message)?,
            count: with_child!(f, "count", |c| self.count(&c)).flatten(),
            line: f.line(),
        })
    }
}

/// The UID a scenario pod gets when it names none: `NAME-1`; `recreatePod` names the next.
pub fn first_uid(name: &str) -> String {
    format!("{name}-1")
}

/// `300s`, `1.5s`, `250ms`, `5m`, `1h`, or a bare (integer or decimal) number of seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (number, unit_ms) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        (s, 1000)
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 3 {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let frac_ms = if frac.is_empty() {
        0
    } else {
        let scaled: i64 = format!("{frac:0<3}").parse().ok()?;
        scaled * unit_ms / 1000
    };
    Some(Duration(whole.checked_mul(unit_ms)?.checked_add(frac_ms)?))
}

impl Scenario {
    /// The latency bound `D` (ORACLE-4) this scenario's environment needs: its slowest
    /// informer, plus every broken watch (the relist brings a change only when the watch comes
    /// back). What `expect` uses by default and what the oracle's accuracy tests check with.
    pub fn latency_bound(&self) -> Duration {
        let runtime = &self.runtime;
        let mut d = runtime.node_informer_lag.max(runtime.pod_informer_lag);
        for op in &self.ops {
            match &op.op {
                Op::SetInformerLag { nodes, pods } => {
                    d = d
                        .max(nodes.unwrap_or_default())
                        .max(pods.unwrap_or_default());
                }
                Op::DropWatch { duration, .. } => d = Duration(d.millis() + duration.millis()),
                _ => {}
            }
        }
        d
    }

    /// The expectations for `profile`: the `all` entries followed by the profile's own.
    pub fn expectations_for(&self, profile: &str) -> Expectations {
        let mut out = Expectations::default();
        for key in [ALL_PROFILES, profile] {
            if let Some(e) = self.expect.get(key) {
                out.deleted.extend(e.deleted.iter().cloned());
                out.not_deleted.extend(e.not_deleted.iter().cloned());
                out.events.extend(e.events.iter().cloned());
            }
        }
        out
    }
}

/// An expectation a run did not meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The expectation's line in the scenario file.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// A successful DELETE by the controller: when the API server answered, and whom it hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    pub at: Time,
    pub pod: PodKey,
    pub uid: Option<Uid>,
}

/// The controller's successful DELETEs in a trace, in order.
pub fn deletions(trace: &[TraceRecord]) -> Vec<Deletion> {
    let mut requests: BTreeMap<u64, PodKey> = BTreeMap::new();
    let mut out = Vec::new();
    for r in trace {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                namespace,
                name,
                ..
            } => {
                requests.insert(*id, PodKey::new(namespace, name));
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid,
                ..
            } => {
                if let Some(pod) = requests.remove(id) {
                    out.push(Deletion {
                        at: r.t,
                        pod,
                        uid: uid.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Checks a run's trace against the expectations. Spec: SCN-5.
pub fn check(expect: &Expectations, trace: &[TraceRecord]) -> Vec<Failure> {
    let deleted = deletions(trace);
    let hits = |p: &PodRef| {
        deleted
            .iter()
            .filter(|d| d.pod == p.key && (p.uid.is_none() || p.uid == d.uid))
            .collect::<Vec<_>>()
    };
    let mut failures = Vec::new();
    for e in &expect.deleted {
        let found = hits(&e.pod);
        let window = if e.from == e.to {
            format!("at {}", e.from)
        } else {
            format!("within [{}, {}]", e.from, e.to)
        };
        if !found.iter().any(|d| e.from <= d.at && d.at <= e.to) {
            let seen = match found.as_slice() {
                [] => "it was not deleted by the controller".to_string(),
                ds => format!(
                    "it was deleted at {}",
                    ds.iter()
                        .map(|d| d.at.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            failures.push(Failure {
                line: e.line,
                message: format!("expected {} to be deleted {window}, but {seen}", e.pod),
            });
        }
    }
    for e in &expect.not_deleted {
        if let Some(d) = hits(&e.pod).first() {
            failures.push(Failure {
                line: e.line,
                message: format!(
                    "expected {} not to be deleted, but the controller deleted it at {}",
                    e.pod, d.at
                ),
            });
        }
    }
    for e in &expect.events {
        let n = trace
            .iter()
            .filter(|r| match &r.event {
                TraceEvent::Event {
                    namespace,
                    name,
                    reason,
                    message,
                } => {
                    **namespace == *e.pod.namespace
                        && **name == *e.pod.name
                        && *reason == e.reason
                        && *message == e.message
                }
                _ => false,
            })
            .count();
        let ok = match e.count {
            Some(c) => n == c,
            None => n > 0,
        };
        if !ok {
            let wanted = e.count.map_or("at least 1".to_string(), |c| c.to_string());
            failures.push(Failure {
                line: e.line,
                message: format!(
                    "expected {wanted} event(s) {} \"{}\" on {}, found {n}",
                    e.reason, e.message, e.pod
                ),
            });
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("300s"), Some(Duration(300_000)));
        assert_eq!(parse_duration("1.5s"), Some(Duration(1_500)));
        assert_eq!(parse_duration("250ms"), Some(Duration(250)));
        assert_eq!(parse_duration("5m"), Some(Duration(300_000)));
        assert_eq!(parse_duration("60"), Some(Duration(60_000)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("1.2345s"), None);
    }

    const GOOD: &str = "\
name: example
nodes:
  - name: node1
pods:
  - name: web-0
    node: node1
    tolerations:
      - key: key1
        operator: Equal
        value: value1
        effect: NoExecute
        tolerationSeconds: 3600
ops:
  - at: 10s
    deletePod: default/web-0
  - at: 5s
    restartController: {}
expect:
  all:
    notDeleted: [web-0]
";

    #[test]
    fn reads_pods_ops_in_time_order_and_expectations() {
        let s = parse_scenario("s.yaml", GOOD).unwrap();
        assert_eq!(s.pods[0].pod.uid, Uid("web-0-1".into()));
        assert_eq!(s.pods[0].pod.tolerations[0].seconds, Some(3600));
        assert_eq!(s.ops[0].op, Op::RestartController);
        assert_eq!(s.ops[1].op, Op::DeletePod(PodKey::new("default", "web-0")));
        assert_eq!(s.ops[1].line, 14);
        assert_eq!(s.until, Time(610_000));
        assert_eq!(
            s.expectations_for("latest").not_deleted[0].pod.key,
            PodKey::new("default", "web-0")
        );
    }

    #[test]
    fn the_latency_bound_covers_the_slowest_informer_and_every_broken_watch() {
        let lagging = GOOD.replace(
            "ops:\n",
            "runtime: {nodeInformerLag: 2s, podInformerLag: 1s}\nops:\n  - at: 1s\n    informerLag: {pods: 3s}\n",
        );
        let s = parse_scenario("s.yaml", &lagging).unwrap();
        assert_eq!(s.latency_bound(), Duration(3_000));
        let dropped = lagging.replace(
            "ops:\n",
            "ops:\n  - at: 2s\n    dropWatch: nodes\n    for: 10s\n",
        );
        let s = parse_scenario("s.yaml", &dropped).unwrap();
        assert_eq!(s.latency_bound(), Duration(13_000));
        assert_eq!(
            parse_scenario("s.yaml", GOOD).unwrap().latency_bound(),
            Duration::ZERO
        );
    }

    /// The compact form is validated as the API server validates a pod: a bad operator or a
    /// `tolerationSeconds` on another effect is an error at that field, never a pod that
    /// silently tolerates nothing.
    #[test]
    fn compact_tolerations_are_validated_like_the_api_server() {
        let bad = GOOD
            .replace("operator: Equal", "operator: Foo")
            .replace("effect: NoExecute", "effect: NoSchedule");
        let err = parse_scenario("s.yaml", &bad).unwrap_err().to_string();
        assert_eq!(
            err,
            "s.yaml:9: pods[0].tolerations[0].operator: Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\", \"Lt\", \"Gt\"\n\
             s.yaml:11: pods[0].tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let bad = GOOD
            .replace("at: 10s", "at: soon")
            .replace("    node: node1\n", "    nod: node1\n");
        let err = parse_scenario("s.yaml", &bad).unwrap_err().to_string();
        assert_eq!(
            err,
            "s.yaml:6: pods[0].nod: unknown field: supported fields: \"name\", \"namespace\", \"uid\", \"node\", \"tolerations\", \"daemonSet\"\n\
             s.yaml:14: ops[0].at: Invalid value: \"soon\": expected a duration such as 300s, 1.5s or 250ms"
        );
        let err = parse_scenario("s.yaml", "name: [").unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:2: invalid YAML: "), "{err}");
    }
}
