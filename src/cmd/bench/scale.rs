//! The oracle bench's scale scenario: `nodes` nodes in two halves with `pods_per_node` pods
//! (default tolerations); in each wave one half becomes unreachable, its pods are evicted after
//! 300 s and recreated on the other half, and the half recovers.

use std::collections::BTreeMap;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Uid};
use taintcheck_core::time::Time;
use taintcheck_formats::scenario::{Admission, Op, PodSpec, RuntimeKnobs, Scenario, TimedOp};
use taintcheck_formats::taint_syntax::TaintSpec;

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
const WAVE: i64 = 500_000;

/// The scale scenario (see the module documentation).
pub fn scale(nodes: usize, pods_per_node: usize, waves: usize) -> Scenario {
    let half = nodes / 2;
    let node_name = |i: usize| format!("node-{i}");
    let mut ops = Vec::new();
    let mut op = |at: i64, op: Op| {
        ops.push(TimedOp {
            at: Time(at),
            line: 0,
            op,
        })
    };
    // Where each pod lives and its current incarnation.
    let mut pods: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut initial = Vec::new();
    for n in 0..nodes {
        for k in 0..pods_per_node {
            let id = n * pods_per_node + k;
            pods.insert(id, (n, 1));
            initial.push(spec(id, 1, &node_name(n)));
        }
    }
    for w in 0..waves {
        let t0 = w as i64 * WAVE;
        let (down, up) = if w % 2 == 0 { (0, half) } else { (half, 0) };
        for i in 0..half {
            let at = t0 + (i as i64 * 37) % 10_000;
            op(
                at,
                Op::Taint {
                    node: node_name(down + i).into(),
                    spec: TaintSpec::Add(Taint::new(UNREACHABLE, "", TaintEffect::NoExecute)),
                },
            );
            op(
                at + 400_000,
                Op::Taint {
                    node: node_name(down + i).into(),
                    spec: TaintSpec::Remove {
                        key: UNREACHABLE.into(),
                        effect: Some(TaintEffect::NoExecute),
                    },
                },
            );
            for (id, (node, uid)) in pods.iter_mut() {
                if *node == down + i {
                    *node = up + (id % half);
                    *uid += 1;
                    op(
                        at + 310_000,
                        Op::CreatePod(spec(*id, *uid, &node_name(*node))),
                    );
                }
            }
        }
    }
    ops.sort_by_key(|o| o.at);
    Scenario {
        name: "scale".into(),
        description: "the oracle bench's scale scenario".into(),
        refs: vec![],
        admission: Admission::default(),
        runtime: RuntimeKnobs::default(),
        until: Time(waves as i64 * WAVE + 100_000),
        nodes: (0..nodes)
            .map(|n| Node {
                name: node_name(n).into(),
                taints: vec![],
            })
            .collect(),
        pods: initial,
        ops,
        expect: BTreeMap::new(),
    }
}

fn spec(id: usize, incarnation: usize, node: &str) -> PodSpec {
    let name = format!("web-{id}");
    PodSpec {
        pod: Pod {
            key: PodKey::new("default", &name),
            uid: Uid(format!("{name}-{incarnation}").into()),
            node_name: Some(node.into()),
            tolerations: vec![],
        },
        daemon_set: false,
    }
}
