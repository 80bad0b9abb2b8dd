//! Reading a configuration file (MODEL-CFG) on the crate's one YAML layer: every error names the
//! file, the line and the field, and one run reports them all.

use super::{CheckConfig, ConfigErrors, NodeSpec, OpKind, PodSpec};
use saphyr::Scalar;
use std::collections::BTreeSet;
use std::path::Path;
use taintcheck_core::api::{Operator, Taint, TaintEffect, Toleration};
use taintcheck_core::throttle::RateLimit;
use taintcheck_formats::limits;
use taintcheck_formats::manifest;
use taintcheck_formats::properties::read::ReadProperties;
use taintcheck_formats::taint_syntax::checked_no_execute;
use taintcheck_formats::yaml::{self, Error, Field, Read};

/// Reads a configuration document named `name`; `file` names it in errors.
pub(super) fn parse(file: &str, name: &str, text: &str) -> Result<CheckConfig, ConfigErrors> {
    let doc = yaml::load_one(file, text)?;
    let root = Field::root(&doc);
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut r = Reader {
        file,
        dir,
        errors: Vec::new(),
    };
    let cfg = r.config(name, &root);
    if !r.errors.is_empty() {
        r.errors.sort_by_key(|e| e.line);
        return Err(ConfigErrors(r.errors));
    }
    // Checks between fields, reported at the field they name.
    cfg.check().map_err(|(path, message)| {
        ConfigErrors(vec![Error {
            file: file.to_owned(),
            line: Some(root.line_of(&path)),
            field: path,
            message,
        }])
    })?;
    Ok(cfg)
}

/// A configuration file's reader; `properties` reads the `properties:` section.
pub(super) struct Reader<'f> {
    file: &'f str,
    /// Where manifest paths are relative to: the configuration file's directory.
    dir: &'f Path,
    errors: Vec<Error>,
}

impl Read for Reader<'_> {
    fn file(&self) -> &str {
        self.file
    }

    fn errors(&mut self) -> &mut Vec<Error> {
        &mut self.errors
    }
}

impl Reader<'_> {
    fn config(&mut self, name: &str, f: &Field) -> CheckConfig {
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
            properties: Vec::new(),
            termination_grace_seconds: None,
            rate_limit: None,
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
            "properties",
            "termination_grace_seconds",
            "qps",
            "burst",
        ];
        if !self.known_keys(f, FIELDS) {
            return cfg;
        }
        if let Some(d) = f.get("description").and_then(|c| self.string(&c)) {
            cfg.description = d.trim().to_owned();
        }
        if let Some(c) = f.get("nodes") {
            cfg.nodes = self.list(&c, |r, n| r.node(n)).concat();
        }
        if let Some(c) = f.get("pods") {
            cfg.pods = self.list(&c, |r, p| r.pod(p)).concat();
        }
        if let Some(c) = f.get("taints") {
            cfg.taints = self.list(&c, |r, t| r.taint(t));
        }
        if let Some(c) = f.get("append_tolerations") {
            cfg.append_tolerations = self.list(&c, |r, t| r.toleration(t));
        }
        if let Some(c) = f.get("seconds_choices") {
            cfg.seconds_choices = self.list(&c, |r, s| r.seconds(s));
        }
        if let Some(c) = f.get("operations") {
            cfg.operations = self.list(&c, |r, o| r.operation(o)).into_iter().collect();
        }
        if let Some(c) = f.get("properties") {
            cfg.properties = self.properties(&c);
        }
        let mut int = |key: &str, max: i64| {
            f.get(key)
                .and_then(|c| self.integer_in(&c, 0, max))
                .and_then(|v| usize::try_from(v).ok())
        };
        // The ranges keep a mistyped figure from launching a search that never ends.
        if let Some(v) = int("budget", i64::from(limits::BUDGET)) {
            cfg.budget = v as u8;
        }
        if let Some(v) = int("step_ms", 3_600_000) {
            cfg.step_ms = v as i64;
        }
        if let Some(v) = int("horizon_ms", limits::HORIZON_MS) {
            cfg.horizon_ms = v as i64;
        }
        if let Some(v) = int("workers", limits::WORKERS as i64) {
            cfg.workers = v;
        }
        if let Some(v) = int("node_channel_capacity", 100) {
            cfg.node_channel_capacity = v;
        }
        if let Some(v) = int("pod_channel_capacity", 100) {
            cfg.pod_channel_capacity = v;
        }
        if let Some(v) = int("processing_bound_ms", 3_600_000) {
            cfg.processing_bound_ms = v as i64;
        }
        if let Some(v) = int("termination_grace_seconds", 3_600) {
            cfg.termination_grace_seconds = Some(v as i64);
        }
        cfg.rate_limit = match (int("qps", 1_000), int("burst", 1_000)) {
            (Some(qps), Some(burst)) => RateLimit::qps(qps as u32, burst as u32),
            (None, None) => None,
            (Some(_), None) => self.required(f, "burst", None::<Option<RateLimit>>),
            (None, Some(_)) => self.required(f, "qps", None::<Option<RateLimit>>),
        };
        if cfg.rate_limit.is_none() && (f.has("qps") || f.has("burst")) {
            if let Some(c) = f.get("qps") {
                self.invalid(&c, "a positive integer (with a positive burst)");
            }
        }
        cfg
    }

    fn taint(&mut self, f: &Field) -> Option<Taint> {
        match checked_no_execute(&self.string(f)?) {
            Ok(taint) => Some(taint),
            Err(problem) => {
                self.invalid(f, &problem);
                None
            }
        }
    }

    fn operation(&mut self, f: &Field) -> Option<OpKind> {
        let s = self.string(f)?;
        let kind = OpKind::parse(&s);
        if kind.is_none() {
            let supported: Vec<_> = OpKind::ALL
                .iter()
                .map(|k| format!("\"{}\"", k.name()))
                .collect();
            let message = format!(
                "Unsupported value: \"{s}\": supported values: {}",
                supported.join(", ")
            );
            self.error(f, &message);
        }
        kind
    }

    /// A name that must be there and not be empty.
    fn name(&mut self, f: &Field) -> Option<String> {
        let name = f.get("name").and_then(|c| self.string(&c));
        if name.as_deref().is_none_or(str::is_empty) {
            self.error_at(f.line(), f.path.child("name"), "Required value");
            return None;
        }
        name
    }

    /// A node: `{name, taints}`, or `{manifest: …}` (every Node it holds, with its NoExecute
    /// taints present from the start).
    fn node(&mut self, f: &Field) -> Option<Vec<NodeSpec>> {
        if f.has("manifest") {
            let objects = manifest::read_entry(self, self.dir, f, "Node")?;
            let nodes = objects.iter().filter_map(|o| o.compact_node());
            return Some(
                nodes
                    .map(|n| NodeSpec {
                        name: n.name.to_string(),
                        taints: n
                            .no_execute_taints()
                            .map(|t| Taint {
                                time_added: None,
                                ..t.clone()
                            })
                            .collect(),
                    })
                    .collect(),
            );
        }
        if !self.known_keys(f, &["name", "taints"]) {
            return None;
        }
        let name = self.name(f);
        let taints = f
            .get("taints")
            .map_or_else(Vec::new, |c| self.list(&c, |r, t| r.taint(t)));
        Some(vec![NodeSpec {
            name: name?,
            taints,
        }])
    }

    /// A pod: `{name, node, tolerations}`, or `{manifest: …}` (every Pod it holds: its name,
    /// `spec.nodeName` and tolerations; the model has one namespace).
    fn pod(&mut self, f: &Field) -> Option<Vec<PodSpec>> {
        if f.has("manifest") {
            let objects = manifest::read_entry(self, self.dir, f, "Pod")?;
            let pods = objects.iter().filter_map(|o| o.compact_pod());
            return Some(
                pods.map(|p| PodSpec {
                    name: p.key.name.to_string(),
                    node: p.node_name.map(|n| n.to_string()),
                    tolerations: p.tolerations,
                })
                .collect(),
            );
        }
        if !self.known_keys(f, &["name", "node", "tolerations"]) {
            return None;
        }
        let name = self.name(f);
        let node = f
            .get("node")
            .filter(|c| !c.is_null())
            .and_then(|c| self.string(&c));
        let tolerations = f
            .get("tolerations")
            .map_or_else(Vec::new, |c| self.list(&c, |r, t| r.toleration(t)));
        Some(vec![PodSpec {
            name: name?,
            node,
            tolerations,
        }])
    }

    /// `{key, operator, value, effect, tolerationSeconds}`, Kubernetes' field names; effect
    /// defaults to NoExecute (`""`: every effect), operator to `Equal` with a value and
    /// `Exists` without.
    fn toleration(&mut self, f: &Field) -> Option<Toleration> {
        const KEYS: &[&str] = &["key", "operator", "value", "effect", "tolerationSeconds"];
        if let Some(old) = f.get("seconds") {
            self.error(
                &old,
                "unknown field: a toleration's time is \"tolerationSeconds\", as in Kubernetes",
            );
        }
        let mut known = KEYS.to_vec();
        known.push("seconds");
        if !self.known_keys(f, &known) {
            return None;
        }
        let text = |r: &mut Self, key: &str| f.get(key).and_then(|c| r.string(&c));
        let key = text(self, "key").unwrap_or_default();
        let value = text(self, "value").unwrap_or_default();
        let operator = match text(self, "operator").as_deref() {
            None if value.is_empty() => Operator::Exists,
            None => Operator::Equal,
            Some(s @ ("Equal" | "Exists")) => Operator::parse(s),
            Some(s) => {
                let message =
                    format!("Unsupported value: \"{s}\": supported values: \"Equal\", \"Exists\"");
                self.error(&f.get("operator")?, &message);
                return None;
            }
        };
        let effect = match text(self, "effect").as_deref() {
            None | Some("NoExecute") => Some(TaintEffect::NoExecute),
            Some("") => None,
            Some(s) => {
                let message =
                    format!("Unsupported value: \"{s}\": supported values: \"\", \"NoExecute\"");
                self.error(&f.get("effect")?, &message);
                return None;
            }
        };
        let seconds = match f.get("tolerationSeconds") {
            Some(c) => self.seconds(&c)?,
            None => None,
        };
        Some(Toleration {
            key: key.as_str().into(),
            operator,
            value: value.as_str().into(),
            effect,
            seconds,
        })
    }

    /// A number of seconds, or `null`/`forever` for no `tolerationSeconds`.
    fn seconds(&mut self, f: &Field) -> Option<Option<i64>> {
        match f.scalar() {
            Some(Scalar::Null) => Some(None),
            Some(Scalar::String(s)) if s == "forever" => Some(None),
            _ => self.integer(f).map(Some),
        }
    }
}
