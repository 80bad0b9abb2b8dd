//! `taintcheck bench oracle`: how fast the oracle checks a long trace of the reference runtime.
//! The runtime runs the scale scenario (`scale.rs`) on its virtual clock (or `--trace` reads a
//! trace saved by an earlier run); the oracle then reads and checks the trace on `--threads`
//! threads (default one), streaming, as `conform` does. Reported: lines, wall and CPU seconds, lines per second, the
//! largest frontier, the most pods tracked at once and the process's peak memory.

use super::emit;
use super::scale::scale;
use crate::cmd::args::ProfileArg;
use crate::cmd::output::{self, outln};
use clap::Args;
use serde::Serialize;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use taintcheck_core::profile::Profile;
use taintcheck_core::time::Duration;
use taintcheck_formats::limits::Lines;
use taintcheck_formats::trace::{to_line, TraceReader};
use taintcheck_oracle::parallel::Parallel;
use taintcheck_oracle::Options;
use taintcheck_runtime::driver::{run_scenario, ClockKind};
use taintcheck_runtime::storm::peak_rss_kib;

#[derive(Args)]
pub struct OracleBench {
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
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// The oracle's threads (`conform --threads`); with more than one, the pods tracked at once
    /// and the CPU time are not reported.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
}

/// What `bench oracle` measured, with its parameters.
#[derive(Serialize)]
struct OracleResult {
    profile: &'static str,
    latency_bound_ms: i64,
    /// The trace checked; the scale scenario's parameters apply when this run recorded it.
    trace: String,
    recorded: bool,
    nodes: usize,
    pods_per_node: usize,
    waves: usize,
    threads: u16,
    lines: usize,
    pods: usize,
    seconds: f64,
    lines_per_second: f64,
    /// CPU time of the checking thread; absent where the platform does not report it.
    cpu_seconds: Option<f64>,
    max_frontier: usize,
    /// Absent with more than one thread (the workers' counts are not sampled per line).
    max_tracked_pods: Option<usize>,
    peak_memory_kib: Option<u64>,
}

pub fn oracle(b: &OracleBench) -> ExitCode {
    let profile = match b.behaviour.profile() {
        Ok(p) => p,
        Err(failure) => return failure.report(),
    };
    let path = b
        .trace
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("taintcheck-scale-trace.ndjson"));
    let recorded = !path.exists() || b.trace.is_none();
    if recorded {
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
    let options = Options::new(profile, Duration(b.latency_bound_ms));
    let mut oracle = Parallel::new(options, usize::from(b.threads));
    let mut tracked = 0;
    for (i, line) in Lines::new(BufReader::new(file)).enumerate() {
        let record = match line
            .map_err(|e| format!("{name}:{}: {}", e.line, e.message))
            .and_then(|l| reader.push_line(i + 1, &l).map_err(|e| e.to_string()))
        {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        if let Err(e) = oracle.feed(i + 1, record) {
            eprintln!("{name}: the scale trace does not conform: {e}");
            return ExitCode::from(1);
        }
        if let Some(s) = oracle.summary() {
            tracked = tracked.max(s.live_components);
        }
    }
    let summary = match oracle.finish(None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{name}: the scale trace does not conform: {e}");
            return ExitCode::from(1);
        }
    };
    if summary.records == 0 {
        output::eprint(&format!(
            "{name}:1: kind: expected the header line first (\"kind\":\"header\")\n"
        ));
        return ExitCode::from(2);
    }
    let seconds = start.elapsed().as_secs_f64();
    let one = b.threads == 1;
    let cpu_seconds = thread_cpu()
        .filter(|_| one)
        .map(|c| c - cpu_start.unwrap_or_default());
    let result = OracleResult {
        profile: profile.name,
        latency_bound_ms: b.latency_bound_ms,
        trace: name,
        recorded,
        nodes: b.nodes,
        pods_per_node: b.pods_per_node,
        waves: b.waves,
        threads: b.threads,
        lines: summary.records,
        pods: summary.pods,
        seconds,
        lines_per_second: summary.records as f64 / seconds.max(1e-9),
        cpu_seconds,
        max_frontier: summary.max_frontier,
        max_tracked_pods: one.then_some(tracked.max(summary.live_components)),
        peak_memory_kib: peak_rss_kib(),
    };
    emit(b.json, &result, describe)
}

fn describe(r: &OracleResult) {
    outln!(
        "oracle bench ({}, latency bound {} ms): {} lines, {} pods, read and checked in \
         {:.2} s on {} thread(s) ({:.0} lines/s; {} of CPU time); largest frontier {} \
         states; at most {} pods tracked at once; peak memory of the process {}",
        r.profile,
        r.latency_bound_ms,
        r.lines,
        r.pods,
        r.seconds,
        r.threads,
        r.lines_per_second,
        r.cpu_seconds
            .map_or("unknown".into(), |c| format!("{c:.2} s")),
        r.max_frontier,
        r.max_tracked_pods
            .map_or("unknown".into(), |n| n.to_string()),
        r.peak_memory_kib
            .map_or("unknown".into(), |k| format!("{k} kB")),
    );
}

/// Runs the scale scenario on the runtime and saves its trace at `path`.
fn record(b: &OracleBench, profile: Profile, path: &Path) -> Result<(), String> {
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
    output::write_file("--trace", path, &text, &[]).map_err(|f| f.text())
}

/// CPU seconds this thread has run (Linux `schedstat`): the figure a loaded machine does not
/// inflate, unlike wall time.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 / 1e9)
}
