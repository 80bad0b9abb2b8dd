//! The projection of a state onto the variables the Quint specification (`specs/quint/`) shares
//! with the Rust model (`Projection`, specs/quint/README.md "Cross-check"): read from the ITF
//! traces `quint run --out-itf` writes (through the model's ITF reader,
//! `taintcheck_model::check::itf`), and written as a Quint value for the Rust → Quint replay.

use std::collections::{BTreeMap, BTreeSet};

use taintcheck_model::check::itf::{Trace, Value};

/// A pod as both models see it: UID number (`name-n` in Rust), node (`""`: pending),
/// tolerations as (key, seconds; -1: forever) and, for API objects, `DisruptionTarget` and
/// whether it is Terminating (API-2; a cached pod never shows it: no watch event sets it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    pub uid: i64,
    pub node: String,
    pub tolerations: Vec<(String, i64)>,
    pub disruption_target: bool,
    pub terminating: bool,
}

/// The shared variables (MODEL-S1, MODEL-S2, MODEL-S3, CORE-S1, MODEL-S5, MODEL-S6), named as
/// in specs/spec.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    pub now: i64,
    pub budget: i64,
    pub fail_next: bool,
    pub api_nodes: BTreeMap<String, Vec<String>>,
    pub api_pods: BTreeMap<String, PodView>,
    pub node_cache: BTreeMap<String, Vec<String>>,
    pub pod_cache: BTreeMap<String, PodView>,
    pub nodes_pending: usize,
    pub pods_pending: usize,
    pub tainted_nodes: BTreeMap<String, Vec<String>>,
    /// MODEL-S6: the properties judged on steps (EVICT-1, EVICT-2, UID-1, CANCEL-1) violated so
    /// far.
    pub violated: BTreeSet<String>,
    /// MODEL-S6: the `sometimes` properties SOME-1..SOME-4 witnessed so far.
    pub witnessed: BTreeSet<String>,
}

impl Projection {
    /// The first variable on which `self` and `other` differ, with both values.
    pub fn first_difference(&self, other: &Projection) -> Option<(String, String, String)> {
        macro_rules! cmp {
            ($($f:ident),*) => {$(
                if self.$f != other.$f {
                    return Some((
                        stringify!($f).to_string(),
                        format!("{:?}", self.$f),
                        format!("{:?}", other.$f),
                    ));
                }
            )*};
        }
        cmp!(
            now,
            budget,
            fail_next,
            api_nodes,
            api_pods,
            node_cache,
            pod_cache,
            nodes_pending,
            pods_pending,
            tainted_nodes,
            violated,
            witnessed
        );
        None
    }

    /// How many variables differ (to pick the nearest Rust successor in a report).
    pub fn distance(&self, other: &Projection) -> usize {
        [
            self.now != other.now,
            self.budget != other.budget,
            self.fail_next != other.fail_next,
            self.api_nodes != other.api_nodes,
            self.api_pods != other.api_pods,
            self.node_cache != other.node_cache,
            self.pod_cache != other.pod_cache,
            self.nodes_pending != other.nodes_pending,
            self.pods_pending != other.pods_pending,
            self.tainted_nodes != other.tainted_nodes,
            self.violated != other.violated,
            self.witnessed != other.witnessed,
        ]
        .iter()
        .filter(|d| **d)
        .count()
    }
}

/// One Quint state: whether MODEL-INIT is over, the action that led to it, and the projection.
#[derive(Clone, Debug)]
pub struct QuintState {
    pub settled: bool,
    pub action: String,
    pub projection: Projection,
}

/// Reads an ITF trace of `taintmanager` (variables are qualified `<main>::taintmanager::<var>`).
pub fn read_trace(text: &str) -> Result<Vec<QuintState>, String> {
    let trace = Trace::parse(text).map_err(|e| e.to_string())?;
    trace.states.iter().map(state).collect()
}

fn var<'a>(s: &'a BTreeMap<String, Value>, name: &str) -> Result<&'a Value, String> {
    s.iter()
        .find(|(k, _)| k.rsplit("::").next() == Some(name))
        .map(|(_, v)| v)
        .ok_or_else(|| format!("no variable `{name}`"))
}

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    match v {
        Value::Record(r) => r
            .get(name)
            .ok_or_else(|| format!("no field `{name}` in {v:?}")),
        _ => Err(format!("not a record: {v:?}")),
    }
}

fn int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) => i64::try_from(*i).map_err(|_| format!("out of range: {i}")),
        _ => Err(format!("not an integer: {v:?}")),
    }
}

fn string(v: &Value) -> Result<String, String> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        _ => Err(format!("not a string: {v:?}")),
    }
}

fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(format!("not a bool: {v:?}")),
    }
}

fn list(v: &Value) -> Result<&[Value], String> {
    match v {
        Value::List(l) => Ok(l),
        _ => Err(format!("not a list: {v:?}")),
    }
}

fn map(v: &Value) -> Result<&[(Value, Value)], String> {
    match v {
        Value::Map(m) => Ok(m),
        _ => Err(format!("not a map: {v:?}")),
    }
}

fn set(v: &Value) -> Result<BTreeSet<String>, String> {
    match v {
        Value::Set(s) => s.iter().map(string).collect(),
        _ => Err(format!("not a set: {v:?}")),
    }
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    list(v)?.iter().map(string).collect()
}

fn taint_map(v: &Value, with_field: bool) -> Result<BTreeMap<String, Vec<String>>, String> {
    map(v)?
        .iter()
        .map(|(k, v)| {
            let taints = if with_field { field(v, "taints")? } else { v };
            Ok((string(k)?, strings(taints)?))
        })
        .collect()
}

/// A pod record; `api`: the API's object around it (`dt`, `deletion`), `None` for a cached one.
fn pod(v: &Value, api: Option<&Value>) -> Result<PodView, String> {
    let tolerations = list(field(v, "tols")?)?
        .iter()
        .map(|t| Ok((string(field(t, "key")?)?, int(field(t, "secs")?)?)))
        .collect::<Result<_, String>>()?;
    Ok(PodView {
        uid: int(field(v, "uid")?)?,
        node: string(field(v, "node")?)?,
        tolerations,
        disruption_target: api
            .map(|a| boolean(field(a, "dt")?))
            .transpose()?
            .unwrap_or(false),
        // `deletion`: the deletionTimestamp of a Terminating pod, -1 (NONE) otherwise.
        terminating: api
            .map(|a| int(field(a, "deletion")?))
            .transpose()?
            .is_some_and(|d| d >= 0),
    })
}

fn state(s: &BTreeMap<String, Value>) -> Result<QuintState, String> {
    let api = var(s, "api")?;
    let nodes = var(s, "nodes")?;
    let pods = var(s, "pods")?;
    let env = var(s, "env")?;
    let history = var(s, "history")?;
    let api_pods = map(field(api, "pods")?)?
        .iter()
        .map(|(k, v)| Ok((string(k)?, pod(field(v, "pod")?, Some(v))?)))
        .collect::<Result<_, String>>()?;
    let pod_cache = map(field(pods, "cache")?)?
        .iter()
        .map(|(k, v)| Ok((string(k)?, pod(field(v, "pod")?, None)?)))
        .collect::<Result<_, String>>()?;
    Ok(QuintState {
        settled: boolean(var(s, "settled")?)?,
        action: string(var(s, "lastAction")?)?,
        projection: Projection {
            now: int(var(s, "now")?)?,
            budget: int(field(env, "budget")?)?,
            fail_next: boolean(field(env, "failNext")?)?,
            api_nodes: taint_map(field(api, "nodes")?, true)?,
            api_pods,
            node_cache: taint_map(field(nodes, "cache")?, true)?,
            pod_cache,
            nodes_pending: list(field(nodes, "pending")?)?.len(),
            pods_pending: list(field(pods, "pending")?)?.len(),
            tainted_nodes: taint_map(field(var(s, "ctrl")?, "tainted")?, false)?,
            violated: set(field(history, "violated")?)?,
            witnessed: set(field(history, "witnessed")?)?,
        },
    })
}

/// Quint literals of the projection (`Proj` of specs/quint/types.qnt).
impl Projection {
    pub fn to_quint(&self) -> String {
        fn s(x: &str) -> String {
            format!("{x:?}")
        }
        fn strings(xs: &[String]) -> String {
            format!(
                "List({})",
                xs.iter().map(|x| s(x)).collect::<Vec<_>>().join(", ")
            )
        }
        fn taints(m: &BTreeMap<String, Vec<String>>) -> String {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{} -> {}", s(k), strings(v)))
                .collect();
            format!("Map({})", entries.join(", "))
        }
        fn pods(m: &BTreeMap<String, PodView>) -> String {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, p)| {
                    let tols: Vec<String> = p
                        .tolerations
                        .iter()
                        .map(|(key, secs)| format!("{{ key: {}, secs: {secs} }}", s(key)))
                        .collect();
                    format!(
                        "{} -> {{ uid: {}, node: {}, tols: List({}), dt: {}, terminating: {} }}",
                        s(k),
                        p.uid,
                        s(&p.node),
                        tols.join(", "),
                        p.disruption_target,
                        p.terminating
                    )
                })
                .collect();
            format!("Map({})", entries.join(", "))
        }
        fn ids(xs: &BTreeSet<String>) -> String {
            format!(
                "Set({})",
                xs.iter().map(|x| s(x)).collect::<Vec<_>>().join(", ")
            )
        }
        format!(
            "{{ now: {}, budget: {}, failNext: {}, apiNodes: {}, apiPods: {}, nodeCache: {}, \
             podCache: {}, nodesPending: {}, podsPending: {}, tainted: {}, violated: {}, \
             witnessed: {} }}",
            self.now,
            self.budget,
            self.fail_next,
            taints(&self.api_nodes),
            pods(&self.api_pods),
            taints(&self.node_cache),
            pods(&self.pod_cache),
            self.nodes_pending,
            self.pods_pending,
            taints(&self.tainted_nodes),
            ids(&self.violated),
            ids(&self.witnessed),
        )
    }
}
