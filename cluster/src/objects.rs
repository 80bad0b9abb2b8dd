//! A scenario's nodes and pods as Kubernetes objects: what the player sends the API server.
//! Pods are created bound (no scheduler runs), with one container that never starts (no
//! kubelet), and a termination grace of 0 so that a DELETE removes them at once, as a scenario
//! without `deletionGrace` says (SCN-3).

use crate::names::RUN_LABEL;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time as K8sTime};
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;
use taintcheck_core::api::{Taint, TaintEffect, Toleration};

/// The image of the container every pod has; never pulled, since no kubelet runs.
pub const IMAGE: &str = "registry.k8s.io/pause:3.10";

/// A node named `name`, labelled with the run, with `taints`.
pub fn node(name: &str, run: &str, taints: &[Taint]) -> k8s::Node {
    k8s::Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([(RUN_LABEL.to_string(), run.to_string())])),
            ..ObjectMeta::default()
        },
        spec: Some(k8s::NodeSpec {
            taints: (!taints.is_empty()).then(|| taints.iter().map(taint).collect()),
            ..k8s::NodeSpec::default()
        }),
        ..k8s::Node::default()
    }
}

/// A taint as the API writes it. A `NoExecute` taint gets `timeAdded` now, as `kubectl taint`
/// and the node lifecycle controller give it (the eviction controller only compares it).
pub fn taint(t: &Taint) -> k8s::Taint {
    k8s::Taint {
        key: t.key.to_string(),
        value: (!t.value.is_empty()).then(|| t.value.to_string()),
        effect: t.effect.as_str().to_string(),
        time_added: (t.effect == TaintEffect::NoExecute).then(|| K8sTime(Timestamp::now())),
    }
}

/// The model's view of an API taint (for kubectl's taint arithmetic on the node's list).
pub fn from_api_taint(t: &k8s::Taint) -> Taint {
    Taint::new(
        &t.key,
        t.value.as_deref().unwrap_or(""),
        TaintEffect::parse(&t.effect),
    )
}

/// A toleration as the API writes it.
pub fn toleration(t: &Toleration) -> k8s::Toleration {
    k8s::Toleration {
        key: (!t.key.is_empty()).then(|| t.key.to_string()),
        operator: Some(t.operator.as_str().to_string()),
        value: (!t.value.is_empty()).then(|| t.value.to_string()),
        effect: t.effect.as_ref().map(|e| e.as_str().to_string()),
        toleration_seconds: t.seconds,
    }
}

/// A pod in `namespace`, bound to `node` (or Pending), with `tolerations` as submitted (the
/// API server's admission adds DefaultTolerationSeconds' own).
pub fn pod(
    namespace: &str,
    name: &str,
    node: Option<&str>,
    tolerations: &[Toleration],
    grace_seconds: i64,
) -> k8s::Pod {
    k8s::Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(k8s::PodSpec {
            node_name: node.map(str::to_string),
            tolerations: (!tolerations.is_empty())
                .then(|| tolerations.iter().map(toleration).collect()),
            termination_grace_period_seconds: Some(grace_seconds),
            containers: vec![k8s::Container {
                name: "main".to_string(),
                image: Some(IMAGE.to_string()),
                ..k8s::Container::default()
            }],
            ..k8s::PodSpec::default()
        }),
        ..k8s::Pod::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taintcheck_core::api::Operator;

    #[test]
    fn objects_carry_what_the_scenario_says() {
        let t = Taint::new("maintenance", "true", TaintEffect::NoExecute);
        let n = node("tc-x-node1", "tc-x", std::slice::from_ref(&t));
        let api = &n.spec.as_ref().unwrap().taints.as_ref().unwrap()[0];
        assert_eq!(api.key, "maintenance");
        assert_eq!(api.value.as_deref(), Some("true"));
        assert!(api.time_added.is_some(), "NoExecute taints get timeAdded");
        assert_eq!(from_api_taint(api), t);
        let tol = Toleration {
            key: "maintenance".into(),
            operator: Operator::Exists,
            value: "".into(),
            effect: Some(TaintEffect::NoExecute),
            seconds: Some(5),
        };
        let p = pod("tc-x", "web-0", Some("tc-x-node1"), &[tol], 0);
        let spec = p.spec.unwrap();
        assert_eq!(spec.node_name.as_deref(), Some("tc-x-node1"));
        let api = &spec.tolerations.unwrap()[0];
        assert_eq!(api.operator.as_deref(), Some("Exists"));
        assert_eq!(api.value, None);
        assert_eq!(api.toleration_seconds, Some(5));
        assert_eq!(spec.termination_grace_period_seconds, Some(0));
    }
}
