//! Events as upstream's recorder writes them (client-go `record`, `makeEvent`): a core/v1 Event
//! in the pod's namespace named `{pod}.{unix nanoseconds in hex}`, `involvedObject` the pod by
//! name, type Normal, count 1, first and last timestamps now, the source component and the
//! reporting controller the same. Written in the background; a failure is logged, as upstream's
//! broadcaster logs it. Spec: RT-WORLD-5.

use crate::world::PodEvent;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time as K8sTime};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};

/// The Event object for `event`, at `now`.
pub fn object(event: &PodEvent, component: &str, host: &str, now: Timestamp) -> k8s::Event {
    k8s::Event {
        metadata: ObjectMeta {
            name: Some(format!("{}.{:x}", event.name, now.as_nanosecond())),
            namespace: Some(event.namespace.clone()),
            ..ObjectMeta::default()
        },
        involved_object: k8s::ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: Some(event.name.clone()),
            namespace: Some(event.namespace.clone()),
            ..k8s::ObjectReference::default()
        },
        reason: Some(event.reason.clone()),
        message: Some(event.message.clone()),
        type_: Some("Normal".into()),
        count: Some(1),
        first_timestamp: Some(K8sTime(now)),
        last_timestamp: Some(K8sTime(now)),
        source: Some(k8s::EventSource {
            component: Some(component.into()),
            host: (!host.is_empty()).then(|| host.into()),
        }),
        reporting_component: Some(component.into()),
        reporting_instance: Some(host.into()),
        ..k8s::Event::default()
    }
}

/// Creates the Event.
pub async fn write(client: Client, event: k8s::Event) {
    let ns = event.metadata.namespace.clone().unwrap_or_default();
    let events: Api<k8s::Event> = Api::namespaced(client, &ns);
    if let Err(e) = events.create(&PostParams::default(), &event).await {
        eprintln!("taintcheck controller: could not write an Event in {ns}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_names_the_pod_as_upstreams_recorder_does() {
        let e = PodEvent {
            namespace: "ns".into(),
            name: "web-0".into(),
            reason: "TaintManagerEviction".into(),
            message: "Marking for deletion Pod ns/web-0".into(),
        };
        let now = Timestamp::from_nanosecond(0x10).unwrap();
        let o = object(&e, "taint-eviction-controller", "h", now);
        assert_eq!(o.metadata.name.as_deref(), Some("web-0.10"));
        assert_eq!(o.involved_object.kind.as_deref(), Some("Pod"));
        assert_eq!(o.involved_object.namespace.as_deref(), Some("ns"));
        assert_eq!(o.involved_object.uid, None);
        assert_eq!(o.type_.as_deref(), Some("Normal"));
        assert_eq!(
            o.source.unwrap().component.as_deref(),
            Some("taint-eviction-controller")
        );
    }
}
