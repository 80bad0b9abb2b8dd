//! k8s-openapi objects to compact objects and back.
//!
//! Go decodes a missing string as `""`, so absent and empty fields convert alike. An empty
//! toleration operator becomes `Equal` and an empty toleration effect becomes `None` (both mean
//! the same to the matcher); printing writes `Equal` explicitly.

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time as K8sTime};
use k8s_openapi::jiff::Timestamp;
use taintcheck_core::api::{Node, Operator, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::time::Time;

/// The namespace `kubectl apply` uses when a manifest names none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// The fields the controller reads: key (namespace `default` if none), UID, node, tolerations.
pub fn pod_from_k8s(p: &k8s::Pod) -> Pod {
    let meta = &p.metadata;
    let spec = p.spec.as_ref();
    Pod {
        key: PodKey::new(
            meta.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE),
            meta.name.as_deref().unwrap_or(""),
        ),
        uid: Uid(meta.uid.as_deref().unwrap_or("").into()),
        node_name: spec
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty())
            .map(Into::into),
        tolerations: spec
            .and_then(|s| s.tolerations.as_deref())
            .unwrap_or_default()
            .iter()
            .map(toleration_from_k8s)
            .collect(),
    }
}

/// The pod's status has `DisruptionTarget=True` (the taint manager's PATCH, or another
/// disruption's: the controller's GET sees either the same way).
pub fn has_disruption_target(p: &k8s::Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "DisruptionTarget" && c.status == "True")
        })
}

/// The name and taints.
pub fn node_from_k8s(n: &k8s::Node) -> Node {
    Node {
        name: n.metadata.name.as_deref().unwrap_or("").into(),
        taints: n
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_deref())
            .unwrap_or_default()
            .iter()
            .map(taint_from_k8s)
            .collect(),
    }
}

/// An empty operator reads as `Equal`, an empty effect as any effect.
pub fn toleration_from_k8s(t: &k8s::Toleration) -> Toleration {
    Toleration {
        key: t.key.as_deref().unwrap_or("").into(),
        operator: Operator::parse(t.operator.as_deref().unwrap_or("")),
        value: t.value.as_deref().unwrap_or("").into(),
        effect: t
            .effect
            .as_deref()
            .filter(|e| !e.is_empty())
            .map(TaintEffect::parse),
        seconds: t.toleration_seconds,
    }
}

/// `timeAdded` in milliseconds since the epoch.
pub fn taint_from_k8s(t: &k8s::Taint) -> Taint {
    Taint {
        key: t.key.as_str().into(),
        value: t.value.as_deref().unwrap_or("").into(),
        effect: TaintEffect::parse(&t.effect),
        time_added: t
            .time_added
            .as_ref()
            .map(|time| Time(time.0.as_millisecond())),
    }
}

/// A pod with only those fields set, for printing.
pub fn pod_to_k8s(p: &Pod) -> k8s::Pod {
    k8s::Pod {
        metadata: ObjectMeta {
            name: Some(p.key.name.to_string()),
            namespace: Some(p.key.namespace.to_string()),
            uid: non_empty(&p.uid.0),
            ..ObjectMeta::default()
        },
        spec: Some(k8s::PodSpec {
            node_name: p.node_name.as_ref().map(|n| n.to_string()),
            tolerations: (!p.tolerations.is_empty())
                .then(|| p.tolerations.iter().map(toleration_to_k8s).collect()),
            ..k8s::PodSpec::default()
        }),
        status: None,
    }
}

/// A node with only its name and taints set, for printing.
pub fn node_to_k8s(n: &Node) -> k8s::Node {
    k8s::Node {
        metadata: ObjectMeta {
            name: Some(n.name.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(k8s::NodeSpec {
            taints: (!n.taints.is_empty()).then(|| n.taints.iter().map(taint_to_k8s).collect()),
            ..k8s::NodeSpec::default()
        }),
        status: None,
    }
}

/// The operator always written; empty strings left out.
pub fn toleration_to_k8s(t: &Toleration) -> k8s::Toleration {
    k8s::Toleration {
        key: non_empty(&t.key),
        operator: Some(t.operator.as_str().to_owned()),
        value: non_empty(&t.value),
        effect: t.effect.as_ref().map(|e| e.as_str().to_owned()),
        toleration_seconds: t.seconds,
    }
}

/// A taint; `time_added` is printed at whole-second resolution, as the API server stores it.
pub fn taint_to_k8s(t: &Taint) -> k8s::Taint {
    k8s::Taint {
        key: t.key.to_string(),
        value: non_empty(&t.value),
        effect: t.effect.as_str().to_owned(),
        time_added: t
            .time_added
            .and_then(|time| Timestamp::from_millisecond(time.0).ok())
            .map(K8sTime),
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}
