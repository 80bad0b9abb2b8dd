//! An in-memory API server: nodes and pods with UIDs and resource versions, watch streams,
//! admission on pod writes, and fault injection for the controller's requests (a verb that fails
//! N times, latency is applied by the caller through the timer service). Every change is
//! recorded in the trace. Spec: RT-API-1..RT-API-4.

use crate::recorder::Recorder;
use crate::sync::{lock, Arc, Mutex};
use crate::timers::TimerService;
use std::collections::{BTreeMap, HashMap};
use taintcheck_core::admission::{
    daemonset_tolerations, default_toleration_seconds, DefaultTolerationSeconds,
};
use taintcheck_core::api::{
    Deletion, Node, NodeName, Pod, PodKey, ResourceVersion, Toleration, Uid,
};
use taintcheck_core::api_server::{self, Write};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::time::Duration;
use taintcheck_core::{ApiRequest, ApiResult, Verb};
use taintcheck_formats::scenario::{Admission, PodSpec};
use taintcheck_formats::taint_syntax::{reorganize, TaintSpec};
use taintcheck_formats::trace::{RequestVerb, ResponseResult, TraceEvent};

/// A watch notification: the object after the change (before it, for a deletion).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Watch<T> {
    Added(T),
    Modified(T),
    Deleted(T),
}

impl<T> Watch<T> {
    pub fn object(&self) -> &T {
        match self {
            Watch::Added(o) | Watch::Modified(o) | Watch::Deleted(o) => o,
        }
    }
}

/// A watch subscriber; called with the API server's lock held, so it must only hand the event
/// on (the informers arm a delivery timer).
pub type Watcher<T> = Arc<dyn Fn(Watch<T>) + Send + Sync>;

/// Why an operation on the API server failed (a scenario asked for something impossible).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    #[error("node {0} not found")]
    NodeNotFound(NodeName),
    #[error("node {0} already exists")]
    NodeExists(NodeName),
    #[error("pod {0} not found")]
    PodNotFound(PodKey),
    #[error("pod {0} already exists")]
    PodExists(PodKey),
    #[error("pod {0} is already bound to node {1}: spec.nodeName is immutable once set")]
    AlreadyBound(PodKey, NodeName),
    #[error("{0}")]
    Refused(String),
    #[error("pod {0} has no toleration at index {1}")]
    NoSuchToleration(PodKey, usize),
}

/// The next `remaining` requests of `verb` (for `pod`, or any pod) fail with `result`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailRule {
    pub verb: RequestVerb,
    pub pod: Option<PodKey>,
    pub remaining: u32,
    pub result: ResponseResult,
}

#[derive(Clone, Debug)]
struct StoredPod {
    pod: Pod,
    /// Its graceful deletion, once one started (Terminating): the object stays until the
    /// kubelet confirms at the end of the grace period, or a force delete (API-2).
    deletion: Option<Deletion>,
    /// The resourceVersion of its last write.
    version: ResourceVersion,
    /// Its status has the taint manager's `DisruptionTarget` condition.
    disruption_target: bool,
}

struct State {
    rv: u64,
    nodes: BTreeMap<NodeName, Node>,
    /// Hashed, not ordered: the storm's 150,000 pod names share their first ten bytes, and a
    /// tree search compared them a dozen times per request. Lists sort by key.
    pods: HashMap<PodKey, StoredPod, FxBuild>,
    node_watchers: BTreeMap<u64, Watcher<Node>>,
    pod_watchers: BTreeMap<u64, Watcher<Pod>>,
    next_watcher: u64,
    faults: Vec<FailRule>,
    admission: Admission,
    latency: Duration,
    /// The pods' termination grace (API-2). `None`: a DELETE removes the object at once.
    deletion_grace: Option<Duration>,
}

/// The API server. Cheap to clone.
#[derive(Clone)]
pub struct ApiServer {
    state: Arc<Mutex<State>>,
    recorder: Recorder,
    timers: TimerService,
}

/// What a controller request did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub result: ApiResult,
    /// The UID of the pod the request found (GET) or acted on (PATCH, DELETE).
    pub uid: Option<Uid>,
    /// The pod's resourceVersion a GET returned or a PATCH produced.
    pub version: Option<ResourceVersion>,
}

impl Answer {
    /// The trace's `response` line for request `id`.
    pub fn response(&self, id: u64) -> TraceEvent {
        TraceEvent::Response {
            id,
            result: ResponseResult::from(&self.result),
            uid: self.uid.clone(),
            resource_version: self.version,
        }
    }
}

impl ApiServer {
    pub fn new(
        admission: Admission,
        deletion_grace: Option<Duration>,
        recorder: Recorder,
        timers: TimerService,
    ) -> ApiServer {
        ApiServer {
            state: Arc::new(Mutex::new(State {
                rv: 0,
                nodes: BTreeMap::new(),
                pods: HashMap::default(),
                node_watchers: BTreeMap::new(),
                pod_watchers: BTreeMap::new(),
                next_watcher: 0,
                faults: Vec::new(),
                admission,
                latency: Duration::ZERO,
                deletion_grace,
            })),
            recorder,
            timers,
        }
    }

    /// Lists the nodes and subscribes to their changes, atomically (a list + watch from the
    /// same resourceVersion). Returns the subscription id for [`ApiServer::unwatch`].
    pub fn list_and_watch_nodes(&self, watcher: Watcher<Node>) -> (Vec<Node>, u64) {
        let mut s = lock(&self.state);
        let id = s.next_watcher;
        s.next_watcher += 1;
        s.node_watchers.insert(id, watcher);
        (s.nodes.values().cloned().collect(), id)
    }

    pub fn list_and_watch_pods(&self, watcher: Watcher<Pod>) -> (Vec<Pod>, u64) {
        let mut s = lock(&self.state);
        let id = s.next_watcher;
        s.next_watcher += 1;
        s.pod_watchers.insert(id, watcher);
        (sorted_pods(&s.pods), id)
    }

    pub fn unwatch(&self, id: u64) {
        let mut s = lock(&self.state);
        s.node_watchers.remove(&id);
        s.pod_watchers.remove(&id);
    }

    pub fn nodes(&self) -> Vec<Node> {
        lock(&self.state).nodes.values().cloned().collect()
    }

    /// Every pod, by key.
    pub fn pods(&self) -> Vec<Pod> {
        sorted_pods(&lock(&self.state).pods)
    }

    pub fn pod(&self, key: &PodKey) -> Option<Pod> {
        lock(&self.state).pods.get(key).map(|p| p.pod.clone())
    }

    pub fn create_node(&self, node: Node) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        if s.nodes.contains_key(&node.name) {
            return Err(ApiError::NodeExists(node.name));
        }
        s.nodes.insert(node.name.clone(), node.clone());
        self.publish_node(&mut s, Watch::Added(node));
        Ok(())
    }

    /// `kubectl taint nodes NAME SPEC --overwrite` (kubectl's `reorganizeTaints`: added taints
    /// first). Removing a taint the node does not have is refused, as kubectl refuses it.
    pub fn taint_node(&self, name: &str, spec: &TaintSpec) -> Result<(), ApiError> {
        let mut refused = Vec::new();
        self.update_node(name, |node| {
            let (_, taints, errors) = reorganize(&node.taints, std::slice::from_ref(spec), true);
            node.taints = taints;
            refused = errors;
        })?;
        match refused.is_empty() {
            true => Ok(()),
            false => Err(ApiError::Refused(refused.join(", "))),
        }
    }

    /// Replaces a node object, as a client's update does (a replay's environment writes the
    /// node its model step produced).
    pub fn put_node(&self, node: Node) -> Result<(), ApiError> {
        let name = node.name.clone();
        self.update_node(&name, |n| *n = node)
    }

    /// Replaces a pod object (no admission), as [`ApiServer::put_node`] does a node.
    pub fn put_pod(&self, pod: Pod) -> Result<(), ApiError> {
        let key = pod.key.clone();
        self.update_pod(&key, false, |p| {
            *p = pod;
            Ok(())
        })
    }

    fn update_node(&self, name: &str, change: impl FnOnce(&mut Node)) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        let node = s
            .nodes
            .get_mut(name)
            .ok_or_else(|| ApiError::NodeNotFound(name.into()))?;
        change(node);
        let node = node.clone();
        self.publish_node(&mut s, Watch::Modified(node));
        Ok(())
    }

    pub fn delete_node(&self, name: &str) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        let node = s
            .nodes
            .remove(name)
            .ok_or_else(|| ApiError::NodeNotFound(name.into()))?;
        self.publish_node(&mut s, Watch::Deleted(node));
        Ok(())
    }

    /// Creates a pod after admission (RT-API-2).
    pub fn create_pod(&self, spec: PodSpec) -> Result<Pod, ApiError> {
        let mut s = lock(&self.state);
        if s.pods.contains_key(&spec.pod.key) {
            return Err(ApiError::PodExists(spec.pod.key));
        }
        let pod = admit(&s.admission, spec.pod, spec.daemon_set);
        s.pods.insert(
            pod.key.clone(),
            StoredPod {
                pod: pod.clone(),
                deletion: None,
                version: ResourceVersion::default(), // set by publish_pod
                disruption_target: false,
            },
        );
        self.publish_pod(&mut s, Watch::Added(pod.clone()));
        Ok(pod)
    }

    /// Removes the pod object now (the end of its grace period, or a delete with grace 0).
    pub fn remove_pod(&self, key: &PodKey, uid: Option<&Uid>) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        match s.pods.get(key) {
            Some(p) if uid.is_none_or(|u| *u == p.pod.uid) => {}
            _ => return Err(ApiError::PodNotFound(key.clone())),
        }
        let stored = s.pods.remove(key).expect("checked above");
        self.publish_pod(&mut s, Watch::Deleted(stored.pod));
        Ok(())
    }

    /// The scheduler's binding: sets `spec.nodeName` of a pending pod.
    pub fn bind_pod(&self, key: &PodKey, node: NodeName) -> Result<(), ApiError> {
        self.update_pod(key, false, |pod| match &pod.node_name {
            Some(bound) => Err(ApiError::AlreadyBound(pod.key.clone(), bound.clone())),
            None => {
                pod.node_name = Some(node);
                Ok(())
            }
        })
    }

    /// Appends a toleration (pod-update validation allows appending, §8.2).
    pub fn add_toleration(&self, key: &PodKey, toleration: Toleration) -> Result<(), ApiError> {
        self.update_pod(key, true, |pod| {
            pod.tolerations.push(toleration);
            Ok(())
        })
    }

    /// Changes `tolerationSeconds` of one toleration (allowed in any direction, §8.2).
    pub fn set_toleration_seconds(
        &self,
        key: &PodKey,
        index: usize,
        seconds: Option<i64>,
    ) -> Result<(), ApiError> {
        self.update_pod(key, true, |pod| {
            let t = pod
                .tolerations
                .get_mut(index)
                .ok_or_else(|| ApiError::NoSuchToleration(pod.key.clone(), index))?;
            t.seconds = seconds;
            Ok(())
        })
    }

    fn update_pod(
        &self,
        key: &PodKey,
        admission: bool,
        change: impl FnOnce(&mut Pod) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        let admission_config = s.admission.clone();
        let stored = s
            .pods
            .get_mut(key)
            .ok_or_else(|| ApiError::PodNotFound(key.clone()))?;
        change(&mut stored.pod)?;
        if admission {
            stored.pod = admit(&admission_config, stored.pod.clone(), false);
        }
        let pod = stored.pod.clone();
        self.publish_pod(&mut s, Watch::Modified(pod));
        Ok(())
    }

    /// How long the server takes to answer a controller request.
    pub fn latency(&self) -> Duration {
        lock(&self.state).latency
    }

    pub fn set_latency(&self, latency: Duration) {
        lock(&self.state).latency = latency;
    }

    /// Makes the next `rule.remaining` matching controller requests fail (RT-API-3).
    pub fn inject(&self, rule: FailRule) {
        lock(&self.state).faults.push(rule);
    }

    /// Serves a controller request (RT-API-4) through the model's API semantics
    /// ([`api_server::answer`]: GET of a pod or a node; PATCH and DELETE by name with optional
    /// UID and resourceVersion preconditions), after any injected fault. A PATCH adds the
    /// `DisruptionTarget` condition (a new resourceVersion, a watch event); a DELETE removes the
    /// pod, or leaves it Terminating (API-2: [`ApiServer::apply_delete`]).
    pub fn serve(&self, request: &ApiRequest) -> Answer {
        let mut s = lock(&self.state);
        if let Some(result) = take_fault(
            &mut s.faults,
            RequestVerb::from(&request.verb),
            &request.pod,
        ) {
            let result = match result {
                ResponseResult::NotFound => ApiResult::NotFound,
                ResponseResult::PreconditionFailed => ApiResult::PreconditionFailed,
                ResponseResult::Ok | ResponseResult::Failed => ApiResult::Failed,
            };
            return Answer {
                result,
                uid: None,
                version: None,
            };
        }
        let grace = s.deletion_grace;
        let stored = s.pods.get(&request.pod).map(|p| p.as_stored(grace));
        let found = match request.verb {
            Verb::GetNode(_) => None,
            _ => stored.map(|p| p.pod.uid.clone()),
        };
        let next = ResourceVersion(s.rv + 1);
        let nodes = &s.nodes;
        let (mut result, write) =
            api_server::answer(request, stored, |n| nodes.get(n).cloned(), next);
        let mut version = match &result {
            ApiResult::Pod(p) => Some(p.version),
            _ => None,
        };
        match write {
            Write::Nothing => {}
            Write::MarkDisruptionTarget => {
                let stored = s.pods.get_mut(&request.pod).expect("answered from it");
                stored.disruption_target = true;
                let pod = stored.pod.clone();
                let rv = ResourceVersion(self.publish_pod(&mut s, Watch::Modified(pod)));
                result = ApiResult::Patched(rv);
                version = Some(rv);
            }
            Write::Delete | Write::StartGracefulDeletion { .. } => {
                self.apply_delete(&mut s, &request.pod, write)
            }
        }
        Answer {
            result,
            uid: found,
            version,
        }
    }

    /// A user's `kubectl delete pod`, decided as any DELETE ([`api_server::delete`], API-2).
    pub fn delete_pod(&self, key: &PodKey) -> Result<(), ApiError> {
        let mut s = lock(&self.state);
        let grace = s.deletion_grace;
        let write = match s.pods.get(key) {
            Some(p) => api_server::delete(&p.as_stored(grace)),
            None => return Err(ApiError::PodNotFound(key.clone())),
        };
        self.apply_delete(&mut s, key, write);
        Ok(())
    }

    /// A force delete (grace 0), or PodGC: removes a pod whatever its deletion state (API-2).
    pub fn force_delete_pod(&self, key: &PodKey) -> Result<(), ApiError> {
        self.remove_pod(key, None)
    }

    /// Applies a DELETE's write to the existing pod `key`: removed at once, or Terminating until
    /// the kubelet confirms at the end of its grace period.
    fn apply_delete(&self, s: &mut State, key: &PodKey, write: Write) {
        match write {
            Write::Delete => {
                let stored = s
                    .pods
                    .remove(key)
                    .expect("the caller checked the pod exists");
                self.publish_pod(s, Watch::Deleted(stored.pod));
            }
            Write::StartGracefulDeletion { grace } => {
                let stored = s
                    .pods
                    .get_mut(key)
                    .expect("the caller checked the pod exists");
                let deletion = Deletion::starting(self.timers.now(), grace);
                stored.deletion = Some(deletion);
                let pod = stored.pod.clone();
                let disruption_target = stored.disruption_target;
                let uid = pod.uid.clone();
                s.rv += 1;
                let rv = s.rv;
                stored_version(s, key, rv);
                self.recorder.record(TraceEvent::PodModified {
                    rv,
                    pod,
                    terminating: true,
                    disruption_target,
                });
                let (me, key) = (self.clone(), key.clone());
                self.timers.arm(
                    deletion.timestamp,
                    Box::new(move || me.kubelet_confirms(&key, &uid)),
                );
            }
            Write::Nothing | Write::MarkDisruptionTarget => {}
        }
    }

    /// The end of a Terminating pod's grace period: its kubelet confirms and the object goes,
    /// unless the node is gone or unreachable ([`api_server::kubelet_can_confirm`]); then the
    /// pod stays Terminating until a force delete. A successor under the name is left alone.
    fn kubelet_confirms(&self, key: &PodKey, uid: &Uid) {
        let confirms = {
            let s = lock(&self.state);
            s.pods.get(key).is_some_and(|p| {
                let node = p.pod.node_name.as_ref().and_then(|n| s.nodes.get(n));
                p.pod.uid == *uid && api_server::kubelet_can_confirm(node)
            })
        };
        if confirms {
            let _ = self.remove_pod(key, Some(uid));
        }
    }

    fn publish_node(&self, s: &mut State, change: Watch<Node>) {
        s.rv += 1;
        let rv = s.rv;
        self.recorder.record(match &change {
            Watch::Added(node) => TraceEvent::NodeAdded {
                rv,
                node: node.clone(),
            },
            Watch::Modified(node) => TraceEvent::NodeModified {
                rv,
                node: node.clone(),
            },
            Watch::Deleted(node) => TraceEvent::NodeDeleted {
                rv,
                name: node.name.clone(),
            },
        });
        for w in s.node_watchers.values() {
            w(change.clone());
        }
    }

    /// Records and publishes a pod change; returns its resourceVersion, which a stored pod
    /// takes as its own.
    fn publish_pod(&self, s: &mut State, change: Watch<Pod>) -> u64 {
        s.rv += 1;
        let rv = s.rv;
        stored_version(s, &change.object().key, rv);
        let disruption_target = s
            .pods
            .get(&change.object().key)
            .is_some_and(|p| p.disruption_target);
        self.recorder.record(match &change {
            Watch::Added(pod) => TraceEvent::PodAdded {
                rv,
                pod: pod.clone(),
            },
            Watch::Modified(pod) => TraceEvent::PodModified {
                rv,
                pod: pod.clone(),
                // TRACE: the flag marks the change that set `deletionTimestamp`, not later
                // writes to a Terminating pod (readers keep it with the incarnation).
                terminating: false,
                disruption_target,
            },
            Watch::Deleted(pod) => TraceEvent::PodDeleted {
                rv,
                namespace: pod.key.namespace.to_string(),
                name: pod.key.name.to_string(),
                uid: pod.uid.clone(),
            },
        });
        for w in s.pod_watchers.values() {
            w(change.clone());
        }
        rv
    }
}

impl StoredPod {
    /// The object as the core's API semantics read it, on a server whose pods' termination
    /// grace is `grace`.
    fn as_stored(&self, grace: Option<Duration>) -> api_server::StoredPod<'_> {
        api_server::StoredPod {
            pod: &self.pod,
            version: self.version,
            disruption_target: self.disruption_target,
            deletion: self.deletion,
            termination_grace: grace,
        }
    }
}

/// The stored pod `key` (if any) is now at resourceVersion `rv`.
fn stored_version(s: &mut State, key: &PodKey, rv: u64) {
    if let Some(p) = s.pods.get_mut(key) {
        p.version = ResourceVersion(rv);
    }
}

/// Consumes one failure of the first rule matching the request, if any.
fn take_fault(
    faults: &mut Vec<FailRule>,
    verb: RequestVerb,
    key: &PodKey,
) -> Option<ResponseResult> {
    let i = faults
        .iter()
        .position(|f| f.verb == verb && f.pod.as_ref().is_none_or(|p| p == key))?;
    let rule = &mut faults[i];
    rule.remaining -= 1;
    let result = rule.result;
    if rule.remaining == 0 {
        faults.remove(i);
    }
    Some(result)
}

/// The admission plugins of the scenario, applied on create and update (semantics §8.4, §8.5).
fn admit(admission: &Admission, pod: Pod, daemon_set: bool) -> Pod {
    let mut pod = pod;
    if daemon_set {
        daemonset_tolerations(&mut pod.tolerations, false);
    }
    if admission.default_toleration_seconds {
        let seconds = DefaultTolerationSeconds {
            not_ready: admission.not_ready_seconds,
            unreachable: admission.unreachable_seconds,
        };
        default_toleration_seconds(&mut pod.tolerations, seconds);
    }
    pod
}

/// The stored pods, by key (the order a list returns).
fn sorted_pods(pods: &HashMap<PodKey, StoredPod, FxBuild>) -> Vec<Pod> {
    let mut list: Vec<Pod> = pods.values().map(|p| p.pod.clone()).collect();
    list.sort_unstable_by(|a, b| a.key.cmp(&b.key));
    list
}
