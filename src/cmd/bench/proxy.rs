//! `taintcheck bench proxy`: what `taintcheck proxy` costs a controller, measured side by side
//! in one run (`taintcheck_cluster::proxy::cost`): the latency a GET gains through it on the real
//! control plane (upstream/build.sh's `controlplane`), and the watch events a second a reader
//! takes through it against the same stream read directly.

use super::emit;
use crate::cmd::output::outln;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use taintcheck_cluster::process::{Binaries, ControlPlane};
use taintcheck_cluster::proxy::cost::{self, Latency, Throughput};
use taintcheck_cluster::proxy::Upstream;
use taintcheck_cluster::{identity, Error};

#[derive(Args)]
pub struct ProxyBench {
    /// GETs each way, after as many to warm up.
    #[arg(long, default_value_t = 2000)]
    requests: usize,
    /// Watch events each way.
    #[arg(long, default_value_t = 200_000)]
    events: usize,
    /// Upstream's binaries (built by `upstream/build.sh`).
    #[arg(long, value_name = "DIR", default_value = "upstream/bin")]
    bin: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct ProxyResult {
    /// The request timed: a GET of a namespace, answered by the API server from its cache.
    request: &'static str,
    latency: Latency,
    watch: Throughput,
}

const PATH: &str = "/api/v1/namespaces/default";

pub fn proxy(args: &ProxyBench) -> ExitCode {
    match measure(args) {
        Ok(result) => emit(args.json, &result, describe),
        Err(e) => {
            eprintln!("taintcheck bench proxy: {e}");
            ExitCode::from(2)
        }
    }
}

fn measure(args: &ProxyBench) -> Result<ProxyResult, Error> {
    let binary = Binaries::new(&args.bin).control_plane()?;
    let dir = std::env::temp_dir().join(format!("taintcheck-bench-proxy-{}", std::process::id()));
    let cp = ControlPlane::start(&binary, &dir, None, Duration::from_secs(120))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::new(format!("an async runtime: {e}")))?;
    let result = runtime.block_on(async {
        let admin = cp.kubeconfig();
        let client = taintcheck_cluster::client(Some(&admin)).await?;
        let token_config = dir.join("bench.kubeconfig");
        identity::controller_kubeconfig(&client, &admin, identity::ACCOUNT, &token_config).await?;
        let text = std::fs::read_to_string(&token_config)
            .map_err(|e| Error::new(format!("{}: {e}", token_config.display())))?;
        let config: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Error::new(e.to_string()))?;
        let token = config["users"][0]["user"]["token"]
            .as_str()
            .ok_or_else(|| Error::new("no token"))?
            .to_string();
        let upstream = Upstream::from_kubeconfig(&admin, None).await?;
        let latency = cost::latency(
            &upstream,
            &token,
            PATH,
            args.requests,
            &dir.join("latency.ndjson"),
        )
        .await?;
        let watch = cost::watch_throughput(args.events, &dir.join("watch.ndjson")).await?;
        Ok(ProxyResult {
            request: PATH,
            latency,
            watch,
        })
    });
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn describe(r: &ProxyResult) {
    let l = &r.latency;
    let ms = |us: u64| us as f64 / 1000.0;
    outln!(
        "GET {} x {} each way, HTTP/2 over TLS on 127.0.0.1:",
        r.request,
        l.requests
    );
    outln!(
        "  direct p50 {:.3} ms, p99 {:.3} ms; through the proxy p50 {:.3} ms, p99 {:.3} ms: \
         added p50 {:.3} ms, p99 {:.3} ms",
        ms(l.direct_p50_us),
        ms(l.direct_p99_us),
        ms(l.proxy_p50_us),
        ms(l.proxy_p99_us),
        ms(l.proxy_p50_us.saturating_sub(l.direct_p50_us)),
        ms(l.proxy_p99_us.saturating_sub(l.direct_p99_us)),
    );
    let w = &r.watch;
    outln!(
        "watch of {} events of {} bytes: direct {:.0} events/s, through the proxy (each logged) \
         {:.0} events/s ({:.2}x)",
        w.events,
        w.event_bytes,
        w.direct_events_per_s,
        w.proxy_events_per_s,
        w.proxy_events_per_s / w.direct_events_per_s
    );
}
