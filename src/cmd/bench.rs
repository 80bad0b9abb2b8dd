//! `taintcheck bench runtime`: the reference runtime under an eviction storm (virtual clock) and
//! its eviction lateness at a steady rate (real clock). Measurements, printed; not tests.

use clap::{Args, Subcommand};
use std::process::ExitCode;
use taintcheck_model::profile::Profile;
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
}

#[derive(Args)]
struct RuntimeArgs {
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    #[arg(long, default_value_t = 30)]
    pods_per_node: usize,
    #[arg(long, default_value_t = 8)]
    workers: usize,
    /// The behaviour profile: v1.18, latest or fixed.
    #[arg(long, default_value = "latest")]
    profile: String,
    /// Evictions for the real-clock lateness run (0 skips it).
    #[arg(long, default_value_t = 5000)]
    lateness_evictions: usize,
    /// Evictions per second in the lateness run.
    #[arg(long, default_value_t = 1000)]
    rate: u32,
}

pub fn run(args: BenchArgs) -> ExitCode {
    let Target::Runtime(args) = args.target;
    let Some(profile) = Profile::by_name(&args.profile) else {
        eprintln!(
            "--profile: Unsupported value: {:?}: supported values: {}",
            args.profile,
            Profile::NAMES.map(|n| format!("{n:?}")).join(", ")
        );
        return ExitCode::from(2);
    };
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
