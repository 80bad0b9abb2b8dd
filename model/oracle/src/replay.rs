//! The replay: trace lines in, one frontier per component, a verdict out. Spec: ORACLE-1..8.
//!
//! A component is one pod name (all its incarnations) with the nodes it has been bound to: the
//! controller's behaviour towards a pod depends on that pod, its node's taints and the timed
//! queue's entry for its name, and on other pods only through timing (shared queues, workers and
//! dispatchers), which the latency bound covers (ORACLE-6, P-compositionality). Node lines go to
//! every component bound to the node; pod lines and outputs to the pod's component.

use super::frontier::{Machine, Search};
use super::output::{Observe, Seen};
use super::state::Fault;
use super::truth::{PodStatus, TruePod, Truth};
use super::verdict::{BadInput, Context, Error, Expected, Result, Summary, Violation};
use super::Options;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use taintcheck_core::api::{Node, NodeName, PodKey, ResourceVersion};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::time::Time;
use taintcheck_core::{Config, Verb, EVENT_REASON};
use taintcheck_formats::trace::{Clock, Observed, RequestVerb, TraceEvent, TraceRecord};

mod api;
mod components;
mod controller;

pub(crate) use components::Component;
pub use components::Footprint;

/// A node change at an instant (`None`: deleted).
type NodeChange = (Time, Option<Arc<Node>>);

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
    /// Injected faults (`expect`) for pods the trace has not added yet, and those for any pod:
    /// a component starts with the ones for it.
    pending_faults: Vec<Fault>,
    node_pods: BTreeMap<NodeName, BTreeSet<PodKey>>,
    /// Per node, its changes the controller may not have observed yet (within the bound),
    /// after the last one it surely has: what a component sees when it comes to the node.
    node_log: BTreeMap<NodeName, VecDeque<NodeChange>>,
    wakes: BTreeSet<(Time, PodKey)>,
    /// Requests the trace sent and has not answered yet: which pod they are for, and for a
    /// GET the pod as stored when it was sent.
    requests: BTreeMap<u64, (PodKey, Verb, Option<TruePod>)>,
    /// How many of `requests` each pod has (a pod with one is not forgotten).
    unanswered: HashMap<PodKey, usize, FxBuild>,
    line: usize,
    last: Option<Time>,
    started: bool,
    summary: Summary,
    /// How messages show instants: the header's `start` makes them wall-clock (TRACE-8).
    clock: Clock,
    /// The pods whose components this oracle keeps (all without a share).
    share: Option<super::parallel::Share>,
    /// The wake-up (instant, pod) being handled before a line's event, if any: where an error
    /// arose, for [`super::parallel`]'s order.
    pub(crate) waking: Option<(Time, PodKey)>,
    /// The buffers of the frontiers' searches.
    search: Search,
}

impl Oracle {
    /// An oracle for `options.profile` with `options.latency_bound`.
    pub fn with_options(options: Options) -> Oracle {
        let config = Config {
            workers: options.workers.max(1),
            rate_limit: options.rate_limit,
            ..Config::new(options.profile)
        };
        Oracle {
            machine: Machine {
                config,
                bound: options.latency_bound,
                slack: options.step_slack,
                observe: options.observe.unwrap_or(Observe {
                    requests: true,
                    events: true,
                    deletions: false,
                }),
                explore: options.explore,
                subsume: options.subsume,
                throttle: options
                    .rate_limit
                    .map(|limit| super::throttle::Throttle::new(limit, options.step_slack)),
            },
            profile: options.profile.name,
            observe_given: options.observe.is_some(),
            max_states: options.max_states,
            keep: options.explore,
            truth: Truth::default(),
            components: HashMap::default(),
            pending_faults: Vec::new(),
            node_pods: BTreeMap::new(),
            node_log: BTreeMap::new(),
            wakes: BTreeSet::new(),
            requests: BTreeMap::new(),
            unanswered: HashMap::default(),
            line: 0,
            last: None,
            started: false,
            summary: Summary::default(),
            clock: Clock::default(),
            share: options.share,
            waking: None,
            search: Search::new(options.max_states),
        }
    }

    /// What the oracle compares with the trace (from the header unless given; so is the
    /// client's rate limit).
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
            let TraceEvent::Header {
                observed, start, ..
            } = &record.event
            else {
                return Err(self.bad("expected the header line first (\"kind\":\"header\")"));
            };
            if let (Some(list), false) = (observed, self.observe_given) {
                self.machine.observe = Observe {
                    requests: list.contains(&Observed::Requests),
                    events: list.contains(&Observed::Events),
                    deletions: list.contains(&Observed::Deletions),
                };
            }
            // The client's rate limit the trace was recorded with (TRACE-THROTTLE), unless given.
            if let (None, Some(limit)) = (self.machine.throttle.as_ref(), record.event.rate_limit())
            {
                self.machine.config.rate_limit = Some(limit);
                self.machine.throttle =
                    Some(super::throttle::Throttle::new(limit, self.machine.slack));
            }
            self.clock = Clock::new(*start);
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
                    // Another share's request is only counted (ORACLE-12).
                    let seen = self.owns(&pod).then(|| Seen::Request {
                        id: *id,
                        verb: verb.clone(),
                        pod: pod.clone(),
                        uid: uid.clone(),
                        version: *resource_version,
                    });
                    self.request(*id, pod, verb, seen.as_ref(), t)?;
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
                let pod = PodKey::new(namespace, name);
                if self.machine.observe.events && reason == EVENT_REASON && self.owns(&pod) {
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

    /// The states the frontiers' searches have expanded so far: what checking cost, in a
    /// measure that does not move with the machine's load.
    pub fn expanded(&self) -> u64 {
        self.search.expanded
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
            match self.components.get_mut(&key) {
                Some(c) => {
                    for s in &mut c.states {
                        s.faults.push(fault.clone());
                    }
                }
                None => self.pending_faults.push(fault.clone()),
            }
        }
        if fault.pod.is_none() {
            self.pending_faults.push(fault);
        }
        Ok(())
    }

    /// Whether this oracle keeps `key`'s component.
    fn owns(&self, key: &PodKey) -> bool {
        self.share.is_none_or(|share| share.owns(key))
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

    /// What a message about `key` at `t` draws on.
    fn context<'a>(&self, key: &'a PodKey, t: Time) -> Context<'a> {
        Context {
            pod: key,
            t,
            why: self
                .truth
                .why(key, self.machine.config.profile.comparison_operators),
            profile: self.profile,
            bound: self.machine.bound,
            slack: self.machine.slack,
            clock: self.clock,
        }
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
}
