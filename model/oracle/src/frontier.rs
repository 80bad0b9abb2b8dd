//! The frontier of one component: every state of the controller, of its informer caches and of
//! its undelivered API changes that is consistent with the trace so far (spec ORACLE-3..7).
//!
//! A state ([`super::state`]) is the core controller plus its informer caches, undelivered API
//! changes and owed outputs. Every move is a core call (`node_observed`, `pod_observed`, `step`,
//! `api_responded`); nothing here decides anything about taints, tolerations, queues or timers.
//!
//! Time: all states of a component share one instant. Between two instants only *silent* moves
//! happen, at a finite set of candidate instants (deadlines and due times, ORACLE-5); a state may
//! leave an instant only when its pipeline is idle and nothing it owes is due (ORACLE-4).

use super::output::{Observe, Output, Seen};
use super::state::{dedup, Pending, State};
use super::subsume::{covers, prune, shape, Deadlines};
use super::throttle::Throttle;
use super::truth::Truth;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use taintcheck_core::api::{Node, NodeName, Pod};
use taintcheck_core::api_server::{self, StoredPod, Write};
use taintcheck_core::fx::FxBuild;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{Actor, ApiRequest, ApiResult, Config, Effect, Step, WorkId, WorkPhase};
use taintcheck_formats::trace::RequestVerb;

/// The longest chain of forced steps followed without deduplication.
const CHAIN_LIMIT: usize = 1_000;

/// A move of a state (ORACLE-3).
#[derive(Clone, Debug)]
enum Move {
    DeliverNode,
    DeliverPod,
    Step(Step),
    /// A work's step run with the late reading of the shown requests' bucket: where the two
    /// readings disagree, its request may have waited for its token (ORACLE-THROTTLE).
    Waited(Step),
}

impl From<Step> for Move {
    fn from(step: Step) -> Move {
        Move::Step(step)
    }
}

/// Why a behaviour ended: at `at` it owed `output`, which the trace does not show then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Death {
    pub at: Time,
    pub output: Output,
    /// When `at` is the end of a step slack (ORACLE-11): the instant of the work's previous
    /// step, or of the event's emission, that the output had to follow within the slack.
    pub slack_from: Option<Time>,
}

/// The rules every component follows: the controller configuration, the latency bound and
/// what the trace observes.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    pub config: Config,
    /// An API change is delivered, a due timer fires, within this bound. Spec: ORACLE-4.
    pub bound: Duration,
    /// A work goroutine's next step, and an event's delivery, within this. Spec: ORACLE-11.
    pub slack: Duration,
    pub observe: Observe,
    /// `expect`: the controller's successful DELETEs change this behaviour's own view of the
    /// API server (the pod is gone), instead of being matched against trace lines.
    pub explore: bool,
    /// The client's rate limit and the requests the trace has shown (ORACLE-THROTTLE).
    pub throttle: Option<Throttle>,
    /// Drop subsumed states (ORACLE-SUB); off: drop only equal ones.
    pub subsume: bool,
}

impl Machine {
    /// Every move from `s` at `now`, into `out`: an informer delivery (per kind, in order) or
    /// an enabled controller step. Requests in transit and events in flight do not hold it
    /// (ORACLE-11); the work that sent a request waits for its answer. Spec: ORACLE-3.
    fn moves(&self, s: &State, now: Time, sc: &mut Scratch) {
        sc.moves.clear();
        if !s.nodes.is_empty() {
            sc.moves.push(Move::DeliverNode);
        }
        if !s.pods.is_empty() {
            sc.moves.push(Move::DeliverPod);
        }
        s.ctrl.enabled_steps(now, &mut sc.moves);
        if let Some(throttle) = &self.throttle {
            throttle.hold(s, now, &mut sc.moves, |m| match m {
                Move::Step(step) => Some(step),
                _ => None,
            });
            if throttle.unsure(now) {
                let works = sc.moves.iter().filter_map(|m| match m {
                    Move::Step(step) if matches!(step.actor(), Actor::Work(_)) => {
                        Some(Move::Waited(step.clone()))
                    }
                    _ => None,
                });
                let waited: Vec<Move> = works.collect();
                sc.moves.extend(waited);
            }
        }
    }

    /// Follows `s` through steps that are its only move while its pipeline is busy (a chain
    /// no other order can reach differently), without cloning or fingerprinting the states in
    /// between; returns the first state with a choice, a way out, or outputs, its moves left in
    /// `sc.moves`.
    fn chain(&self, mut s: State, now: Time, truth: &Truth, sc: &mut Scratch) -> State {
        // Every step makes progress; the bound only guards against a step that would not.
        for _ in 0..CHAIN_LIMIT {
            self.moves(&s, now, sc);
            let forced = matches!(sc.moves.as_slice(), [Move::Step(_)]) && !self.may_leave(&s, now);
            if !forced {
                return s;
            }
            let m = sc.moves.pop().expect("one move");
            let owed = s.owed.len();
            s = self.apply(s, m, now, truth);
            if s.owed.len() > owed {
                return s;
            }
        }
        self.moves(&s, now, sc);
        s
    }

    /// The states of `states` at `now` worth keeping: those no other subsumes (ORACLE-SUB),
    /// or without subsumption those no other equals.
    fn prune(&self, states: Vec<State>, now: Time) -> Vec<State> {
        if self.subsume {
            prune(states, now)
        } else {
            dedup(states)
        }
    }

    /// `s` after `m`.
    fn apply(&self, mut s: State, m: Move, now: Time, truth: &Truth) -> State {
        let waited = matches!(m, Move::Waited(_));
        match m {
            Move::DeliverNode => s.deliver_node(now),
            Move::DeliverPod => s.deliver_pod(now),
            Move::Step(step) | Move::Waited(step) => {
                let acted = match step.actor() {
                    Actor::Work(id) => Some(id),
                    _ => None,
                };
                let mut effects = Vec::new();
                let ctrl = s.ctrl.make_mut();
                match &self.throttle {
                    Some(throttle) => throttle.lend(ctrl, &step, waited, |ctrl| {
                        ctrl.step(step.clone(), &*s.cache, now, &mut effects)
                    }),
                    None => ctrl.step(step, &*s.cache, now, &mut effects),
                }
                self.absorb(&mut s, effects, now, truth);
                s.track(now, acted);
            }
        }
        s
    }

    /// Every successor of `s` by the moves in `sc.moves`, into `sc.next`, the last one built
    /// from `s` itself (no clone in a chain).
    fn successors(&self, s: State, now: Time, truth: &Truth, sc: &mut Scratch) {
        let Scratch { moves, next } = sc;
        let Some(last) = moves.pop() else {
            return;
        };
        for m in moves.drain(..) {
            next.push(self.apply(s.clone(), m, now, truth));
        }
        next.push(self.apply(s, last, now, truth));
    }

    /// Turns effects into outputs owed or in flight; requests the trace does not observe are
    /// answered at once from the API state (`truth`): the work takes the answer in at its next
    /// step.
    pub fn absorb(&self, s: &mut State, effects: Vec<Effect>, now: Time, truth: &Truth) {
        for e in effects {
            match e {
                Effect::Event(ev) if self.observe.events => s.events.push_back((now, ev)),
                Effect::Api(r) if self.observe.requests => {
                    s.owed.push_back((now, Output::Request(r)))
                }
                _ => {}
            }
        }
        if self.observe.requests {
            return;
        }
        let pending: Vec<ApiRequest> = s.ctrl.pending_requests().cloned().collect();
        for request in pending {
            let result = self.answer(s, &request, now, truth);
            s.ctrl.make_mut().api_responded(request.id, result);
        }
    }

    /// The API server's answer to an unobserved request: the pod the trace shows under that
    /// name (minus the incarnations this behaviour deleted), honouring UID preconditions and
    /// any injected fault.
    fn answer(&self, s: &mut State, r: &ApiRequest, now: Time, truth: &Truth) -> ApiResult {
        if let Some(f) = s.faults.iter_mut().find(|f| {
            f.left > 0
                && f.verb == RequestVerb::from(&r.verb)
                && f.pod.as_ref().is_none_or(|p| *p == r.pod)
        }) {
            f.left -= 1;
            return f.result.clone();
        }
        // The trace does not show this behaviour's own status writes, so resourceVersion
        // preconditions are not compared (an over-approximation: the answer may succeed where
        // the server would have said 409).
        let stored = truth
            .pods
            .get(&r.pod)
            .filter(|p| !s.deleted.contains_key(&p.pod.uid))
            .map(|p| StoredPod {
                pod: &p.pod,
                version: p.version,
                disruption_target: p.disruption_target,
                deletion: None,
                termination_grace: None,
            });
        let unversioned = ApiRequest {
            version: None,
            ..r.clone()
        };
        let next = stored.map(|p| p.version).unwrap_or_default();
        let uid = stored.map(|p| p.pod.uid.clone());
        let nodes = &truth.nodes;
        let (result, write) = api_server::answer(
            &unversioned,
            stored,
            |n| nodes.get(n).map(|n| (**n).clone()),
            next,
        );
        if let (Write::Delete, Some(uid)) = (write, uid) {
            if self.explore {
                s.deleted.insert(uid, (now, now));
                s.pods.push_back(Pending {
                    at: now,
                    key: r.pod.clone(),
                    new: None,
                });
            } else if self.observe.deletions {
                s.owed.push_back((
                    now,
                    Output::Deleted {
                        pod: r.pod.clone(),
                        uid,
                    },
                ));
            }
        }
        result
    }

    /// Whether `s` may leave the instant `now` (ORACLE-4, ORACLE-11): its handlers are idle,
    /// no delivery or timer is at its latency bound, and no request in transit, event in
    /// flight or running work's next step is at its step slack.
    pub fn may_leave(&self, s: &State, now: Time) -> bool {
        let due = |at: Time| at.plus(self.bound) <= now;
        s.ctrl.handlers_idle()
            && s.slack_due(self.slack).all(|at| at > now)
            && !s.undelivered().any(due)
            && s.ctrl
                .timed_queue()
                .works()
                .iter()
                .all(|(id, w)| match w.phase {
                    WorkPhase::Armed => !due(w.fire_at),
                    // The sleep is the work goroutine's own: after it the goroutine runs
                    // within the step slack too (ORACLE-11).
                    WorkPhase::Backoff { until, .. } => {
                        !due(s.sleep_end(*id, until).plus(self.slack))
                    }
                    WorkPhase::Throttled { until, .. } => self
                        .throttle
                        .is_none_or(|t| t.owed_by(until, self.bound) > now),
                    _ => true,
                })
    }

    /// The next instant after `now` at which `s` may or must act silently (ORACLE-5): a
    /// delivery's bound, a timer's due time and its bound (a backoff's with the step slack),
    /// a step slack's end.
    pub fn next_instant(&self, s: &State, now: Time) -> Option<Time> {
        let b = self.bound;
        let deliveries = s.undelivered().map(|at| at.plus(b));
        let timers = s.timers().flat_map(|due| [due, due.plus(b)]);
        let backoffs = s.backoffs().map(|until| until.plus(b).plus(self.slack));
        let slack = s.slack_due(self.slack);
        let throttled = self.throttle.iter().flat_map(|t| t.instants(s, b));
        deliveries
            .chain(timers)
            .chain(backoffs)
            .chain(slack)
            .chain(throttled)
            .filter(|t| *t > now)
            .min()
    }

    /// The earliest instant at which `s` may be forced to act (for waking idle components):
    /// the first instant at which [`Machine::may_leave`] can fail, so that a component woken
    /// and advanced past it has a later one.
    pub fn deadline(&self, s: &State) -> Option<Time> {
        let b = self.bound;
        let works = s.ctrl.timed_queue().works().values();
        let armed = works.filter_map(|w| match w.phase {
            WorkPhase::Armed => Some(w.fire_at),
            _ => None,
        });
        let bounds = s.undelivered().chain(armed).map(|t| t.plus(b));
        let backoffs = s.backoffs().map(|until| until.plus(b).plus(self.slack));
        let throttled = self.throttle.iter().flat_map(|t| t.deadlines(s, b));
        bounds
            .chain(backoffs)
            .chain(s.slack_due(self.slack))
            .chain(throttled)
            .min()
    }

    /// Every state reachable from `from` by silent moves at `now` that may leave `now`.
    /// Behaviours that must produce an output at `now` end there (recorded in `death`).
    pub fn settle(
        &self,
        mut from: Vec<State>,
        now: Time,
        truth: &Truth,
        search: &mut Search,
        death: &mut Option<Death>,
    ) -> Vec<State> {
        let Search {
            stack,
            seen,
            sc,
            expanded,
            limit,
            over,
        } = search;
        let mut visited = Visited::new(seen, self.subsume);
        visited.admit(&mut from, stack);
        let mut out = from;
        while let Some(s) = stack.pop() {
            *expanded += 1;
            if stack.len() + out.len() > *limit {
                *over = Some(now);
                stack.clear();
                break;
            }
            if let Some((head, from)) = self.overdue(&s, now) {
                record(death, now, head, from);
                continue;
            }
            let s = self.chain(s, now, truth, sc);
            if let Some((head, from)) = self.overdue(&s, now) {
                record(death, now, head, from);
                continue;
            }
            let leave = self.may_leave(&s, now);
            if sc.moves.is_empty() {
                if leave {
                    out.push(s);
                }
                continue;
            }
            if leave {
                out.push(s.clone());
            }
            self.successors(s, now, truth, sc);
            visited.admit(&mut sc.next, stack);
        }
        out
    }

    /// The states at `to` reachable from `from` (at `now`) with no output in between: silent
    /// moves at `now`, at every candidate instant in between, and none yet at `to`.
    pub fn advance(
        &self,
        from: Vec<State>,
        now: Time,
        to: Time,
        truth: &Truth,
        search: &mut Search,
        death: &mut Option<Death>,
    ) -> Vec<State> {
        if to <= now {
            return from;
        }
        let mut agenda: BTreeMap<Time, Vec<State>> = BTreeMap::new();
        let mut arrived = Vec::new();
        let schedule = |s: State,
                        after: Time,
                        agenda: &mut BTreeMap<Time, Vec<State>>,
                        arrived: &mut Vec<State>| {
            match self.next_instant(&s, after).filter(|t| *t < to) {
                Some(t) => agenda.entry(t).or_default().push(s),
                None => arrived.push(s),
            }
        };
        for s in self.settle(self.prune(from, now), now, truth, search, death) {
            schedule(s, now, &mut agenda, &mut arrived);
        }
        while let Some((at, batch)) = agenda.pop_first() {
            for s in self.settle(self.prune(batch, at), at, truth, search, death) {
                schedule(s, at, &mut agenda, &mut arrived);
            }
            let waiting = agenda.values().map(Vec::len).sum::<usize>() + arrived.len();
            if search.over.is_none() && waiting > search.limit {
                search.over = Some(at);
            }
            if search.over.is_some() {
                return Vec::new();
            }
        }
        if search.over.is_some() {
            return Vec::new();
        }
        self.prune(arrived, to)
    }

    /// An output `s` can no longer show after `now`: a request in transit or an event in
    /// flight whose step slack ends by `now`, with the instant it was produced (a request's
    /// only under a step slack: without one it is due at the instant of its step). Of several,
    /// the one produced first; on a tie the event, which a work emits before its requests.
    fn overdue(&self, s: &State, now: Time) -> Option<(Output, Option<Time>)> {
        let late = |at: Time| at.plus(self.slack) <= now;
        let event = s
            .events
            .iter()
            .filter(|(at, _)| late(*at))
            .min_by_key(|(at, _)| *at);
        let owed = s.owed.iter().find(|(at, _)| late(*at));
        match (event, owed) {
            (Some((e, event)), owed) if owed.is_none_or(|(o, _)| e <= o) => {
                Some((Output::Event(event.clone()), Some(*e)))
            }
            (_, Some((at, output))) => {
                let from = (self.slack > Duration::ZERO).then_some(*at);
                Some((output.clone(), from))
            }
            _ => None,
        }
    }

    /// The states in which `seen` is the next output, reached by silent moves at `now`.
    /// `alternatives` collects the outputs the frontier could have shown instead.
    pub fn produce(
        &self,
        from: Vec<State>,
        now: Time,
        truth: &Truth,
        seen: &Seen,
        search: &mut Search,
        alternatives: &mut Vec<Output>,
    ) -> Vec<State> {
        let Search {
            stack,
            seen: fingerprints,
            sc,
            expanded,
            limit,
            over,
        } = search;
        let mut visited = Visited::new(fingerprints, self.subsume);
        let mut from = self.prune(from, now);
        visited.admit(&mut from, stack);
        let mut out = from;
        let in_flight = |s: &State| s.events.iter().position(|(_, e)| seen.shows(e));
        let in_transit = |s: &State| s.owed.iter().any(|(_, o)| o.matches(seen));
        while let Some(mut s) = stack.pop() {
            *expanded += 1;
            if stack.len() + out.len() > *limit {
                *over = Some(now);
                stack.clear();
                return Vec::new();
            }
            if let Some(i) = in_flight(&s) {
                s.events.remove(i);
                out.push(s);
                continue;
            }
            if in_transit(&s) {
                // Each owed output the line shows is one explanation (two works' requests may
                // look alike); a work's own outputs are owed one at a time, in order.
                let mut hits: Vec<usize> = (0..s.owed.len())
                    .filter(|i| s.owed[*i].1.matches(seen))
                    .collect();
                let last = hits.pop().expect("in transit");
                for i in hits {
                    out.push(shown(s.clone(), i, seen));
                }
                out.push(shown(s, last, seen));
                continue;
            }
            for (_, o) in &s.owed {
                if !alternatives.contains(o) {
                    alternatives.push(o.clone());
                }
            }
            let s = self.chain(s, now, truth, sc);
            if in_transit(&s) || in_flight(&s).is_some() {
                stack.push(s);
                continue;
            }
            self.successors(s, now, truth, sc);
            visited.admit(&mut sc.next, stack);
        }
        dedup(out)
    }

    /// The API server answered the trace's request `id`: delivered to the work that sent it.
    /// A state that owes outputs, or whose request is not pending, does not explain it.
    pub fn respond(&self, from: Vec<State>, now: Time, id: u64, result: &ApiResult) -> Vec<State> {
        let mut out = Vec::new();
        for mut s in from {
            let Some(request) = s.sent.remove(&id) else {
                // Sent by an incarnation that has since restarted: nobody listens.
                out.push(s);
                continue;
            };
            if !s.ctrl.pending_requests().any(|r| r.id == request) {
                continue;
            }
            s.ctrl.make_mut().api_responded(request, result.clone());
            s.track(now, Some(WorkId(request.0)));
            out.push(s);
        }
        dedup(out)
    }

    /// The controller restarted: every state loses its memory and its informers relist the
    /// API state (`relist`), delivered as additions within the bound. Owed outputs were lost
    /// with the process only if never shown, so such states end here.
    pub fn restart(
        &self,
        from: Vec<State>,
        now: Time,
        nodes: &[Arc<Node>],
        pods: &[Arc<Pod>],
    ) -> Vec<State> {
        let mut out = Vec::new();
        for mut s in from {
            if !s.owed.is_empty() {
                continue;
            }
            s.ctrl.make_mut().restarted();
            s.cache = Arc::default();
            s.nodes.clear();
            s.pods.clear();
            s.sent.clear();
            s.slept.clear();
            // The recorder's queue goes with the process: events in flight may be lost.
            s.events.clear();
            s.running.clear();
            for n in nodes {
                s.nodes.push_back(Pending {
                    at: now,
                    key: n.name.clone(),
                    new: Some(n.clone()),
                });
            }
            for p in pods.iter().filter(|p| !s.deleted.contains_key(&p.uid)) {
                s.pods.push_back(Pending {
                    at: now,
                    key: p.key.clone(),
                    new: Some(p.clone()),
                });
            }
            out.push(s);
        }
        dedup(out)
    }

    /// Brings a node into a state's view as if the controller had long observed it: its changes
    /// `known` (instant, object; the last one present) observed when they were made, so the
    /// arrival record dates each taint from its change (CORE-S9), then handled (so
    /// `taintedNodes` knows its taints), before any pod of the component is bound to it in the
    /// cache. The handling runs to completion in the core's fixed step order.
    pub fn introduce_node<'a>(
        &self,
        s: &mut State,
        name: &NodeName,
        known: impl IntoIterator<Item = &'a (Time, Option<Arc<Node>>)>,
        now: Time,
        truth: &Truth,
    ) {
        for (at, node) in known {
            s.observe_node(name.clone(), node.clone(), *at);
        }
        let mut steps = Vec::new();
        while !s.pipeline_idle() {
            steps.clear();
            s.ctrl.enabled_steps(now, &mut steps);
            let Some(step) = steps.first().cloned() else {
                break;
            };
            let mut effects = Vec::new();
            s.ctrl.make_mut().step(step, &*s.cache, now, &mut effects);
            self.absorb(s, effects, now, truth);
            s.track(now, None);
        }
    }
}

/// `s` once the trace showed its owed output `i` (a request is matched to the trace's id).
fn shown(mut s: State, i: usize, seen: &Seen) -> State {
    if let Some((_, Output::Request(r))) = s.owed.remove(i) {
        if let Seen::Request { id, .. } = seen {
            s.sent.insert(*id, r.id);
        }
    }
    s
}

/// Buffers the searches of an oracle reuse from state to state and from search to search, so
/// that a move allocates only what its state holds. Empty between searches.
#[derive(Clone, Debug)]
pub struct Search {
    /// States met and not yet expanded.
    stack: Vec<State>,
    /// The shapes [`Visited`] keeps.
    seen: Met,
    sc: Scratch,
    /// States expanded by every search so far: the oracle's work, counted rather than timed.
    pub expanded: u64,
    /// The most states a search may hold at once, met and not expanded or kept: the
    /// frontier's own limit (`max_states`), so that the search between two lines costs no more
    /// than the frontier at a line may (ORACLE-7).
    limit: usize,
    /// The instant at which a search passed `limit` and gave up: the component has no
    /// verdict (inconclusive).
    over: Option<Time>,
}

impl Search {
    /// Buffers for searches that hold at most `limit` states at once.
    pub fn new(limit: usize) -> Search {
        Search {
            stack: Vec::new(),
            seen: Met::default(),
            sc: Scratch::default(),
            expanded: 0,
            limit,
            over: None,
        }
    }

    /// The instant at which the last search passed its limit, if it did; given once.
    pub fn gave_up(&mut self) -> Option<Time> {
        std::mem::take(&mut self.over)
    }
}

/// The buffers of one state's expansion.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// The moves of the state [`Machine::chain`] stopped at.
    moves: Vec<Move>,
    /// Successors not yet admitted.
    next: Vec<State>,
}

/// The states a search at one instant has met, by shape (ORACLE-SUB): a state is admitted
/// unless one met before has the same shape and no earlier deadlines. That matters only where
/// paths can meet, that is after a state had two successors: until then the search is one
/// path, on which every move makes progress, so its states are pushed without looking at them
/// (at most [`CHAIN_LIMIT`] in a row, in case a move did not make progress).
struct Visited<'a> {
    seen: &'a mut Met,
    /// Off: a state met before stops only an equal one.
    subsume: bool,
    branched: bool,
    unchecked: usize,
}

/// The shapes met and the deadlines of each state met with that shape.
type Met = HashMap<u64, SmallVec<[Deadlines; 1]>, FxBuild>;

impl<'a> Visited<'a> {
    /// A search that has met nothing yet, in `seen`'s buffer.
    fn new(seen: &'a mut Met, subsume: bool) -> Visited<'a> {
        // Clearing costs the table's capacity: one a large frontier grew is let go.
        if seen.capacity() > 4096 {
            *seen = HashMap::default();
        }
        seen.clear();
        Visited {
            seen,
            subsume,
            branched: false,
            unchecked: 0,
        }
    }

    /// Moves the states of `next` not subsumed by one met before onto `stack`.
    fn admit(&mut self, next: &mut Vec<State>, stack: &mut Vec<State>) {
        if !self.branched && next.len() == 1 && stack.is_empty() && self.unchecked < CHAIN_LIMIT {
            self.unchecked += 1;
            stack.append(next);
            return;
        }
        self.branched = true;
        let mut deadlines = Deadlines::new();
        for s in next.drain(..) {
            let met = self
                .seen
                .entry(shape(&s, true, &mut deadlines))
                .or_default();
            let stops = |m: &Deadlines| match self.subsume {
                true => covers(m, &deadlines),
                false => *m == deadlines,
            };
            if !met.iter().any(stops) {
                met.push(std::mem::take(&mut deadlines));
                stack.push(s);
            }
        }
    }
}

/// Keeps the death the violation names: the latest, for it explains the most of the trace; at
/// one instant, a step a work owed (a request, a deletion) before an event already emitted that
/// the recorder had not delivered yet (a behaviour that made one more output than the trace
/// shows), and a step the step slack forced (with its cause) before one without.
fn record(death: &mut Option<Death>, at: Time, output: Output, slack_from: Option<Time>) {
    let rank = |at: Time, output: &Output, slack_from: Option<Time>| {
        (
            at,
            !matches!(output, Output::Event(_)),
            slack_from.is_some(),
        )
    };
    let new = rank(at, &output, slack_from);
    if death
        .as_ref()
        .is_none_or(|d| rank(d.at, &d.output, d.slack_from) <= new)
    {
        *death = Some(Death {
            at,
            output,
            slack_from,
        });
    }
}
