//! `taintcheck bench model`: the model checker's states per second and the symmetry reduction
//! (`model.rs`).
//!
//! `taintcheck bench runtime`: the reference runtime under an eviction storm (virtual clock) and
//! its eviction lateness at a steady rate (real clock). Measurements, printed; not tests.
//!
//! `taintcheck bench oracle`: how fast the oracle checks a long trace of the reference runtime.
//! The scale scenario: `--nodes` nodes in two halves with `--pods-per-node` pods (default
//! tolerations); in each wave one half becomes unreachable, its pods are evicted after 300 s and
//! recreated on the other half, and the half recovers. The runtime runs it on its virtual
//! clock (or `--trace` reads a trace saved by an earlier run); the oracle then reads and checks
//! the trace on one thread, streaming, and the command prints lines, wall and CPU seconds, lines
//! per second, the largest number of pods tracked at once and the process's peak memory.

mod model;

use crate::cmd::args::ProfileArg;
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use taintcheck_model::api::{Node, Pod, PodKey, Taint, TaintEffect, Uid};
use taintcheck_model::oracle::{Options, Oracle};
use taintcheck_model::profile::Profile;
use taintcheck_model::scenario::{Admission, Op, PodSpec, RuntimeKnobs, Scenario, TimedOp};
use taintcheck_model::taint_syntax::TaintSpec;
use taintcheck_model::time::{Duration, Time};
use taintcheck_model::trace::{to_line, TraceReader};
use taintcheck_runtime::driver::{run_scenario, ClockKind};
use taintcheck_runtime::storm::{eviction_lateness, eviction_storm, Storm};

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    target: Target,
}

#[derive(Subcommand)]
enum Target {
    /// The runtime: an eviction storm on the virtual clock, then lateness on the real clock.
    Runtime(RuntimeArgs),
    /// The oracle: check the scale scenario's trace and report its speed.
    Oracle(OracleBench),
    /// The model checker: unique states per second (1 and 2 threads) and the symmetry reduction.
    Model(model::ModelBench),
}

#[derive(Args)]
struct RuntimeArgs {
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    #[arg(long, default_value_t = 30)]
    pods_per_node: usize,
    #[arg(long, default_value_t = 8)]
    workers: usize,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// Evictions for the real-clock lateness run (0 skips it).
    #[arg(long, default_value_t = 5000)]
    lateness_evictions: usize,
    /// Evictions per second in the lateness run.
    #[arg(long, default_value_t = 1000)]
    rate: u32,
}

pub fn run(args: BenchArgs) -> ExitCode {
    match args.target {
        Target::Runtime(args) => runtime(args),
        Target::Oracle(args) => oracle(&args),
        Target::Model(args) => model::model(&args),
    }
}

fn runtime(args: RuntimeArgs) -> ExitCode {
    let profile = args.behaviour.profile;
    let storm = Storm {
        nodes: args.nodes,
        pods_per_node: args.pods_per_node,
        recover_every: 2,
        profile,
        workers: args.workers,
    };
    let r = eviction_storm(storm);
    let secs = r.storm.as_secs_f64();
    println!(
        "storm ({} nodes x {} pods, profile {}, {} workers, virtual clock):",
        args.nodes, args.pods_per_node, profile.name, args.workers
    );
    println!(
        "  setup (create objects, initial sync): {:.3} s",
        r.setup.as_secs_f64()
    );
    println!("  storm wall time: {secs:.3} s");
    println!(
        "  decisions: {} ({:.0}/s), requests: {}, evictions: {}",
        r.decisions,
        r.decisions as f64 / secs,
        r.requests,
        r.evictions
    );
    match r.peak_rss_kib {
        Some(kib) => println!("  peak RSS: {:.1} MiB", kib as f64 / 1024.0),
        None => println!("  peak RSS: not reported by this platform"),
    }
    if args.lateness_evictions > 0 {
        let l = eviction_lateness(args.lateness_evictions, args.rate, profile);
        println!(
            "lateness (real clock, {} evictions at {}/s): p50 {} ms, p99 {} ms, max {} ms",
            l.evictions,
            args.rate,
            l.p50.millis(),
            l.p99.millis(),
            l.max.millis()
        );
    }
    ExitCode::SUCCESS
}

#[derive(Args)]
struct OracleBench {
    /// Nodes of the scale scenario (two halves).
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Pods per node at the start.
    #[arg(long, default_value_t = 20)]
    pods_per_node: usize,
    /// Eviction waves.
    #[arg(long, default_value_t = 6)]
    waves: usize,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// The oracle's latency bound in ms.
    #[arg(long, default_value_t = 1000)]
    latency_bound_ms: i64,
    /// Read the trace from this file if it exists; otherwise run the scenario and save it here
    /// (default: a fresh run, saved in the temporary directory).
    #[arg(long)]
    trace: Option<PathBuf>,
}

fn oracle(b: &OracleBench) -> ExitCode {
    let profile = b.behaviour.profile;
    let path = b
        .trace
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("taintcheck-scale-trace.ndjson"));
    if !path.exists() || b.trace.is_none() {
        if let Err(e) = record(b, profile, &path) {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    // Timed: reading, parsing and checking the trace as `conform` does, streaming.
    let name = path.display().to_string();
    let start = Instant::now();
    let cpu_start = thread_cpu();
    let mut reader = TraceReader::new(&name);
    let mut oracle = Oracle::with_options(Options::new(profile, Duration(b.latency_bound_ms)));
    let mut live = 0;
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let record = match line
            .map_err(|e| e.to_string())
            .and_then(|l| reader.push_line(i + 1, &l).map_err(|e| e.to_string()))
        {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        if let Err(e) = oracle.feed_line(i + 1, &record) {
            eprintln!("{name}: the scale trace does not conform: {e}");
            return ExitCode::from(1);
        }
        live = live.max(oracle.summary().live_components);
    }
    let summary = oracle.summary();
    let secs = start.elapsed().as_secs_f64();
    let cpu = thread_cpu().map(|c| c - cpu_start.unwrap_or_default());
    println!(
        "oracle bench ({}, latency bound {} ms): {} lines, {} pods, read and checked in \
         {secs:.2} s on one thread ({:.0} lines/s; {} of CPU time); largest frontier {} \
         states; at most {live} pods tracked at once; peak memory of the process {}",
        profile.name,
        b.latency_bound_ms,
        summary.records,
        summary.pods,
        summary.records as f64 / secs,
        cpu.map_or("unknown".into(), |c| format!("{c:.2} s")),
        summary.max_frontier,
        peak_memory().unwrap_or_else(|| "unknown".into()),
    );
    ExitCode::SUCCESS
}

/// Runs the scale scenario on the runtime and saves its trace at `path`.
fn record(b: &OracleBench, profile: Profile, path: &std::path::Path) -> Result<(), String> {
    let scenario = scale(b.nodes.max(2), b.pods_per_node, b.waves);
    let start = Instant::now();
    let records = run_scenario(&scenario, profile, ClockKind::Virtual).records;
    eprintln!(
        "runtime: {} lines in {:.1} s, saved to {}",
        records.len(),
        start.elapsed().as_secs_f64(),
        path.display()
    );
    let text: String = records.iter().map(to_line).collect();
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
const WAVE: i64 = 500_000;

/// The scale scenario (see the module documentation).
fn scale(nodes: usize, pods_per_node: usize, waves: usize) -> Scenario {
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

/// CPU seconds this thread has run (Linux `schedstat`): the figure a loaded machine does not
/// inflate, unlike wall time.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}

/// The process's peak resident memory (Linux `VmHWM`), for the report.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_string())
}
