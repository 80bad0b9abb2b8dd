//! How the API server answers the taint manager's requests (semantics §6.1–§6.2): lookups, the
//! UID and resourceVersion preconditions, the `DisruptionTarget` status patch and deletion.
//! Every API server in the repository (the model's, the sequential driver's, the oracle's and the
//! runtime's) answers through [`answer`], so they cannot disagree; each applies the returned
//! [`Write`] to its own store. Spec: API-1, API-2 (specs/spec.md).

use crate::api::{Deletion, Node, Pod, ResourceVersion};
use crate::time::Duration;
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
    /// Its graceful deletion, once one has started (the pod is Terminating).
    pub deletion: Option<Deletion>,
    /// The grace period a DELETE without override gives it (`spec.terminationGracePeriodSeconds`)
    /// on a server that deletes gracefully; `None`: the server removes it at once.
    pub termination_grace: Option<Duration>,
}

/// What the server must do to its store after answering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// A read or a refused request: the store is unchanged.
    Nothing,
    /// Add the `DisruptionTarget` condition and move the pod to the answered resourceVersion.
    MarkDisruptionTarget,
    /// Remove the pod from the store.
    Delete,
    /// Start the pod's graceful deletion: set its `deletionTimestamp` this many seconds from now
    /// and move it to the answered resourceVersion; it stays in the store (API-2).
    StartGracefulDeletion {
        /// `deletionGracePeriodSeconds`.
        grace: Duration,
    },
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
        Verb::Delete => (ApiResult::Deleted, delete(&stored)),
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

/// What a DELETE without a grace override does to `stored` (API-2): a pod already Terminating is
/// left as it is and the DELETE still succeeds (k8s.io/apiserver v1.34 `rest.BeforeDelete`
/// reports the graceful deletion pending and `Store.Delete` answers with the object); a bound
/// pod with a positive grace period becomes Terminating; an unbound pod, a zero grace period
/// (pod strategy `CheckGracefulDelete`) or a server without graceful deletion removes it.
/// Every DELETE of a pod goes through it: the controller's (in [`answer`]) and a user's.
pub fn delete(stored: &StoredPod<'_>) -> Write {
    match (stored.deletion, stored.termination_grace) {
        (Some(_), _) => Write::Nothing,
        (None, Some(grace)) if grace > Duration::ZERO && stored.pod.node_name.is_some() => {
            Write::StartGracefulDeletion { grace }
        }
        (None, _) => Write::Delete,
    }
}

/// Whether the kubelet of `node` can confirm a Terminating pod's deletion (API-2): only while
/// the node exists and is not `node.kubernetes.io/unreachable` (a kubelet that cannot reach
/// the API server never confirms; the pod stays Terminating until a force delete or PodGC).
pub fn kubelet_can_confirm(node: Option<&Node>) -> bool {
    node.is_some_and(|n| !n.taints.iter().any(|t| &*t.key == UNREACHABLE))
}

/// The taint the node lifecycle controller puts on a node whose kubelet stopped reporting.
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The answer of a server whose objects are `view`'s, each at resourceVersion 1 without the
/// condition, applying nothing: for tests that drive the core by hand.
pub fn answer_from_view(request: &ApiRequest, view: &impl ClusterView) -> ApiResult {
    let pod = view.pod(&request.pod).map(|pod| StoredPod {
        pod,
        version: ResourceVersion(1),
        disruption_target: false,
        deletion: None,
        termination_grace: None,
    });
    answer(request, pod, |n| view.node(n).cloned(), ResourceVersion(2)).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{PodKey, Uid};
    use crate::RequestId;

    fn pod(node: Option<&str>) -> Pod {
        Pod {
            key: PodKey::new("default", "p"),
            uid: Uid("p-1".into()),
            node_name: node.map(Into::into),
            tolerations: Vec::new(),
        }
    }

    fn delete_answer(
        pod: &Pod,
        deletion: Option<Deletion>,
        grace: Option<i64>,
    ) -> (ApiResult, Write) {
        let request = ApiRequest {
            id: RequestId(1),
            verb: Verb::Delete,
            pod: pod.key.clone(),
            uid: None,
            version: None,
        };
        let stored = StoredPod {
            pod,
            version: ResourceVersion(1),
            disruption_target: false,
            deletion,
            termination_grace: grace.map(Duration::from_secs),
        };
        answer(&request, Some(stored), |_| None, ResourceVersion(2))
    }

    /// API-1 (semantics §6.1–§6.2): a GET returns the stored object with its resourceVersion
    /// and condition; PATCH and DELETE answer 409 when the UID or the resourceVersion
    /// precondition differs (either alone suffices) and apply when both hold or are absent; a
    /// missing pod or node is 404.
    #[test]
    fn answers_reads_and_checks_each_precondition() {
        let stored_pod = pod(Some("n1"));
        let stored = StoredPod {
            pod: &stored_pod,
            version: ResourceVersion(7),
            disruption_target: true,
            deletion: None,
            termination_grace: None,
        };
        let request = |verb: Verb, uid: Option<&str>, version: Option<u64>| ApiRequest {
            id: RequestId(1),
            verb,
            pod: stored_pod.key.clone(),
            uid: uid.map(|u| Uid(u.into())),
            version: version.map(ResourceVersion),
        };
        let node = Node {
            name: "n1".into(),
            taints: Vec::new(),
        };
        let nodes = |name: &str| (name == "n1").then(|| node.clone());
        let next = ResourceVersion(8);
        let ask = |r: &ApiRequest, p: Option<StoredPod<'_>>| answer(r, p, nodes, next);

        let get = request(Verb::Get, None, None);
        let fetched = FetchedPod {
            pod: stored_pod.clone(),
            version: ResourceVersion(7),
            disruption_target: true,
        };
        assert_eq!(
            ask(&get, Some(stored)),
            (ApiResult::Pod(Arc::new(fetched)), Write::Nothing)
        );
        assert_eq!(ask(&get, None), (ApiResult::NotFound, Write::Nothing));
        let node_get = request(Verb::GetNode("n1".into()), None, None);
        assert_eq!(
            ask(&node_get, None),
            (ApiResult::Node(Arc::new(node.clone())), Write::Nothing)
        );
        let gone_node = request(Verb::GetNode("n2".into()), None, None);
        assert_eq!(
            ask(&gone_node, Some(stored)),
            (ApiResult::NotFound, Write::Nothing)
        );

        let patched = (ApiResult::Patched(next), Write::MarkDisruptionTarget);
        let refused = (ApiResult::PreconditionFailed, Write::Nothing);
        let patch = |uid, version| request(Verb::PatchDisruptionTarget, uid, version);
        assert_eq!(ask(&patch(None, None), Some(stored)), patched);
        assert_eq!(ask(&patch(Some("p-1"), Some(7)), Some(stored)), patched);
        assert_eq!(ask(&patch(Some("p-2"), None), Some(stored)), refused);
        assert_eq!(ask(&patch(None, Some(6)), Some(stored)), refused);
        assert_eq!(ask(&patch(Some("p-2"), Some(7)), Some(stored)), refused);
        assert_eq!(ask(&patch(Some("p-1"), Some(6)), Some(stored)), refused);
        assert_eq!(
            ask(&request(Verb::Delete, Some("p-1"), Some(7)), Some(stored)),
            (ApiResult::Deleted, Write::Delete)
        );
        assert_eq!(
            ask(&request(Verb::Delete, Some("p-2"), None), Some(stored)),
            refused
        );
        assert_eq!(
            ask(&patch(None, None), None),
            (ApiResult::NotFound, Write::Nothing)
        );
    }

    /// API-2: a bound pod becomes Terminating; a second DELETE succeeds and changes nothing;
    /// an unbound pod, a zero grace or a server without graceful deletion removes it.
    #[test]
    fn delete_is_graceful_for_bound_pods_and_idempotent_while_terminating() {
        let bound = pod(Some("n1"));
        assert_eq!(
            delete_answer(&bound, None, Some(30)),
            (
                ApiResult::Deleted,
                Write::StartGracefulDeletion {
                    grace: Duration::from_secs(30)
                }
            )
        );
        let terminating = Deletion::starting(crate::time::Time(1000), Duration::from_secs(30));
        assert_eq!(terminating.timestamp, crate::time::Time(31_000));
        assert_eq!(
            delete_answer(&bound, Some(terminating), Some(30)),
            (ApiResult::Deleted, Write::Nothing)
        );
        assert_eq!(delete_answer(&bound, None, None).1, Write::Delete);
        assert_eq!(delete_answer(&bound, None, Some(0)).1, Write::Delete);
        assert_eq!(delete_answer(&pod(None), None, Some(30)).1, Write::Delete);
    }

    #[test]
    fn an_unreachable_or_deleted_node_never_confirms() {
        use crate::api::{Taint, TaintEffect};
        let mut node = Node {
            name: "n1".into(),
            taints: vec![Taint::new("k", "", TaintEffect::NoExecute)],
        };
        assert!(kubelet_can_confirm(Some(&node)));
        node.taints
            .push(Taint::new(UNREACHABLE, "", TaintEffect::NoExecute));
        assert!(!kubelet_can_confirm(Some(&node)));
        assert!(!kubelet_can_confirm(None));
    }
}
