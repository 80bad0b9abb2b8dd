//! The compact Kubernetes objects the core, the model and the oracle work on.
//!
//! These are deliberately small, ordered and cheap to clone (names are `Arc<str>`): the model
//! clones states millions of times. Manifests as `kubectl` prints them are read through
//! k8s-openapi elsewhere (`manifest`) and converted into these types; nothing here depends on
//! k8s-openapi. Unknown operator or effect strings are kept (`Other`) because upstream's matcher
//! is more permissive than validation, and `explain --no-validate` must evaluate such objects.

use crate::time::{Duration, Time};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// An immutable, cheaply cloned string (object names, keys, values).
pub type Name = Arc<str>;

/// A node's name (`metadata.name`).
pub type NodeName = Name;

/// A pod's `metadata.uid`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Uid(pub Name);

impl Ord for Uid {
    fn cmp(&self, other: &Self) -> Ordering {
        str_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for Uid {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An object's `metadata.resourceVersion`, compared only for equality: a request carrying one
/// applies only if the object is unchanged since it was read (optimistic concurrency).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ResourceVersion(pub u64);

impl fmt::Display for ResourceVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// `namespace/name`: the identity upstream keys its timers and queues by (not the UID).
/// Ordered by namespace, then name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PodKey {
    /// `metadata.namespace`.
    pub namespace: Name,
    /// `metadata.name`.
    pub name: Name,
}

impl Ord for PodKey {
    fn cmp(&self, other: &Self) -> Ordering {
        str_cmp(&self.namespace, &other.namespace).then_with(|| str_cmp(&self.name, &other.name))
    }
}

impl PartialOrd for PodKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Byte-wise string order (as `str::cmp`) without a `memcmp` call: the timed queue and the
/// record of pods compare short names a hundred times per node update. The first eight bytes,
/// zero-padded, read as one big-endian word decide most comparisons; names that share them
/// (the runtime's 150,000 `node-00042-pod-07`) go on a word at a time.
pub(crate) fn str_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if std::ptr::eq(a, b) {
        return Ordering::Equal;
    }
    match head(a).cmp(&head(b)) {
        Ordering::Equal if a.len() <= 8 && b.len() <= 8 => a.len().cmp(&b.len()),
        Ordering::Equal => words_cmp(a, b),
        decided => decided,
    }
}

/// `str_cmp` past equal first words, kept out of line so that the common path stays short
/// (inlined, the loop cost 20 % more instructions per core decision).
#[inline(never)]
fn words_cmp(mut a: &[u8], mut b: &[u8]) -> Ordering {
    let len = a.len().cmp(&b.len());
    while let (Some((x, a_next)), Some((y, b_next))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
        (a, b) = (a_next, b_next);
    }
    // One rest is shorter than eight bytes: zero-padded, its word orders it against the other's
    // next eight bytes, and equal words leave the lengths (a prefix first).
    head(a).cmp(&head(b)).then(len)
}

/// The first eight bytes of `s`, zero-padded, as a big-endian word: its order is the order of
/// the padded prefixes. Shorter strings are read as two overlapping halves, which put each byte
/// at its own place (building a padded copy in memory stalls the load that follows it).
fn head(s: &[u8]) -> u64 {
    let n = s.len();
    if let Some(word) = s.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    let (first, last) = if n >= 4 {
        let first = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
        let last = u32::from_be_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]);
        (u64::from(first) << 32, u64::from(last) << (64 - 8 * n))
    } else {
        let word = s
            .iter()
            .enumerate()
            .fold(0, |word, (i, &byte)| word | u64::from(byte) << (56 - 8 * i));
        (word, 0)
    };
    first | last
}

impl PodKey {
    /// The key `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> PodKey {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A taint's or toleration's effect (`TaintEffect` upstream). Written and read as the API's
/// string; reading accepts only the API's values, so a bad trace is told those.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum TaintEffect {
    /// `NoSchedule`: pods that do not tolerate it are not scheduled; running pods stay.
    NoSchedule,
    /// `PreferNoSchedule`: a scheduling preference only; never evicts.
    PreferNoSchedule,
    /// `NoExecute`: the only effect taint eviction acts on.
    NoExecute,
    /// Any other string, including `""` on a taint. Validation rejects it; the matcher compares
    /// it byte-wise like any other effect. Only reachable with validation turned off.
    Other(Name),
}

impl TaintEffect {
    /// Reads an effect as the API spells it; any other string becomes [`TaintEffect::Other`].
    pub fn parse(s: &str) -> TaintEffect {
        match s {
            "NoSchedule" => TaintEffect::NoSchedule,
            "PreferNoSchedule" => TaintEffect::PreferNoSchedule,
            "NoExecute" => TaintEffect::NoExecute,
            other => TaintEffect::Other(other.into()),
        }
    }

    /// The effect as the API spells it.
    pub fn as_str(&self) -> &str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
            TaintEffect::Other(s) => s,
        }
    }
}

impl From<TaintEffect> for String {
    fn from(e: TaintEffect) -> String {
        e.as_str().to_string()
    }
}

impl TryFrom<String> for TaintEffect {
    type Error = String;

    fn try_from(s: String) -> Result<TaintEffect, String> {
        match TaintEffect::parse(&s) {
            TaintEffect::Other(_) => Err(unsupported(
                &s,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )),
            e => Ok(e),
        }
    }
}

/// A serialized input (a trace) names a value the API server refuses: its `Unsupported value`
/// message, listing the API's spellings (never the catch-all `Other`).
fn unsupported(s: &str, spellings: &[&str]) -> String {
    let quoted: Vec<String> = spellings.iter().map(|v| format!("{v:?}")).collect();
    let shown: String = s.chars().take(120).collect();
    format!(
        "Unsupported value: {shown:?}: supported values: {}",
        quoted.join(", ")
    )
}

impl fmt::Display for TaintEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A node taint. Identity (`MatchTaint`) is key + effect; value and `time_added` are payload.
#[derive(Clone, Debug, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Taint {
    /// The taint's key; part of its identity.
    pub key: Name,
    /// The taint's value (may be empty); payload, not identity.
    pub value: Name,
    /// The taint's effect; part of its identity.
    pub effect: TaintEffect,
    /// `timeAdded`; upstream's eviction controller ignores it (semantics §2.3 compares it only to
    /// detect changes).
    pub time_added: Option<Time>,
}

/// Field by field, as derived, but a name shared with the other taint (a clone of the same
/// object: the arrival record, `taintedNodes` and the cache all hold clones) is equal without
/// reading it: `Arc<str>`'s own `==` has no pointer shortcut (std's is for sized types only),
/// and the fixed design compares each pod's taints with the recorded ones.
impl PartialEq for Taint {
    fn eq(&self, other: &Taint) -> bool {
        let same = |a: &Name, b: &Name| Arc::ptr_eq(a, b) || a == b;
        self.effect == other.effect
            && self.time_added == other.time_added
            && same(&self.key, &other.key)
            && same(&self.value, &other.value)
    }
}

/// The fields `==` compares, each as derived would hash it.
impl Hash for Taint {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let Taint {
            key,
            value,
            effect,
            time_added,
        } = self;
        key.hash(h);
        value.hash(h);
        effect.hash(h);
        time_added.hash(h);
    }
}

impl Taint {
    /// A taint without `timeAdded`.
    pub fn new(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect,
            time_added: None,
        }
    }

    /// Upstream `Taint.MatchTaint`: same key and effect.
    pub fn same_identity(&self, other: &Taint) -> bool {
        self.key == other.key && self.effect == other.effect
    }
}

/// A toleration's operator. Upstream treats `""` as `Equal`; we store it as `Equal`. Written
/// and read as the API's string, like [`TaintEffect`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Operator {
    /// `Equal` (or `""`): the toleration's value equals the taint's.
    Equal,
    /// `Exists`: any value of the key.
    Exists,
    /// Numeric "taint value < toleration value" (KEP-5471, gate `TaintTolerationComparisonOperators`).
    Lt,
    /// Numeric "taint value > toleration value" (KEP-5471).
    Gt,
    /// Any other string: never matches (semantics §1.1).
    Other(Name),
}

impl Operator {
    /// Reads an operator as the API spells it (`""` is `Equal`); any other string becomes
    /// [`Operator::Other`].
    pub fn parse(s: &str) -> Operator {
        match s {
            "" | "Equal" => Operator::Equal,
            "Exists" => Operator::Exists,
            "Lt" => Operator::Lt,
            "Gt" => Operator::Gt,
            other => Operator::Other(other.into()),
        }
    }

    /// The operator as the API spells it (`Equal` for one read from `""`).
    pub fn as_str(&self) -> &str {
        match self {
            Operator::Equal => "Equal",
            Operator::Exists => "Exists",
            Operator::Lt => "Lt",
            Operator::Gt => "Gt",
            Operator::Other(s) => s,
        }
    }
}

impl From<Operator> for String {
    fn from(o: Operator) -> String {
        o.as_str().to_string()
    }
}

impl TryFrom<String> for Operator {
    type Error = String;

    fn try_from(s: String) -> Result<Operator, String> {
        match Operator::parse(&s) {
            Operator::Other(_) => Err(unsupported(&s, &["Equal", "Exists", "Lt", "Gt"])),
            o => Ok(o),
        }
    }
}

/// A pod toleration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Toleration {
    /// Empty matches every key, whatever the operator (semantics §1.1).
    pub key: Name,
    /// How the taint's value is compared with `value`.
    pub operator: Operator,
    /// The value `Equal`, `Lt` and `Gt` compare with; `Exists` ignores it.
    pub value: Name,
    /// `None` is the empty effect, which matches every effect.
    pub effect: Option<TaintEffect>,
    /// `tolerationSeconds`; `None` means "forever". Unbounded, as upstream (T5, T6).
    pub seconds: Option<i64>,
}

impl Toleration {
    /// `{key, Exists, effect, seconds}`, the shape admission plugins add.
    pub fn exists(key: &str, effect: Option<TaintEffect>, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: Operator::Exists,
            value: "".into(),
            effect,
            seconds,
        }
    }

    /// `{key, Equal, value, effect, seconds}`.
    pub fn equal(
        key: &str,
        value: &str,
        effect: Option<TaintEffect>,
        seconds: Option<i64>,
    ) -> Toleration {
        Toleration {
            key: key.into(),
            operator: Operator::Equal,
            value: value.into(),
            effect,
            seconds,
        }
    }

    /// Upstream `Toleration.MatchToleration`: key, operator, value and effect equal; seconds ignored.
    pub fn same_identity(&self, other: &Toleration) -> bool {
        self.key == other.key
            && self.operator == other.operator
            && self.value == other.value
            && self.effect == other.effect
    }
}

/// A node: its name and its taints in API order (order matters to matching, §1.3).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Node {
    /// `metadata.name`.
    pub name: NodeName,
    /// `spec.taints`, in API order.
    pub taints: Vec<Taint>,
}

impl Node {
    /// The NoExecute taints, in order: upstream `getNoExecuteTaints`.
    pub fn no_execute_taints(&self) -> impl Iterator<Item = &Taint> {
        self.taints
            .iter()
            .filter(|t| t.effect == TaintEffect::NoExecute)
    }
}

/// A pod, reduced to what taint eviction reads.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pod {
    /// `metadata.namespace` and `metadata.name`: what upstream's timers and queues key by.
    pub key: PodKey,
    /// `metadata.uid`: tells apart two incarnations of the same name.
    pub uid: Uid,
    /// `spec.nodeName`; `None` while the pod is pending (unbound).
    pub node_name: Option<NodeName>,
    /// `spec.tolerations`, in API order.
    pub tolerations: Vec<Toleration>,
}

impl fmt::Display for Taint {
    /// Upstream `Taint.ToString` (spec TAINT-4): `key=value:effect`, `key:effect`, `key=value:`, or `key`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let effect = self.effect.as_str();
        match (self.value.is_empty(), effect.is_empty()) {
            (false, _) => write!(f, "{}={}:{}", self.key, self.value, effect),
            (true, false) => write!(f, "{}:{}", self.key, effect),
            (true, true) => f.write_str(&self.key),
        }
    }
}

/// A graceful deletion in progress: the pod is Terminating. `metadata.deletionTimestamp` and
/// `metadata.deletionGracePeriodSeconds`, which the API server sets when a DELETE without a
/// grace override reaches a bound pod (k8s.io/apiserver v1.34 `rest.BeforeDelete`, with the
/// pod strategy's `CheckGracefulDelete` taking `spec.terminationGracePeriodSeconds`). The
/// object stays in the API and every cache until the kubelet confirms, a force delete, or
/// PodGC removes it. The controller never reads it: `PodUpdated` drops the update that sets it
/// (semantics §2.2). Spec: API-2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Deletion {
    /// `deletionTimestamp`: when the grace period ends (the DELETE's instant plus the grace).
    pub timestamp: Time,
    /// `deletionGracePeriodSeconds` (in ms, so that scenarios may give fractions).
    pub grace: Duration,
}

impl Deletion {
    /// The deletion a DELETE at `now` starts for a pod whose grace period is `grace`.
    pub fn starting(now: Time, grace: Duration) -> Deletion {
        Deletion {
            timestamp: now.plus(grace),
            grace,
        }
    }
}

#[cfg(test)]
mod tests;
