//! Reading a scenario file (SCN-1..5) on the YAML layer: every error names the file, the line
//! and the field (`n1.yaml:12: ops[3].at: Invalid value: "soon": expected a duration such as
//! 300s, 1.5s or 250ms`), and one run reports them all.

use super::expect_properties::{unsupported_on_a_run, ExpectProperty};
use super::{
    first_uid, Admission, ExpectDeleted, ExpectEvent, ExpectNotDeleted, Expectations, PodRef,
    PodSpec, RuntimeKnobs, Scenario, ScenarioErrors, ALL_PROFILES,
};
use crate::field::{FieldPath, Segment};
use crate::limits;
use crate::manifest::{self, convert, Located, Object};
use crate::properties::read::ReadProperties;
use crate::taint_syntax::{parse_spec, TaintSpec};
use crate::validate;
use crate::yaml::{self, Error, Field, Read};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use taintcheck_core::api::{Node, Operator, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};

/// Reads a scenario from YAML text; `file` names it in errors, and the manifest files it
/// points at are read relative to `file`'s directory (SCN-4).
pub fn parse_scenario(file: &str, text: &str) -> Result<Scenario, ScenarioErrors> {
    let doc = yaml::load_one(file, text)?;
    let mut r = Reader {
        file: file.to_string(),
        dir: std::path::Path::new(file)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default(),
        errors: Vec::new(),
    };
    let scenario = r.scenario(&Field::root(&doc));
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

/// The reader's state: where it is and what went wrong so far.
pub(super) struct Reader {
    file: String,
    /// Where manifest paths are relative to: the scenario file's directory.
    dir: PathBuf,
    errors: Vec<Error>,
}

impl Read for Reader {
    fn file(&self) -> &str {
        &self.file
    }

    fn errors(&mut self) -> &mut Vec<Error> {
        &mut self.errors
    }
}

impl Reader {
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
        if !self.known_keys(f, KEYS) {
            return None;
        }
        let name = f.get("name").map(|c| self.string(&c));
        let name = self.required(f, "name", name);
        let description = f
            .get("description")
            .and_then(|c| self.string(&c))
            .unwrap_or_default();
        let refs = f
            .get("refs")
            .map(|c| self.list(&c, |r, i| r.string(i)))
            .unwrap_or_default();
        let admission = f
            .get("admission")
            .and_then(|c| self.admission(&c))
            .unwrap_or_default();
        let runtime = f
            .get("runtime")
            .and_then(|c| self.runtime(&c))
            .unwrap_or_default();
        let nodes = f
            .get("nodes")
            .map(|c| self.list(&c, |r, n| Some((n.clone(), r.node_entry(n)?))))
            .unwrap_or_default();
        self.unique(&nodes, "name", |n: &Node| n.name.to_string());
        let nodes: Vec<Node> = nodes.into_iter().flat_map(|(_, n)| n).collect();
        let pods = f
            .get("pods")
            .map(|c| self.list(&c, |r, p| Some((p.clone(), r.pod_entry(p)?))))
            .unwrap_or_default();
        self.unique(&pods, "name", |p: &PodSpec| p.pod.key.to_string());
        self.unique(&pods, "uid", |p: &PodSpec| p.pod.uid.to_string());
        let pods: Vec<PodSpec> = pods.into_iter().flat_map(|(_, p)| p).collect();
        let mut ops = f
            .get("ops")
            .map(|c| {
                let n = c.sequence().map_or(0, Vec::len);
                if n > limits::OPERATIONS.get() {
                    self.error(&c, &limits::OPERATIONS.too_many(n));
                    return Vec::new();
                }
                self.list(&c, |r, o| r.timed_op(o))
            })
            .unwrap_or_default();
        ops.sort_by_key(|o| o.at);
        let last = ops.last().map_or(Time::ZERO, |o| o.at);
        let until = f
            .get("until")
            .and_then(|c| self.duration(&c))
            .map(|d| Time::ZERO.plus(d))
            .unwrap_or(last.plus(Duration::from_secs(600)));
        let expect = f
            .get("expect")
            .and_then(|c| self.expectations(&c))
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

    /// Reports an object whose `key` (name, UID) an earlier entry already gave, at its entry:
    /// the API server would refuse the second object, so a scenario holding both describes no
    /// cluster. Linear: one set of the keys seen.
    fn unique<T>(&mut self, entries: &[(Field, Vec<T>)], key: &str, of: impl Fn(&T) -> String) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (entry, objects) in entries {
            for object in objects {
                let value = of(object);
                match seen.get(&value) {
                    Some(first) => {
                        let message = format!(
                            "Duplicate value: {:?}: also at line {first}",
                            limits::shorten(&value)
                        );
                        self.error_at(entry.line(), entry.path.child(key), &message);
                    }
                    None => {
                        seen.insert(value, entry.line());
                    }
                }
            }
        }
    }

    fn admission(&mut self, f: &Field) -> Option<Admission> {
        const KEYS: &[&str] = &[
            "defaultTolerationSeconds",
            "notReadySeconds",
            "unreachableSeconds",
        ];
        if !self.known_keys(f, KEYS) {
            return None;
        }
        let d = Admission::default();
        Some(Admission {
            default_toleration_seconds: f
                .get("defaultTolerationSeconds")
                .and_then(|c| self.boolean(&c))
                .unwrap_or(d.default_toleration_seconds),
            not_ready_seconds: f
                .get("notReadySeconds")
                .and_then(|c| self.integer(&c))
                .unwrap_or(d.not_ready_seconds),
            unreachable_seconds: f
                .get("unreachableSeconds")
                .and_then(|c| self.integer(&c))
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
            "qps",
            "burst",
        ];
        if !self.known_keys(f, KEYS) {
            return None;
        }
        let d = RuntimeKnobs::default();
        let workers = f.get("workers").and_then(|c| {
            self.integer_in(&c, 1, limits::WORKERS as i64)
                .and_then(|n| usize::try_from(n).ok())
        });
        Some(RuntimeKnobs {
            workers: workers.unwrap_or(d.workers),
            node_informer_lag: f
                .get("nodeInformerLag")
                .and_then(|c| self.duration(&c))
                .unwrap_or(d.node_informer_lag),
            pod_informer_lag: f
                .get("podInformerLag")
                .and_then(|c| self.duration(&c))
                .unwrap_or(d.pod_informer_lag),
            api_latency: f
                .get("apiLatency")
                .and_then(|c| self.duration(&c))
                .unwrap_or(d.api_latency),
            deletion_grace: f.get("deletionGrace").and_then(|c| self.duration(&c)),
            rate_limit: self.rate_limit(f),
        })
    }

    /// `qps` and `burst` (both or neither): the controller client's token bucket (SCN-3,
    /// CORE-THROTTLE).
    fn rate_limit(&mut self, f: &Field) -> Option<RateLimit> {
        let mut figure = |key: &str| {
            let c = f.get(key)?;
            let n = self.integer_in(&c, 1, i64::from(u32::MAX))?;
            u32::try_from(n).ok()
        };
        let (qps, burst) = (figure("qps"), figure("burst"));
        match (qps, burst) {
            (Some(qps), Some(burst)) => RateLimit::qps(qps, burst),
            (Some(_), None) => self.required(f, "burst", None::<Option<RateLimit>>),
            (None, Some(_)) => self.required(f, "qps", None::<Option<RateLimit>>),
            (None, None) => None,
        }
    }

    /// An entry of `nodes`: the compact form, or `{manifest: …}` (every Node it holds).
    fn node_entry(&mut self, f: &Field) -> Option<Vec<Node>> {
        if !f.has("manifest") {
            return self.node(f).map(|n| vec![n]);
        }
        let objects = self.manifest(f, "Node")?;
        Some(objects.iter().filter_map(Located::compact_node).collect())
    }

    /// An entry of `pods`: the compact form, or `{manifest: …}` (every Pod it holds; one
    /// controlled by a DaemonSet is a DaemonSet pod, one without a UID gets `NAME-1`).
    fn pod_entry(&mut self, f: &Field) -> Option<Vec<PodSpec>> {
        if !f.has("manifest") {
            return self.pod(f).map(|p| vec![p]);
        }
        let objects = self.manifest(f, "Pod")?;
        let specs = objects.iter().filter_map(|o| match &o.object {
            Object::Pod(k) => {
                let mut pod = convert::pod_from_k8s(k);
                if pod.uid.0.is_empty() {
                    pod.uid = Uid(first_uid(&pod.key).as_str().into());
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

    /// `{manifest: PATH | OBJECT}` relative to the scenario's directory
    /// ([`manifest::read_entry`]). `None` if anything is wrong.
    fn manifest(&mut self, f: &Field, kind: &'static str) -> Option<Vec<Located>> {
        let dir = self.dir.clone();
        manifest::read_entry(self, &dir, f, kind)
    }

    pub(super) fn node(&mut self, f: &Field) -> Option<Node> {
        if !self.known_keys(f, &["name", "taints"]) {
            return None;
        }
        let name = f.get("name").map(|c| self.string(&c));
        let name = self.required(f, "name", name)?;
        let taints = f
            .get("taints")
            .map(|c| self.list(&c, |r, t| r.taint(t)))
            .unwrap_or_default();
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

    pub(super) fn pod_key(&mut self, f: &Field) -> Option<PodKey> {
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

    pub(super) fn pod(&mut self, f: &Field) -> Option<PodSpec> {
        const KEYS: &[&str] = &[
            "name",
            "namespace",
            "uid",
            "node",
            "tolerations",
            "daemonSet",
        ];
        if !self.known_keys(f, KEYS) {
            return None;
        }
        let name = f.get("name").map(|c| self.string(&c));
        let name = self.required(f, "name", name)?;
        let namespace = f
            .get("namespace")
            .and_then(|c| self.string(&c))
            .unwrap_or_else(|| "default".into());
        let key = PodKey::new(&namespace, &name);
        let uid = f
            .get("uid")
            .and_then(|c| self.string(&c))
            .unwrap_or_else(|| first_uid(&key));
        let node = f.get("node").and_then(|c| self.string(&c));
        let tolerations = f
            .get("tolerations")
            .map(|c| self.tolerations(&c))
            .unwrap_or_default();
        let daemon_set = f
            .get("daemonSet")
            .and_then(|c| self.boolean(&c))
            .unwrap_or(false);
        Some(PodSpec {
            pod: Pod {
                key,
                uid: Uid(uid.as_str().into()),
                node_name: node.map(|n| n.as_str().into()),
                tolerations,
            },
            daemon_set,
        })
    }

    pub(super) fn tolerations(&mut self, f: &Field) -> Vec<Toleration> {
        self.list(f, |r, t| r.toleration(t))
    }

    /// A toleration with Kubernetes' field names (`key`, `operator`, `value`, `effect`,
    /// `tolerationSeconds`); absent fields are empty, as in the API.
    pub(super) fn toleration(&mut self, f: &Field) -> Option<Toleration> {
        const KEYS: &[&str] = &["key", "operator", "value", "effect", "tolerationSeconds"];
        if !self.known_keys(f, KEYS) {
            return None;
        }
        let text = |r: &mut Self, key: &str| {
            f.get(key)
                .and_then(|c| {
                    if c.is_null() {
                        Some(String::new())
                    } else {
                        r.string(&c)
                    }
                })
                .unwrap_or_default()
        };
        let key = text(self, "key");
        let operator = text(self, "operator");
        let value = text(self, "value");
        let effect = text(self, "effect");
        let seconds =
            f.get("tolerationSeconds")
                .and_then(|c| if c.is_null() { None } else { self.integer(&c) });
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
            let line = f.get(name).map(|c| c.line()).unwrap_or_else(|| f.line());
            self.error_at(line, f.path.child(name), &e.body());
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

    /// `expect:`, keyed by profile name or `all`: a misspelt key would otherwise drop its
    /// expectations without a word.
    fn expectations(&mut self, f: &Field) -> Option<BTreeMap<String, Expectations>> {
        let mut keys = vec![ALL_PROFILES];
        keys.extend(Profile::NAMES);
        if !self.known_keys(f, &keys) {
            return None;
        }
        let mut out = BTreeMap::new();
        for (profile, e) in f.entries() {
            if let Some(e) = self.expectation(&e) {
                out.insert(profile.text().unwrap_or_default(), e);
            }
        }
        Some(out)
    }

    fn expectation(&mut self, f: &Field) -> Option<Expectations> {
        if !self.known_keys(f, &["deleted", "notDeleted", "events", "properties"]) {
            return None;
        }
        let properties = f
            .get("properties")
            .map(|c| self.expect_properties(&c))
            .unwrap_or_default();
        Some(Expectations {
            deleted: f
                .get("deleted")
                .map(|c| self.list(&c, |r, d| r.expect_deleted(d)))
                .unwrap_or_default(),
            not_deleted: f
                .get("notDeleted")
                .map(|c| {
                    self.list(&c, |r, p| {
                        r.pod_ref(p).map(|pod| ExpectNotDeleted {
                            pod,
                            line: p.line(),
                        })
                    })
                })
                .unwrap_or_default(),
            events: f
                .get("events")
                .map(|c| self.list(&c, |r, e| r.expect_event(e)))
                .unwrap_or_default(),
            properties,
        })
    }

    /// `properties:`, the vocabulary of configurations (PROP-2) less the claims a run cannot
    /// judge.
    fn expect_properties(&mut self, f: &Field) -> Vec<ExpectProperty> {
        let declared = self.properties(f);
        let mut out = Vec::new();
        for item in f.items() {
            let Some(d) = item
                .get("name")
                .and_then(|n| n.text())
                .and_then(|n| declared.iter().find(|d| d.name == n))
            else {
                continue;
            };
            let body = item.get("always").or_else(|| item.get("sometimes"));
            if let (Some(why), Some(body)) = (unsupported_on_a_run(&d.claim), body) {
                let claim = body.entries().next().map_or(body.clone(), |(k, _)| k);
                self.error(&claim, &format!("Invalid value: {why}"));
                continue;
            }
            out.push(ExpectProperty {
                declared: d.clone(),
                line: item.line(),
            });
        }
        out
    }

    /// `default/web-0` or `{pod: default/web-0, uid: web-0-2}`.
    fn pod_ref(&mut self, f: &Field) -> Option<PodRef> {
        if f.mapping().is_none() {
            return Some(PodRef {
                key: self.pod_key(f)?,
                uid: None,
            });
        }
        if !self.known_keys(f, &["pod", "uid"]) {
            return None;
        }
        let key = f.get("pod").map(|c| self.pod_key(&c));
        Some(PodRef {
            key: self.required(f, "pod", key)?,
            uid: f
                .get("uid")
                .and_then(|c| self.string(&c))
                .map(|u| Uid(u.as_str().into())),
        })
    }

    /// `{pod, uid?, at}` or `{pod, uid?, within: [from, to]}`.
    fn expect_deleted(&mut self, f: &Field) -> Option<ExpectDeleted> {
        if !self.known_keys(f, &["pod", "uid", "at", "within"]) {
            return None;
        }
        let key = f.get("pod").map(|c| self.pod_key(&c));
        let key = self.required(f, "pod", key)?;
        let uid = f
            .get("uid")
            .and_then(|c| self.string(&c))
            .map(|u| Uid(u.as_str().into()));
        let at = f.get("at").and_then(|c| self.duration(&c));
        let within = f.get("within").and_then(|c| {
            let bounds = self.list(&c, |r, d| r.duration(d));
            match bounds.as_slice() {
                [from, to] if from <= to => Some((*from, *to)),
                _ => {
                    self.invalid(&c, "[FROM, TO] with FROM <= TO");
                    None
                }
            }
        });
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
        if !self.known_keys(f, &["pod", "reason", "message", "count"]) {
            return None;
        }
        let key = f.get("pod").map(|c| self.pod_key(&c));
        let key = self.required(f, "pod", key)?;
        let message = f.get("message").map(|c| self.string(&c));
        Some(ExpectEvent {
            pod: key,
            reason: f
                .get("reason")
                .and_then(|c| self.string(&c))
                .unwrap_or_else(|| "TaintManagerEviction".into()),
            message: self.required(f, "message", message)?,
            count: f.get("count").and_then(|c| self.count(&c)),
            line: f.line(),
        })
    }
}
