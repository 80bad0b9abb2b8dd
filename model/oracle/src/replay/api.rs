//! API lines: node and pod changes go to the API state and, as pending informer deliveries, to
//! every component they concern (ORACLE-4, ORACLE-6).

use super::{Component, Oracle};
use crate::output::Seen;
use crate::state::{Pending, State};
use crate::truth::PodStatus;
use crate::verdict::Result;
use std::collections::BTreeSet;
use std::sync::Arc;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Uid};
use taintcheck_core::time::Time;

impl Oracle {
    pub(super) fn node_changed(&mut self, node: &Node, t: Time, modified: bool) -> Result<()> {
        if modified && !self.truth.nodes.contains_key(&node.name) {
            return Err(self.bad(&format!(
                "node {} modified, but the trace never added it",
                node.name
            )));
        }
        if self
            .truth
            .nodes
            .get(&node.name)
            .is_some_and(|old| **old == *node)
        {
            // The node as it was: nothing changes, neither the API state nor what an informer
            // would deliver, so no component hears of it (ORACLE-F1).
            return Ok(());
        }
        let node = Arc::new(node.clone());
        self.truth.put_node(node.clone(), t);
        self.fan_out(&node.name.clone(), Some(node), t)
    }

    pub(super) fn node_deleted(&mut self, name: &NodeName, t: Time) -> Result<()> {
        if self.truth.remove_node(name).is_none() {
            return Err(self.bad(&format!(
                "node {name} deleted, but the trace never added it"
            )));
        }
        self.fan_out(name, None, t)
    }

    /// A node change goes to every component bound to the node.
    fn fan_out(&mut self, name: &NodeName, new: Option<Arc<Node>>, t: Time) -> Result<()> {
        let bound = self.machine.bound;
        let log = self.node_log.entry(name.clone()).or_default();
        log.push_back((t, new.clone()));
        while log.len() >= 2 && log[1].0.plus(bound) < t {
            log.pop_front();
        }
        let keys: Vec<PodKey> = self
            .node_pods
            .get(name)
            .map(|p| p.iter().cloned().collect())
            .unwrap_or_default();
        for key in keys {
            self.advance(&key, t)?;
            if let Some(c) = self.components.get_mut(&key) {
                for s in &mut c.states {
                    s.nodes.push_back(Pending {
                        at: t,
                        key: name.clone(),
                        new: new.clone(),
                    });
                }
            }
            self.settled(&key)?;
        }
        Ok(())
    }

    pub(super) fn pod_changed(
        &mut self,
        pod: &Pod,
        status: PodStatus,
        t: Time,
        modified: bool,
    ) -> Result<()> {
        let terminating = status.terminating;
        let key = pod.key.clone();
        let known = self
            .truth
            .pods
            .get(&key)
            .map(|p| (p.pod.uid.clone(), p.terminating));
        match (&known, modified) {
            (None, true) => {
                return Err(self.bad(&format!("pod {key} modified, but the trace never added it")))
            }
            (Some((uid, _)), true) if *uid != pod.uid => {
                return Err(self.bad(&format!(
                    "pod {key} modified with uid {}, but the API server has uid {uid}",
                    pod.uid
                )))
            }
            _ => {}
        }
        if !self.components.contains_key(&key) && self.owns(&key) {
            self.summary.pods += 1;
            let mut state = State::new(self.machine.config);
            state.faults = self
                .pending_faults
                .iter()
                .filter(|f| f.pod.as_ref().is_none_or(|p| *p == key))
                .cloned()
                .collect();
            self.pending_faults.retain(|f| f.pod.as_ref() != Some(&key));
            self.components.insert(
                key.clone(),
                Component {
                    nodes: BTreeSet::new(),
                    now: t,
                    states: vec![state],
                    wake: None,
                },
            );
        }
        self.advance(&key, t)?;
        let first_deletion = terminating && known.as_ref().is_none_or(|(_, term)| !term);
        if first_deletion && self.machine.observe.deletions {
            let seen = Seen::Deleted {
                pod: key.clone(),
                uid: pod.uid.clone(),
            };
            self.output(&key, &seen, t)?;
        }
        let pod = Arc::new(pod.clone());
        self.truth.put_pod(pod.clone(), status, t);
        if let Some(node) = &pod.node_name {
            self.attach(&key, node, t);
        }
        self.push_pod(&key, pod.uid.clone(), Some(pod), t);
        self.settled(&key)
    }

    pub(super) fn pod_deleted(&mut self, key: &PodKey, uid: &Uid, t: Time) -> Result<()> {
        let Some(known) = self.truth.pods.get(key) else {
            return Err(self.bad(&format!("pod {key} deleted, but the trace never added it")));
        };
        if known.pod.uid != *uid {
            return Err(self.bad(&format!(
                "pod {key} deleted with uid {uid}, but the API server has uid {}",
                known.pod.uid
            )));
        }
        let first_deletion = !known.terminating;
        self.advance(key, t)?;
        if first_deletion && self.machine.observe.deletions {
            let seen = Seen::Deleted {
                pod: key.clone(),
                uid: uid.clone(),
            };
            self.output(key, &seen, t)?;
        }
        self.truth.remove_pod(key);
        self.push_pod(key, uid.clone(), None, t);
        self.settled(key)
    }

    fn push_pod(&mut self, key: &PodKey, uid: Uid, new: Option<Arc<Pod>>, t: Time) {
        if let Some(c) = self.components.get_mut(key) {
            for s in &mut c.states {
                if !s.deleted.contains_key(&uid) {
                    s.push_pod(Pending {
                        at: t,
                        key: key.clone(),
                        new: new.clone(),
                    });
                }
            }
        }
    }

    /// Binds a node to a component: from now on its changes go there; every state learns the
    /// node as the controller had long known it (ORACLE-6).
    fn attach(&mut self, key: &PodKey, node: &NodeName, t: Time) {
        let Some(c) = self.components.get_mut(key) else {
            return;
        };
        if !c.nodes.insert(node.clone()) {
            return;
        }
        self.node_pods
            .entry(node.clone())
            .or_default()
            .insert(key.clone());
        let Some(log) = self.node_log.get(node) else {
            return;
        };
        // The last change surely observed is known from the start; later ones are pending.
        let seen = log
            .iter()
            .rposition(|(at, _)| at.plus(self.machine.bound) < t);
        let (known, pending) = match seen {
            Some(i) if log[i].1.is_some() => (log.range(..=i), log.range(i + 1..)),
            Some(i) => (log.range(..0), log.range(i + 1..)),
            None => (log.range(..0), log.range(..)),
        };
        for s in &mut c.states {
            if known.len() > 0 {
                self.machine
                    .introduce_node(s, node, known.clone(), t, &self.truth);
            }
            for (at, new) in pending.clone() {
                s.nodes.push_back(Pending {
                    at: *at,
                    key: node.clone(),
                    new: new.clone(),
                });
            }
        }
    }
}
