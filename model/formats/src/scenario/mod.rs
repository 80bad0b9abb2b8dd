//! Scenarios: a starting cluster, timed operations on it, and the outcomes each profile must
//! show. Shared by the runtime (`taintcheck run`), the model and the oracle (`expect`); the
//! corpus lives in `specs/scenarios/`, the format in `specs/scenario-format.md` (Spec: SCN-*).
//!
//! Here the types; [`read`] reads them from YAML on the crate's one YAML layer, [`check`] judges
//! a run's trace against the expectations.

mod check;
mod expect_properties;
mod ops;
mod read;
#[cfg(test)]
mod tests;
pub mod write;

use crate::taint_syntax::TaintSpec;
use crate::trace::{RequestVerb, ResponseResult};
use std::collections::BTreeMap;
use std::fmt;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Toleration, Uid};
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};

/// Durations as scenarios write them (`300s`, `1.5s`, `250ms`).
pub use crate::yaml::parse_duration;
/// A scenario file's problem: `file:line: field.path: message`.
pub use crate::yaml::Error as ScenarioError;
/// All problems of a scenario file, in file order (the scenario's own, then its manifests').
pub use crate::yaml::Errors as ScenarioErrors;
pub use check::{check, deletions, Deletion, Failure, RunCheck};
pub use expect_properties::ExpectProperty;
pub use read::parse_scenario;

/// A parsed scenario. Spec: SCN-1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// The scenario's name; the corpus requires it to equal the file name without `.yaml`.
    pub name: String,
    /// Prose saying what the scenario shows.
    pub description: String,
    /// Upstream issue, interleaving and spec ids the scenario shows (`N1`, `#90794`, `I1`).
    pub refs: Vec<String>,
    /// Admission plugins applied to pods on create and update (SCN-2).
    pub admission: Admission,
    /// The environment: workers, informer lags, API latency, deletion grace (SCN-3).
    pub runtime: RuntimeKnobs,
    /// When the run stops (virtual time).
    pub until: Time,
    /// The nodes of the cluster at time 0.
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
    /// `tolerationSeconds` of the `node.kubernetes.io/not-ready` toleration that
    /// DefaultTolerationSeconds adds (default 300).
    pub not_ready_seconds: i64,
    /// `tolerationSeconds` of the `node.kubernetes.io/unreachable` toleration that
    /// DefaultTolerationSeconds adds (default 300).
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
    /// Number of controller workers (1 to 64, LIMIT-1).
    pub workers: usize,
    /// How far the node informer is behind the API server.
    pub node_informer_lag: Duration,
    /// How far the pod informer is behind the API server.
    pub pod_informer_lag: Duration,
    /// How long the API server takes to answer a controller request.
    pub api_latency: Duration,
    /// `None`: a deleted pod's object is removed at once (grace period 0).
    pub deletion_grace: Option<Duration>,
    /// `qps` and `burst`: the controller's client waits for a token of this bucket before
    /// each request (CORE-THROTTLE). `None`: never throttled.
    pub rate_limit: Option<RateLimit>,
}

impl Default for RuntimeKnobs {
    fn default() -> Self {
        RuntimeKnobs {
            workers: 8,
            node_informer_lag: Duration::ZERO,
            pod_informer_lag: Duration::ZERO,
            api_latency: Duration::ZERO,
            deletion_grace: None,
            rate_limit: None,
        }
    }
}

/// A pod of the scenario, before admission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSpec {
    /// The pod object as written (or read from a manifest).
    pub pod: Pod,
    /// Created by a DaemonSet: its not-ready/unreachable tolerations are made infinite (§8.5).
    pub daemon_set: bool,
}

/// An operation at an instant; `line` is where it was written, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedOp {
    /// When the operation runs, in virtual time from the start of the run.
    pub at: Time,
    /// The scenario file line the operation was written on.
    pub line: usize,
    /// The operation itself.
    pub op: Op,
}

/// What a scenario can do to the cluster, the controller and the environment. Spec: SCN-4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `kubectl taint nodes NODE SPEC --overwrite`: `key=value:Effect` adds (replacing a taint
    /// with the same key and effect), `key:Effect-` or `key-` removes.
    Taint {
        /// The node to taint or untaint.
        node: NodeName,
        /// The taint to add or remove, in kubectl syntax.
        spec: TaintSpec,
    },
    /// Create a node.
    CreateNode(Node),
    /// Delete the named node.
    DeleteNode(NodeName),
    /// Create a pod (admission applies).
    CreatePod(PodSpec),
    /// Delete the pod object (grace per [`RuntimeKnobs::deletion_grace`]: a bound pod stays
    /// Terminating until its kubelet confirms at the end of the grace period, API-2).
    DeletePod(PodKey),
    /// `kubectl delete pod --force --grace-period=0`, or PodGC: remove the pod object now,
    /// Terminating or not (API-2).
    ForceDeletePod(PodKey),
    /// Delete and at once create a pod with the same name and a new UID (a StatefulSet).
    RecreatePod {
        /// The pod to replace.
        key: PodKey,
        /// The UID of the new incarnation.
        uid: Uid,
        /// The node the new pod is bound to; `None`: Pending.
        node: Option<NodeName>,
        /// Replaces the predecessor's tolerations when given.
        tolerations: Option<Vec<Toleration>>,
    },
    /// The scheduler binds a pending pod.
    BindPod {
        /// The pending pod to bind.
        key: PodKey,
        /// The node it is bound to.
        node: NodeName,
    },
    /// Append a toleration (allowed by pod-update validation, §8.2).
    AddToleration {
        /// The pod to update.
        key: PodKey,
        /// The toleration appended to its list.
        toleration: Toleration,
    },
    /// Change `tolerationSeconds` of the toleration at `index` (`None`: forever).
    SetTolerationSeconds {
        /// The pod to update.
        key: PodKey,
        /// Position of the toleration in the pod's list.
        index: usize,
        /// The new `tolerationSeconds`.
        seconds: Option<i64>,
    },
    /// kube-controller-manager restarts: all in-memory state is lost, informers relist.
    RestartController,
    /// The next `times` requests of `verb` (for `pod`, or any pod) fail with `result`.
    FailRequests {
        /// The request verb that fails.
        verb: RequestVerb,
        /// Only requests for this pod; `None`: any pod.
        pod: Option<PodKey>,
        /// How many requests fail.
        times: u32,
        /// The answer the failed requests get (`failed` or `notFound`).
        result: ResponseResult,
    },
    /// From now on, the API server takes this long to answer a controller request.
    SetApiLatency(Duration),
    /// From now on, the informers lag by these durations; `None` leaves one unchanged.
    SetInformerLag {
        /// New node-informer lag.
        nodes: Option<Duration>,
        /// New pod-informer lag.
        pods: Option<Duration>,
    },
    /// The informer's watch of `kind` breaks for `duration`; events in between are lost and
    /// the informer relists when it reconnects.
    DropWatch {
        /// Which informer's watch breaks.
        kind: ObjectKind,
        /// How long the watch stays broken.
        duration: Duration,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// The kind of object an informer watches, as `dropWatch` names it.
pub enum ObjectKind {
    /// The node informer's watch.
    Nodes,
    /// The pod informer's watch.
    Pods,
}

/// What a run must show under one profile. Spec: SCN-5.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations {
    /// Pods the controller's DELETE must remove, each in a time window.
    pub deleted: Vec<ExpectDeleted>,
    /// Pods the controller must never delete.
    pub not_deleted: Vec<ExpectNotDeleted>,
    /// Events the pods must receive.
    pub events: Vec<ExpectEvent>,
    /// User-defined properties the run must meet (PROP-2).
    pub properties: Vec<ExpectProperty>,
}

/// A pod by name, optionally one incarnation of it (by UID).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodRef {
    /// The pod's namespace and name.
    pub key: PodKey,
    /// One incarnation of it; `None`: any incarnation.
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
    /// The pod that must survive.
    pub pod: PodRef,
    /// The scenario file line of the expectation, for messages.
    pub line: usize,
}

/// The controller's DELETE removed the pod at a time in `[from, to]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectDeleted {
    /// The pod that must be deleted.
    pub pod: PodRef,
    /// Earliest time the deletion may happen.
    pub from: Time,
    /// Latest time the deletion may happen.
    pub to: Time,
    /// The scenario file line of the expectation, for messages.
    pub line: usize,
}

/// Events with this reason and message on the pod: exactly `count`, or at least one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectEvent {
    /// The pod the events are about.
    pub pod: PodKey,
    /// The event's reason (default `TaintManagerEviction`).
    pub reason: String,
    /// The event's exact message.
    pub message: String,
    /// Exactly this many events; `None`: at least one.
    pub count: Option<usize>,
    /// The scenario file line of the expectation, for messages.
    pub line: usize,
}

/// The UID a scenario pod gets when it names none: `NAME-1` in the `default` namespace,
/// `NAMESPACE/NAME-1` in any other (neither part may hold a `/`, so two pods never share one);
/// `recreatePod` names the next incarnation's UID itself.
pub fn first_uid(key: &PodKey) -> String {
    if &*key.namespace == "default" {
        format!("{}-1", key.name)
    } else {
        format!("{}/{}-1", key.namespace, key.name)
    }
}

impl Scenario {
    /// The latency bound `D` (ORACLE-4) this scenario's environment needs: its slowest
    /// informer, plus every broken watch and its informer's lag once more (a change still in
    /// transit when the watch breaks is lost with it, and the relist brings it back only when
    /// the watch comes back, after the lag: ENV-13, RT-INF-3). What `expect` uses by default
    /// and what the oracle's accuracy tests check with.
    pub fn latency_bound(&self) -> Duration {
        let runtime = &self.runtime;
        let (mut node_lag, mut pod_lag) = (runtime.node_informer_lag, runtime.pod_informer_lag);
        let mut d = node_lag.max(pod_lag);
        for op in &self.ops {
            match &op.op {
                Op::SetInformerLag { nodes, pods } => {
                    node_lag = node_lag.max(nodes.unwrap_or_default());
                    pod_lag = pod_lag.max(pods.unwrap_or_default());
                    d = d.max(node_lag).max(pod_lag);
                }
                Op::DropWatch { kind, duration } => {
                    let lag = match kind {
                        ObjectKind::Nodes => node_lag,
                        ObjectKind::Pods => pod_lag,
                    };
                    d = Duration(d.millis() + duration.millis() + lag.millis());
                }
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
                out.properties.extend(e.properties.iter().cloned());
            }
        }
        out
    }
}
