//! The composed controller: every component in one ordered, hashable, cheaply cloned value, with
//! one [`Step`] per upstream lock or goroutine boundary. Spec: CORE-S1..CORE-S8, CORE-A*.
//!
//! [`Controller`] holds the state, its inputs and outputs; `step` what is enabled and what each
//! step does; `rename` the symmetry reduction's renamings; `config` the sizes and profile;
//! `observe` what a caller may watch without reading the parts.

use crate::api::{Node, NodeName, Pod};
use crate::arrivals::Arrivals;
use crate::effect::{ApiRequest, ApiResult, RequestId, WorkId};
use crate::handlers::TaintedNodes;
use crate::intake::{self, PodItem};
use crate::profile::{Profile, WorkKeyPolicy};
use crate::shards::Shards;
use crate::shared::Shared;
use crate::throttle::Bucket;
use crate::time::Time;
use crate::timed_queue::{TimedQueue, WorkPhase};
use crate::work;
use crate::workqueue::WorkQueue;
use std::hash::{Hash, Hasher};

mod config;
mod id_equivalence;
mod observe;
mod rename;
mod step;
#[cfg(test)]
mod tests;

pub use config::{Config, Listing};
pub use observe::WorkerStatus;
pub use step::{Actor, Step};

/// The whole controller. Spec: CORE-S1..CORE-S8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Controller {
    /// Shared by every controller of a run ([`Config::interned`]).
    config: &'static Config,
    /// CORE-S1. Every part that owns memory is [`Shared`]: a step changes one or two of them
    /// (a dispatcher the queue and the shards, a work step the timed queue), so a copy of the
    /// controller (a model successor, an oracle branch) copies only those, and its hash
    /// reuses the others'.
    tainted_nodes: Shared<TaintedNodes>,
    /// CORE-S2, CORE-S3.
    timed: Shared<TimedQueue>,
    /// CORE-S4.
    node_queue: Shared<WorkQueue<NodeName>>,
    pod_queue: Shared<WorkQueue<PodItem>>,
    /// CORE-S7: the item each dispatcher holds while its shard's channel is full.
    node_held: Option<NodeName>,
    pod_held: Option<PodItem>,
    /// CORE-S5, CORE-S6.
    shards: Shared<Shards>,
    /// CORE-S8: how often `processPodOnNode` was reached with zero taints (CORE-PRE; stays 0).
    zero_taint_calls: u32,
    /// CORE-S9: the arrival record, kept only where the profile reads it
    /// ([`Profile::keeps_arrivals`]); empty otherwise.
    arrivals: Shared<Arrivals>,
}

/// Hashes the state, not the configuration: every state of one run (a model check, an oracle
/// frontier) shares it, and hashing the profile's name and switches on every fingerprint
/// showed up in profiles of both.
impl Hash for Controller {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // Destructured so that a new field cannot be left out by accident.
        let Controller {
            config: _,
            tainted_nodes,
            timed,
            node_queue,
            pod_queue,
            node_held,
            pod_held,
            shards,
            zero_taint_calls,
            arrivals,
        } = self;
        tainted_nodes.hash(h);
        timed.hash(h);
        node_queue.hash(h);
        pod_queue.hash(h);
        node_held.hash(h);
        pod_held.hash(h);
        shards.hash(h);
        zero_taint_calls.hash(h);
        arrivals.hash(h);
    }
}

impl Controller {
    /// A controller just started: empty queues and maps, every worker idle.
    pub fn new(config: Config) -> Controller {
        Controller::with(config.interned())
    }

    /// A controller just started with the shared `config`.
    fn with(config: &'static Config) -> Controller {
        Controller {
            config,
            tainted_nodes: Shared::default(),
            timed: Shared::new(TimedQueue::with_rate_limit(config.rate_limit)),
            node_queue: Shared::new(WorkQueue::new()),
            pod_queue: Shared::new(WorkQueue::new()),
            node_held: None,
            pod_held: None,
            shards: Shared::new(Shards::new(config.workers)),
            zero_taint_calls: 0,
            arrivals: Shared::default(),
        }
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &Config {
        self.config
    }

    /// The profile it follows.
    pub fn profile(&self) -> &Profile {
        &self.config.profile
    }

    /// Upstream `taintedNodes`: each tainted node's NoExecute taints. Spec: CORE-S1.
    pub fn tainted_nodes(&self) -> &TaintedNodes {
        &self.tainted_nodes
    }

    /// The `TimedWorkerQueue` (upstream `taintEvictionQueue`). Spec: CORE-S2, CORE-S3.
    pub fn timed_queue(&self) -> &TimedQueue {
        &self.timed
    }

    /// Whether a work's backoff sleep ended by `now` and its end is still remembered.
    pub fn has_ended_sleep(&self, now: Time) -> bool {
        self.timed.works().values().any(|w| {
            matches!(w.phase, WorkPhase::Backoff { until, .. } if until > Time::ZERO && until <= now)
        })
    }

    /// [`TimedQueue::forget_ended_sleeps`].
    pub fn forget_ended_sleeps(&mut self, now: Time, ended: &mut Vec<(WorkId, Time)>) {
        if self.has_ended_sleep(now) {
            self.timed.make_mut().forget_ended_sleeps(now, ended);
        }
    }

    /// Upstream `nodeUpdateQueue`. Spec: CORE-S4.
    pub fn node_queue(&self) -> &WorkQueue<NodeName> {
        &self.node_queue
    }

    /// Upstream `podUpdateQueue`. Spec: CORE-S4.
    pub fn pod_queue(&self) -> &WorkQueue<PodItem> {
        &self.pod_queue
    }

    /// The workers and their channels. Spec: CORE-S5, CORE-S6.
    pub fn shards(&self) -> &Shards {
        &self.shards
    }

    /// The items the dispatchers hold, blocked on a full channel.
    pub fn held(&self) -> (Option<&NodeName>, Option<&PodItem>) {
        (self.node_held.as_ref(), self.pod_held.as_ref())
    }

    /// CORE-PRE: true iff `processPodOnNode` was ever reached with zero taints.
    pub fn precondition_violated(&self) -> bool {
        self.zero_taint_calls > 0
    }

    /// The arrival record (CORE-S9).
    pub fn arrivals(&self) -> &Arrivals {
        &self.arrivals
    }

    /// Puts the arrival record in canonical form ([`Arrivals::canonicalize`]): for a search that
    /// deduplicates states and observes in time order (the oracle), so that states differing
    /// only in instants no decision reads are one. Spec: ORACLE-F1.
    pub fn canonicalize_arrivals(&mut self) {
        if !self.arrivals.is_canonical() {
            self.arrivals.make_mut().canonicalize();
        }
    }

    /// A node informer event at `now` (add: `old` None; delete: `new` None). Returns the item
    /// the intake filter let through to the node queue. Spec: CORE-A1, CORE-S9.
    pub fn node_observed(
        &mut self,
        old: Option<&Node>,
        new: Option<&Node>,
        now: Time,
    ) -> Option<NodeName> {
        if self.config.profile.keeps_arrivals() {
            if let Some(name) = new.or(old).map(|n| &n.name) {
                self.arrivals.make_mut().node_observed(name, new, now);
            }
        }
        let name = intake::node_updated(old, new)?;
        self.node_queue.make_mut().add(name.clone());
        Some(name)
    }

    /// A pod informer event at `now` (add: `old` None; delete: `new` None, tombstones
    /// unwrapped). Returns the item the intake filter let through to the pod queue.
    /// Spec: CORE-A2, CORE-S9.
    pub fn pod_observed(
        &mut self,
        old: Option<&Pod>,
        new: Option<&Pod>,
        now: Time,
    ) -> Option<PodItem> {
        if self.config.profile.keeps_arrivals() {
            if let Some(key) = new.or(old).map(|p| &p.key) {
                self.arrivals.make_mut().pod_observed(key, new, now);
            }
        }
        let uid_keyed = self.config.profile.work_key == WorkKeyPolicy::Uid;
        let item = intake::pod_updated(old, new).or_else(|| {
            uid_keyed
                .then(|| intake::incarnation_replaced(old, new))
                .flatten()
        })?;
        self.pod_queue.make_mut().add(item.clone());
        Some(item)
    }

    /// The API server answered `request` (see [`Controller::pending_requests`]); the work
    /// reacts in its next step ([`Step::ContinueWork`]). Spec: CORE-A13.
    pub fn api_responded(&mut self, request: RequestId, result: ApiResult) {
        work::responded(self.timed.make_mut(), request, result);
    }

    /// The requests sent and not yet answered, by id.
    pub fn pending_requests(&self) -> impl Iterator<Item = &ApiRequest> {
        self.timed.works().values().filter_map(|w| match &w.phase {
            WorkPhase::Requesting { request, .. } => Some(request),
            _ => None,
        })
    }

    /// Hands the works' client `bucket` in place of its own, if the client is rate limited: a
    /// caller that sees requests this controller did not send (the oracle, whose components
    /// each run a controller for one pod, CORE-THROTTLE) lends it the bucket they drained.
    pub fn use_bucket(&mut self, bucket: Bucket) {
        if self.timed.bucket().is_some_and(|b| *b != bucket) {
            self.timed.make_mut().set_bucket(bucket);
        }
    }

    /// The earliest armed timer (eviction or backoff): when to call again if nothing else happens.
    pub fn next_deadline(&self) -> Option<Time> {
        self.timed.next_deadline()
    }

    /// Nothing queued, held by a dispatcher, buffered on a channel or being handled by a
    /// worker: no dispatcher or worker step is enabled until the next informer event.
    pub fn handlers_idle(&self) -> bool {
        self.node_queue.is_idle()
            && self.pod_queue.is_idle()
            && self.node_held.is_none()
            && self.pod_held.is_none()
            && self.shards.all_idle()
    }

    /// [`Controller::handlers_idle`], and no work in flight except armed eviction timers.
    pub fn is_quiescent(&self) -> bool {
        self.handlers_idle()
            && self
                .timed
                .works()
                .values()
                .all(|w| w.phase == WorkPhase::Armed)
    }

    /// Controller restart (or leader failover): every bit of in-memory state is lost; responses to
    /// earlier requests are never delivered. The caller re-delivers the informers' initial lists
    /// as add events (N15). The caller's choice of [`Controller::report_work_steps`] stays.
    /// Spec: CORE-A15.
    pub fn restarted(&mut self) {
        let reports = self.timed.reports_ready();
        *self = Controller::with(self.config);
        if reports {
            self.report_work_steps();
        }
    }
}
