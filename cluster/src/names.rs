//! A scenario's names on a shared API server, and back. Several scenarios run on one control
//! plane, so each gets its own namespaces and node names (a run id as prefix) and a label on
//! its nodes; the API server picks the UIDs. The trace a run records speaks the real names;
//! [`Names::to_scenario`] translates it back, so that the scenario's expectations and
//! `expect`'s envelope, written with the scenario's names and UIDs, can judge it.

use std::collections::BTreeMap;
use std::sync::Arc;
use taintcheck_core::api::{Node, Pod, PodKey, Uid};
use taintcheck_formats::trace::{TraceEvent, TraceRecord};

/// The label every node of a run carries (`taintcheck.dev/run=RUN`), so a watch of nodes can
/// select the run's own.
pub const RUN_LABEL: &str = "taintcheck.dev/run";

/// One run's names: the run id, and the scenario's namespaces, nodes and UIDs as the API server
/// knows them.
#[derive(Clone, Debug)]
pub struct Names {
    run: String,
    namespaces: BTreeMap<String, String>,
    /// Real UID → the scenario's, filled as pods are created.
    uids: BTreeMap<String, String>,
}

impl Names {
    /// Names for a run of `scenario`: `tc-SCENARIO-SUFFIX`, cut to fit a namespace (a DNS label
    /// of at most 63 characters) with room for a second namespace's suffix.
    pub fn new(scenario: &str, suffix: &str) -> Names {
        let clean: String = scenario
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(30)
            .collect();
        let run = format!("tc-{}-{suffix}", clean.trim_matches('-'));
        Names {
            run,
            namespaces: BTreeMap::new(),
            uids: BTreeMap::new(),
        }
    }

    /// The run id: the `default` namespace's real name, the nodes' prefix and label value.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The real namespace of a scenario namespace (`default` is the run id itself, any other
    /// `RUN-NAMESPACE`, cut to 63 characters).
    pub fn namespace(&mut self, scenario: &str) -> String {
        let run = &self.run;
        self.namespaces
            .entry(scenario.to_string())
            .or_insert_with(|| {
                if scenario == "default" {
                    run.clone()
                } else {
                    let mut n = format!("{run}-{scenario}");
                    n.truncate(63);
                    n.trim_end_matches('-').to_string()
                }
            })
            .clone()
    }

    /// Every real namespace of the run so far.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.values().map(String::as_str)
    }

    /// The real name of a scenario node.
    pub fn node(&self, scenario: &str) -> String {
        format!("{}-{scenario}", self.run)
    }

    /// Whether a real node name is one of this run's.
    pub fn is_own_node(&self, real: &str) -> bool {
        real.strip_prefix(&self.run)
            .is_some_and(|rest| rest.starts_with('-'))
    }

    /// A text (a `Steer` line's words) in the scenario's names: the run's nodes and namespaces
    /// named as the scenario names them.
    pub fn text_to_scenario(&self, text: &str) -> String {
        text.replace(&format!("{}-", self.run), "")
            .replace(&self.run, "default")
    }

    /// The real pod key of a scenario pod.
    pub fn pod(&mut self, key: &PodKey) -> PodKey {
        PodKey::new(&self.namespace(&key.namespace), &key.name)
    }

    /// Notes the UID the API server gave a scenario incarnation.
    pub fn created(&mut self, real_uid: &str, scenario_uid: &Uid) {
        self.uids
            .insert(real_uid.to_string(), scenario_uid.0.to_string());
    }

    /// The scenario UID of a real one (the real one when it is not the run's).
    pub fn scenario_uid(&self, real: &str) -> String {
        self.uids
            .get(real)
            .cloned()
            .unwrap_or_else(|| real.to_string())
    }

    fn scenario_namespace(&self, real: &str) -> String {
        self.namespaces
            .iter()
            .find(|(_, r)| r.as_str() == real)
            .map_or_else(|| real.to_string(), |(s, _)| s.clone())
    }

    fn scenario_node(&self, real: &str) -> String {
        match real
            .strip_prefix(&self.run)
            .and_then(|r| r.strip_prefix('-'))
        {
            Some(node) => node.to_string(),
            None => real.to_string(),
        }
    }

    fn uid(&self, uid: &Uid) -> Uid {
        Uid(self.scenario_uid(&uid.0).into())
    }

    fn key(&self, key: &PodKey) -> PodKey {
        PodKey::new(&self.scenario_namespace(&key.namespace), &key.name)
    }

    fn node_object(&self, node: &Node) -> Node {
        Node {
            name: self.scenario_node(&node.name).into(),
            taints: node.taints.clone(),
        }
    }

    fn pod_object(&self, pod: &Pod) -> Pod {
        Pod {
            key: self.key(&pod.key),
            uid: self.uid(&pod.uid),
            node_name: pod
                .node_name
                .as_ref()
                .map(|n| Arc::from(self.scenario_node(n))),
            tolerations: pod.tolerations.clone(),
        }
    }

    /// A record of the run's trace in the scenario's names and UIDs: namespaces, node names,
    /// UIDs, and the pod named in an event's message (`Marking for deletion Pod NS/NAME`).
    pub fn to_scenario(&self, r: &TraceRecord) -> TraceRecord {
        let event = match &r.event {
            TraceEvent::NodeAdded { rv, node } => TraceEvent::NodeAdded {
                rv: *rv,
                node: self.node_object(node),
            },
            TraceEvent::NodeModified { rv, node } => TraceEvent::NodeModified {
                rv: *rv,
                node: self.node_object(node),
            },
            TraceEvent::NodeDeleted { rv, name } => TraceEvent::NodeDeleted {
                rv: *rv,
                name: self.scenario_node(name).into(),
            },
            TraceEvent::PodAdded { rv, pod } => TraceEvent::PodAdded {
                rv: *rv,
                pod: self.pod_object(pod),
            },
            TraceEvent::PodModified {
                rv,
                pod,
                terminating,
                disruption_target,
            } => TraceEvent::PodModified {
                rv: *rv,
                pod: self.pod_object(pod),
                terminating: *terminating,
                disruption_target: *disruption_target,
            },
            TraceEvent::PodDeleted {
                rv,
                namespace,
                name,
                uid,
            } => TraceEvent::PodDeleted {
                rv: *rv,
                namespace: self.scenario_namespace(namespace),
                name: name.clone(),
                uid: self.uid(uid),
            },
            TraceEvent::Request {
                id,
                verb,
                namespace,
                name,
                uid,
                node,
                resource_version,
            } => TraceEvent::Request {
                id: *id,
                verb: *verb,
                namespace: self.scenario_namespace(namespace),
                name: name.clone(),
                uid: uid.as_ref().map(|u| self.uid(u)),
                node: node.as_ref().map(|n| self.scenario_node(n).into()),
                resource_version: *resource_version,
            },
            TraceEvent::Response {
                id,
                result,
                uid,
                resource_version,
            } => TraceEvent::Response {
                id: *id,
                result: *result,
                uid: uid.as_ref().map(|u| self.uid(u)),
                resource_version: *resource_version,
            },
            TraceEvent::Event {
                namespace,
                name,
                reason,
                message,
            } => {
                let scenario = self.scenario_namespace(namespace);
                TraceEvent::Event {
                    namespace: scenario.clone(),
                    name: name.clone(),
                    reason: reason.clone(),
                    message: message.replace(&format!(" {namespace}/"), &format!(" {scenario}/")),
                }
            }
            other => other.clone(),
        };
        TraceRecord { t: r.t, event }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taintcheck_core::time::Time;

    #[test]
    fn a_run_translates_back_to_the_scenario_names() {
        let mut names = Names::new("N5_successor on a Healthy node, long name", "ab12");
        assert_eq!(names.run(), "tc-n5-successor-on-a-healthy-node-ab12");
        let real = names.pod(&PodKey::new("default", "web-0"));
        assert_eq!(&*real.namespace, names.run());
        let other = names.namespace("kube-system");
        assert_eq!(other, format!("{}-kube-system", names.run()));
        assert!(names.is_own_node(&names.node("node1")));
        assert!(!names.is_own_node("tc-n5-other-node1"));
        names.created("5f0e-real", &Uid("web-0-2".into()));
        let event = TraceRecord {
            t: Time(5),
            event: TraceEvent::Event {
                namespace: real.namespace.to_string(),
                name: "web-0".into(),
                reason: "TaintManagerEviction".into(),
                message: format!("Marking for deletion Pod {}/web-0", real.namespace),
            },
        };
        let TraceEvent::Event {
            namespace, message, ..
        } = names.to_scenario(&event).event
        else {
            panic!("an event stays an event");
        };
        assert_eq!(namespace, "default");
        assert_eq!(message, "Marking for deletion Pod default/web-0");
        let pod = TraceRecord {
            t: Time(6),
            event: TraceEvent::PodAdded {
                rv: 7,
                pod: Pod {
                    key: real.clone(),
                    uid: Uid("5f0e-real".into()),
                    node_name: Some(names.node("node2").into()),
                    tolerations: vec![],
                },
            },
        };
        let TraceEvent::PodAdded { pod, .. } = names.to_scenario(&pod).event else {
            panic!("a pod stays a pod");
        };
        assert_eq!(pod.key, PodKey::new("default", "web-0"));
        assert_eq!(&*pod.uid.0, "web-0-2");
        assert_eq!(pod.node_name.as_deref(), Some("node2"));
        let system = names.namespace("kube-system");
        let text = format!(
            "hold 0 kept delete pods {}/web-0 back, released by an event of nodes {} and pods \
             {system}/db-0",
            names.run(),
            names.node("node2"),
        );
        assert_eq!(
            names.text_to_scenario(&text),
            "hold 0 kept delete pods default/web-0 back, released by an event of nodes node2 and \
             pods kube-system/db-0"
        );
    }
}
