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
use super::truth::{PodStatus, Truth};
use super::{Options, Oracle, Result};
use crate::api::{PodKey, Uid};
use crate::core::ApiResult;
use crate::profile::Profile;
use crate::scenario::{Op, Scenario};
use crate::time::{Duration, Time};
use crate::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

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

/// The envelope of `scenario` under `profile` with latency bound `bound`, given the trace of a
/// reference run of it (the runtime's), from which only the environment's changes are used.
pub fn envelope(
    scenario: &Scenario,
    reference: &[TraceRecord],
    profile: Profile,
    bound: Duration,
) -> Result<Vec<PodEnvelope>> {
    let env = environment(reference);
    let mut options = Options::new(profile, bound);
    options.observe = Some(Observe::default());
    options.explore = true;
    options.workers = scenario.runtime.workers;
    let mut oracle = Oracle::with_options(options);
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
    let mut incarnations: BTreeMap<PodKey, BTreeSet<Uid>> = BTreeMap::new();
    for r in &env {
        while faults.last().is_some_and(|(at, _)| *at <= r.t) {
            let (at, fault) = faults.pop().expect("checked");
            oracle.inject(fault, at)?;
        }
        if let TraceEvent::PodAdded { pod, .. } = &r.event {
            incarnations
                .entry(pod.key.clone())
                .or_default()
                .insert(pod.uid.clone());
        }
        oracle.feed(r)?;
    }
    oracle.close(scenario.until)?;

    let latency = scenario.runtime.api_latency;
    let ops = profile.comparison_operators;
    // The client's rate limit: every eviction may wait behind every other's requests.
    let throttled = scenario.runtime.rate_limit.map(|limit| {
        let evictions = incarnations.values().map(BTreeSet::len).sum();
        (
            limit,
            super::throttle::longest_wait(limit, &profile, evictions),
        )
    });
    let mut out = Vec::new();
    for (key, uids) in incarnations {
        let states = oracle
            .components
            .get(&key)
            .map(|c| c.states.as_slice())
            .unwrap_or_default();
        for uid in uids {
            let times: Vec<Option<Time>> = states
                .iter()
                .map(|s| s.deleted.get(&uid).map(|t| t.plus(latency)))
                .collect();
            let deleted: Vec<Time> = times.iter().flatten().copied().collect();
            let wait = throttled.map_or(Duration::ZERO, |(_, wait)| wait);
            let latest = deleted.iter().max().map(|t| t.plus(wait));
            let (from, to) = (deleted.iter().min(), latest.as_ref());
            let outcome = match (from, to) {
                (Some(&from), Some(&to)) if deleted.len() == times.len() => {
                    Outcome::MustDelete { from, to }
                }
                (Some(&from), Some(&to)) => Outcome::MayDelete { from, to },
                _ => Outcome::MustNotDelete,
            };
            let at = match outcome {
                Outcome::MustDelete { from, .. } | Outcome::MayDelete { from, .. } => from,
                Outcome::MustNotDelete => scenario.until,
            };
            let truth = truth_at(&env, &key, &uid, at);
            let why = truth.why(&key, ops);
            let because = match why.earliest() {
                Some(_) => why.to_string(),
                None => format!("a deletion scheduled earlier is not cancelled although {why}"),
            };
            let because = match throttled {
                Some((limit, wait)) if wait > Duration::ZERO => format!(
                    "{because}; up to {} later while its requests wait for the client's tokens \
                     ({limit})",
                    super::truth::seconds_text(wait)
                ),
                _ => because,
            };
            let reason = match outcome {
                Outcome::MustDelete { .. } => because,
                Outcome::MayDelete { .. } => format!(
                    "legal behaviours differ (interleavings of the controller's steps and, \
                     within the latency bound of {}, of its informers): {because}",
                    super::truth::seconds_text(bound)
                ),
                Outcome::MustNotDelete => match truth.uid(&key) {
                    Some(u) if *u == uid => match why.earliest() {
                        Some(e) if e <= scenario.until => format!(
                            "{why}, yet no legal behaviour of {} deletes it by {}",
                            profile.name, scenario.until
                        ),
                        _ => why.to_string(),
                    },
                    _ => "the scenario itself removes it first".to_string(),
                },
            };
            out.push(PodEnvelope {
                pod: key.clone(),
                uid,
                outcome,
                reason,
            });
        }
    }
    Ok(out)
}

/// The reference trace's environment: API changes and restarts, without the changes the
/// controller's own successful DELETEs caused (those depend on the behaviour explored).
fn environment(reference: &[TraceRecord]) -> Vec<TraceRecord> {
    let mut deletes: BTreeSet<u64> = BTreeSet::new();
    let mut removed: BTreeSet<Uid> = BTreeSet::new();
    // A DELETE's response names the incarnation it removed; the API lines about it between
    // the request and the response (and later ones) are the controller's doing.
    let mut pending_lines: Vec<usize> = Vec::new();
    let mut caused: BTreeSet<usize> = BTreeSet::new();
    for (i, r) in reference.iter().enumerate() {
        match &r.event {
            TraceEvent::Request {
                id,
                verb: RequestVerb::Delete,
                ..
            } => {
                deletes.insert(*id);
            }
            TraceEvent::Response {
                id,
                result: ResponseResult::Ok,
                uid: Some(uid),
                ..
            } if deletes.remove(id) => {
                removed.insert(uid.clone());
                for j in pending_lines.drain(..) {
                    if pod_uid(&reference[j].event) == Some(uid) {
                        caused.insert(j);
                    }
                }
            }
            TraceEvent::PodModified {
                terminating: true, ..
            }
            | TraceEvent::PodDeleted { .. } => {
                if pod_uid(&r.event).is_some_and(|u| removed.contains(u)) {
                    caused.insert(i);
                } else if !deletes.is_empty() {
                    pending_lines.push(i);
                }
            }
            _ => {}
        }
    }
    reference
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !caused.contains(i)
                && matches!(
                    r.event,
                    TraceEvent::Header { .. }
                        | TraceEvent::NodeAdded { .. }
                        | TraceEvent::NodeModified { .. }
                        | TraceEvent::NodeDeleted { .. }
                        | TraceEvent::PodAdded { .. }
                        | TraceEvent::PodModified { .. }
                        | TraceEvent::PodDeleted { .. }
                        | TraceEvent::ControllerRestarted
                )
        })
        .map(|(_, r)| r.clone())
        .collect()
}

fn pod_uid(e: &TraceEvent) -> Option<&Uid> {
    match e {
        TraceEvent::PodModified { pod, .. } | TraceEvent::PodAdded { pod, .. } => Some(&pod.uid),
        TraceEvent::PodDeleted { uid, .. } => Some(uid),
        _ => None,
    }
}

/// The API state of the environment at `at`, with the incarnation `uid` of `key` as the pod
/// the reason is about while it exists.
fn truth_at(env: &[TraceRecord], key: &PodKey, uid: &Uid, at: Time) -> Truth {
    let mut truth = Truth::default();
    for r in env.iter().take_while(|r| r.t <= at) {
        match &r.event {
            TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                truth.put_node(Arc::new(node.clone()), r.t)
            }
            TraceEvent::NodeDeleted { name, .. } => {
                truth.remove_node(name);
            }
            TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. }
                if pod.key != *key || pod.uid == *uid =>
            {
                truth.put_pod(Arc::new(pod.clone()), PodStatus::default(), r.t);
            }
            TraceEvent::PodDeleted {
                namespace, name, ..
            } => {
                let gone = PodKey::new(namespace, name);
                if truth.uid(&gone) == pod_uid(&r.event) {
                    truth.remove_pod(&gone);
                }
            }
            _ => {}
        }
    }
    truth
}

fn display<S: serde::Serializer, T: fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
