//! The core's requests as real API calls, built as upstream's taint-eviction code builds them:
//! `GET pods/{name}`, `GET nodes/{name}` (fixed design), the `DisruptionTarget` condition as
//! upstream's `PatchPodStatus` sends it (a strategic merge patch of `pods/{name}/status` whose
//! `metadata.uid` is the fetched pod's), and `DELETE pods/{name}` with the request's UID and
//! resourceVersion preconditions. HTTP statuses map to the core's results: 404 not found, 409
//! precondition failed, anything else failed. Spec: RT-WORLD-4.

use crate::api::Answer;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as K8sTime;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::{Api, Client};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use taintcheck_core::api::{ResourceVersion, Uid};
use taintcheck_core::{ApiRequest, ApiResult, FetchedPod, Verb};
use taintcheck_formats::manifest::convert::{has_disruption_target, node_from_k8s, pod_from_k8s};

/// A request that gets no answer within this fails, as client-go's would at its timeout.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Sends `request` and waits for its answer.
pub async fn serve(client: &Client, request: &ApiRequest) -> Answer {
    match tokio::time::timeout(TIMEOUT, call(client, request)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => Answer {
            result: failure(&e),
            uid: None,
            version: None,
        },
        Err(_) => Answer {
            result: ApiResult::Failed,
            uid: None,
            version: None,
        },
    }
}

async fn call(client: &Client, request: &ApiRequest) -> Result<Answer, kube::Error> {
    let pods: Api<k8s::Pod> = Api::namespaced(client.clone(), &request.pod.namespace);
    let name: &str = &request.pod.name;
    match &request.verb {
        Verb::Get => {
            let p = pods.get(name).await?;
            let version = resource_version(&p.metadata);
            let pod = pod_from_k8s(&p);
            Ok(Answer {
                uid: Some(pod.uid.clone()),
                version: Some(version),
                result: ApiResult::Pod(Arc::new(FetchedPod {
                    pod,
                    version,
                    disruption_target: has_disruption_target(&p),
                })),
            })
        }
        Verb::GetNode(node) => {
            let nodes: Api<k8s::Node> = Api::all(client.clone());
            let n = nodes.get(node).await?;
            Ok(Answer {
                result: ApiResult::Node(Arc::new(node_from_k8s(&n))),
                uid: None,
                version: None,
            })
        }
        Verb::PatchDisruptionTarget => {
            let patch = disruption_target_patch(request.uid.as_ref(), request.version);
            let p = pods
                .patch_status(name, &PatchParams::default(), &Patch::Strategic(patch))
                .await?;
            let version = resource_version(&p.metadata);
            Ok(Answer {
                result: ApiResult::Patched(version),
                uid: p.metadata.uid.map(|u| Uid(u.into())),
                version: Some(version),
            })
        }
        Verb::Delete => {
            let params = DeleteParams {
                preconditions: (request.uid.is_some() || request.version.is_some()).then(|| {
                    Preconditions {
                        uid: request.uid.as_ref().map(|u| u.0.to_string()),
                        resource_version: request.version.map(|v| v.0.to_string()),
                    }
                }),
                ..DeleteParams::default()
            };
            let uid = match pods.delete(name, &params).await? {
                either::Either::Left(p) => p.metadata.uid,
                either::Either::Right(status) => status.details.map(|d| d.uid),
            };
            Ok(Answer {
                result: ApiResult::Deleted,
                uid: uid.filter(|u| !u.is_empty()).map(|u| Uid(u.into())),
                version: None,
            })
        }
    }
}

/// Upstream `addConditionAndDeletePod`'s condition, as `PatchPodStatus` diffs it: the UID (and,
/// under the fixed design, the resourceVersion) in `metadata` make the API server refuse the
/// patch with 409 if the pod is not the one read.
fn disruption_target_patch(
    uid: Option<&Uid>,
    version: Option<ResourceVersion>,
) -> serde_json::Value {
    let mut metadata = serde_json::Map::new();
    if let Some(uid) = uid {
        metadata.insert("uid".into(), json!(uid.0.to_string()));
    }
    if let Some(v) = version {
        metadata.insert("resourceVersion".into(), json!(v.0.to_string()));
    }
    let now = K8sTime(k8s_openapi::jiff::Timestamp::now());
    json!({
        "metadata": metadata,
        "status": {
            "conditions": [{
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": now,
            }]
        }
    })
}

fn resource_version(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> ResourceVersion {
    ResourceVersion(
        meta.resource_version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    )
}

fn failure(e: &kube::Error) -> ApiResult {
    match e {
        kube::Error::Api(status) if status.code == 404 => ApiResult::NotFound,
        kube::Error::Api(status) if status.code == 409 => ApiResult::PreconditionFailed,
        _ => ApiResult::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_carries_its_preconditions_and_upstreams_condition() {
        let p = disruption_target_patch(Some(&Uid("u-1".into())), Some(ResourceVersion(7)));
        assert_eq!(p["metadata"]["uid"], "u-1");
        assert_eq!(p["metadata"]["resourceVersion"], "7");
        let c = &p["status"]["conditions"][0];
        assert_eq!(c["type"], "DisruptionTarget");
        assert_eq!(c["reason"], "DeletionByTaintManager");
        assert_eq!(
            c["message"],
            "Taint manager: deleting due to NoExecute taint"
        );
        let bare = disruption_target_patch(None, None);
        assert_eq!(bare["metadata"], json!({}));
    }
}
