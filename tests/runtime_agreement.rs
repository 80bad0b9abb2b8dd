//! Agreement between the runtime and the core, checked by the conformance oracle: random
//! scenarios run on the reference runtime (real threads, serial virtual clock), and the oracle
//! must find, for every trace, a behaviour of the core's composed `Controller` under the same
//! profile that explains it (every Event and request in order, every API change and answer
//! taken as it came, internal steps silent). The lags are 0, so the latency bound is 0.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::collections::BTreeMap;
use taintcheck_core::api::{Node, Pod, PodKey, TaintEffect, Toleration, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::scenario::{Admission, Op, PodSpec, RuntimeKnobs, Scenario, TimedOp};
use taintcheck_formats::taint_syntax::parse_spec;
use taintcheck_formats::trace::{RequestVerb, ResponseResult, TraceEvent, TraceRecord};
use taintcheck_oracle::{Error, Options, Oracle};
use taintcheck_runtime::driver::{run_scenario, ClockKind};

/// One worker, as in the runtime runs below; sharding itself is covered by the shuttle tests.
const WORKERS: usize = 1;

/// Checks a runtime trace with the oracle; `Err` names the first line no core behaviour
/// explains, and why.
fn replay(trace: &[TraceRecord], profile: Profile, until: Time) -> Result<(), Error> {
    let mut options = Options::new(profile, Duration::ZERO);
    options.workers = WORKERS;
    Oracle::check(options, trace, Some(until)).map(drop)
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
        if let Err(e) = replay(&report.records, profile, scenario.until) {
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
            node: None,
            resource_version: None,
        },
    });
    match replay(&trace, Profile::latest(), t) {
        Err(Error::Violation(v)) => {
            assert_eq!(v.line, Some(trace.len()), "{v}");
            assert!(v.message.starts_with("default/p0 deleted at"), "{v}");
        }
        other => panic!("{other:?}"),
    }
}
