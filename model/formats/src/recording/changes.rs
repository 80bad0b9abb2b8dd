//! Changes to pods and nodes, in resourceVersion order, into TRACE-3 lines: only what taint
//! eviction reads (a kubelet heartbeat makes no line), each dated by the audit log's instant or,
//! from kubectl alone, by the object's own times (IMPORT-2). Dates never go backwards along the
//! resourceVersion order, so `conform` reads the trace as the API server stored it; with the
//! proxy's log, along each kind's order only: the controller's node and pod watches are two
//! streams, each in resourceVersion order, and the trace dates a change when the controller
//! received it (IMPORT-11). An object the
//! recording first shows in a change that is not its creation existed before: it is added at
//! the instant its own times say it has been as shown (IMPORT-9).

use super::{Change, Collected, Object, Rank, Seen, Skip, Stamp};
use crate::manifest::convert::{has_disruption_target, node_from_k8s, pod_from_k8s};
use crate::trace::TraceEvent;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use std::collections::BTreeMap;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey};
use taintcheck_core::time::Time;

/// A pod as taint eviction sees it, with the two status facts a trace line carries.
#[derive(PartialEq)]
struct PodState {
    pod: Pod,
    terminating: bool,
    disruption_target: bool,
}

/// The objects so far and the lines they made.
#[derive(Default)]
pub struct Objects {
    nodes: BTreeMap<NodeName, Node>,
    pods: BTreeMap<PodKey, PodState>,
    /// The trace lines, in the order they were made (sorted by instant when the trace is
    /// built).
    pub lines: Vec<(Stamp, Rank, TraceEvent)>,
    /// The instant of the latest change dated in resourceVersion order: no later change is
    /// dated before it. Per kind (nodes, pods) when the proxy's log dates changes, else one.
    floors: BTreeMap<bool, Stamp>,
}

impl Objects {
    /// Dates a change and records it: its own instant if the source knew it, else `dated`,
    /// never before the previous line (whose time a change without any time gets).
    fn push(&mut self, c: &mut Collected, at: Option<Stamp>, dated: Option<Time>, e: TraceEvent) {
        let stream = c.proxy_given
            && matches!(
                e,
                TraceEvent::NodeAdded { .. }
                    | TraceEvent::NodeModified { .. }
                    | TraceEvent::NodeDeleted { .. }
            );
        let floor = self.floors.get(&stream).copied();
        let t = match (at.or(dated.map(Stamp::from)), floor) {
            (Some(t), Some(last)) => t.max(last),
            (Some(t), None) => t,
            (None, last) => last.unwrap_or_else(|| c.latest.unwrap_or(Time::ZERO).into()),
        };
        self.floors.insert(stream, t);
        c.saw(t.t);
        self.lines.push((t, Rank::Change, e));
    }

    /// The line of an object first shown by a change that is not its creation, or by a read: it
    /// existed before, as shown, since the instant its own times give (`own`), no later than
    /// the sighting (`at`). Not held to the resourceVersion order: its version is only the one
    /// first shown (IMPORT-9).
    fn first_seen(
        &mut self,
        c: &mut Collected,
        at: Option<Stamp>,
        own: Option<Time>,
        e: TraceEvent,
    ) {
        let t = match (own.map(Stamp::from), at) {
            (Some(own), Some(at)) => own.min(at),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => self
                .floors
                .values()
                .max()
                .copied()
                .unwrap_or_else(|| c.latest.unwrap_or(Time::ZERO).into()),
        };
        c.saw(t.t);
        self.lines.push((t, Rank::Change, e));
    }

    /// Applies the next change.
    pub fn apply(&mut self, c: &mut Collected, change: Change) {
        match &change.object {
            Object::Node(n) => self.node(c, &change, n),
            Object::Pod(p) => self.pod(c, &change, p),
        }
    }

    fn node(&mut self, c: &mut Collected, change: &Change, n: &k8s::Node) {
        let node = node_from_k8s(n);
        let rv = resource_version(&n.metadata);
        if change.seen != Seen::Created && !self.nodes.contains_key(&node.name) {
            // Its taints have been there since they were added; else since it was created.
            let own = node
                .taints
                .iter()
                .filter_map(|t| t.time_added)
                .max()
                .or_else(|| write_time(&n.metadata, |m| mentions(m, "f:taints")))
                .or_else(|| meta_time(n.metadata.creation_timestamp.as_ref()));
            let added = TraceEvent::NodeAdded {
                rv,
                node: node.clone(),
            };
            self.first_seen(c, change.at, own, added);
            self.nodes.insert(node.name.clone(), node.clone());
            if change.seen == Seen::Read {
                return;
            }
        } else if change.seen == Seen::Read {
            return;
        }
        if change.gone {
            self.nodes.remove(&node.name);
            let dated = deletion_time(&n.metadata);
            let name = node.name;
            self.push(c, change.at, dated, TraceEvent::NodeDeleted { rv, name });
            return;
        }
        let old = self.nodes.insert(node.name.clone(), node.clone());
        if old.as_ref() == Some(&node) {
            if let Some(t) = change
                .at
                .map(|a| a.t)
                .or_else(|| write_time(&n.metadata, |_| true))
            {
                c.saw(t);
            }
            c.skip(Skip::Unchanged);
            return;
        }
        // The taints' writers date the change; a new taint's timeAdded is the best evidence.
        let added = node
            .taints
            .iter()
            .filter(|t| !old.as_ref().is_some_and(|o| o.taints.contains(t)))
            .filter_map(|t| t.time_added)
            .max();
        let dated = added
            .or_else(|| write_time(&n.metadata, |m| mentions(m, "f:taints")))
            .or_else(|| write_time(&n.metadata, |_| true));
        let event = match old {
            None => TraceEvent::NodeAdded { rv, node },
            Some(_) => TraceEvent::NodeModified { rv, node },
        };
        self.push(c, change.at, dated, event);
    }

    fn pod(&mut self, c: &mut Collected, change: &Change, p: &k8s::Pod) {
        let pod = pod_from_k8s(p);
        let rv = resource_version(&p.metadata);
        let key = pod.key.clone();
        let new = PodState {
            pod,
            terminating: p.metadata.deletion_timestamp.is_some(),
            disruption_target: has_disruption_target(p),
        };
        let known = self.pods.get(&key).map(|o| o.pod.uid == new.pod.uid);
        if change.seen != Seen::Created && known.is_none() {
            // Its tolerations and node have been as shown since its latest spec write; the
            // status facts the sighting shows are changes at the sighting.
            let own = write_time(&p.metadata, is_spec_write)
                .or_else(|| meta_time(p.metadata.creation_timestamp.as_ref()));
            let added = TraceEvent::PodAdded {
                rv,
                pod: new.pod.clone(),
            };
            self.first_seen(c, change.at, own, added);
            let before = PodState {
                pod: new.pod.clone(),
                terminating: false,
                disruption_target: false,
            };
            let plain = before == new;
            self.pods.insert(key.clone(), before);
            if change.seen == Seen::Read && plain {
                return;
            }
        } else if change.seen == Seen::Read && known == Some(true) {
            return;
        }
        if change.gone {
            if let Some(old) = self.pods.remove(&key) {
                let dated = deletion_time(&p.metadata);
                let event = TraceEvent::PodDeleted {
                    rv,
                    namespace: key.namespace.to_string(),
                    name: key.name.to_string(),
                    uid: old.pod.uid,
                };
                self.push(c, change.at, dated, event);
            }
            return;
        }
        let old = self.pods.remove(&key);
        let (event, dated) = match &old {
            None => (
                TraceEvent::PodAdded {
                    rv,
                    pod: new.pod.clone(),
                },
                write_time(&p.metadata, is_spec_write)
                    .or_else(|| meta_time(p.metadata.creation_timestamp.as_ref())),
            ),
            Some(o) if o.pod.uid != new.pod.uid => {
                // A same-name successor whose predecessor's deletion the recording did not show.
                let gone = TraceEvent::PodDeleted {
                    rv,
                    namespace: key.namespace.to_string(),
                    name: key.name.to_string(),
                    uid: o.pod.uid.clone(),
                };
                let created = meta_time(p.metadata.creation_timestamp.as_ref());
                self.push(c, change.at, created, gone);
                let added = TraceEvent::PodAdded {
                    rv,
                    pod: new.pod.clone(),
                };
                (added, created)
            }
            Some(o) if *o == new => {
                if let Some(t) = change
                    .at
                    .map(|a| a.t)
                    .or_else(|| write_time(&p.metadata, |_| true))
                {
                    c.saw(t);
                }
                self.pods.insert(key, new);
                c.skip(Skip::Unchanged);
                return;
            }
            Some(o) => {
                let terminating = new.terminating && !o.terminating;
                let bound = o.pod.node_name.is_none() && new.pod.node_name.is_some();
                let dated = if terminating {
                    // A graceful DELETE sets deletionTimestamp to its instant plus the grace.
                    delete_request_time(&p.metadata)
                } else if bound && change.at.is_none() {
                    // A bind writes no managedFields entry: the audit log's `pods/binding`
                    // create dates it (the oldest not yet used), else the latest spec write.
                    c.binds
                        .get_mut(&(key.namespace.to_string(), key.name.to_string()))
                        .filter(|b| !b.is_empty())
                        .map(|b| b.remove(0).t)
                        .or_else(|| write_time(&p.metadata, is_spec_write))
                } else if o.pod != new.pod {
                    write_time(&p.metadata, is_spec_write)
                } else {
                    // Only status changed: the status subresource's own write dates it.
                    write_time(&p.metadata, is_disruption_target_write)
                        .or_else(|| write_time(&p.metadata, is_status_write))
                };
                let event = TraceEvent::PodModified {
                    rv,
                    pod: new.pod.clone(),
                    terminating,
                    disruption_target: new.disruption_target,
                };
                (event, dated)
            }
        };
        let dated = dated.or_else(|| write_time(&p.metadata, |_| true));
        self.pods.insert(key, new);
        self.push(c, change.at, dated, event);
    }
}

fn meta_time(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Time> {
    t.map(|t| Time(t.0.as_millisecond()))
}

fn resource_version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// The latest write by a field manager whose entry `which` accepts.
fn write_time(meta: &ObjectMeta, which: impl Fn(&ManagedFieldsEntry) -> bool) -> Option<Time> {
    meta.managed_fields
        .as_deref()?
        .iter()
        .filter(|m| which(m))
        .filter_map(|m| meta_time(m.time.as_ref()))
        .max()
}

/// The entry's fields mention `field` (`f:taints`, `f:spec`).
fn mentions(m: &ManagedFieldsEntry, field: &str) -> bool {
    m.fields_v1
        .as_ref()
        .is_some_and(|v| v.0.to_string().contains(field))
}

fn is_status_write(m: &ManagedFieldsEntry) -> bool {
    m.subresource.as_deref() == Some("status")
}

fn is_spec_write(m: &ManagedFieldsEntry) -> bool {
    !is_status_write(m) && mentions(m, "f:spec")
}

/// The status write that owns the `DisruptionTarget` condition (the taint manager's PATCH).
fn is_disruption_target_write(m: &ManagedFieldsEntry) -> bool {
    is_status_write(m) && mentions(m, "DisruptionTarget")
}

fn deletion_time(meta: &ObjectMeta) -> Option<Time> {
    meta_time(meta.deletion_timestamp.as_ref())
}

/// When the DELETE that made a pod terminate was served: `deletionTimestamp` minus the grace.
fn delete_request_time(meta: &ObjectMeta) -> Option<Time> {
    let at = deletion_time(meta)?;
    let grace = meta.deletion_grace_period_seconds.unwrap_or(0);
    Some(Time(at.millis().saturating_sub(grace.saturating_mul(1000))))
}
