//! The oracle tests' scenarios: the corpus, and a seeded random generator (a seed names a
//! scenario), shared by `tests/oracle.rs` and `tests/oracle_subsumption.rs`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_formats::scenario::{
    parse_scenario, Admission, ObjectKind, Op, PodSpec, RuntimeKnobs, Scenario, TimedOp,
};
use taintcheck_formats::taint_syntax::TaintSpec;
use taintcheck_formats::trace::{RequestVerb, ResponseResult};

pub fn corpus() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let file = p.display().to_string();
            parse_scenario(&file, &std::fs::read_to_string(p).unwrap()).unwrap()
        })
        .collect()
}

pub fn profiles() -> [Profile; 3] {
    Profile::NAMES.map(|n| Profile::by_name(n).unwrap())
}

pub fn random_count() -> u64 {
    std::env::var("TAINTCHECK_RANDOM_SCENARIOS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}
/// A small deterministic generator (xorshift), so a seed names a scenario.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const KEYS: [&str; 3] = ["node.kubernetes.io/unreachable", "maintenance", "gpu"];

pub fn taint(key: &str, effect: TaintEffect) -> Taint {
    Taint::new(key, "", effect)
}

pub fn toleration(rng: &mut Rng) -> Toleration {
    let seconds = rng.pick(&[None, Some(0), Some(5), Some(30), Some(60), Some(300)]);
    match rng.below(4) {
        0 => Toleration::exists("", None, None),
        _ => Toleration::exists(rng.pick(&KEYS), Some(TaintEffect::NoExecute), seconds),
    }
}

/// A random scenario: two nodes, up to three pods, up to eight operations among taints,
/// removals, toleration changes, deletions, recreations, bindings, restarts and failing
/// requests, with random informer lag and API latency.
pub fn random_scenario(seed: u64) -> Scenario {
    let mut rng = Rng::new(seed);
    let nodes: Vec<Node> = ["n1", "n2"]
        .iter()
        .map(|name| Node {
            name: (*name).into(),
            taints: if rng.chance(25) {
                vec![taint(rng.pick(&KEYS), TaintEffect::NoExecute)]
            } else {
                vec![]
            },
        })
        .collect();
    let pods: Vec<PodSpec> = (0..1 + rng.below(3))
        .map(|i| {
            let name = format!("p{i}");
            PodSpec {
                pod: Pod {
                    key: PodKey::new("default", &name),
                    uid: Uid(format!("{name}-1").into()),
                    node_name: match rng.below(5) {
                        0 => None,
                        1 | 2 => Some("n1".into()),
                        _ => Some("n2".into()),
                    },
                    tolerations: (0..rng.below(3)).map(|_| toleration(&mut rng)).collect(),
                },
                daemon_set: false,
            }
        })
        .collect();
    let pod_names: Vec<PodKey> = pods.iter().map(|p| p.pod.key.clone()).collect();
    let mut ops = Vec::new();
    let mut at = 0;
    let mut uids = 1;
    for _ in 0..1 + rng.below(8) {
        at += rng.below(120_000);
        let node: &str = rng.pick(&["n1", "n2"]);
        let pod = pod_names[rng.below(pod_names.len() as u64) as usize].clone();
        let op = match rng.below(12) {
            0..=3 => {
                let effect = if rng.chance(85) {
                    TaintEffect::NoExecute
                } else {
                    TaintEffect::NoSchedule
                };
                Op::Taint {
                    node: node.into(),
                    spec: TaintSpec::Add(Taint::new(rng.pick(&KEYS), &format!("v{at}"), effect)),
                }
            }
            4 | 5 => Op::Taint {
                node: node.into(),
                spec: TaintSpec::Remove {
                    key: rng.pick(&KEYS).into(),
                    effect: None,
                },
            },
            6 => Op::SetTolerationSeconds {
                key: pod,
                index: 0,
                seconds: rng.pick(&[None, Some(0), Some(10), Some(600)]),
            },
            7 => Op::AddToleration {
                key: pod,
                toleration: toleration(&mut rng),
            },
            8 => {
                uids += 1;
                Op::RecreatePod {
                    uid: Uid(format!("{}-{uids}", pod.name).into()),
                    key: pod,
                    node: Some(node.into()),
                    tolerations: None,
                }
            }
            9 => match rng.below(3) {
                0 => Op::DeletePod(pod),
                1 => Op::BindPod {
                    key: pod,
                    node: node.into(),
                },
                _ => Op::RestartController,
            },
            10 => Op::FailRequests {
                verb: rng.pick(&[RequestVerb::Get, RequestVerb::Patch, RequestVerb::Delete]),
                pod: None,
                times: 1 + rng.below(6) as u32,
                result: ResponseResult::Failed,
            },
            _ => Op::RestartController,
        };
        ops.push(TimedOp {
            at: Time(at as i64),
            line: 0,
            op,
        });
    }
    let lag = |rng: &mut Rng| Duration(rng.pick(&[0, 0, 0, 500, 2_000]));
    Scenario {
        name: format!("random-{seed}"),
        description: String::new(),
        refs: vec![],
        admission: Admission {
            default_toleration_seconds: rng.chance(50),
            ..Admission::default()
        },
        runtime: RuntimeKnobs {
            node_informer_lag: lag(&mut rng),
            pod_informer_lag: lag(&mut rng),
            api_latency: Duration(rng.pick(&[0, 0, 50])),
            ..RuntimeKnobs::default()
        },
        until: Time(at as i64 + 400_000),
        nodes,
        pods,
        ops,
        expect: BTreeMap::new(),
    }
}

/// A random scenario of [`random_scenario`] in a world with graceful deletion and relists: a
/// grace period (API-2: a deleted pod stays Terminating in the API and the caches until its
/// kubelet confirms, never on an unreachable node), force deletions (`forceDelete`, PodGC) and
/// broken watches whose relist delivers only the difference (INF-1, RT-INF-3). Its own random
/// stream, so `random_scenario(seed)`'s part is the same scenario.
pub fn random_world_scenario(seed: u64) -> Scenario {
    let mut s = random_scenario(seed);
    let mut rng = Rng::new(seed ^ 0x00C0_FFEE_D00D);
    s.name = format!("random-world-{seed}");
    s.runtime.deletion_grace = rng
        .pick(&[None, Some(0), Some(5_000), Some(30_000), Some(30_000)])
        .map(Duration);
    let pods: Vec<PodKey> = s.pods.iter().map(|p| p.pod.key.clone()).collect();
    let span = s.ops.last().map_or(0, |o| o.at.0) + 60_000;
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(span as u64) as i64;
        let op = match rng.below(5) {
            0 => Op::ForceDeletePod(pods[rng.below(pods.len() as u64) as usize].clone()),
            1 => Op::DeletePod(pods[rng.below(pods.len() as u64) as usize].clone()),
            _ => Op::DropWatch {
                kind: rng.pick(&[ObjectKind::Nodes, ObjectKind::Pods]),
                duration: Duration(rng.pick(&[1_000, 5_000, 30_000, 60_000])),
            },
        };
        s.ops.push(TimedOp {
            at: Time(at),
            line: 0,
            op,
        });
    }
    s.ops.sort_by_key(|o| o.at);
    let last = s.ops.last().map_or(0, |o| o.at.0);
    s.until = Time(s.until.0.max(last + 400_000));
    s
}
