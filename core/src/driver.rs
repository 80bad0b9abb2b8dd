//! A sequential driver for tests: an in-memory cluster whose caches never lag, an API server that
//! answers at once (with injectable failures), a virtual clock that jumps to the next timer, and
//! the controller run step by step in a fixed fair order. Not the runtime: one thread, no
//! channels, no real timers; just enough to replay upstream's unit tests and scenarios.

use super::{ApiResult, Config, Controller, Effect, Immediate, Step, Verb, WorkId};
use crate::api::{Node, Pod, PodKey, ResourceVersion};
use crate::api_server::{self, StoredPod, Write};
pub use crate::cluster::Cluster;
use crate::profile::Profile;
use crate::time::{Duration, Time};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The driver. Fields are public so tests can inspect everything.
#[derive(Clone, Debug)]
pub struct Driver {
    /// The controller under test.
    pub controller: Controller,
    /// The API server's objects, which are also the informer caches.
    pub cluster: Cluster,
    /// The virtual clock.
    pub now: Time,
    /// Every effect, with the instant it was produced.
    pub log: Vec<(Time, Effect)>,
    /// The outcome chosen for every two-`Now()` immediate path (see [`Immediate`]).
    pub immediate: Immediate,
    /// Requests of a verb to fail (with [`ApiResult::Failed`]) before answering normally.
    pub failures: BTreeMap<Verb, u32>,
    /// Per pod: its resourceVersion (writes since creation) and whether its status has the
    /// `DisruptionTarget` condition.
    pub status: BTreeMap<PodKey, (ResourceVersion, bool)>,
}

/// Guard against a livelock in a test: far more steps than any scenario needs.
const MAX_STEPS_PER_SETTLE: usize = 100_000;

impl Driver {
    /// A driver for `profile` with upstream's sizes ([`Config::new`]), at time zero, with an
    /// empty cluster.
    pub fn new(profile: Profile) -> Driver {
        Driver::with_config(Config::new(profile))
    }

    /// A driver for `config`, at time zero, with an empty cluster.
    pub fn with_config(config: Config) -> Driver {
        Driver {
            controller: Controller::new(config),
            cluster: Cluster::default(),
            now: Time::ZERO,
            log: Vec::new(),
            immediate: match config.profile.immediate_path {
                crate::profile::ImmediatePath::TwoNows => Immediate::Timer,
                crate::profile::ImmediatePath::SameNow => Immediate::Nil,
            },
            failures: BTreeMap::new(),
            status: BTreeMap::new(),
        }
    }

    /// Create or replace a node, delivering the informer event.
    pub fn put_node(&mut self, node: Node) {
        let old = self.cluster.nodes.insert(node.name.clone(), node.clone());
        self.controller
            .node_observed(old.as_ref(), Some(&node), self.now);
    }

    /// Delete a node, delivering the informer event; nothing if it does not exist.
    pub fn delete_node(&mut self, name: &str) {
        if let Some(old) = self.cluster.nodes.remove(name) {
            self.controller.node_observed(Some(&old), None, self.now);
        }
    }

    /// Create or replace a pod, delivering the informer event.
    pub fn put_pod(&mut self, pod: Pod) {
        let old = self.cluster.pods.insert(pod.key.clone(), pod.clone());
        let status = self
            .status
            .entry(pod.key.clone())
            .or_insert((ResourceVersion(0), false));
        match &old {
            Some(o) if o.uid == pod.uid => status.0 .0 += 1,
            _ => *status = (ResourceVersion(1), false),
        }
        self.controller
            .pod_observed(old.as_ref(), Some(&pod), self.now);
    }

    /// Delete a pod, delivering the informer event; nothing if it does not exist.
    pub fn delete_pod(&mut self, key: &PodKey) {
        if let Some(old) = self.cluster.pods.remove(key) {
            self.status.remove(key);
            self.controller.pod_observed(Some(&old), None, self.now);
        }
    }

    /// Fail the next `n` requests of `verb`.
    pub fn fail_next(&mut self, verb: Verb, n: u32) {
        self.failures.insert(verb, n);
    }

    /// Run at the current instant until nothing is enabled and no request is pending: each round
    /// runs every enabled step once, in [`Controller::enabled_steps`] order (taking the
    /// driver's `immediate` choice), then answers every pending request.
    pub fn settle(&mut self) {
        let mut steps = Vec::new();
        let mut effects = Vec::new();
        let mut budget = MAX_STEPS_PER_SETTLE;
        loop {
            steps.clear();
            steps.extend(self.enabled());
            let requests: Vec<_> = self.controller.pending_requests().cloned().collect();
            if steps.is_empty() && requests.is_empty() {
                return;
            }
            budget = budget
                .checked_sub(steps.len() + requests.len())
                .expect("driver: the controller does not settle");
            for step in steps.drain(..) {
                self.controller
                    .step(step, &self.cluster, self.now, &mut effects);
                self.record(&mut effects);
            }
            self.respond(requests);
        }
    }

    /// Answer every pending request once, in id order; each work then takes its answer in
    /// (its `ContinueWork` step), which may send its next request.
    pub fn respond_all(&mut self) {
        let requests: Vec<_> = self.controller.pending_requests().cloned().collect();
        let works: Vec<_> = requests.iter().map(|r| WorkId(r.id.0)).collect();
        self.respond(requests);
        for work in works {
            self.step(Step::ContinueWork(work));
        }
    }

    fn respond(&mut self, requests: Vec<super::ApiRequest>) {
        for request in requests {
            let result = self.answer(&request);
            self.controller.api_responded(request.id, result);
        }
    }

    /// Run one step now (a no-op if it is not enabled), for tests that need an exact
    /// interleaving; [`Driver::settle`] runs the rest.
    pub fn step(&mut self, step: Step) {
        let mut effects = Vec::new();
        self.controller
            .step(step, &self.cluster, self.now, &mut effects);
        self.record(&mut effects);
    }

    /// The steps enabled now, with one `WorkerContinue` per worker: the driver's `immediate`
    /// choice where the controller offers both outcomes.
    pub fn enabled(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        self.controller.enabled_steps(self.now, &mut steps);
        Step::resolve_immediate(&mut steps, self.immediate);
        steps
    }

    fn record(&mut self, effects: &mut Vec<Effect>) {
        let now = self.now;
        self.log.extend(effects.drain(..).map(|e| (now, e)));
    }

    /// The API server ([`api_server::answer`]) on the cluster; a successful DELETE removes the
    /// pod and delivers the informer's delete event.
    fn answer(&mut self, request: &super::ApiRequest) -> ApiResult {
        if let Some(n) = self.failures.get_mut(&request.verb).filter(|n| **n > 0) {
            *n -= 1;
            return ApiResult::Failed;
        }
        // A pod a test put into the cluster directly has had no write through the driver.
        let (version, disruption_target) = self
            .status
            .get(&request.pod)
            .copied()
            .unwrap_or((ResourceVersion(1), false));
        let stored = self.cluster.pods.get(&request.pod).map(|pod| StoredPod {
            pod,
            version,
            disruption_target,
            deletion: None,
            termination_grace: None,
        });
        let next = ResourceVersion(version.0 + 1);
        let nodes = &self.cluster.nodes;
        let (result, write) = api_server::answer(request, stored, |n| nodes.get(n).cloned(), next);
        match write {
            Write::Nothing => {}
            Write::MarkDisruptionTarget => {
                self.status.insert(request.pod.clone(), (next, true));
            }
            Write::Delete => self.delete_pod(&request.pod),
            Write::StartGracefulDeletion { .. } => {
                unreachable!("this server removes pods at once (termination_grace None)")
            }
        }
        result
    }

    /// Settle, then fire timers in order up to `until`, settling at each; the clock ends at
    /// `until`.
    pub fn advance_to(&mut self, until: Time) {
        self.settle();
        while let Some(next) = self.controller.next_deadline().filter(|t| *t <= until) {
            self.now = self.now.max(next);
            self.settle();
        }
        self.now = self.now.max(until);
        self.settle();
    }

    /// Advance the clock by `by`, as [`Driver::advance_to`] does.
    pub fn advance(&mut self, by: Duration) {
        self.advance_to(self.now.plus(by));
    }

    /// The log as one line per effect, `time effect`, for snapshots.
    pub fn timeline(&self) -> String {
        let mut s = String::new();
        for (t, e) in &self.log {
            let _ = writeln!(s, "{t} {e}");
        }
        s
    }

    /// Take the log so far.
    pub fn take_log(&mut self) -> Vec<(Time, Effect)> {
        std::mem::take(&mut self.log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Taint, TaintEffect, Toleration, Uid};

    fn node(name: &str, taints: &[&str]) -> Node {
        Node {
            name: name.into(),
            taints: taints
                .iter()
                .map(|k| Taint::new(k, "", TaintEffect::NoExecute))
                .collect(),
        }
    }

    fn pod(name: &str, node: &str, tolerations: Vec<Toleration>) -> Pod {
        Pod {
            key: PodKey::new("default", name),
            uid: Uid(format!("{name}-uid").into()),
            node_name: Some(node.into()),
            tolerations,
        }
    }

    #[test]
    fn untolerated_pod_on_tainted_node_is_deleted_in_every_profile() {
        for profile in Profile::NAMES.map(|n| Profile::by_name(n).unwrap()) {
            let mut d = Driver::new(profile);
            d.put_node(node("node1", &["t"]));
            d.put_pod(pod("p", "node1", vec![]));
            d.advance(Duration(1_000));
            assert!(
                d.cluster.pods.is_empty(),
                "{}:\n{}",
                profile.name,
                d.timeline()
            );
            assert!(d.controller.is_quiescent(), "{}", profile.name);
        }
    }

    #[test]
    fn tolerated_pod_is_deleted_after_its_toleration_seconds() {
        for profile in Profile::NAMES.map(|n| Profile::by_name(n).unwrap()) {
            let mut d = Driver::new(profile);
            d.put_node(node("node1", &["t"]));
            let tol = Toleration::exists("t", Some(TaintEffect::NoExecute), Some(2));
            d.put_pod(pod("p", "node1", vec![tol]));
            d.advance(Duration(1_999));
            assert_eq!(
                d.cluster.pods.len(),
                1,
                "{}:\n{}",
                profile.name,
                d.timeline()
            );
            d.advance(Duration(1));
            assert!(
                d.cluster.pods.is_empty(),
                "{}:\n{}",
                profile.name,
                d.timeline()
            );
        }
    }
}
