//! `taintcheck bench runtime`: the reference runtime under an eviction storm on its virtual
//! clock (`--nodes` nodes of `--pods-per-node` pods with the default 300 s tolerations go
//! unreachable, every second node recovers), then the eviction lateness of the real clock at a
//! steady rate.

use super::emit;
use crate::cmd::args::ProfileArg;
use crate::cmd::output::outln;
use clap::builder::TypedValueParser;
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;
use taintcheck_core::throttle::RateLimit;
use taintcheck_formats::limits;
use taintcheck_runtime::storm::{eviction_lateness, eviction_storm, Storm};

#[derive(Args)]
pub struct RuntimeBench {
    /// Nodes of the storm.
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// Pods per node.
    #[arg(long, default_value_t = 30)]
    pods_per_node: usize,
    /// The controller's workers, 1 to 64.
    #[arg(long, default_value_t = 8, value_parser = workers_parser())]
    workers: usize,
    #[command(flatten)]
    behaviour: ProfileArg,
    /// The controller's client waits for a token of a bucket of QPS per second
    /// (`--kube-api-qps`, upstream 20) before each request; with `--burst`.
    #[arg(long, value_name = "QPS", requires = "burst",
          value_parser = clap::value_parser!(u32).range(1..))]
    qps: Option<u32>,
    /// With `--qps`: BURST requests may go at once (`--kube-api-burst`, upstream 30).
    #[arg(long, value_name = "BURST", requires = "qps",
          value_parser = clap::value_parser!(u32).range(1..))]
    burst: Option<u32>,
    /// Evictions for the real-clock lateness run (0 skips it).
    #[arg(long, default_value_t = 5000)]
    lateness_evictions: usize,
    /// Evictions per second in the lateness run.
    #[arg(long, default_value_t = 1000)]
    rate: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn workers_parser() -> impl TypedValueParser<Value = usize> {
    clap::value_parser!(u16)
        .range(1..=limits::WORKERS as i64)
        .map(usize::from)
}

/// What `bench runtime` measured, with its parameters.
#[derive(Serialize)]
struct RuntimeResult {
    profile: &'static str,
    nodes: usize,
    pods_per_node: usize,
    workers: usize,
    /// The client's rate limit, if any (`qps 20, burst 30`).
    rate_limit: Option<String>,
    storm: StormResult,
    /// Absent when `--lateness-evictions 0`.
    lateness: Option<LatenessResult>,
}

#[derive(Serialize)]
struct StormResult {
    /// Creating the objects and the controller's initial sync.
    setup_seconds: f64,
    storm_seconds: f64,
    /// Virtual time from the start of the storm to its last timer: 300 s of tolerations plus
    /// what the rate limit's waits add.
    virtual_seconds: f64,
    decisions: u64,
    decisions_per_second: f64,
    requests: u64,
    evictions: u64,
    /// The process's peak resident set; absent where the platform does not report it.
    peak_rss_kib: Option<u64>,
}

#[derive(Serialize)]
struct LatenessResult {
    evictions: usize,
    rate_per_second: u32,
    p50_ms: i64,
    p99_ms: i64,
    max_ms: i64,
}

pub fn runtime(args: &RuntimeBench) -> ExitCode {
    let profile = match args.behaviour.profile() {
        Ok(p) => p,
        Err(failure) => return failure.report(),
    };
    let rate_limit = args
        .qps
        .zip(args.burst)
        .and_then(|(qps, burst)| RateLimit::qps(qps, burst));
    let r = eviction_storm(Storm {
        nodes: args.nodes,
        pods_per_node: args.pods_per_node,
        recover_every: 2,
        profile,
        workers: args.workers,
        rate_limit,
    });
    let storm_seconds = r.storm.as_secs_f64();
    let lateness = (args.lateness_evictions > 0).then(|| {
        let l = eviction_lateness(args.lateness_evictions, args.rate, profile);
        LatenessResult {
            evictions: l.evictions,
            rate_per_second: args.rate,
            p50_ms: l.p50.millis(),
            p99_ms: l.p99.millis(),
            max_ms: l.max.millis(),
        }
    });
    let result = RuntimeResult {
        profile: profile.name,
        nodes: args.nodes,
        pods_per_node: args.pods_per_node,
        workers: args.workers,
        rate_limit: rate_limit.map(|l| l.to_string()),
        storm: StormResult {
            setup_seconds: r.setup.as_secs_f64(),
            storm_seconds,
            virtual_seconds: r.virtual_span.millis() as f64 / 1000.0,
            decisions: r.decisions,
            decisions_per_second: r.decisions as f64 / storm_seconds.max(1e-9),
            requests: r.requests,
            evictions: r.evictions,
            peak_rss_kib: r.peak_rss_kib,
        },
        lateness,
    };
    emit(args.json, &result, describe)
}

fn describe(r: &RuntimeResult) {
    let s = &r.storm;
    let limit = r
        .rate_limit
        .as_ref()
        .map_or(String::new(), |l| format!(", client {l}"));
    outln!(
        "storm ({} nodes x {} pods, profile {}, {} workers{limit}, virtual clock):",
        r.nodes,
        r.pods_per_node,
        r.profile,
        r.workers
    );
    outln!(
        "  setup (create objects, initial sync): {:.3} s",
        s.setup_seconds
    );
    outln!("  storm wall time: {:.3} s", s.storm_seconds);
    outln!("  storm virtual time: {:.3} s", s.virtual_seconds);
    outln!(
        "  decisions: {} ({:.0}/s), requests: {}, evictions: {}",
        s.decisions,
        s.decisions_per_second,
        s.requests,
        s.evictions
    );
    match s.peak_rss_kib {
        Some(kib) => outln!("  peak RSS: {:.1} MiB", kib as f64 / 1024.0),
        None => outln!("  peak RSS: not reported by this platform"),
    }
    if let Some(l) = &r.lateness {
        outln!(
            "lateness (real clock, {} evictions at {}/s): p50 {} ms, p99 {} ms, max {} ms",
            l.evictions,
            l.rate_per_second,
            l.p50_ms,
            l.p99_ms,
            l.max_ms
        );
    }
}
