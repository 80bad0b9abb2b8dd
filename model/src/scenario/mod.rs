//! Scenarios: a starting cluster, timed operations on it, and the outcomes each profile must
//! show. Shared by the runtime (`taintcheck run`), the model and the oracle (`expect`); the
//! corpus lives in `specs/scenarios/`, the format in `specs/scenario-format.md` (Spec: SCN-*).
//!
//! Here the types; [`read`] reads them from YAML on the crate's one YAML layer, [`check`] judges
//! a run's trace against the expectations.

mod check;
mod ops;
mod read;
#[cfg(test)]
mod tests;

use crate::api::{Node, NodeName, Pod, PodKey, Toleration, Uid};
use crate::taint_syntax::TaintSpec;
use crate::time::{Duration, Time};
use crate::trace::{RequestVerb, ResponseResult};
use std::collections::BTreeMap;
use std::fmt;

/// Durations as scenarios write them (`300s`, `1.5s`, `250ms`).
pub use crate::yaml::parse_duration;
/// A scenario file's problem: `file:line: field.path: message`.
pub use crate::yaml::Error as ScenarioError;
/// All problems of a scenario file, in file order (the scenario's own, then its manifests').
pub use crate::yaml::Errors as ScenarioErrors;
pub use check::{check, deletions, Deletion, Failure};
pub use read::parse_scenario;

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

/// The UID a scenario pod gets when it names none: `NAME-1`; `recreatePod` names the next.
pub fn first_uid(name: &str) -> String {
    format!("{name}-1")
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
