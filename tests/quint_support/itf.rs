//! A minimal reader of the Informal Trace Format (ITF) that `quint run --out-itf` writes, and the
//! projection of a Quint state of `specs/quint/taintmanager.qnt` onto the variables it shares
//! with the Rust model (`Projection`, specs/quint/README.md "Cross-check").

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A pod as both models see it: UID number (`name-n` in Rust), node (`""`: pending),
/// tolerations as (key, seconds; -1: forever) and, for API objects, `DisruptionTarget`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    pub uid: i64,
    pub node: String,
    pub tolerations: Vec<(String, i64)>,
    pub disruption_target: bool,
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
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let states = doc["states"].as_array().ok_or("no `states` array")?;
    states.iter().map(state).collect()
}

fn var<'a>(s: &'a Value, name: &str) -> Result<&'a Value, String> {
    let obj = s.as_object().ok_or("a state is not an object")?;
    obj.iter()
        .find(|(k, _)| k.rsplit("::").next() == Some(name))
        .map(|(_, v)| v)
        .ok_or_else(|| format!("no variable `{name}`"))
}

fn int(v: &Value) -> Result<i64, String> {
    if let Some(i) = v.as_i64() {
        return Ok(i);
    }
    v["#bigint"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an integer: {v}"))
}

fn string(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("not a string: {v}"))
}

fn boolean(v: &Value) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| format!("not a bool: {v}"))
}

fn map(v: &Value) -> Result<Vec<(&Value, &Value)>, String> {
    let pairs = v["#map"]
        .as_array()
        .ok_or_else(|| format!("not a map: {v}"))?;
    pairs
        .iter()
        .map(|p| match p.as_array().map(Vec::as_slice) {
            Some([k, v]) => Ok((k, v)),
            _ => Err(format!("not a map entry: {p}")),
        })
        .collect()
}

fn set(v: &Value) -> Result<BTreeSet<String>, String> {
    v["#set"]
        .as_array()
        .ok_or_else(|| format!("not a set: {v}"))?
        .iter()
        .map(string)
        .collect()
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("not a list: {v}"))?
        .iter()
        .map(string)
        .collect()
}

fn taint_map(v: &Value, field: Option<&str>) -> Result<BTreeMap<String, Vec<String>>, String> {
    map(v)?
        .into_iter()
        .map(|(k, v)| Ok((string(k)?, strings(field.map_or(v, |f| &v[f]))?)))
        .collect()
}

fn pod(v: &Value, dt: Option<&Value>) -> Result<PodView, String> {
    let tolerations = v["tols"]
        .as_array()
        .ok_or("no tols")?
        .iter()
        .map(|t| Ok((string(&t["key"])?, int(&t["secs"])?)))
        .collect::<Result<_, String>>()?;
    Ok(PodView {
        uid: int(&v["uid"])?,
        node: string(&v["node"])?,
        tolerations,
        disruption_target: dt.map(boolean).transpose()?.unwrap_or(false),
    })
}

fn state(s: &Value) -> Result<QuintState, String> {
    let api = var(s, "api")?;
    let nodes = var(s, "nodes")?;
    let pods = var(s, "pods")?;
    let env = var(s, "env")?;
    let history = var(s, "history")?;
    let api_pods = map(&api["pods"])?
        .into_iter()
        .map(|(k, v)| Ok((string(k)?, pod(&v["pod"], Some(&v["dt"]))?)))
        .collect::<Result<_, String>>()?;
    let pod_cache = map(&pods["cache"])?
        .into_iter()
        .map(|(k, v)| Ok((string(k)?, pod(&v["pod"], None)?)))
        .collect::<Result<_, String>>()?;
    let len = |v: &Value| v.as_array().map(Vec::len).ok_or("not a list");
    Ok(QuintState {
        settled: boolean(var(s, "settled")?)?,
        action: string(var(s, "lastAction")?)?,
        projection: Projection {
            now: int(var(s, "now")?)?,
            budget: int(&env["budget"])?,
            fail_next: boolean(&env["failNext"])?,
            api_nodes: taint_map(&api["nodes"], Some("taints"))?,
            api_pods,
            node_cache: taint_map(&nodes["cache"], Some("taints"))?,
            pod_cache,
            nodes_pending: len(&nodes["pending"])?,
            pods_pending: len(&pods["pending"])?,
            tainted_nodes: taint_map(&var(s, "ctrl")?["tainted"], None)?,
            violated: set(&history["violated"])?,
            witnessed: set(&history["witnessed"])?,
        },
    })
}
