//! The replay: trace lines in, one frontier per component, a verdict out. Spec: ORACLE-1..8.
//!
//! A component is one pod name (all its incarnations) with the nodes it has been bound to: the
//! controller's behaviour towards a pod depends on that pod, its node's taints and the timed
//! queue's entry for its name, and on other pods only through timing (shared queues, workers and
//! dispatchers), which the latency bound covers (ORACLE-6, P-compositionality). Node lines go to
//! every component bound to the node; pod lines and outputs to the pod's component.

use super::frontier::{Fault, Machine, Observe, Output, Pending, Seen, State};
use super::truth::{PodStatus, Truth};
use super::verdict::{self, BadInput, Error, Expected, Result, Summary, Violation};
use super::Options;
use crate::api::{Node, NodeName, Pod, PodKey, ResourceVersion, Uid};
use crate::core::{ApiResult, Config, FetchedPod, Verb, EVENT_REASON};
use crate::fx::FxBuild;
use crate::time::Time;
use crate::trace::{Observed, RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

/// A node change at an instant (`None`: deleted).
type NodeChange = (Time, Option<Arc<Node>>);

/// One pod name's frontier.
#[derive(Clone, Debug)]
pub(crate) struct Component {
    pub nodes: BTreeSet<NodeName>,
    /// The instant every state is at.
    pub now: Time,
    pub states: Vec<State>,
    wake: Option<Time>,
}

/// The conformance oracle: feed it a trace line by line; it keeps every behaviour of the
/// profile that explains the lines so far. See the module documentation of [`super`].
#[derive(Clone, Debug)]
pub struct Oracle {
    machine: Machine,
    profile: &'static str,
    observe_given: bool,
    max_states: usize,
    keep: bool,
    truth: Truth,
    /// By pod; looked up on every line, so hashed (iterations sort the keys first).
    pub(crate) components: HashMap<PodKey, Component, FxBuild>,
    node_pods: BTreeMap<NodeName, BTreeSet<PodKey>>,
    /// Per node, its changes the controller may not have observed yet (within the bound),
    /// after the last one it surely has: what a component sees when it comes to the node.
    node_log: BTreeMap<NodeName, VecDeque<NodeChange>>,
    wakes: BTreeSet<(Time, PodKey)>,
    /// Requests the trace sent and has not answered yet: which pod they are for.
    requests: BTreeMap<u64, (PodKey, Verb)>,
    /// How many of `requests` each pod has (a pod with one is not forgotten).
    unanswered: HashMap<PodKey, usize, FxBuild>,
    line: usize,
    last: Option<Time>,
    started: bool,
    summary: Summary,
}

impl Oracle {
    /// An oracle for `options.profile` with `options.latency_bound`.
    pub fn with_options(options: Options) -> Oracle {
        let config = Config {
            workers: options.workers.max(1),
            ..Config::new(options.profile)
        };
        Oracle {
            machine: Machine {
                config,
                bound: options.latency_bound,
                observe: options.observe.unwrap_or(Observe {
                    requests: true,
                    events: true,
                    deletions: false,
                }),
                explore: options.explore,
            },
            profile: options.profile.name,
            observe_given: options.observe.is_some(),
            max_states: options.max_states,
            keep: options.explore,
            truth: Truth::default(),
            components: HashMap::default(),
            node_pods: BTreeMap::new(),
            node_log: BTreeMap::new(),
            wakes: BTreeSet::new(),
            requests: BTreeMap::new(),
            unanswered: HashMap::default(),
            line: 0,
            last: None,
            started: false,
            summary: Summary::default(),
        }
    }

    /// What the oracle compares with the trace (from the header unless given).
    pub fn observe(&self) -> Observe {
        self.machine.observe
    }

    /// Feeds the next record; its line number is one more than the previous record's.
    pub fn feed(&mut self, record: &TraceRecord) -> Result<()> {
        self.feed_line(self.line + 1, record)
    }

    /// Feeds the record read from line `line` (messages name it).
    pub fn feed_line(&mut self, line: usize, record: &TraceRecord) -> Result<()> {
        self.line = line;
        self.summary.records += 1;
        let t = record.t;
        if !self.started {
            let TraceEvent::Header { observed, .. } = &record.event else {
                return Err(self.bad("expected the header line first (\"kind\":\"header\")"));
            };
            if let (Some(list), false) = (observed, self.observe_given) {
                self.machine.observe = Observe {
                    requests: list.contains(&Observed::Requests),
                    events: list.contains(&Observed::Events),
                    deletions: list.contains(&Observed::Deletions),
                };
            }
            self.started = true;
            self.last = Some(t);
            return Ok(());
        }
        if let Some(previous) = self.last.filter(|p| t < *p) {
            return Err(self.bad(&format!(
                "t: time {t} is before the previous line's {previous}"
            )));
        }
        self.last = Some(t);
        self.wake_due(t)?;
        match &record.event {
            TraceEvent::Header { .. } => return Err(self.bad("a second header line")),
            TraceEvent::NodeAdded { node, .. } => self.node_changed(node, t, false)?,
            TraceEvent::NodeModified { node, .. } => self.node_changed(node, t, true)?,
            TraceEvent::NodeDeleted { name, .. } => self.node_deleted(name, t)?,
            TraceEvent::PodAdded { rv, pod } => {
                let status = PodStatus {
                    version: ResourceVersion(*rv),
                    ..PodStatus::default()
                };
                self.pod_changed(pod, status, t, false)?
            }
            TraceEvent::PodModified {
                rv,
                pod,
                terminating,
                disruption_target,
            } => {
                let status = PodStatus {
                    version: ResourceVersion(*rv),
                    terminating: *terminating,
                    disruption_target: *disruption_target,
                };
                self.pod_changed(pod, status, t, true)?
            }
            TraceEvent::PodDeleted {
                namespace,
                name,
                uid,
                ..
            } => self.pod_deleted(&PodKey::new(namespace, name), uid, t)?,
            TraceEvent::Request {
                id,
                verb,
                namespace,
                name,
                uid,
                node,
                resource_version,
            } => {
                if self.machine.observe.requests {
                    let verb = match verb {
                        RequestVerb::Get => Verb::Get,
                        RequestVerb::GetNode => match node {
                            Some(node) => Verb::GetNode(node.clone()),
                            None => return Err(self.bad("node: Required value (get_node)")),
                        },
                        RequestVerb::Patch => Verb::PatchDisruptionTarget,
                        RequestVerb::Delete => Verb::Delete,
                    };
                    let pod = PodKey::new(namespace, name);
                    let seen = Seen::Request {
                        id: *id,
                        verb: verb.clone(),
                        pod: pod.clone(),
                        uid: uid.clone(),
                        version: *resource_version,
                    };
                    self.request(*id, pod, verb, &seen, t)?;
                }
            }
            TraceEvent::Response {
                id,
                result,
                uid,
                resource_version,
            } => {
                if self.machine.observe.requests {
                    self.response(*id, *result, uid, *resource_version, t)?;
                }
            }
            TraceEvent::Event {
                namespace,
                name,
                reason,
                message,
            } => {
                if self.machine.observe.events && reason == EVENT_REASON {
                    let pod = PodKey::new(namespace, name);
                    let seen = Seen::Event {
                        pod: pod.clone(),
                        message: message.clone(),
                    };
                    self.output(&pod, &seen, t)?;
                }
            }
            TraceEvent::ControllerRestarted => self.restarted(t)?,
            TraceEvent::Note { .. } => {}
        }
        Ok(())
    }

    /// Ends the trace. With `until`, the trace claims nothing happened between its last line
    /// and `until`: every deadline up to then is checked too.
    pub fn finish(mut self, until: Option<Time>) -> Result<Summary> {
        if let Some(until) = until {
            self.close(until)?;
        }
        Ok(self.summary())
    }

    /// Moves every component to `until`, the end of the trace.
    pub(crate) fn close(&mut self, until: Time) -> Result<()> {
        self.line = 0;
        let keys = self.keys();
        for key in keys {
            self.advance(&key, until)?;
            self.settled(&key)?;
        }
        Ok(())
    }

    /// The summary so far.
    pub fn summary(&self) -> Summary {
        Summary {
            live_components: self.components.len(),
            ..self.summary.clone()
        }
    }

    /// The instant of the last line fed.
    pub fn last_time(&self) -> Option<Time> {
        self.last
    }

    /// `expect`: the scenario's injected failures from `at` on.
    pub(crate) fn inject(&mut self, fault: Fault, at: Time) -> Result<()> {
        let keys: Vec<PodKey> = match &fault.pod {
            Some(pod) => vec![pod.clone()],
            None => self.keys(),
        };
        for key in keys {
            self.advance(&key, at)?;
            if let Some(c) = self.components.get_mut(&key) {
                for s in &mut c.states {
                    s.faults.push(fault.clone());
                }
            }
        }
        Ok(())
    }

    /// The pods tracked, in order.
    fn keys(&self) -> Vec<PodKey> {
        let mut keys: Vec<PodKey> = self.components.keys().cloned().collect();
        keys.sort();
        keys
    }

    fn bad(&self, message: &str) -> Error {
        Error::BadInput(BadInput {
            line: self.line,
            message: message.to_string(),
        })
    }

    fn violation(&self, pod: &PodKey, t: Time, message: String, expected: Expected) -> Error {
        let nodes = self
            .components
            .get(pod)
            .map(|c| c.nodes.iter().cloned().collect())
            .unwrap_or_default();
        Error::Violation(Box::new(Violation {
            line: (self.line > 0).then_some(self.line),
            t,
            pod: pod.clone(),
            nodes,
            message,
            expected,
        }))
    }

    /// Components whose earliest deadline lies before `t` are advanced to `t`, so that a
    /// missed deadline is reported at the first line after it.
    fn wake_due(&mut self, t: Time) -> Result<()> {
        while let Some((at, key)) = self.wakes.first().cloned() {
            if at >= t {
                break;
            }
            self.wakes.remove(&(at, key.clone()));
            if let Some(c) = self.components.get_mut(&key) {
                c.wake = None;
            }
            self.advance(&key, t)?;
            self.settled(&key)?;
        }
        Ok(())
    }

    /// Moves a component's frontier to `t` through silent behaviour (ORACLE-5).
    fn advance(&mut self, key: &PodKey, t: Time) -> Result<()> {
        let Some(c) = self.components.get_mut(key) else {
            return Ok(());
        };
        if t <= c.now {
            return Ok(());
        }
        let mut death = None;
        let states = std::mem::take(&mut c.states);
        c.states = self
            .machine
            .advance(states, c.now, t, &self.truth, &mut death);
        c.now = t;
        if c.states.is_empty() {
            let why = self
                .truth
                .why(key, self.machine.config.profile.comparison_operators);
            let (message, expected) = match &death {
                Some(d) => verdict::overdue(key, &d.output, d.at, t, &why, self.machine.bound),
                None => (
                    format!("{key}: no legal behaviour reaches {t} ({why})"),
                    Expected::Nothing,
                ),
            };
            let at = death.map_or(t, |d| d.at);
            let mut e = self.violation(key, t, message, expected);
            if let Error::Violation(v) = &mut e {
                if v.line.is_none() {
                    v.t = at;
                }
            }
            return Err(e);
        }
        self.resize(key)
    }

    /// Removes the unanswered request `id`.
    fn take_request(&mut self, id: u64) -> Option<(PodKey, Verb)> {
        let (key, verb) = self.requests.remove(&id)?;
        if let Some(n) = self.unanswered.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.unanswered.remove(&key);
            }
        }
        Some((key, verb))
    }

    /// After a component changed: size check, wake-up instant, forgetting a finished pod.
    fn settled(&mut self, key: &PodKey) -> Result<()> {
        self.resize(key)?;
        self.forget_if_done(key);
        Ok(())
    }

    /// Size check and wake-up instant of a component.
    fn resize(&mut self, key: &PodKey) -> Result<()> {
        let Some(c) = self.components.get_mut(key) else {
            return Ok(());
        };
        let n = c.states.len();
        self.summary.max_frontier = self.summary.max_frontier.max(n);
        if n > self.max_states {
            return Err(Error::Inconclusive {
                line: self.line,
                pod: key.to_string(),
                limit: self.max_states,
            });
        }
        if let Some(old) = c.wake.take() {
            self.wakes.remove(&(old, key.clone()));
        }
        let wake = c
            .states
            .iter()
            .filter_map(|s| self.machine.deadline(s))
            .min();
        if let Some(w) = wake {
            self.wakes.insert((w, key.clone()));
        }
        c.wake = wake;
        Ok(())
    }

    /// Forgets a component whose pod is gone and in which no behaviour has anything left for
    /// it: memory stays proportional to the live pods.
    fn forget_if_done(&mut self, key: &PodKey) {
        let Some(c) = self.components.get(key) else {
            return;
        };
        let gone = !self.keep
            && !self.truth.pods.contains_key(key)
            && !self.unanswered.contains_key(key)
            && c.states.iter().all(State::forgotten);
        if gone {
            if let Some(c) = self.components.remove(key) {
                if let Some(w) = c.wake {
                    self.wakes.remove(&(w, key.clone()));
                }
                for node in &c.nodes {
                    if let Some(pods) = self.node_pods.get_mut(node) {
                        pods.remove(key);
                        if pods.is_empty() {
                            self.node_pods.remove(node);
                        }
                    }
                }
            }
        }
    }

    fn node_changed(&mut self, node: &Node, t: Time, modified: bool) -> Result<()> {
        if modified && !self.truth.nodes.contains_key(&node.name) {
            return Err(self.bad(&format!(
                "node {} modified, but the trace never added it",
                node.name
            )));
        }
        let node = Arc::new(node.clone());
        self.truth.put_node(node.clone(), t);
        self.fan_out(&node.name.clone(), Some(node), t)
    }

    fn node_deleted(&mut self, name: &NodeName, t: Time) -> Result<()> {
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

    fn pod_changed(&mut self, pod: &Pod, status: PodStatus, t: Time, modified: bool) -> Result<()> {
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
        if !self.components.contains_key(&key) {
            self.summary.pods += 1;
            self.components.insert(
                key.clone(),
                Component {
                    nodes: BTreeSet::new(),
                    now: t,
                    states: vec![State::new(self.machine.config)],
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

    fn pod_deleted(&mut self, key: &PodKey, uid: &Uid, t: Time) -> Result<()> {
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
                    s.pods.push_back(Pending {
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

    fn request(&mut self, id: u64, pod: PodKey, verb: Verb, seen: &Seen, t: Time) -> Result<()> {
        if self.requests.contains_key(&id) {
            return Err(self.bad(&format!("id: request #{id} sent twice")));
        }
        self.output(&pod, seen, t)?;
        *self.unanswered.entry(pod.clone()).or_default() += 1;
        self.requests.insert(id, (pod, verb));
        Ok(())
    }

    /// The answer to a request the trace shows, built from the response line and the API state
    /// the trace shows at that instant (a GET returns the object as stored; a PATCH's new
    /// resourceVersion is the response's, else the stored pod's).
    fn response(
        &mut self,
        id: u64,
        result: ResponseResult,
        uid: &Option<Uid>,
        version: Option<ResourceVersion>,
        t: Time,
    ) -> Result<()> {
        let Some((key, verb)) = self.take_request(id) else {
            return Err(self.bad(&format!(
                "id: response to request #{id}, which the trace did not send (or answered already)"
            )));
        };
        self.advance(&key, t)?;
        let stored = self.truth.pods.get(&key);
        let result = match (result, &verb) {
            (ResponseResult::Ok, Verb::Get) => match stored {
                Some(p) if uid.as_ref().is_none_or(|u| *u == p.pod.uid) => {
                    ApiResult::Pod(Arc::new(FetchedPod {
                        pod: (*p.pod).clone(),
                        version: version.unwrap_or(p.version),
                        disruption_target: p.disruption_target,
                    }))
                }
                _ => {
                    return Err(self.bad(&format!(
                        "result: request #{id} fetched {key}, which the trace does not show \
                         (with that uid) at {t}"
                    )))
                }
            },
            (ResponseResult::Ok, Verb::GetNode(node)) => match self.truth.nodes.get(node) {
                Some(n) => ApiResult::Node(n.clone()),
                None => {
                    return Err(self.bad(&format!(
                        "result: request #{id} fetched node {node}, which the trace does not \
                         show at {t}"
                    )))
                }
            },
            (ResponseResult::Ok, Verb::PatchDisruptionTarget) => {
                ApiResult::Patched(version.or(stored.map(|p| p.version)).unwrap_or_default())
            }
            (ResponseResult::Ok, Verb::Delete) => ApiResult::Deleted,
            (ResponseResult::NotFound, _) => ApiResult::NotFound,
            (ResponseResult::PreconditionFailed, _) => ApiResult::PreconditionFailed,
            (ResponseResult::Failed, _) => ApiResult::Failed,
        };
        let Some(c) = self.components.get_mut(&key) else {
            return Ok(());
        };
        let owed = c.states.iter().find_map(|s| s.owed.front().cloned());
        let states = std::mem::take(&mut c.states);
        c.states = self.machine.respond(states, t, &self.truth, id, &result);
        if c.states.is_empty() {
            let message = match owed {
                Some(o) => format!(
                    "request #{id} answered at {t} before {key} was {}, which every legal \
                     behaviour does first",
                    verdict::output_text(&o)
                ),
                None => format!(
                    "request #{id} answered at {t}, but no legal behaviour awaited its answer"
                ),
            };
            return Err(self.violation(&key, t, message, Expected::Nothing));
        }
        self.settled(&key)
    }

    /// A controller output line: some state must produce it next (ORACLE-7).
    fn output(&mut self, key: &PodKey, seen: &Seen, t: Time) -> Result<()> {
        if !self.components.contains_key(key) {
            let what = verdict::seen_text(seen);
            let message = if self.truth.pods.contains_key(key) {
                format!("{key} {what} at {t}, but no legal behaviour knows pod {key} yet")
            } else {
                format!(
                    "{key} {what} at {t}, but the API server has no pod {key} and no legal \
                     behaviour has anything pending for it"
                )
            };
            return Err(self.violation(key, t, message, Expected::Nothing));
        }
        self.advance(key, t)?;
        let c = self.components.get_mut(key).expect("component exists");
        let mut alternatives: Vec<Output> = Vec::new();
        let states = std::mem::take(&mut c.states);
        c.states = self
            .machine
            .produce(states, t, &self.truth, seen, &mut alternatives);
        if c.states.is_empty() {
            let ops = self.machine.config.profile.comparison_operators;
            let why = self.truth.why(key, ops);
            let cleared = self
                .truth
                .pods
                .get(key)
                .and_then(|p| p.pod.node_name.as_deref())
                .and_then(|n| self.truth.cleared(n));
            let (message, expected) = verdict::unexplained(
                key,
                seen,
                t,
                &why,
                cleared,
                &alternatives,
                self.profile,
                self.machine.bound,
            );
            return Err(self.violation(key, t, message, expected));
        }
        self.settled(key)
    }

    fn restarted(&mut self, t: Time) -> Result<()> {
        self.requests.clear();
        self.unanswered.clear();
        let keys = self.keys();
        for key in keys {
            self.advance(&key, t)?;
            let Some(c) = self.components.get_mut(&key) else {
                continue;
            };
            let nodes: Vec<Arc<Node>> = c
                .nodes
                .iter()
                .filter_map(|n| self.truth.nodes.get(n).cloned())
                .collect();
            let pods: Vec<Arc<Pod>> = self.truth.pod(&key).cloned().into_iter().collect();
            let owed = c.states.iter().find_map(|s| s.owed.front().cloned());
            let states = std::mem::take(&mut c.states);
            c.states = self.machine.restart(states, t, &nodes, &pods);
            if c.states.is_empty() {
                let what = owed.map_or("acted".into(), |o| verdict::output_text(&o));
                let message = format!(
                    "the controller restarted at {t} although {key} had been {what} without \
                     the trace showing it"
                );
                return Err(self.violation(&key, t, message, Expected::Nothing));
            }
            self.settled(&key)?;
        }
        Ok(())
    }
}
