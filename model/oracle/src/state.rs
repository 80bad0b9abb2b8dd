//! One state of a component's frontier: the core [`Controller`] plus what surrounds it, the
//! informer caches it reads, the API changes its informers have not delivered yet and the
//! outputs it owes the trace (spec ORACLE-3).

use super::output::Output;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use taintcheck_core::api::{Node, NodeName, Pod, PodKey, Uid};
use taintcheck_core::fx::{Fx, FxBuild};
use taintcheck_core::shared::Shared;
use taintcheck_core::small_map::SmallMap;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{
    ApiResult, ClusterView, Config, Controller, EventRecord, RequestId, Work, WorkId, WorkPhase,
};
use taintcheck_formats::trace::RequestVerb;

/// The informer caches of one component, as the controller reads them. Objects are shared
/// (`Arc`) with the trace's truth, so a state clones cheaply.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cache {
    pub nodes: SmallMap<NodeName, Arc<Node>>,
    pub pods: SmallMap<PodKey, Arc<Pod>>,
}

impl ClusterView for Cache {
    fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name).map(|n| &**n)
    }

    fn pod(&self, key: &PodKey) -> Option<&Pod> {
        self.pods.get(key).map(|p| &**p)
    }

    fn pods_on_node(&self, name: &str) -> Vec<&Pod> {
        self.pods
            .values()
            .filter(|p| p.node_name.as_deref() == Some(name))
            .map(|p| &**p)
            .collect()
    }
}

/// An API change the informer has not delivered yet: it must be delivered by `at + bound`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pending<K, T> {
    pub at: Time,
    pub key: K,
    /// `None`: the object was deleted.
    pub new: Option<Arc<T>>,
}

/// Requests of a verb (for one pod, or any) that the API server fails: a scenario's
/// `failRequests` (used by `expect`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fault {
    /// The request verb that fails.
    pub verb: RequestVerb,
    /// Only requests for this pod; `None`: any pod.
    pub pod: Option<PodKey>,
    /// How many more requests fail.
    pub left: u32,
    /// The answer the failed requests get.
    pub result: ApiResult,
}

/// One state of a component. Spec: ORACLE-3.
///
/// The controller and its caches are shared copy-on-write (`make_mut` on every move): with
/// `D > 0` most states are kept both as they are (waiting) and moved on (delivering now), and
/// the kept copy then costs a pointer, not a controller. The controller's hash is kept with it
/// ([`Shared`]), so a state's fingerprint rehashes it only after it changed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub ctrl: Shared<Controller>,
    pub cache: Arc<Cache>,
    pub nodes: VecDeque<Pending<NodeName, Node>>,
    pub pods: VecDeque<Pending<PodKey, Pod>>,
    /// Requests (and, under `deletions`, successful DELETEs) produced and not yet shown by the
    /// trace, with the instant of the step that produced them: in transit to the API server,
    /// which dates them at receipt, so the trace shows them within the step slack while other
    /// steps go on (ORACLE-11).
    pub owed: VecDeque<(Time, Output)>,
    /// Events emitted and not yet shown by the trace, with their emission instant: the
    /// recorder delivers them asynchronously, in any order, within the step slack (ORACLE-11).
    pub events: VecDeque<(Time, EventRecord)>,
    /// The works whose goroutine has a step to take (spawned, marked, answered, finished),
    /// with the instant since which it has: it takes it within the step slack (ORACLE-11).
    pub running: BTreeMap<WorkId, Time>,
    /// Trace request ids matched to the model's requests (traces that observe requests).
    pub sent: BTreeMap<u64, RequestId>,
    /// Incarnations this behaviour deleted, and when: the earliest and latest instant over
    /// the behaviours this state stands for (`expect`'s exploration; ORACLE-SUB).
    pub deleted: BTreeMap<Uid, (Time, Time)>,
    /// The works whose backoff sleep has ended, with the instant it ended: the core keeps
    /// only that it ended ([`Controller::forget_ended_sleeps`]), the retry is due within the
    /// bound and the step slack from this instant (ORACLE-4, ORACLE-SUB).
    pub slept: BTreeMap<WorkId, Time>,
    pub faults: Vec<Fault>,
}

impl State {
    pub fn new(config: Config) -> State {
        State {
            ctrl: Shared::new(Controller::new(config)),
            cache: Arc::default(),
            nodes: VecDeque::new(),
            pods: VecDeque::new(),
            owed: VecDeque::new(),
            events: VecDeque::new(),
            running: BTreeMap::new(),
            sent: BTreeMap::new(),
            deleted: BTreeMap::new(),
            slept: BTreeMap::new(),
            faults: Vec::new(),
        }
    }

    /// The informer delivers its oldest pending node change at `now`.
    pub fn deliver_node(&mut self, now: Time) {
        if let Some(p) = self.nodes.pop_front() {
            self.observe_node(p.key, p.new, now);
        }
    }

    /// The informer delivers its oldest pending pod change at `now`. The arrival record is kept
    /// canonical, after node deliveries too (ORACLE-F1, `Arrivals::canonicalize`): a component
    /// holds one pod name and observes in time order, except a node introduced with its past
    /// changes ([`super::frontier::Machine::introduce_node`]), which no pod of the component is
    /// bound to yet.
    pub fn deliver_pod(&mut self, now: Time) {
        let Some(p) = self.pods.pop_front() else {
            return;
        };
        let old = store(&mut Arc::make_mut(&mut self.cache).pods, p.key, &p.new);
        let ctrl = self.ctrl.make_mut();
        ctrl.pod_observed(old.as_deref(), p.new.as_deref(), now);
        ctrl.canonicalize_arrivals();
    }

    /// The pod informer will deliver `change`, unless the change repeats the informer's latest
    /// view of the pod (its last change still pending, else what the cache shows): delivering an
    /// equal object changes nothing, neither the cache's content nor the core, whose intake
    /// filter drops it and whose arrival record keeps the incarnation's instant (CORE-A2,
    /// CORE-S9). A status write (resourceVersion, `DisruptionTarget`, `deletionTimestamp`) is
    /// such a change. Spec: ORACLE-F1.
    pub fn push_pod(&mut self, change: Pending<PodKey, Pod>) {
        if let Some(new) = &change.new {
            let latest = match self.pods.iter().rev().find(|p| p.key == change.key) {
                Some(last) => last.new.as_ref(),
                None => self.cache.pods.get(&change.key),
            };
            if latest.is_some_and(|old| **old == **new) {
                return;
            }
        }
        self.pods.push_back(change);
    }

    /// The node cache shows `new` under `name` (`None`: deleted) from `now`, and the controller
    /// observes the change.
    pub fn observe_node(&mut self, name: NodeName, new: Option<Arc<Node>>, now: Time) {
        let old = store(&mut Arc::make_mut(&mut self.cache).nodes, name, &new);
        let ctrl = self.ctrl.make_mut();
        ctrl.node_observed(old.as_deref(), new.as_deref(), now);
        ctrl.canonicalize_arrivals();
    }

    /// The instants of the API changes its informers have not delivered yet.
    pub fn undelivered(&self) -> impl Iterator<Item = Time> + '_ {
        let nodes = self.nodes.iter().map(|p| p.at);
        nodes.chain(self.pods.iter().map(|p| p.at))
    }

    /// The due times of its armed timers and backoffs (a throttled request's timer is the
    /// rate limit's, ORACLE-THROTTLE).
    pub fn timers(&self) -> impl Iterator<Item = Time> + '_ {
        let works = self.ctrl.timed_queue().works().values();
        works
            .filter(|w| !matches!(w.phase, WorkPhase::Throttled { .. }))
            .filter_map(|w| w.timer_due())
    }

    /// The instants at which its works' backoff sleeps end (or ended).
    pub fn backoffs(&self) -> impl Iterator<Item = Time> + '_ {
        let works = self.ctrl.timed_queue().works().iter();
        works.filter_map(|(id, w)| match w.phase {
            WorkPhase::Backoff { until, .. } => Some(self.sleep_end(*id, until)),
            _ => None,
        })
    }

    /// When the backoff sleep of work `id`, whose phase says `until`, ends or ended.
    pub fn sleep_end(&self, id: WorkId, until: Time) -> Time {
        match self.slept.get(&id) {
            Some(ended) if until == Time::ZERO => *ended,
            _ => until,
        }
    }

    /// Moves the end of every backoff sleep that has ended by `now` from the core into
    /// [`State::slept`], so that states that differ only in when a sleep ended share their
    /// controller (ORACLE-SUB).
    pub fn note_ended_sleeps(&mut self, now: Time) {
        if !self.ctrl.has_ended_sleep(now) {
            return;
        }
        let mut ended = Vec::new();
        self.ctrl.make_mut().forget_ended_sleeps(now, &mut ended);
        self.slept.extend(ended);
    }

    /// Nothing queued, dispatched, held or being handled, and no work goroutine with a step to
    /// take.
    pub fn pipeline_idle(&self) -> bool {
        self.ctrl.handlers_idle() && self.running.is_empty()
    }

    /// Brings [`State::running`] up to date at `now` after a move; `acted`: the work that just
    /// took a step or received an answer (its next step is enabled from `now`).
    pub fn track(&mut self, now: Time, acted: Option<WorkId>) {
        if let Some(id) = acted {
            self.running.remove(&id);
        }
        let works = self.ctrl.timed_queue().works();
        self.running
            .retain(|id, _| works.get(id).is_some_and(running));
        self.slept.retain(|id, _| {
            works.get(id).is_some_and(
                |w| matches!(w.phase, WorkPhase::Backoff { until, .. } if until == Time::ZERO),
            )
        });
        for (id, w) in works {
            if running(w) {
                self.running.entry(*id).or_insert(now);
            }
        }
    }

    /// The instants by which the outputs in flight and the running works' next steps are due,
    /// under step slack `slack` (ORACLE-11).
    pub fn slack_due(&self, slack: Duration) -> impl Iterator<Item = Time> + '_ {
        let events = self.events.iter().map(|(at, _)| *at);
        let owed = self.owed.iter().map(|(at, _)| *at);
        events
            .chain(owed)
            .chain(self.running.values().copied())
            .map(move |at| at.plus(slack))
    }

    /// Whether this behaviour has nothing left that concerns `pod`: the component can be
    /// forgotten once the pod is gone from the API server too.
    pub fn forgotten(&self) -> bool {
        self.owed.is_empty()
            && self.events.is_empty()
            && self.nodes.is_empty()
            && self.pods.is_empty()
            && self.cache.pods.is_empty()
            && self.ctrl.timed_queue().entries().is_empty()
            && self.ctrl.timed_queue().works().is_empty()
            && self.pipeline_idle()
    }

    /// A 64-bit fingerprint: the frontier is deduplicated by fingerprint, as stateright's
    /// visited set is. Cached objects are shared with the trace's truth and hashed by address:
    /// equal states built from the same trace lines share them, and a state that differs only
    /// in sharing is merely kept twice.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fx::default();
        h.write_u64(self.ctrl.hash64());
        for (name, node) in &self.cache.nodes {
            name.hash(&mut h);
            h.write_usize(Arc::as_ptr(node) as usize);
        }
        for (key, pod) in &self.cache.pods {
            key.hash(&mut h);
            h.write_usize(Arc::as_ptr(pod) as usize);
        }
        for p in &self.nodes {
            h.write_i64(p.at.millis());
            h.write_usize(p.new.as_ref().map_or(0, |n| Arc::as_ptr(n) as usize));
        }
        h.write_u8(0xff);
        for p in &self.pods {
            h.write_i64(p.at.millis());
            h.write_usize(p.new.as_ref().map_or(0, |n| Arc::as_ptr(n) as usize));
        }
        self.owed.hash(&mut h);
        self.events.hash(&mut h);
        self.running.hash(&mut h);
        self.sent.hash(&mut h);
        self.deleted.hash(&mut h);
        self.slept.hash(&mut h);
        self.faults.hash(&mut h);
        h.finish()
    }
}

/// Whether a work's goroutine has a step to take (the oracle bounds when it takes it).
fn running(w: &Work) -> bool {
    matches!(
        w.phase,
        WorkPhase::Spawned
            | WorkPhase::Marked
            | WorkPhase::Answered { .. }
            | WorkPhase::Finished { .. }
    )
}

/// Stores `new` under `key` (`None`: removes it); returns what was there.
fn store<K: Ord, T>(map: &mut SmallMap<K, Arc<T>>, key: K, new: &Option<Arc<T>>) -> Option<Arc<T>> {
    match new {
        Some(v) => map.insert(key, v.clone()),
        None => map.remove(&key),
    }
}

/// Removes duplicate states, keeping the first of each (order stays deterministic).
pub fn dedup(states: Vec<State>) -> Vec<State> {
    if states.len() < 2 {
        return states;
    }
    let mut seen: HashSet<u64, FxBuild> = HashSet::default();
    states
        .into_iter()
        .filter(|s| seen.insert(s.fingerprint()))
        .collect()
}
