//! The envelope of legal outcomes of a scenario (`taintcheck expect`): per pod incarnation,
//! *must be deleted within [a, b]*, *must not be deleted*, or *may be deleted* (a race), each
//! with its reason, so that another implementation can run the same scenario and compare.
//! Spec: ORACLE-10.
//!
//! The environment (the scenario's API changes) is taken from a reference run's trace, minus
//! what the controller itself caused; the controller's behaviours are then explored with the
//! oracle's machinery: every informer delay and every due timer within the latency bound,
//! every interleaving of the controller's steps, every API answer the scenario's injected
//! faults allow. A behaviour's own DELETEs remove the pod from its own view of the API server.

use super::output::Observe;
use super::state::Fault;
use super::truth::{PodStatus, TruePod, Truth, Why};
use super::{BadInput, Error, Options, Oracle, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;
use taintcheck_core::api::{NodeName, PodKey, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::ApiResult;
use taintcheck_formats::scenario::{Op, Scenario};
use taintcheck_formats::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};

/// What every legal behaviour does to one pod incarnation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Outcome {
    /// Every legal behaviour deletes it, at an instant in `[from, to]`.
    MustDelete {
        /// Earliest instant a legal behaviour's DELETE succeeds.
        from: Time,
        /// Latest instant a legal behaviour's DELETE succeeds.
        to: Time,
    },
    /// No legal behaviour deletes it.
    MustNotDelete,
    /// Some legal behaviours delete it (within `[from, to]`), others do not: a race.
    MayDelete {
        /// Earliest instant a legal behaviour's DELETE succeeds.
        from: Time,
        /// Latest instant a legal behaviour's DELETE succeeds.
        to: Time,
    },
}

/// One pod incarnation's envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodEnvelope {
    /// The pod's namespace and name.
    #[serde(serialize_with = "display")]
    pub pod: PodKey,
    /// The incarnation the outcome is about.
    #[serde(serialize_with = "display")]
    pub uid: Uid,
    /// What every legal behaviour does to it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Why, in plain words: the taints and tolerations that decide it, or the race.
    pub reason: String,
}

impl fmt::Display for PodEnvelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (uid {}): ", self.pod, self.uid)?;
        match self.outcome {
            Outcome::MustDelete { from, to } if from == to => {
                write!(f, "must be deleted at {from}")?
            }
            Outcome::MustDelete { from, to } => write!(f, "must be deleted within [{from}, {to}]")?,
            Outcome::MustNotDelete => f.write_str("must not be deleted")?,
            Outcome::MayDelete { from, to } => write!(f, "may be deleted within [{from}, {to}]")?,
        }
        write!(f, ": {}", self.reason)
    }
}

/// The envelope of `scenario` under `profile` with latency bound `bound`. `reference` runs the
/// scenario on the reference runtime and yields its trace records as they are made; only the
/// environment's changes are used. It is called twice, and must yield the same records both
/// times (the runtime's serial virtual clock makes a run deterministic, RT-DRV-1): the first
/// pass explores the behaviours and finds each incarnation's outcome, the second reads the API
/// state at the instant each reason is about. So nothing of the trace is kept: the cost in
/// memory is what is live (the oracle's components, the API objects, the lines held back while
/// a DELETE is in flight; see [`Environment`]), not the trace's length (ORACLE-10).
pub fn envelope<I>(
    scenario: &Scenario,
    reference: impl FnMut() -> I,
    profile: Profile,
    bound: Duration,
) -> Result<Vec<PodEnvelope>>
where
    I: IntoIterator<Item = TraceRecord>,
{
    envelope_with(scenario, reference, profile, bound, true)
}

/// [`envelope`], with subsumption (ORACLE-SUB) on or off: off only to check the reduction
/// against the exploration it reduces.
pub fn envelope_with<I>(
    scenario: &Scenario,
    mut reference: impl FnMut() -> I,
    profile: Profile,
    bound: Duration,
    subsume: bool,
) -> Result<Vec<PodEnvelope>>
where
    I: IntoIterator<Item = TraceRecord>,
{
    let mut outcomes = Outcomes::with_subsumption(scenario, profile, bound, subsume);
    for r in reference() {
        outcomes.record(r)?;
    }
    let mut reasons = outcomes.finish()?;
    for r in reference() {
        reasons.record(r);
    }
    reasons.finish()
}

/// The first pass: the environment's lines fed to the oracle as they come, which explores every
/// legal behaviour of the controller; at the end, each incarnation's outcome.
pub struct Outcomes<'a> {
    scenario: &'a Scenario,
    profile: Profile,
    bound: Duration,
    env: Environment,
    feed: Feed,
}

/// Where the first pass's environment lines go.
struct Feed {
    oracle: Oracle,
    /// The scenario's injected faults not injected yet, the next one last.
    faults: Vec<(Time, Fault)>,
    incarnations: BTreeMap<PodKey, BTreeSet<Uid>>,
    /// Environment lines fed so far (the second pass must see as many).
    lines: usize,
}

impl Feed {
    /// The environment's next line, after the faults injected up to its instant.
    fn line(&mut self, r: TraceRecord) -> Result<()> {
        self.lines += 1;
        while self.faults.last().is_some_and(|(at, _)| *at <= r.t) {
            let (at, fault) = self.faults.pop().expect("checked");
            self.oracle.inject(fault, at)?;
        }
        if let TraceEvent::PodAdded { pod, .. } = &r.event {
            self.incarnations
                .entry(pod.key.clone())
                .or_default()
                .insert(pod.uid.clone());
        }
        self.oracle.feed(&r)
    }
}

impl<'a> Outcomes<'a> {
    /// Ready for the reference run's first record.
    pub fn new(scenario: &'a Scenario, profile: Profile, bound: Duration) -> Outcomes<'a> {
        Outcomes::with_subsumption(scenario, profile, bound, true)
    }

    /// [`Outcomes::new`], with subsumption (ORACLE-SUB) on or off.
    pub fn with_subsumption(
        scenario: &'a Scenario,
        profile: Profile,
        bound: Duration,
        subsume: bool,
    ) -> Outcomes<'a> {
        let mut options = Options::new(profile, bound);
        options.subsume = subsume;
        options.observe = Some(Observe::default());
        options.explore = true;
        options.workers = scenario.runtime.workers;
        let mut faults: Vec<(Time, Fault)> = scenario
            .ops
            .iter()
            .filter_map(|op| match &op.op {
                Op::FailRequests {
                    verb,
                    pod,
                    times,
                    result,
                } => Some((
                    op.at,
                    Fault {
                        verb: *verb,
                        pod: pod.clone(),
                        left: *times,
                        result: match result {
                            ResponseResult::NotFound => ApiResult::NotFound,
                            ResponseResult::PreconditionFailed => ApiResult::PreconditionFailed,
                            ResponseResult::Ok | ResponseResult::Failed => ApiResult::Failed,
                        },
                    },
                )),
                _ => None,
            })
            .collect();
        faults.reverse();
        Outcomes {
            scenario,
            profile,
            bound,
            env: Environment::default(),
            feed: Feed {
                oracle: Oracle::with_options(options),
                faults,
                incarnations: BTreeMap::new(),
                lines: 0,
            },
        }
    }

    /// Takes the reference run's next record.
    pub fn record(&mut self, r: TraceRecord) -> Result<()> {
        let feed = &mut self.feed;
        self.env.take(r, &mut |r| feed.line(r))
    }

    /// The end of the reference run: the lines still held are the environment's, and every
    /// behaviour is explored to the scenario's `until` (again: nothing more).
    pub fn close(&mut self) -> Result<()> {
        let feed = &mut self.feed;
        self.env.finish(&mut |r| feed.line(r))?;
        self.feed.oracle.close(self.scenario.until)
    }

    /// The largest frontier of any pod so far, and the states its searches expanded.
    pub fn cost(&self) -> (usize, u64) {
        let oracle = &self.feed.oracle;
        (oracle.summary().max_frontier, oracle.expanded())
    }

    /// Trace lines held back now (what the first pass keeps of the trace; see [`Environment`]).
    pub fn retained(&self) -> usize {
        self.env.held.len()
    }

    /// The outcome of every incarnation, and the second pass that finds their reasons.
    pub fn finish(mut self) -> Result<Reasons<'a>> {
        self.close()?;
        let scenario = self.scenario;
        let latency = scenario.runtime.api_latency;
        // The client's rate limit: every eviction may wait behind every other's requests.
        let throttled = scenario.runtime.rate_limit.map(|limit| {
            let evictions = self.feed.incarnations.values().map(BTreeSet::len).sum();
            (
                limit,
                super::throttle::longest_wait(limit, &self.profile, evictions),
            )
        });
        let mut pods = Vec::new();
        for (key, uids) in std::mem::take(&mut self.feed.incarnations) {
            let states = self
                .feed
                .oracle
                .components
                .get(&key)
                .map(|c| c.states.as_slice())
                .unwrap_or_default();
            for uid in uids {
                let windows: Vec<Option<(Time, Time)>> = states
                    .iter()
                    .map(|s| s.deleted.get(&uid).copied())
                    .collect();
                let deleted: Vec<(Time, Time)> = windows.iter().flatten().copied().collect();
                let wait = throttled.map_or(Duration::ZERO, |(_, wait)| wait);
                let earliest = deleted.iter().map(|w| w.0.plus(latency)).min();
                let latest = deleted.iter().map(|w| w.1.plus(latency).plus(wait)).max();
                let outcome = match (earliest, latest) {
                    (Some(from), Some(to)) if deleted.len() == windows.len() => {
                        Outcome::MustDelete { from, to }
                    }
                    (Some(from), Some(to)) => Outcome::MayDelete { from, to },
                    _ => Outcome::MustNotDelete,
                };
                let at = match outcome {
                    Outcome::MustDelete { from, .. } | Outcome::MayDelete { from, .. } => from,
                    Outcome::MustNotDelete => scenario.until,
                };
                pods.push(Pending {
                    key: key.clone(),
                    uid,
                    outcome,
                    at,
                    seen: None,
                    decisive: None,
                });
            }
        }
        let mut order: Vec<usize> = (0..pods.len()).collect();
        order.sort_by_key(|&i| pods[i].at);
        let tracked = pods
            .iter()
            .enumerate()
            .filter(|(_, p)| p.outcome != Outcome::MustNotDelete)
            .map(|(index, p)| {
                let track = Track {
                    index,
                    since: Time::ZERO,
                    best: None,
                    node: None,
                };
                ((p.key.clone(), p.uid.clone()), track)
            })
            .collect();
        Ok(Reasons {
            scenario,
            profile: self.profile,
            bound: self.bound,
            throttled,
            env: Environment::default(),
            read: Reading {
                ops: self.profile.comparison_operators,
                world: Truth::default(),
                live: BTreeMap::new(),
                pods,
                order,
                answered: 0,
                lines: self.feed.lines,
                tracked,
                on_node: BTreeMap::new(),
            },
        })
    }
}

/// An incarnation's outcome, and what the API showed of it at the instant its reason is about
/// (the first legal deletion, or the scenario's end), once the second pass has reached it.
struct Pending {
    key: PodKey,
    uid: Uid,
    outcome: Outcome,
    at: Time,
    /// The pod's situation at `at`, and whether the API still had this incarnation then.
    seen: Option<(Why, bool)>,
    /// For a deletion: the API state that set its window, when it is not the one at `at`.
    decisive: Option<Held>,
}

/// An API state an incarnation was in, from `since` until `until`.
#[derive(Clone, Debug)]
struct Held {
    why: Why,
    since: Time,
    until: Time,
}

/// A deleted incarnation not read yet: since when its current API state holds, and the
/// earlier state that explains its window best so far.
struct Track {
    /// Its index in `Reading::pods`.
    index: usize,
    since: Time,
    best: Option<Held>,
    /// The node it is bound to, if any.
    node: Option<NodeName>,
}

/// The second pass: the environment's API state, rolled forward line by line, read at each
/// incarnation's instant. It holds the nodes as they are now (with the instants their taints
/// appeared, which reasons cite) and each live incarnation's pod; an incarnation is judged
/// alone under its name, as if a later one of the same name did not exist.
pub struct Reasons<'a> {
    scenario: &'a Scenario,
    profile: Profile,
    bound: Duration,
    throttled: Option<(RateLimit, Duration)>,
    env: Environment,
    read: Reading,
}

/// The second pass's API state and the incarnations it reads.
struct Reading {
    /// The profile's `comparison_operators` switch.
    ops: bool,
    /// The nodes, without pods (an incarnation is put in only while it is read).
    world: Truth,
    /// Each incarnation the API has now, as the world would hold it.
    live: BTreeMap<(PodKey, Uid), TruePod>,
    pods: Vec<Pending>,
    /// `pods`' indices by `at`; the first `answered` have their situation.
    order: Vec<usize>,
    answered: usize,
    /// Environment lines the first pass saw and this pass has not.
    lines: usize,
    /// The deleted incarnations not read yet, each with the states it went through that may
    /// have set its window.
    tracked: BTreeMap<(PodKey, Uid), Track>,
    /// The tracked incarnations bound to each node (a node line changes their state).
    on_node: BTreeMap<NodeName, BTreeSet<(PodKey, Uid)>>,
}

impl Reasons<'_> {
    /// Takes the reference run's next record (the same as the first pass's).
    pub fn record(&mut self, r: TraceRecord) {
        let read = &mut self.read;
        let applied = self.env.take(r, &mut |r| {
            read.apply(r);
            Ok(())
        });
        debug_assert!(applied.is_ok(), "applying a line does not fail");
    }

    /// Trace lines held back now.
    pub fn retained(&self) -> usize {
        self.env.held.len()
    }

    /// Every incarnation's envelope, in name and uid order. An error if the second run did not
    /// make the first's environment (a reference run must be deterministic).
    pub fn finish(mut self) -> Result<Vec<PodEnvelope>> {
        let read = &mut self.read;
        self.env.finish(&mut |r| {
            read.apply(r);
            Ok(())
        })?;
        read.answer(None);
        if read.lines != 0 {
            return Err(Error::BadInput(BadInput {
                line: 0,
                message: "the reference run did not repeat itself: its two runs made \
                          different environments"
                    .into(),
            }));
        }
        let until = self.scenario.until;
        let mut out = Vec::with_capacity(read.pods.len());
        for p in std::mem::take(&mut read.pods) {
            let (why, present) = p.seen.expect("every incarnation is answered at the end");
            let because = match (&p.decisive, why.earliest()) {
                (None, Some(_)) => why.to_string(),
                (None, None) => {
                    format!("a deletion scheduled earlier is not cancelled although {why}")
                }
                (Some(then), Some(_)) => format!(
                    "{} (as the API showed it from {} to {}); at {}: {why}",
                    then.why, then.since, then.until, p.at
                ),
                (Some(then), None) => format!(
                    "{} (as the API showed it from {} to {}); the deletion scheduled then is \
                     not cancelled although at {} {why}",
                    then.why, then.since, then.until, p.at
                ),
            };
            let because = match self.throttled {
                Some((limit, wait)) if wait > Duration::ZERO => format!(
                    "{because}; up to {} later while its requests wait for the client's tokens \
                     ({limit})",
                    super::truth::seconds_text(wait)
                ),
                _ => because,
            };
            let reason = match p.outcome {
                Outcome::MustDelete { .. } => because,
                Outcome::MayDelete { .. } => format!(
                    "legal behaviours differ (interleavings of the controller's steps and, \
                     within the latency bound of {}, of its informers): {because}",
                    super::truth::seconds_text(self.bound)
                ),
                Outcome::MustNotDelete if present => match why.earliest() {
                    Some(e) if e <= until => format!(
                        "{why}, yet no legal behaviour of {} deletes it by {until}",
                        self.profile.name
                    ),
                    _ => why.to_string(),
                },
                Outcome::MustNotDelete => "the scenario itself removes it first".to_string(),
            };
            out.push(PodEnvelope {
                pod: p.key,
                uid: p.uid,
                outcome: p.outcome,
                reason,
            });
        }
        Ok(out)
    }
}

impl Reading {
    /// An environment line: first the incarnations whose instant is before it are read, then
    /// it changes the API state.
    fn apply(&mut self, r: TraceRecord) {
        self.lines = self.lines.wrapping_sub(1);
        self.answer(Some(r.t));
        let changed: Vec<(PodKey, Uid)> = match &r.event {
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => self
                .on_node
                .get(&node.name)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
            TraceEvent::NodeDeleted { name, .. } => self
                .on_node
                .get(name)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
            TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. } => {
                vec![(pod.key.clone(), pod.uid.clone())]
            }
            TraceEvent::PodDeleted {
                namespace,
                name,
                uid,
                ..
            } => vec![(PodKey::new(namespace, name), uid.clone())],
            _ => Vec::new(),
        };
        for id in &changed {
            self.offer(id, r.t);
        }
        match r.event {
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                self.world.put_node(Arc::new(node), r.t)
            }
            TraceEvent::NodeDeleted { name, .. } => {
                self.world.remove_node(&name);
            }
            TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. } => {
                let id = (pod.key.clone(), pod.uid.clone());
                if let Some(old) = self.live.remove(&id) {
                    self.world.pods.insert(id.0.clone(), old);
                }
                let node = pod.node_name.clone();
                self.world.put_pod(Arc::new(pod), PodStatus::default(), r.t);
                let now = self.world.remove_pod(&id.0).expect("just stored");
                if let Some(track) = self.tracked.get_mut(&id) {
                    if track.node != node {
                        if let Some(old) = track.node.take() {
                            self.on_node.entry(old).or_default().remove(&id);
                        }
                        if let Some(node) = node {
                            self.on_node
                                .entry(node.clone())
                                .or_default()
                                .insert(id.clone());
                            track.node = Some(node);
                        }
                    }
                }
                self.live.insert(id, now);
            }
            TraceEvent::PodDeleted {
                namespace,
                name,
                uid,
                ..
            } => {
                self.live.remove(&(PodKey::new(&namespace, &name), uid));
            }
            _ => {}
        }
        for id in &changed {
            if let Some(track) = self.tracked.get_mut(id) {
                track.since = r.t;
            }
        }
    }

    /// The situation of incarnation `id` as the API shows it now.
    fn why_now(&mut self, id: &(PodKey, Uid)) -> Why {
        let Some(pod) = self.live.get(id) else {
            return Why::Gone;
        };
        self.world.pods.insert(id.0.clone(), pod.clone());
        let why = self.world.why(&id.0, self.ops);
        self.world.remove_pod(&id.0);
        why
    }

    /// Before the API state of tracked incarnation `id` changes at `until`: its state so far is
    /// the one that set its window if its earliest eviction is the latest one not after the
    /// window's start (a later state may not move a deadline already set; ORACLE-10).
    fn offer(&mut self, id: &(PodKey, Uid), until: Time) {
        let Some((index, since)) = self.tracked.get(id).map(|t| (t.index, t.since)) else {
            return;
        };
        let at = self.pods[index].at;
        let why = self.why_now(id);
        let Some(e) = why.earliest().filter(|e| *e <= at) else {
            return;
        };
        let track = self.tracked.get_mut(id).expect("tracked");
        if track
            .best
            .as_ref()
            .and_then(|b| b.why.earliest())
            .is_none_or(|best| best <= e)
        {
            track.best = Some(Held { why, since, until });
        }
    }

    /// Reads the situation of every incarnation whose instant is before `before` (all: `None`).
    fn answer(&mut self, before: Option<Time>) {
        while let Some(&i) = self.order.get(self.answered) {
            let p = &self.pods[i];
            if before.is_some_and(|t| p.at >= t) {
                break;
            }
            let id = (p.key.clone(), p.uid.clone());
            let at = p.at;
            let present = self.live.contains_key(&id);
            let why = self.why_now(&id);
            // The state now competes with the earlier ones: a later state with the same
            // earliest eviction is the one to cite.
            if let Some(track) = self.tracked.remove(&id) {
                let now_e = why.earliest().filter(|e| *e <= at);
                let earlier = track
                    .best
                    .filter(|b| now_e.is_none_or(|now| b.why.earliest() > Some(now)));
                self.pods[i].decisive = earlier;
                if let Some(node) = track.node {
                    self.on_node.entry(node).or_default().remove(&id);
                }
            }
            self.pods[i].seen = Some((why, present));
            self.answered += 1;
        }
    }
}

/// The reference trace's environment, streamed: its API changes and restarts, without the
/// changes the controller's own successful DELETEs caused (those depend on the behaviour
/// explored). A DELETE's response names the incarnation it removed; a terminating or deleted
/// line of that incarnation while the DELETE was in flight, or after its response, is the
/// controller's doing. Such a line, seen while DELETEs are in flight, is held (with every line
/// after it, to keep their order) until each of those DELETEs is answered: what is held is
/// bounded by the lines made while requests are in flight, not by the trace. A line passed on
/// is never needed again: the oracle keeps what it implies, and the second pass reads the API
/// state only at instants it has not passed yet (ORACLE-10).
#[derive(Default)]
struct Environment {
    /// DELETE requests sent and not answered yet.
    in_flight: BTreeSet<u64>,
    /// Incarnations a DELETE removed, until their `pod_deleted` line.
    removed: BTreeSet<Uid>,
    /// Environment lines not passed on yet, in trace order, each with the DELETEs that may
    /// still turn out to have caused it (none: it is the environment's).
    held: VecDeque<(TraceRecord, BTreeSet<u64>)>,
}

impl Environment {
    /// Takes the next record of the trace; `emit` gets the environment's lines now known to be
    /// the environment's, in trace order.
    fn take(
        &mut self,
        r: TraceRecord,
        emit: &mut dyn FnMut(TraceRecord) -> Result<()>,
    ) -> Result<()> {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                ..
            } => {
                self.in_flight.insert(*id);
            }
            TraceEvent::Response {
                id, result, uid, ..
            } if self.in_flight.remove(id) => {
                let removed = uid.as_ref().filter(|_| *result == ResponseResult::Ok);
                if let Some(uid) = removed {
                    self.removed.insert(uid.clone());
                    self.held.retain(|(line, suspects)| {
                        !(suspects.contains(id) && pod_uid(&line.event) == Some(uid))
                    });
                }
                for (_, suspects) in &mut self.held {
                    suspects.remove(id);
                }
            }
            TraceEvent::PodModified {
                terminating: true, ..
            }
            | TraceEvent::PodDeleted { .. } => {
                let uid = pod_uid(&r.event).expect("a pod line");
                if self.removed.contains(uid) {
                    if matches!(r.event, TraceEvent::PodDeleted { .. }) {
                        self.removed.remove(uid);
                    }
                } else {
                    let suspects = self.in_flight.clone();
                    self.held.push_back((r, suspects));
                }
            }
            TraceEvent::Header { .. }
            | TraceEvent::NodeAdded { .. }
            | TraceEvent::NodeModified { .. }
            | TraceEvent::NodeDeleted { .. }
            | TraceEvent::PodAdded { .. }
            | TraceEvent::PodModified { .. }
            | TraceEvent::ControllerRestarted => self.held.push_back((r, BTreeSet::new())),
            _ => {}
        }
        while self.held.front().is_some_and(|(_, s)| s.is_empty()) {
            let (line, _) = self.held.pop_front().expect("checked");
            emit(line)?;
        }
        Ok(())
    }

    /// The end of the trace: what is still held was not caused by a DELETE that succeeded.
    fn finish(&mut self, emit: &mut dyn FnMut(TraceRecord) -> Result<()>) -> Result<()> {
        self.in_flight.clear();
        while let Some((line, _)) = self.held.pop_front() {
            emit(line)?;
        }
        Ok(())
    }
}

fn pod_uid(e: &TraceEvent) -> Option<&Uid> {
    match e {
        TraceEvent::PodModified { pod, .. } | TraceEvent::PodAdded { pod, .. } => Some(&pod.uid),
        TraceEvent::PodDeleted { uid, .. } => Some(uid),
        _ => None,
    }
}

fn display<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
