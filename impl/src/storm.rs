//! The scale workloads behind `taintcheck bench runtime` (measurements, not tests):
//!
//! * [`eviction_storm`]: N nodes × M pods with the default 300 s tolerations; every node gets
//!   `node.kubernetes.io/unreachable:NoExecute`, a fraction recovers before the deadline, the
//!   rest are evicted. Batched virtual clock, so the 8 workers and the timer service really run
//!   concurrently while virtual time jumps over the 300 s.
//! * [`eviction_lateness`]: real clock; nodes are tainted at a steady rate so that deadlines fall
//!   due at that rate, and each eviction's lateness (the DELETE's answer minus the deadline the
//!   taint implies) is measured.

use crate::api::ApiServer;
use crate::clock::{Clock, SystemClock, VirtualClock};
use crate::controller::{Controller, InformerLags};
use crate::recorder::Recorder;
use crate::sync::{spawn, Arc};
use crate::timers::TimerService;
use std::collections::BTreeMap;
use std::time::Instant;
use taintcheck_core::admission::UNREACHABLE;
use taintcheck_core::api::{Node, Pod, PodKey, Taint, TaintEffect, Uid};
use taintcheck_core::profile::Profile;
use taintcheck_core::throttle::RateLimit;
use taintcheck_core::time::{Duration, Time};
use taintcheck_core::Config;
use taintcheck_formats::scenario::{deletions, Admission, PodSpec};
use taintcheck_formats::taint_syntax::TaintSpec;
use taintcheck_formats::trace::TraceEvent;

/// The storm's shape.
#[derive(Clone, Copy, Debug)]
pub struct Storm {
    pub nodes: usize,
    pub pods_per_node: usize,
    /// Every `recover_every`-th node recovers (2: half of them).
    pub recover_every: usize,
    pub profile: Profile,
    pub workers: usize,
    /// The controller client's rate limit (CORE-THROTTLE); `None`: never throttled.
    pub rate_limit: Option<RateLimit>,
}

/// What a storm measured.
#[derive(Clone, Debug)]
pub struct StormReport {
    /// Creating the objects and the controller's initial sync.
    pub setup: std::time::Duration,
    /// From the first taint to the last eviction's completion.
    pub storm: std::time::Duration,
    /// The same in virtual time: from the start of the storm to its last timer (the rate
    /// limit's waits included).
    pub virtual_span: Duration,
    pub decisions: u64,
    pub requests: u64,
    pub evictions: u64,
    /// Peak resident set (`VmHWM`), when the platform reports it.
    pub peak_rss_kib: Option<u64>,
}

fn node(i: usize) -> String {
    format!("node-{i:05}")
}

fn pod_spec(node: &str, j: usize) -> PodSpec {
    let name = format!("{node}-pod-{j:02}");
    PodSpec {
        pod: Pod {
            key: PodKey::new("default", &name),
            uid: Uid(format!("{name}-1").into()),
            node_name: Some(node.into()),
            tolerations: Vec::new(),
        },
        daemon_set: false,
    }
}

fn unreachable() -> TaintSpec {
    TaintSpec::Add(Taint::new(UNREACHABLE, "", TaintEffect::NoExecute))
}

/// Runs the storm on a batched virtual clock.
pub fn eviction_storm(storm: Storm) -> StormReport {
    let started = Instant::now();
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::batched(Time::ZERO));
    let timers = TimerService::new(clock.clone());
    let recorder = Recorder::disabled(clock);
    let api = ApiServer::new(Admission::default(), None, recorder.clone(), timers.clone());
    for i in 0..storm.nodes {
        let name = node(i);
        api.create_node(Node {
            name: name.as_str().into(),
            taints: vec![],
        })
        .expect("fresh node names");
        for j in 0..storm.pods_per_node {
            api.create_pod(pod_spec(&name, j)).expect("fresh pod names");
        }
    }
    let config = Config {
        workers: storm.workers,
        rate_limit: storm.rate_limit,
        ..Config::new(storm.profile)
    };
    let lags = InformerLags {
        nodes: Duration::ZERO,
        pods: Duration::ZERO,
    };
    let controller = Controller::start(config, &api, &timers, &recorder, lags);
    let runner = timers.clone();
    let thread = spawn("timers".into(), move || runner.run());
    // The initial list: every object is delivered and handled before the storm starts.
    timers.wait_finished();
    let setup = started.elapsed();

    let storm_started = Instant::now();
    let start = timers.now();
    let a = api.clone();
    let nodes = storm.nodes;
    timers.arm(
        start.plus(Duration::from_secs(1)),
        Box::new(move || {
            for i in 0..nodes {
                a.taint_node(&node(i), &unreachable())
                    .expect("the node exists");
            }
        }),
    );
    let a = api.clone();
    let every = storm.recover_every.max(1);
    timers.arm(
        start.plus(Duration::from_secs(100)),
        Box::new(move || {
            for i in (0..nodes).step_by(every) {
                let removal = TaintSpec::Remove {
                    key: UNREACHABLE.into(),
                    effect: Some(TaintEffect::NoExecute),
                };
                a.taint_node(&node(i), &removal).expect("the node exists");
            }
        }),
    );
    timers.wait_finished();
    let storm_time = storm_started.elapsed();
    let virtual_span = Duration(timers.now().millis() - start.millis());
    timers.stop();
    thread.join().expect("the timer thread panicked");
    controller.stop();
    let counts = recorder.counts();
    StormReport {
        setup,
        storm: storm_time,
        virtual_span,
        decisions: counts.notes,
        requests: counts.requests,
        evictions: counts.pods_deleted,
        peak_rss_kib: peak_rss_kib(),
    }
}

/// Eviction lateness on the real clock.
#[derive(Clone, Debug)]
pub struct LatenessReport {
    pub evictions: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

/// Taints `evictions` single-pod nodes at `per_second`, each pod tolerating the taint for
/// 2 s, so that evictions fall due at that rate; measures DELETE answer − (taint + 2 s).
pub fn eviction_lateness(evictions: usize, per_second: u32, profile: Profile) -> LatenessReport {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::new());
    let timers = TimerService::new(clock.clone());
    let recorder = Recorder::new(clock, profile.name, None);
    let api = ApiServer::new(
        Admission {
            default_toleration_seconds: false,
            ..Admission::default()
        },
        None,
        recorder.clone(),
        timers.clone(),
    );
    let toleration = taintcheck_core::api::Toleration::exists(
        "bench/slow",
        Some(TaintEffect::NoExecute),
        Some(2),
    );
    for i in 0..evictions {
        let name = node(i);
        api.create_node(Node {
            name: name.as_str().into(),
            taints: vec![],
        })
        .expect("fresh node names");
        let mut spec = pod_spec(&name, 0);
        spec.pod.tolerations.push(toleration.clone());
        api.create_pod(spec).expect("fresh pod names");
    }
    let config = Config::new(profile);
    let lags = InformerLags {
        nodes: Duration::ZERO,
        pods: Duration::ZERO,
    };
    let controller = Controller::start(config, &api, &timers, &recorder, lags);
    let runner = timers.clone();
    let thread = spawn("timers".into(), move || runner.run());
    let first = timers.now().plus(Duration::from_secs(1));
    let spacing_us = 1_000_000 / u64::from(per_second.max(1));
    for i in 0..evictions {
        let at = first.plus(Duration((i as u64 * spacing_us / 1000) as i64));
        let a = api.clone();
        timers.arm(
            at,
            Box::new(move || {
                let spec = TaintSpec::Add(Taint::new("bench/slow", "", TaintEffect::NoExecute));
                a.taint_node(&node(i), &spec).expect("the node exists");
            }),
        );
    }
    let last = first.plus(Duration((evictions as u64 * spacing_us / 1000) as i64));
    let deadline = last.plus(Duration::from_secs(4));
    while timers.now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    timers.stop();
    thread.join().expect("the timer thread panicked");
    controller.stop();

    let records = recorder.records();
    let mut tainted_at: BTreeMap<String, Time> = BTreeMap::new();
    for r in &records {
        if let TraceEvent::NodeModified { node, .. } = &r.event {
            tainted_at.insert(node.name.to_string(), r.t);
        }
    }
    let mut lateness: Vec<i64> = deletions(&records)
        .iter()
        .filter_map(|d| {
            let node = d.pod.name.strip_suffix("-pod-00")?;
            let due = tainted_at.get(node)?.plus(Duration::from_secs(2));
            Some(d.at.millis() - due.millis())
        })
        .collect();
    lateness.sort_unstable();
    let pick = |q: f64| {
        let i = ((lateness.len() as f64 - 1.0) * q).round() as usize;
        Duration(lateness.get(i).copied().unwrap_or(0))
    };
    LatenessReport {
        evictions: lateness.len(),
        p50: pick(0.50),
        p99: pick(0.99),
        max: Duration(lateness.last().copied().unwrap_or(0)),
    }
}

/// The process's peak resident memory: `VmHWM` from `/proc/self/status`, in KiB (Linux only).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
