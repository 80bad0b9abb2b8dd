//! How the API server answers the taint manager's requests (semantics §6.1–§6.2): lookups, the
//! UID and resourceVersion preconditions, the `DisruptionTarget` status patch and deletion.
//! Every API server in the repository (the model's, the sequential driver's, the oracle's and the
//! runtime's) answers through [`answer`], so they cannot disagree; each applies the returned
//! [`Write`] to its own store. Spec: API-1 (specs/spec.md).

use crate::api::{Node, Pod, ResourceVersion};
use crate::{ApiRequest, ApiResult, ClusterView, FetchedPod, Verb};
use std::sync::Arc;

/// The pod object a server holds under the request's name.
#[derive(Clone, Copy, Debug)]
pub struct StoredPod<'a> {
    /// The object as stored.
    pub pod: &'a Pod,
    /// Its current resourceVersion, which a request's precondition is checked against.
    pub version: ResourceVersion,
    /// Its status has the taint manager's `DisruptionTarget=True` condition.
    pub disruption_target: bool,
}

/// What the server must do to its store after answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A read or a refused request: the store is unchanged.
    Nothing,
    /// Add the `DisruptionTarget` condition and move the pod to the answered resourceVersion.
    MarkDisruptionTarget,
    /// Delete the pod.
    Delete,
}

/// Answers `request`. `pod` is the object the server holds under the request's pod name, `node`
/// looks a node up by name, and `next_version` is the resourceVersion a write would give the
/// pod. Injected faults are the caller's: they come before the answer.
pub fn answer(
    request: &ApiRequest,
    pod: Option<StoredPod<'_>>,
    node: impl FnOnce(&str) -> Option<Node>,
    next_version: ResourceVersion,
) -> (ApiResult, Write) {
    let stored = match (&request.verb, pod) {
        (Verb::GetNode(name), _) => {
            return match node(name) {
                Some(n) => (ApiResult::Node(Arc::new(n)), Write::Nothing),
                None => (ApiResult::NotFound, Write::Nothing),
            };
        }
        (_, None) => return (ApiResult::NotFound, Write::Nothing),
        (_, Some(stored)) => stored,
    };
    let uid_differs = request.uid.as_ref().is_some_and(|u| *u != stored.pod.uid);
    let version_differs = request.version.is_some_and(|v| v != stored.version);
    if uid_differs || version_differs {
        return (ApiResult::PreconditionFailed, Write::Nothing);
    }
    match request.verb {
        Verb::PatchDisruptionTarget => (
            ApiResult::Patched(next_version),
            Write::MarkDisruptionTarget,
        ),
        Verb::Delete => (ApiResult::Deleted, Write::Delete),
        Verb::Get | Verb::GetNode(_) => (
            ApiResult::Pod(Arc::new(FetchedPod {
                pod: stored.pod.clone(),
                version: stored.version,
                disruption_target: stored.disruption_target,
            })),
            Write::Nothing,
        ),
    }
}

/// The answer of a server whose objects are `view`'s, each at resourceVersion 1 without the
/// condition, applying nothing: for tests that drive the core by hand.
pub fn answer_from_view(request: &ApiRequest, view: &impl ClusterView) -> ApiResult {
    let pod = view.pod(&request.pod).map(|pod| StoredPod {
        pod,
        version: ResourceVersion(1),
        disruption_target: false,
    });
    answer(request, pod, |n| view.node(n).cloned(), ResourceVersion(2)).0
}
