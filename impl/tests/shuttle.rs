//! Schedule exploration of the runtime's glue with shuttle (random and PCT schedulers): the real
//! dispatcher, worker, informer and timer-service code, with shuttle's threads and locks swapped
//! in (`--features shuttle`) and a batched virtual clock so that items really overlap.
//!
//! Run: `cargo test --release -p taintcheck-runtime --features shuttle --test shuttle`.
//!
//! Checked on every explored schedule: no deadlock (shuttle fails the schedule if every thread
//! blocks), no lost item (every key an informer queued is handled afterwards), node-before-pod
//! drain (node items buffered when a worker takes a pod item are handled before it), shard
//! affinity (an item is handled by `shard_of` its node), no key handled twice at once, and the
//! outcome: pods that never tolerate their node's taint are deleted.
#![cfg(feature = "shuttle")]

use std::collections::BTreeSet;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Toleration, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::{shard_of, Config};
use taintcheck_formats::scenario::{deletions, Admission, PodSpec};
use taintcheck_formats::taint_syntax::TaintSpec;
use taintcheck_runtime::api::ApiServer;
use taintcheck_runtime::clock::VirtualClock;
use taintcheck_runtime::controller::{Controller, InformerLags};
use taintcheck_runtime::probe::{Key, Probe, Probed};
use taintcheck_runtime::recorder::Recorder;
use taintcheck_runtime::sync::{spawn, Arc};
use taintcheck_runtime::timers::TimerService;

const WORKERS: usize = 2;

fn pod(name: &str, node: Option<&str>, tolerations: Vec<Toleration>) -> PodSpec {
    PodSpec {
        pod: Pod {
            key: PodKey::new("default", name),
            uid: Uid(format!("{name}-1").into()),
            node_name: node.map(Into::into),
            tolerations,
        },
        daemon_set: false,
    }
}

fn taint(key: &str) -> TaintSpec {
    TaintSpec::Add(Taint::new(key, "x", TaintEffect::NoExecute))
}

/// One run: three nodes on two workers with channels of capacity 1, taints and pod changes
/// arriving together. Returns the probe log and the names of the deleted pods.
fn run_once(profile: Profile) -> (Vec<Probed>, BTreeSet<String>) {
    let clock = Arc::new(VirtualClock::batched(Time::ZERO));
    let timers = TimerService::new(clock.clone());
    let recorder = Recorder::new(clock, profile.name, None);
    let admission = Admission {
        default_toleration_seconds: false,
        ..Admission::default()
    };
    let api = ApiServer::new(admission, None, recorder.clone(), timers.clone());
    for name in ["node1", "node2", "node3"] {
        api.create_node(Node {
            name: name.into(),
            taints: vec![],
        })
        .unwrap();
    }
    let finite = Toleration::exists("slow", Some(TaintEffect::NoExecute), Some(2));
    api.create_pod(pod("a", Some("node1"), vec![])).unwrap();
    api.create_pod(pod("b", Some("node2"), vec![])).unwrap();
    api.create_pod(pod("c", Some("node3"), vec![finite]))
        .unwrap();
    api.create_pod(pod("pending", None, vec![])).unwrap();

    let config = Config {
        workers: WORKERS,
        node_channel_capacity: 1,
        pod_channel_capacity: 1,
        ..Config::new(profile)
    };
    let lags = InformerLags {
        nodes: Duration(0),
        pods: Duration(0),
    };
    let probe = Probe::new();
    let controller =
        Controller::start_probed(config, &api, &timers, &recorder, lags, Some(probe.clone()));

    let a = api.clone();
    timers.arm(
        Time(1000),
        Box::new(move || {
            a.taint_node("node1", &taint("broken")).unwrap();
            a.taint_node("node2", &taint("broken")).unwrap();
            a.taint_node("node3", &taint("slow")).unwrap();
            a.create_pod(pod("late", Some("node1"), vec![])).unwrap();
        }),
    );
    let a = api.clone();
    timers.arm(
        Time(1000),
        Box::new(move || {
            a.bind_pod(&PodKey::new("default", "pending"), "node1".into())
                .unwrap();
        }),
    );
    let stopper = timers.clone();
    timers.arm(Time(10_000), Box::new(move || stopper.stop()));

    let runner = timers.clone();
    let thread = spawn("timers".into(), move || runner.run());
    timers.wait_finished();
    timers.stop();
    thread.join().unwrap();
    controller.stop();
    let deleted = deletions(&recorder.records())
        .into_iter()
        .map(|d| d.pod.name.to_string())
        .collect();
    (probe.log(), deleted)
}

fn node_of(key: &Key) -> String {
    match key {
        Key::Node(n) => n.to_string(),
        Key::Pod(item) => item.node_str().to_string(),
    }
}

/// The glue's properties over one probe log.
fn check(log: &[Probed], deleted: &BTreeSet<String>) {
    let mut running: BTreeSet<&Key> = BTreeSet::new();
    for (i, p) in log.iter().enumerate() {
        match p {
            Probed::Added(key) => {
                let handled_later = log[i + 1..]
                    .iter()
                    .any(|q| matches!(q, Probed::Began { key: k, .. } if k == key));
                assert!(
                    handled_later,
                    "lost item: {key:?} was queued but never handled after"
                );
            }
            Probed::Began { worker, key } => {
                assert_eq!(
                    *worker,
                    shard_of(&node_of(key), WORKERS),
                    "shard affinity: {key:?} on worker {worker}"
                );
                assert!(running.insert(key), "{key:?} handled twice at once");
            }
            Probed::Ended { key, .. } => {
                running.remove(key);
            }
            Probed::TookPod { worker, buffered } => {
                let pod_began = log[i + 1..]
                    .iter()
                    .position(|q| {
                        matches!(q, Probed::Began { worker: w, key: Key::Pod(_) } if w == worker)
                    })
                    .expect("a taken pod item is handled")
                    + i
                    + 1;
                for name in buffered {
                    let drained = log[i + 1..pod_began].iter().any(|q| {
                        matches!(q, Probed::Began { worker: w, key: Key::Node(n) } if w == worker && n == name)
                    });
                    assert!(
                        drained,
                        "node item {name} buffered on worker {worker} was not handled before its pod item"
                    );
                }
            }
        }
    }
    for pod in ["a", "b", "c", "late", "pending"] {
        assert!(
            deleted.contains(pod),
            "{pod} never tolerated its node's taint for long but was not deleted: {deleted:?}"
        );
    }
}

#[test]
fn glue_properties_hold_under_random_schedules() {
    shuttle::check_random(
        || {
            let (log, deleted) = run_once(Profile::latest());
            check(&log, &deleted);
        },
        2000,
    );
}

#[test]
fn glue_properties_hold_under_pct_schedules() {
    for profile in [Profile::v1_18(), Profile::fixed()] {
        shuttle::check_pct(
            move || {
                let (log, deleted) = run_once(profile);
                check(&log, &deleted);
            },
            800,
            3,
        );
    }
}
