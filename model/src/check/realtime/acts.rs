//! What a counterexample shows from outside the controller: per step, the environment's change,
//! an informer's delivery, a request or Event the controller sends, or an answer, each with the
//! proxy's match of it (PROXY-8).

use super::super::action::{Action, EnvOp};
use super::super::state::{Delta, SysState};
use super::super::trace::Trace;
use super::super::transition::TaintSys;
use std::collections::BTreeMap;
use taintcheck_core::api::{NodeName, Pod, PodKey};
use taintcheck_core::effect::{ApiRequest, Effect, EventRecord};
use taintcheck_core::{Actor, RequestId, Step, Verb};
use taintcheck_formats::schedule::{RequestMatch, Resource, WatchMatch};

/// What one step of the path shows from outside the controller.
#[derive(Clone, Debug)]
pub(super) enum Act {
    /// The environment changed the API; `watch`: the event it sends, when a rule tells it apart.
    Env {
        objects: Vec<Object>,
        watch: Option<WatchMatch>,
    },
    /// An informer delivered the change of `object`.
    Delivery {
        object: Object,
        watch: Option<WatchMatch>,
    },
    /// The controller sent a request (an Event's POST too); `by`: the work, for requests.
    Request {
        request: RequestMatch,
        id: Option<RequestId>,
        by: Actor,
    },
    /// A controller step that shows nothing.
    Internal { by: Actor },
    /// The API server answered (and applied) request `id`.
    Answer {
        id: RequestId,
        request: Option<RequestMatch>,
    },
    /// The environment arms a fault: the proxy fails the next such request whenever it is
    /// armed before it, so its instant does not matter.
    Fault,
    /// The clock.
    Tick,
}

/// An object an act is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Object {
    Node(NodeName),
    Pod(PodKey),
}

/// What each step of the path shows from outside.
pub(super) fn acts(model: &TaintSys, trace: &Trace) -> Result<Vec<Act>, String> {
    let mut senders: BTreeMap<RequestId, RequestMatch> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, step) in trace.steps.iter().enumerate() {
        let (before, after) = (&trace.states[i], &trace.states[i + 1]);
        let act = match &step.kind {
            Action::Tick(_) => Act::Tick,
            Action::InformerDeliverNode => match before.nodes.pending.front() {
                Some(Delta::Upsert(n)) => {
                    let name = n.node.name.clone();
                    let removed = before.nodes.cache.get(&name).and_then(|old| {
                        old.node
                            .taints
                            .iter()
                            .find(|t| !n.node.taints.iter().any(|x| x.same_identity(t)))
                            .map(|t| t.key.to_string())
                    });
                    Act::Delivery {
                        watch: removed.map(|key| WatchMatch {
                            removes_taint: Some(key),
                            ..node_watch(&name, "MODIFIED")
                        }),
                        object: Object::Node(name),
                    }
                }
                Some(Delta::Delete(name)) => Act::Delivery {
                    watch: Some(node_watch(name, "DELETED")),
                    object: Object::Node(name.clone()),
                },
                None => Act::Tick,
            },
            Action::InformerDeliverPod => match before.pods.pending.front() {
                Some(Delta::Upsert(p)) => {
                    let old = before.pods.cache.get(&p.pod.key);
                    let added = old.is_none_or(|o| o.pod.uid != p.pod.uid);
                    // A successor: another UID held the name before (in the API's history).
                    let successor = trace.states[0]
                        .api
                        .pods
                        .get(&p.pod.key)
                        .is_some_and(|first| first.pod.uid != p.pod.uid);
                    Act::Delivery {
                        watch: added.then(|| WatchMatch {
                            successor,
                            ..pod_watch(&p.pod, "ADDED")
                        }),
                        object: Object::Pod(p.pod.key.clone()),
                    }
                }
                Some(Delta::Delete(key)) => Act::Delivery {
                    watch: None,
                    object: Object::Pod(key.clone()),
                },
                None => Act::Tick,
            },
            Action::Controller(s) => {
                let effects = model
                    .outcome(before, &step.kind)
                    .map(|o| o.effects)
                    .unwrap_or_default();
                let by = Step::actor(s);
                let mut shown = effects.iter().filter_map(|e| match e {
                    Effect::Api(r) => Some((request_match(r), Some(r.id))),
                    Effect::Event(e) => Some((event_match(e), None)),
                    _ => None,
                });
                match (shown.next(), shown.next()) {
                    (Some((request, id)), None) => {
                        if let Some(id) = id {
                            senders.insert(id, request.clone());
                        }
                        Act::Request { request, id, by }
                    }
                    (None, _) => Act::Internal { by },
                    // Two acts in one step (an Event and a request): the request is what a
                    // rule orders by, the Event goes out from another goroutine.
                    (Some(first), Some(second)) => {
                        let (request, id) = if first.1.is_some() { first } else { second };
                        if let Some(id) = id {
                            senders.insert(id, request.clone());
                        }
                        Act::Request { request, id, by }
                    }
                }
            }
            Action::ApiRespond(id) => Act::Answer {
                id: *id,
                request: senders.get(id).cloned(),
            },
            Action::Env(op) => env_act(op, before, after)?,
        };
        out.push(act);
    }
    Ok(out)
}

/// The environment's act: the objects it changes and the watch event a rule can tell apart.
fn env_act(op: &EnvOp, before: &SysState, after: &SysState) -> Result<Act, String> {
    let pod_after = |key: &PodKey| after.api.pods.get(key).map(|p| p.pod.clone());
    Ok(match op {
        EnvOp::AddTaint { node, .. } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: None,
        },
        EnvOp::RemoveTaint { node, key } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: Some(WatchMatch {
                removes_taint: Some(key.to_string()),
                ..node_watch(node, "MODIFIED")
            }),
        },
        EnvOp::DeleteNode { node } => Act::Env {
            objects: vec![Object::Node(node.clone())],
            watch: Some(node_watch(node, "DELETED")),
        },
        EnvOp::AppendToleration { pod, .. } | EnvOp::SetSeconds { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: None,
        },
        EnvOp::BindPod { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: None,
        },
        EnvOp::RecreatePod { pod, .. } => Act::Env {
            objects: vec![Object::Pod(pod.clone())],
            watch: pod_after(pod).map(|p| WatchMatch {
                successor: true,
                ..pod_watch(&p, "ADDED")
            }),
        },
        EnvOp::DeletePod { pod } | EnvOp::KubeletConfirms { pod } | EnvOp::ForceDelete { pod } => {
            let gone = before.api.pods.get(pod).map(|p| p.pod.clone());
            Act::Env {
                objects: vec![Object::Pod(pod.clone())],
                watch: gone.map(|p| pod_watch(&p, "DELETED")),
            }
        }
        EnvOp::Restart => Act::Env {
            objects: vec![],
            watch: None,
        },
        EnvOp::FailNextCall => Act::Fault,
        EnvOp::DropWatch(_) => {
            return Err(
                "an informer's watch expires (ENV-13): the proxy does not end a watch with \
                 410 Gone yet"
                    .into(),
            )
        }
    })
}

pub(super) fn node_watch(name: &NodeName, kind: &str) -> WatchMatch {
    WatchMatch {
        resource: Resource::Nodes,
        namespace: None,
        name: name.to_string(),
        kind: Some(kind.into()),
        node: None,
        removes_taint: None,
        successor: false,
    }
}

pub(super) fn pod_watch(pod: &Pod, kind: &str) -> WatchMatch {
    WatchMatch {
        resource: Resource::Pods,
        namespace: Some(pod.key.namespace.to_string()),
        name: pod.key.name.to_string(),
        kind: Some(kind.into()),
        node: pod.node_name.as_ref().map(|n| n.to_string()),
        removes_taint: None,
        successor: false,
    }
}

/// The proxy's match of a request the core sends.
fn request_match(r: &ApiRequest) -> RequestMatch {
    let pod = |verb: &str, subresource: Option<&str>| RequestMatch {
        verb: verb.into(),
        resource: Resource::Pods,
        namespace: Some(r.pod.namespace.to_string()),
        name: Some(r.pod.name.to_string()),
        subresource: subresource.map(Into::into),
        message: None,
    };
    match &r.verb {
        Verb::Get => pod("get", None),
        Verb::GetNode(node) => RequestMatch {
            verb: "get".into(),
            resource: Resource::Nodes,
            namespace: None,
            name: Some(node.to_string()),
            subresource: None,
            message: None,
        },
        Verb::PatchDisruptionTarget => pod("patch", Some("status")),
        Verb::Delete => pod("delete", None),
    }
}

/// The proxy's match of an Event the core records: its namespace and the words before the
/// pod (the message names the pod by its real name, which a run renames).
fn event_match(e: &EventRecord) -> RequestMatch {
    let message = e.message();
    let words = message.split(" Pod ").next().unwrap_or(&message);
    let words = words.strip_suffix(" of").unwrap_or(words);
    RequestMatch {
        verb: "create".into(),
        resource: Resource::Events,
        namespace: Some(e.pod.namespace.to_string()),
        name: None,
        subresource: None,
        message: Some(words.to_string()),
    }
}
