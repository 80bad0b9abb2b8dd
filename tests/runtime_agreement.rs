//! Agreement between the runtime and the core: random scenarios run on the reference runtime
//! (real threads, serial virtual clock), and the observed trace is replayed in the core's
//! composed `Controller`. Every observable the runtime produced (each Event, each request, in
//! order) must be an effect of some core step sequence under the same profile, given the same
//! API changes and API answers; internal steps (dispatch, worker phases, timers, completions)
//! are silent and explored exhaustively between observations (a frontier of states).
//!
//! When the oracle lands this check becomes "the oracle accepts every runtime trace".

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::collections::{BTreeMap, HashSet, VecDeque};
use taintcheck_model::api::{Node, Pod, PodKey, TaintEffect, Toleration, Uid};
use taintcheck_model::core::driver::Cluster;
use taintcheck_model::core::{ApiResult, Config, Controller, Effect, RequestId, Verb};
use taintcheck_model::profile::Profile;
use taintcheck_model::scenario::{Admission, Op, PodSpec, RuntimeKnobs, Scenario, TimedOp};
use taintcheck_model::taint_syntax::parse_spec;
use taintcheck_model::time::{Duration, Time};
use taintcheck_model::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use taintcheck_runtime::driver::{run_scenario, ClockKind};

/// One worker: the replay explores every interleaving of the dispatchers, the worker and the
/// timers, which stays small; sharding itself is covered by the shuttle tests.
const WORKERS: usize = 1;
/// Far more replay states than a small scenario needs; exceeding it fails the case loudly.
const MAX_FRONTIER: usize = 200_000;

/// One replay state: the controller, its caches (the API server's state, as lags are 0), the
/// observables a step emitted that the trace has not shown yet, and trace request ids.
#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    controller: Controller,
    cluster: Cluster,
    expected: VecDeque<Effect>,
    requests: BTreeMap<u64, RequestId>,
}

fn observable(e: &Effect) -> bool {
    matches!(e, Effect::Event(_) | Effect::Api(_))
}

/// Does the core effect `e` show up as trace record `r`?
fn shows_as(e: &Effect, r: &TraceEvent) -> bool {
    match (e, r) {
        (
            Effect::Event(ev),
            TraceEvent::Event {
                namespace,
                name,
                reason,
                message,
            },
        ) => {
            *ev.pod.namespace == **namespace
                && *ev.pod.name == **name
                && ev.reason() == reason
                && ev.message() == *message
        }
        (
            Effect::Api(req),
            TraceEvent::Request {
                verb,
                namespace,
                name,
                uid,
                ..
            },
        ) => {
            let v = match req.verb {
                Verb::Get => RequestVerb::Get,
                Verb::PatchDisruptionTarget => RequestVerb::Patch,
                Verb::Delete => RequestVerb::Delete,
            };
            v == *verb
                && *req.pod.namespace == **namespace
                && *req.pod.name == **name
                && req.uid == *uid
        }
        _ => false,
    }
}

/// Every state reachable through silent steps (steps that emit no Event and no request).
fn closure(start: HashSet<State>, now: Time) -> HashSet<State> {
    let mut seen = start.clone();
    let mut stack: Vec<State> = start.into_iter().collect();
    let mut steps = Vec::new();
    while let Some(s) = stack.pop() {
        if !s.expected.is_empty() {
            continue;
        }
        steps.clear();
        s.controller.enabled_steps(now, &mut steps);
        for step in steps.iter().cloned() {
            let mut next = s.clone();
            let mut out = Vec::new();
            next.controller.step(step, &next.cluster, now, &mut out);
            if out.iter().any(observable) {
                continue;
            }
            if seen.insert(next.clone()) {
                stack.push(next);
            }
        }
        assert!(seen.len() <= MAX_FRONTIER, "replay frontier exploded");
    }
    seen
}

/// The states that explain controller output `record` next.
fn emit(states: &HashSet<State>, record: &TraceRecord) -> HashSet<State> {
    let now = record.t;
    let mut out = HashSet::new();
    let mut steps = Vec::new();
    for s in states {
        let note_request = |st: &mut State, e: &Effect| {
            if let (Effect::Api(req), TraceEvent::Request { id, .. }) = (e, &record.event) {
                st.requests.insert(*id, req.id);
            }
        };
        if let Some(front) = s.expected.front() {
            if shows_as(front, &record.event) {
                let mut next = s.clone();
                let e = next.expected.pop_front().expect("front exists");
                note_request(&mut next, &e);
                out.insert(next);
            }
            continue;
        }
        steps.clear();
        s.controller.enabled_steps(now, &mut steps);
        for step in steps.iter().cloned() {
            let mut next = s.clone();
            let mut effects = Vec::new();
            next.controller.step(step, &next.cluster, now, &mut effects);
            let mut shown: VecDeque<Effect> = effects.into_iter().filter(observable).collect();
            if shown.front().is_some_and(|e| shows_as(e, &record.event)) {
                let e = shown.pop_front().expect("front exists");
                note_request(&mut next, &e);
                next.expected = shown;
                out.insert(next);
            }
        }
    }
    out
}

/// Applies an input (an API change, an API answer, a restart) to every state.
fn input(states: HashSet<State>, record: &TraceRecord) -> HashSet<State> {
    let now = record.t;
    states
        .into_iter()
        .filter_map(|mut s| {
            let c = &mut s.controller;
            let cluster = &mut s.cluster;
            match &record.event {
                TraceEvent::NodeAdded { node, .. } | TraceEvent::NodeModified { node, .. } => {
                    let old = cluster.nodes.insert(node.name.clone(), node.clone());
                    c.node_observed(old.as_ref(), Some(node));
                }
                TraceEvent::NodeDeleted { name, .. } => {
                    let old = cluster.nodes.remove(name);
                    c.node_observed(old.as_ref(), None);
                }
                TraceEvent::PodAdded { pod, .. } | TraceEvent::PodModified { pod, .. } => {
                    let old = cluster.pods.insert(pod.key.clone(), pod.clone());
                    c.pod_observed(old.as_ref(), Some(pod));
                }
                TraceEvent::PodDeleted {
                    namespace, name, ..
                } => {
                    let old = cluster.pods.remove(&PodKey::new(namespace, name));
                    c.pod_observed(old.as_ref(), None);
                }
                TraceEvent::Response { id, result, uid } => {
                    if !s.expected.is_empty() {
                        return None;
                    }
                    let request = *s.requests.get(id)?;
                    let result = match result {
                        ResponseResult::Ok => ApiResult::Ok(uid.clone()),
                        ResponseResult::NotFound => ApiResult::NotFound,
                        ResponseResult::PreconditionFailed => ApiResult::PreconditionFailed,
                        ResponseResult::Failed => ApiResult::Failed,
                    };
                    let mut effects = Vec::new();
                    c.api_responded(request, result, &*cluster, now, &mut effects);
                    s.expected = effects.into_iter().filter(observable).collect();
                }
                TraceEvent::ControllerRestarted => {
                    c.restarted();
                    s.requests.clear();
                    s.expected.clear();
                    for node in cluster.nodes.values() {
                        c.node_observed(None, Some(node));
                    }
                    for pod in cluster.pods.values() {
                        c.pod_observed(None, Some(pod));
                    }
                }
                _ => {}
            }
            Some(s)
        })
        .collect()
}

/// Replays a runtime trace in the core; `Err` names the first record no core behaviour explains.
fn replay(trace: &[TraceRecord], profile: Profile) -> Result<(), String> {
    let config = Config {
        workers: WORKERS,
        ..Config::new(profile)
    };
    let start = State {
        controller: Controller::new(config),
        cluster: Cluster::default(),
        expected: VecDeque::new(),
        requests: BTreeMap::new(),
    };
    let mut states = HashSet::from([start]);
    for (i, record) in trace.iter().enumerate() {
        let controller_output = matches!(
            record.event,
            TraceEvent::Event { .. } | TraceEvent::Request { .. }
        );
        states = match record.event {
            TraceEvent::Note { .. } | TraceEvent::Header { .. } => states,
            _ if controller_output => emit(&closure(states, record.t), record),
            // An answer or a restart lands on whatever the controller was doing; silent steps
            // may then happen at this instant or later.
            TraceEvent::Response { .. } | TraceEvent::ControllerRestarted => {
                closure(input(states, record), record.t)
            }
            _ => closure(input(closure(states, record.t), record), record.t),
        };
        if states.is_empty() {
            return Err(format!(
                "record {i} ({} {}) is not a core behaviour under {}",
                record.t, record.event, profile.name
            ));
        }
    }
    Ok(())
}

const TAINTS: [&str; 2] = ["k1=x:NoExecute", "k2=y:NoExecute"];

fn toleration_menu() -> Vec<Toleration> {
    let ne = Some(TaintEffect::NoExecute);
    vec![
        Toleration::exists("k1", ne.clone(), Some(100)),
        Toleration::exists("k1", ne.clone(), None),
        Toleration::exists("k2", ne.clone(), Some(50)),
        Toleration::exists("k2", ne, Some(0)),
    ]
}

fn pod_key(i: usize) -> PodKey {
    PodKey::new("default", &format!("p{i}"))
}

fn node_name(i: usize) -> &'static str {
    ["n1", "n2"][i % 2]
}

/// A small random scenario: 2 nodes, up to 3 pods, up to 6 operations in 400 s.
fn scenarios() -> impl Strategy<Value = Scenario> {
    let pod = (
        proptest::option::of(0usize..2),
        proptest::collection::vec(0usize..4, 0..3),
    );
    let op = (0u64..400, 0usize..9, 0usize..4, 0usize..2, 0i64..120);
    (
        proptest::collection::vec(pod, 1..4),
        proptest::collection::vec(op, 1..7),
    )
        .prop_map(|(pods, ops)| {
            let menu = toleration_menu();
            let n = pods.len();
            let pods = pods
                .into_iter()
                .enumerate()
                .map(|(i, (node, tols))| PodSpec {
                    pod: Pod {
                        key: pod_key(i),
                        uid: Uid(format!("p{i}-1").into()),
                        node_name: node.map(|k| node_name(k).into()),
                        tolerations: tols.into_iter().map(|t| menu[t].clone()).collect(),
                    },
                    daemon_set: false,
                })
                .collect();
            let mut ops: Vec<TimedOp> = ops
                .into_iter()
                .enumerate()
                .map(|(line, (at, kind, a, b, secs))| {
                    let key = pod_key(a % n);
                    let node = node_name(b).into();
                    let spec = |s: &str| parse_spec(s).expect("valid taint spec");
                    let op = match kind {
                        0 | 1 => Op::Taint {
                            node,
                            spec: spec(TAINTS[a % 2]),
                        },
                        2 => Op::Taint {
                            node,
                            spec: spec(&format!("k{}:NoExecute-", a % 2 + 1)),
                        },
                        3 => Op::SetTolerationSeconds {
                            key,
                            index: 0,
                            seconds: Some(secs),
                        },
                        4 => Op::DeletePod(key),
                        5 => Op::RecreatePod {
                            key,
                            uid: Uid(format!("p{}-{}", a % n, line + 2).into()),
                            node: Some(node),
                            tolerations: None,
                        },
                        6 => Op::BindPod { key, node },
                        7 => Op::RestartController,
                        _ => Op::FailRequests {
                            verb: RequestVerb::Delete,
                            pod: None,
                            times: (secs % 7) as u32,
                            result: ResponseResult::Failed,
                        },
                    };
                    TimedOp {
                        at: Time(at as i64 * 1000 + 500),
                        line,
                        op,
                    }
                })
                .collect();
            ops.sort_by_key(|o| o.at);
            Scenario {
                name: "generated".into(),
                description: String::new(),
                refs: Vec::new(),
                admission: Admission {
                    default_toleration_seconds: false,
                    ..Admission::default()
                },
                runtime: RuntimeKnobs {
                    workers: WORKERS,
                    ..RuntimeKnobs::default()
                },
                until: Time(600_000),
                nodes: ["n1", "n2"]
                    .map(|n| Node {
                        name: n.into(),
                        taints: Vec::new(),
                    })
                    .to_vec(),
                pods,
                ops,
                expect: BTreeMap::new(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(debug_assertions) { 3 } else { 12 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_runtime_trace_is_a_core_behaviour(scenario in scenarios(), p in 0usize..3) {
        let profile = Profile::by_name(Profile::NAMES[p]).unwrap();
        let report = run_scenario(&scenario, profile, ClockKind::Virtual);
        if let Err(e) = replay(&report.records, profile) {
            let timeline = taintcheck_runtime::timeline::render(&report.records);
            prop_assert!(false, "{e}\n{timeline}");
        }
    }
}

/// The check is not vacuous: a trace with a deletion the controller never decided is refused.
#[test]
fn a_fabricated_deletion_is_refused() {
    let mut scenario = scenarios()
        .new_tree(&mut proptest::test_runner::TestRunner::deterministic())
        .unwrap()
        .current();
    scenario.ops.clear();
    let report = run_scenario(&scenario, Profile::latest(), ClockKind::Virtual);
    let mut trace = report.records;
    let t = trace.last().unwrap().t.plus(Duration(1));
    trace.push(TraceRecord {
        t,
        event: TraceEvent::Request {
            id: 999,
            verb: RequestVerb::Delete,
            namespace: "default".into(),
            name: "p0".into(),
            uid: None,
        },
    });
    let err = replay(&trace, Profile::latest()).unwrap_err();
    assert!(
        err.starts_with(&format!("record {}", trace.len() - 1)),
        "{err}"
    );
}
